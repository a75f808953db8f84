// Command dpotrf runs the tiled Cholesky factorisation of examples/potrf.jdf written as a
// dynamic task graph (rt/dynamic): instead of the .jdf's rules, the program inserts the
// POTRF, TRSM, SYRK and GEMM tasks of the right-looking algorithm in their sequential order,
// each with the tiles it reads and writes, and the graph infers the dependencies. The tile
// kernels, the priorities and the problem are those of examples/potrf (package cholesky,
// FactorDynamic), so the two factors are equal bit for bit.
//
//	go run ./examples/dpotrf -n 4096 -nb 256 -workers 2
//	go run ./examples/dpotrf -n 8192 -nb 320 -blas openblas -runs 3
//	./dpotrf -gpus cuda -n 16384 -nb 1024 -runs 3
//
// It checks ‖A − L·Lᵀ‖/‖A‖ < 1e-12 (-check) and exits with an error when the residual is too
// large. -blas picks the CPU tile kernels: auto (OpenBLAS when libopenblas.so.0 loads, gonum
// otherwise), gonum or openblas; OpenBLAS runs single-threaded inside tasks. -runs factors the
// matrix that many times (from the same input) and prints the median, minimum and maximum.
// -gpus picks the devices, as for examples/potrf (none, sim:N, cuda or auto; by default
// $JDF2GO_GPUS, else auto). With devices, every task has a GPU body besides its CPU body (the
// calls of potrf.jdf's GPU bodies, GEMMs batched) and rt shares the tasks between the CPU
// workers and the devices by estimated finish time (-share=false: the devices take every
// task); the output says how many tasks each device ran. On CUDA the tiles live in pinned
// host memory. The graph runs on one rank.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/jdf2go/jdf2go/examples/potrf/cholesky"
	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/dynamic"
	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/cuda"
	_ "github.com/jdf2go/jdf2go/rt/gpu/sim"
	"github.com/jdf2go/jdf2go/rt/remote"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "dpotrf:", err)
		os.Exit(1)
	}
}

// maxResidual is the accuracy the factorisation must reach, as for examples/potrf.
const maxResidual = 1e-12

// opts are the command's settings, the same on every rank.
type opts struct {
	n, nb, runs, window int
	sched, backend      string
	gpus                string
	check, share        bool
	seed                uint64
	stdout              io.Writer
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("dpotrf", flag.ContinueOnError)
	o := &opts{stdout: stdout}
	fs.IntVar(&o.n, "n", 4096, "matrix size")
	fs.IntVar(&o.nb, "nb", 256, "tile size")
	workers := fs.Int("workers", 0, "workers (0: all cores)")
	fs.StringVar(&o.sched, "sched", "lfq", "scheduler: lfq, ap (strict priority order) or gd")
	fs.StringVar(&o.backend, "blas", "auto", "CPU tile kernels: auto, gonum or openblas")
	fs.StringVar(&o.gpus, "gpus", "", "devices: none, sim:N, cuda or auto (default: $"+gpu.EnvDevices+", else auto)")
	fs.BoolVar(&o.share, "share", true, "share the tasks between the CPU workers and the devices by estimated time (false: the devices take every task)")
	fs.IntVar(&o.window, "window", dynamic.DefaultWindow, "tasks inserted and not yet done past which insertion waits")
	fs.IntVar(&o.runs, "runs", 1, "factorisations of the same matrix, timed one by one")
	fs.BoolVar(&o.check, "check", true, "check the residual after the last factorisation")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the random matrix")
	trace := fs.String("trace", "", "Perfetto trace file (empty: none)")
	fs.Func("dashboard", "serve a live dashboard of the run on `ADDR` (localhost:8080; same as $JDF2GO_DASHBOARD)",
		func(a string) error { return os.Setenv("JDF2GO_DASHBOARD", a) })
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.runs < 1 {
		return fmt.Errorf("-runs %d: want at least 1", o.runs)
	}
	// The job's ranks come from remote.Run, as for examples/potrf; one rank for now.
	cfg := remote.Config{Ranks: 1, Workers: *workers, Trace: *trace}
	if err := remote.Run(context.Background(), cfg, o.rank); err != nil {
		return err
	}
	if *trace != "" {
		fmt.Fprintf(stdout, "  trace: %s (open it in https://ui.perfetto.dev)\n", *trace)
	}
	return nil
}

