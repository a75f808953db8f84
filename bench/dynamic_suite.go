package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/dynamic"
)

// The dynamic suite: tasks inserted from Go (rt/dynamic), empty bodies, one inserting
// goroutine, 2 workers (GOMAXPROCS 2), 100,000 tasks a run (-quick: 20,000), window 10,000:
//   - "0 data": independent tasks; the rate column is the insertion throughput;
//   - "1 datum", "10 data": every task reads and writes the same data, a chain.
//
// Beside each, in the same run, StarPU's tasks_overhead (Debian's starpu-examples) with
// STARPU_NCPU=2 and as many buffers (at most 8, its limit), when it is installed: its own
// "Total" time, which counts submission and execution as ours does. And "10M tasks": 10
// million tasks (-quick: 1 million) through a window of 10,000 in a child process, whose peak
// resident set, resident set one second in and largest after that are in the note.
func init() {
	register(Suite{Name: "dynamic", Applicable: func() (bool, string) { return true, "" }, Run: runDynamic})
}

// starpuOverhead is where Debian's starpu-examples puts tasks_overhead.
const starpuOverhead = "/usr/lib/x86_64-linux-gnu/starpu/examples/tasks_overhead"

// starpuMaxBuffers is the most buffers a task of tasks_overhead takes (STARPU_NMAXBUFS).
const starpuMaxBuffers = 8

const dynWorkers = 2

func runDynamic(cfg *Config) ([]Row, error) {
	n := 100000
	if cfg.Quick {
		n = 20000
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(dynWorkers))
	c, err := rt.New(rt.Workers(dynWorkers), rt.Scheduler("lfq"), rt.Progress(nil))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_, statErr := os.Stat(starpuOverhead)
	haveStarPU := statErr == nil
	var rows []Row
	for _, nd := range []int{0, 1, 10} {
		name := fmt.Sprintf("%d data", nd)
		if nd == 1 {
			name = "1 datum"
		}
		s, err := cfg.Measure(func() (time.Duration, error) { return insertRun(c, n, nd) })
		if err != nil {
			return rows, fmt.Errorf("%s: %w", name, err)
		}
		r := Row{Suite: "dynamic", Workload: name, Workers: dynWorkers, Variant: "jdf2go", Per: float64(n),
			Unit: "ns/task", Stats: s}
		switch nd {
		case 0:
			r.Note = "independent tasks (goal ≥ 3 M tasks/s)"
		case 1:
			r.Note = "goal ≤ 300 ns/task"
		case 10:
			r.Note = "goal ≤ 1500 ns/task"
		}
		if !haveStarPU {
			r.Note += "; StarPU's tasks_overhead not installed (apt-get install starpu-examples)"
			rows = append(rows, r)
			continue
		}
		b := min(nd, starpuMaxBuffers)
		ss, err := cfg.Measure(func() (time.Duration, error) { return starpuRun(n, b) })
		if err != nil {
			r.Note += fmt.Sprintf("; StarPU failed: %v", err)
			rows = append(rows, r)
			continue
		}
		r.Baselines = []string{"starpu"}
		// The ratio column has two decimals; StarPU takes tens of times longer.
		r.Note += fmt.Sprintf("; StarPU takes %.0f× as long", float64(ss.Median)/float64(s.Median))
		sr := Row{Suite: "dynamic", Workload: name, Workers: dynWorkers, Variant: "starpu", Per: float64(n),
			Unit: "ns/task", Stats: ss, Note: fmt.Sprintf("tasks_overhead -i %d -b %d, STARPU_NCPU=%d", n, b, dynWorkers)}
		if b != nd {
			sr.Note += fmt.Sprintf(" (%d buffers: its limit)", b)
		}
		rows = append(rows, r, sr)
	}
	r, err := dynamicMemory(cfg)
	if err != nil {
		return rows, fmt.Errorf("10M tasks: %w", err)
	}
	return append(rows, r), nil
}

// insertRun inserts n empty tasks, each reading and writing nd data, into a new graph on c
// and waits for them; it returns the time of both.
func insertRun(c *rt.Context, n, nd int) (time.Duration, error) {
	g, err := dynamic.New(c, dynamic.Window(10000))
	if err != nil {
		return 0, err
	}
	args := make([]dynamic.Arg, nd)
	for i := range args {
		d, err := dynamic.Register(g, fmt.Sprint("d", i), make([]float64, 1))
		if err != nil {
			return 0, err
		}
		args[i] = dynamic.ReadWrite(d)
	}
	nop := func(*dynamic.Task) error { return nil }
	t0 := time.Now()
	for range n {
		if err := g.Insert("EMPTY", nop, args...); err != nil {
			return 0, err
		}
	}
	err = g.Wait(context.Background())
	return time.Since(t0), err
}

var starpuTotal = regexp.MustCompile(`(?m)^Total: ([0-9.]+) secs`)

// starpuRun runs tasks_overhead for n tasks of b buffers and returns the total it reports.
func starpuRun(n, b int) (time.Duration, error) {
	cmd := exec.Command(starpuOverhead, "-i", strconv.Itoa(n), "-b", strconv.Itoa(b))
	cmd.Env = append(os.Environ(), fmt.Sprintf("STARPU_NCPU=%d", dynWorkers), "STARPU_NCUDA=0",
		"STARPU_NOPENCL=0", "STARPU_SILENT=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%v\n%s", err, out)
	}
	m := starpuTotal.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("no \"Total: ... secs\" in its output:\n%s", out)
	}
	s, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		return 0, err
	}
	return time.Duration(s * float64(time.Second)), nil
}

