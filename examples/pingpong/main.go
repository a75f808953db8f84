// Command pingpong measures jdf2go's communication engine (rt/ce) between two ranks: the
// half round trip of 8-byte active messages and the bandwidth of 4 MiB Puts, on the Engine's
// direct path (replies sent from handlers, by the comm goroutine) and on its shifted path
// (a device-manager Caller, whose every operation goes through the comm goroutine). Built
// with -tags mpi it also times the raw MPI binding, the reference.
//
// By default the two ranks live in this process (ce.NewWorld):
//
//	go run ./examples/pingpong
//
// With MPI, one rank per process:
//
//	go build -tags mpi -o pingpong ./examples/pingpong
//	mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 ./pingpong
//
// Flags: -lat-iters and -bw-iters set the round trips per run (-bw-iters 0 skips the
// bandwidth rows), -runs the timed runs (after one warm-up; the table shows median, min and
// max), -paths the paths to time, -cpuprofile a CPU profile per process (FILE.rankN, N its
// first rank), -json prints one JSON object instead of the table (for bench/).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/jdf2go/jdf2go/rt/ce"
	"github.com/jdf2go/jdf2go/rt/ce/cetest"
)

type config struct {
	latSize, bwSize   int
	latIters, bwIters int
	runs              int
	paths             map[string]bool
	cpuprofile        string
}

// Result is one measured row.
type Result struct {
	Workload string  `json:"workload"` // "latency" or "bandwidth"
	Path     string  `json:"path"`     // raw, direct, shifted
	Bytes    int     `json:"bytes"`
	MedianUS float64 `json:"median_us"` // half round trip
	MinUS    float64 `json:"min_us"`
	MaxUS    float64 `json:"max_us"`
	GBps     float64 `json:"gbps,omitempty"` // bandwidth at the median
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pingpong", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	fs.IntVar(&cfg.latSize, "lat-size", 8, "bytes per latency message")
	fs.IntVar(&cfg.bwSize, "bw-size", 4<<20, "bytes per bandwidth transfer")
	fs.IntVar(&cfg.latIters, "lat-iters", 10000, "round trips per latency run")
	fs.IntVar(&cfg.bwIters, "bw-iters", 100, "round trips per bandwidth run")
	fs.IntVar(&cfg.runs, "runs", 3, "timed runs after one warm-up")
	paths := fs.String("paths", "raw,direct,shifted-inline,shifted", "comma-separated paths to time")
	fs.StringVar(&cfg.cpuprofile, "cpuprofile", "", "write a CPU profile of each process to `FILE`.rankN")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if cfg.runs < 1 || cfg.latIters < 1 || cfg.bwIters < 0 {
		fmt.Fprintln(stderr, "pingpong: -runs and -lat-iters must be positive, -bw-iters not negative")
		return 2
	}
	cfg.paths = map[string]bool{}
	for _, p := range strings.Split(*paths, ",") {
		if !slices.Contains(pathNames, p) {
			fmt.Fprintf(stderr, "pingpong: unknown path %q in -paths (known: %s)\n", p, strings.Join(pathNames, ", "))
			return 2
		}
		cfg.paths[p] = true
	}
	b, err := newBackend()
	if err != nil {
		fmt.Fprintln(stderr, "pingpong:", err)
		return 1
	}
	ranks := b.transports()
	results := make([][]Result, len(ranks))
	errs := make([]error, len(ranks))
	var wg sync.WaitGroup
	for i, t := range ranks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = rank(t, b, cfg)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			fmt.Fprintln(stderr, "pingpong:", err)
			return 1
		}
	}
	if results[0] == nil {
		return 0 // not rank 0: nothing to print
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(struct {
			Backend string   `json:"backend"`
			Results []Result `json:"results"`
		}{b.name(), results[0]})
		return 0
	}
	fmt.Fprintf(stdout, "pingpong: 2 ranks, %s; half round trip, median (min-max) of %d runs\n", b.name(), cfg.runs)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "workload\tpath\tmedian\tmin\tmax\tbandwidth")
	for _, r := range results[0] {
		bw := ""
		if r.GBps > 0 {
			bw = fmt.Sprintf("%.2f GB/s", r.GBps)
		}
		fmt.Fprintf(tw, "%s %s\t%s\t%.2f µs\t%.2f µs\t%.2f µs\t%s\n", sizeName(r.Bytes), r.Workload, r.Path, r.MedianUS, r.MinUS, r.MaxUS, bw)
	}
	tw.Flush()
	return 0
}