// rank runs this rank's part of the factorisations; rank 0 prints.
func (o *opts) rank(bg context.Context, j *remote.Job) (err error) {
	if j.Size > 1 {
		// Every rank would insert the whole graph, but hold only its own tiles.
		return fmt.Errorf("%d ranks: this example runs on one rank", j.Size)
	}
	impl, err := blas.Select(o.backend)
	if err != nil {
		return err
	}
	devs, err := gpu.Open(o.gpus)
	if err != nil {
		return err
	}
	// Devices close after the Context (the launcher closes it when rank returns), and the
	// pinned tiles after the devices.
	var pool *cuda.PinnedPool
	defer func() {
		for _, d := range devs {
			err = errors.Join(err, d.Close())
		}
		if pool != nil {
			err = errors.Join(err, pool.Close())
		}
	}()
	var alloc rt.Alloc
	for _, d := range devs {
		if d.Device().Info().Type == gpu.TypeCUDA && pool == nil {
			if pool, err = cuda.NewPinnedPool(0); err != nil {
				return err
			}
			alloc = pool.Float64s
		}
	}
	p, err := cholesky.NewProblemGrid(o.n, o.nb, o.seed, rt.Grid{P: 1, Q: 1}, j.Rank, alloc)
	if err != nil {
		return err
	}
	c, err := j.Context(rt.Scheduler(o.sched), rt.Devices(gpu.RTDevices(devs)...), rt.ShareWork(o.share))
	if err != nil {
		return err
	}
	stdout := o.stdout
	fmt.Fprintf(stdout, "dpotrf: N=%d NB=%d (%dx%d tiles), %d workers, scheduler %s, BLAS %s, window %d, devices: %s\n",
		o.n, o.nb, p.A.MT, p.A.NT, c.Workers(), c.SchedulerName(), impl.Config(), o.window, gpu.Describe(devs))
	// The clock starts once the devices have their runtime kernels (gpu.Device.Ready).
	for _, d := range devs {
		if err := d.Device().Ready(bg); err != nil {
			return err
		}
	}
	before := deviceStats(devs)
	times := make([]time.Duration, 0, o.runs)
	var tasks int64
	for r := range o.runs {
		if r > 0 {
			p.Reset()
		}
		start := time.Now()
		// One graph per factorisation. Across ranks it would be created with
		// dynamic.Distributed(j.Node), on a matrix dealt over the grid.
		g, err := dynamic.New(c, dynamic.Name("dpotrf"), dynamic.Window(o.window))
		if err == nil {
			err = cholesky.RunFactor(bg, g, p.A, impl, len(devs) > 0)
		}
		el := time.Since(start)
		if err != nil {
			return err
		}
		times = append(times, el)
		tasks = g.Taskpool().Total()
	}
	med := median(times)
	fmt.Fprintf(stdout, "  factorisation: %v, %.1f GFLOP/s", med.Round(time.Microsecond), p.Flops()/med.Seconds()/1e9)
	if o.runs > 1 {
		fmt.Fprintf(stdout, " (median of %d; min %v, max %v)", o.runs,
			slices.Min(times).Round(time.Microsecond), slices.Max(times).Round(time.Microsecond))
	}
	fmt.Fprintf(stdout, "\n  tasks: %d per factorisation\n", tasks)
	if len(devs) > 0 {
		fmt.Fprintf(stdout, "  device tasks over %d runs: %s\n", o.runs, devShares(devs, before))
	}
	if o.check {
		res, err := p.Residual(impl)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "  ‖A − L·Lᵀ‖/‖A‖ = %.3g\n", res)
		if !(res < maxResidual) {
			return fmt.Errorf("residual %g is not below %g", res, maxResidual)
		}
	}
	return nil
}

// median returns the median of ds (the upper one of an even count), sorting ds.
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// deviceStats returns each device's statistics so far.
func deviceStats(devs []*gpu.RTDevice) []gpu.Stats {
	out := make([]gpu.Stats, len(devs))
	for i, d := range devs {
		out[i] = d.Device().Stats()
	}
	return out
}

// devShares formats the tasks each device completed since before and the mean number of
// tasks per body call (batched GEMMs raise it above 1): "sim0 120 tasks (1.8 per call)".
func devShares(devs []*gpu.RTDevice, before []gpu.Stats) string {
	parts := make([]string, len(devs))
	for i, d := range devs {
		st := d.Device().Stats()
		perCall := 0.0
		if calls := st.Batches - before[i].Batches; calls > 0 {
			perCall = float64(st.Batched-before[i].Batched) / float64(calls)
		}
		parts[i] = fmt.Sprintf("%s %d tasks (%.1f per call)", d.Device().Name(), st.Executed-before[i].Executed, perCall)
	}
	return strings.Join(parts, ", ")
}