// memReport is what the child process of the memory workload prints.
type memReport struct {
	Tasks    int    `json:"tasks"`
	Nanos    int64  `json:"nanos"`     // insertion and execution
	RSSAt1s  int64  `json:"rss_at_1s"` // bytes; 0 if the run took less than a second
	MaxAfter int64  `json:"max_after"` // largest resident set sampled after the first second
	Samples  int    `json:"samples"`   // resident set samples, one per 100 ms
	Final    int64  `json:"final_rss"` // resident set at the end
	Peak     int64  `json:"-"`         // measured by the parent (commandPeak)
	Window   int    `json:"window"`    // the graph's window
	Workers  int    `json:"workers"`   // the Context's workers
	Data     int    `json:"data"`      // data the tasks cycle through
	Err      string `json:"err,omitempty"`
}

// dynamicMemory runs the memory workload in a child process (this binary, with
// -dynamic-memory-child), whose peak resident set commandPeak measures apart from the
// driver's.
func dynamicMemory(cfg *Config) (Row, error) {
	n := 10_000_000
	name := "10M tasks, window 10000"
	if cfg.Quick {
		n, name = 1_000_000, "1M tasks, window 10000"
	}
	exe, err := os.Executable()
	if err != nil {
		return Row{}, err
	}
	dir, err := os.MkdirTemp("", "jdf2go-bench-dynamic")
	if err != nil {
		return Row{}, err
	}
	defer os.RemoveAll(dir)
	cmd, peak, _ := commandPeak(dir, exe, "-dynamic-memory-child", strconv.Itoa(n))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return Row{}, fmt.Errorf("%v\n%s", err, stderr.Bytes())
	}
	var rep memReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		return Row{}, fmt.Errorf("child output: %v\n%s", err, stdout.Bytes())
	}
	if rep.Err != "" {
		return Row{}, fmt.Errorf("child: %s", rep.Err)
	}
	rep.Peak = peak()
	mib := func(b int64) float64 { return float64(b) / (1 << 20) }
	note := fmt.Sprintf("peak RSS %.0f MiB (goal ≤ 100 MB), RSS %.0f MiB at 1 s and at most %.0f MiB after "+
		"(flat: equal), %.0f MiB at the end; %d data read-write round-robin",
		mib(rep.Peak), mib(rep.RSSAt1s), mib(rep.MaxAfter), mib(rep.Final), rep.Data)
	slog.Info("dynamic", "workload", name, "memory", note)
	d := time.Duration(rep.Nanos)
	return Row{Suite: "dynamic", Workload: name, Workers: rep.Workers, Variant: "jdf2go", Per: float64(n),
		Unit: "ns/task", Stats: Stats{Median: d, Min: d, Max: d}, Note: note}, nil
}

// memoryChild is the child of dynamicMemory: it inserts n empty tasks, each reading and
// writing one of 64 data in turn, through a window of 10,000 on 2 workers, sampling its
// resident set every 100 ms, and writes a memReport to w.
func memoryChild(n int, w io.Writer) int {
	rep := memReport{Tasks: n, Window: 10000, Workers: dynWorkers, Data: 64}
	err := func() error {
		runtime.GOMAXPROCS(dynWorkers)
		c, err := rt.New(rt.Workers(dynWorkers), rt.Progress(nil))
		if err != nil {
			return err
		}
		defer c.Close()
		g, err := dynamic.New(c, dynamic.Window(rep.Window))
		if err != nil {
			return err
		}
		data := make([]dynamic.Arg, rep.Data)
		for i := range data {
			d, err := dynamic.Register(g, fmt.Sprint("d", i), make([]float64, 1))
			if err != nil {
				return err
			}
			data[i] = dynamic.ReadWrite(d)
		}
		stop := make(chan struct{})
		sampled := make(chan struct{})
		t0 := time.Now()
		go func() { // owned here: stopped and joined below
			defer close(sampled)
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case now := <-tick.C:
					rss := residentSet()
					rep.Samples++
					switch {
					case now.Sub(t0) < time.Second:
						rep.RSSAt1s = rss
					default:
						rep.MaxAfter = max(rep.MaxAfter, rss)
					}
				}
			}
		}()
		nop := func(*dynamic.Task) error { return nil }
		for i := range n {
			if err := g.Insert("EMPTY", nop, data[i%len(data)]); err != nil {
				close(stop)
				<-sampled
				return err
			}
		}
		err = g.Wait(context.Background())
		rep.Nanos = int64(time.Since(t0))
		close(stop)
		<-sampled
		rep.Final = residentSet()
		return err
	}()
	if err != nil {
		rep.Err = err.Error()
	}
	b, _ := json.Marshal(rep)
	fmt.Fprintf(w, "%s\n", b)
	if err != nil {
		return 1
	}
	return 0
}

// residentSet returns the process's resident set in bytes from /proc/self/status, 0 when it
// cannot be read (not Linux).
func residentSet() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var kb int64
		if _, err := fmt.Sscanf(sc.Text(), "VmRSS: %d kB", &kb); err == nil {
			return kb << 10
		}
	}
	return 0
}