func sizeName(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d B", n)
}

// rank runs one rank: start an Engine on t, measure every path, close. Rank 0 returns the
// results; the others return nil.
func rank(t ce.Transport, b backend, cfg config) ([]Result, error) {
	e := ce.New(t)
	pp, err := cetest.NewPingPong(e, ce.FirstUserTag, max(cfg.latSize, 8))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := e.Start(ctx); err != nil {
		return nil, err
	}
	if cfg.cpuprofile != "" && e.Rank() == b.first(e) {
		stop, err := startProfile(fmt.Sprintf("%s.rank%d", cfg.cpuprofile, e.Rank()))
		if err != nil {
			return nil, err
		}
		defer stop()
	}
	var out []Result
	measure := func(workload, path string, size, iters int, f func() (time.Duration, error)) error {
		var ds []time.Duration
		for i := range cfg.runs + 1 {
			d, err := f()
			if err != nil {
				return fmt.Errorf("%s %s: %w", workload, path, err)
			}
			if i > 0 { // the first run warms up
				ds = append(ds, d)
			}
		}
		slices.Sort(ds)
		half := func(d time.Duration) float64 { return d.Seconds() / float64(2*iters) * 1e6 }
		r := Result{Workload: workload, Path: path, Bytes: size,
			MedianUS: half(ds[len(ds)/2]), MinUS: half(ds[0]), MaxUS: half(ds[len(ds)-1])}
		if workload == "bandwidth" {
			r.GBps = float64(size) / (r.MedianUS * 1e-6) / 1e9
		}
		out = append(out, r)
		return nil
	}
	for _, w := range []struct {
		name  string
		size  int
		iters int
		put   bool
	}{{"latency", cfg.latSize, cfg.latIters, false}, {"bandwidth", cfg.bwSize, cfg.bwIters, true}} {
		if w.iters == 0 {
			continue
		}
		if raw := b.raw(e); raw != nil && cfg.paths["raw"] {
			if err := measure(w.name, "raw", w.size, w.iters, func() (time.Duration, error) {
				if err := pp.Sync(ctx); err != nil {
					return 0, err
				}
				d, err := raw(w.size, w.iters)
				if err == nil {
					err = pp.Sync(ctx)
				}
				return d, err
			}); err != nil {
				return nil, err
			}
		}
		for _, p := range []cetest.Path{cetest.Direct, cetest.ShiftedInline, cetest.Shifted} {
			if !cfg.paths[p.String()] {
				continue
			}
			if err := measure(w.name, p.String(), w.size, w.iters, func() (time.Duration, error) {
				return pp.Run(ctx, p, w.size, w.iters, w.put)
			}); err != nil {
				return nil, err
			}
		}
	}
	if err := e.Close(ctx); err != nil {
		return nil, err
	}
	if e.Rank() != 0 {
		return nil, nil
	}
	return out, nil
}

// backend is where the ranks come from: an in-process World (default build) or MPI (-tags mpi).
type backend interface {
	name() string
	// transports returns the transports of the ranks that live in this process.
	transports() []ce.Transport
	// raw returns the raw reference measurement for e's rank, or nil.
	raw(e *ce.Engine) func(size, iters int) (time.Duration, error)
	// first is the lowest rank in this process (the one that writes its CPU profile).
	first(e *ce.Engine) ce.Rank
}

var pathNames = []string{"raw", "direct", "shifted-inline", "shifted"}

// startProfile starts the process's CPU profile into path and returns what stops it.
func startProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
