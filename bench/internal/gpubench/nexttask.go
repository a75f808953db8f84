package gpubench

// The next_task throughput benchmark (docs/gpu.md, "next_task"): CPU
// successors of GPU tasks, picked up by other workers while a manager runs.
//
// Why. A worker that completes a task keeps its best ready successor in its
// private next_task slot. The worker that manages a device completes every
// GPU task of its episode, and an episode lasts as long as the device has
// work, so a successor parked in the manager's slot would be invisible to
// the other workers until the manager leaves. The manager therefore flushes
// its slot when it wins the election and after each completion. This
// benchmark runs a graph where that matters and measures what the other
// workers make of it.
//
// The graph, written by hand the way jdf2go generates code:
//
//	G(g)    g = 0 .. NG-1
//	  CTL X -> X S(g, 0 .. NS-1)
//	  CTL W <- (D > 0 && g >= D) ? W S(g-D, 0)
//	  BODY [type=GPU]  one short kernel  END      (or, as the baseline, an empty CPU body)
//	S(g, s) g = 0 .. NG-1, s = 0 .. NS-1, priority 1
//	  CTL X <- X G(g)
//	  CTL W -> (s == 0 && D > 0 && g+D < NG) ? W G(g+D)
//	  BODY  spin for Spin  END
//
// With D = 0 (fan-out) every GPU task is ready at start: the workers that do
// not manage submit them and run successors as they come out. With a window
// D > 0 the successor S(g, 0) gates G(g+D), so at most D GPU tasks are ready
// or running at once and the critical path goes through CPU successors: a
// successor hidden in the manager's slot would stall the pipeline (the
// serialized critical path). Successors outrank GPU tasks (priority
// 1), as the critical path would in a real program.
//
// What is measured, from the rt trace (the Context runs with profiling on)
// and one timestamp per GPU task:
//   - successor tasks per second: NG*NS over the time from Context.Add to
//     the return of Taskpool.Wait;
//   - who ran each successor: a worker other than the parent's, and if so
//     whether it started while the management episode in which its parent
//     completed still ran; or the parent's own worker (for a GPU parent, the
//     manager after its episode ended). The parent's worker for a GPU parent
//     is the worker whose "gpu own" span, on the device that ran the parent,
//     contains the parent's release;
//   - the latency from the parent's release (its class's Successors function
//     stamps the tracer's clock, on the completing worker, just before the
//     successors are made ready) to the start of each successor's span
//     (taken before its body runs): median, 99th percentile and maximum.
//
// The same graph with the parent as an empty CPU task is the baseline: the
// ratio of the two rates is what routing the parents through a device and
// its manager costs (or gains) the successors.
//
// Rejected: measuring with a goroutine identity in the successor body (rt
// does not expose the worker to a CPU hook, and parsing goroutine stacks
// costs microseconds per task); a second Context per run (an RTDevice's
// trace tracks bind to the first Context that submits to it, so devices
// opened once, as CUDA devices must be, serve one Context: runs of a
// NextTask share it and are told apart by time).

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/driver"
	"github.com/jdf2go/jdf2go/rt/gpu/sim"
	"github.com/jdf2go/jdf2go/rt/profile"
)

// NextTaskConfig sets up a next_task benchmark: the rt Context and the
// devices its runs share.
type NextTaskConfig struct {
	// Workers is the number of rt workers (0: rt's default, JDF2GO_WORKERS
	// or GOMAXPROCS).
	Workers int
	// Devices are the devices to run on, opened for this benchmark alone:
	// an RTDevice writes its trace to the first Context that submits to it.
	// The caller closes them after NextTask.Close. Nil opens Count simulated
	// devices with Latency, which Close closes.
	Devices []*gpu.RTDevice
	// Count is the number of simulated devices when Devices is nil (default 1).
	Count int
	// Latency is the virtual duration of each operation of the simulated
	// devices (sim.WithLatency): the "short kernel" of a GPU task.
	Latency time.Duration
	// Kernel is the registered kernel each GPU task launches (grid 1, block
	// 32). Empty: a no-op operation on a simulated stream (it costs Latency),
	// which needs simulated devices.
	Kernel string
	// GPUBody, when set, replaces the launch of Kernel: it is the submit
	// hook of GPU task g (tests use it to order device work, or to keep a
	// task on the device with AGAIN).
	GPUBody func(d *gpu.Device, t *gpu.Task, st *gpu.Stream, g int) gpu.Result
	// Probe, when set, runs at the start of each successor's body (tests).
	Probe func(g, s int)
	// Timeout bounds each run (default 5 minutes).
	Timeout time.Duration
}

// NextTaskGraph is the shape of one run.
type NextTaskGraph struct {
	// GPUTasks is the number of parent tasks, NG.
	GPUTasks int
	// Successors is the number of CPU successors of each parent, NS.
	Successors int
	// Window, when positive, makes parent g wait for successor (g-Window, 0):
	// at most Window parents are ready or running at once.
	Window int
	// Spin is the CPU time each successor's body spins (0: an empty body).
	Spin time.Duration
	// CPUParent makes the parent an empty CPU task: the baseline.
	CPUParent bool
}

func (g NextTaskGraph) check() error {
	if g.GPUTasks < 1 || g.Successors < 1 || g.Window < 0 || g.Spin < 0 {
		return fmt.Errorf("%w: next_task graph %+v: want at least one parent and one successor each, a window and spin >= 0",
			gpu.ErrBadArgument, g)
	}
	return nil
}

// NextTaskRun is the outcome of one run.
type NextTaskRun struct {
	Graph   NextTaskGraph
	Workers int
	// Elapsed is the time from Context.Add to the return of Taskpool.Wait.
	Elapsed time.Duration
	// Successors is GPUTasks*Successors.
	Successors int
	// ByOthers counts the successors run by a worker other than the
	// parent's (for a GPU parent, the worker that managed its device when it
	// completed).
	ByOthers int
	// ByOthersDuring counts those of ByOthers that started while the
	// parent's management episode still ran (GPU parents only).
	ByOthersDuring int
	// ByParent counts the successors run by the parent's own worker: for a
	// GPU parent the manager once its episode ended, for a CPU parent mostly
	// from its next_task slot.
	ByParent int
	// LatencyMedian, LatencyP99 and LatencyMax are taken over every
	// successor, from its parent's release to its start.
	LatencyMedian, LatencyP99, LatencyMax time.Duration
	// Episodes is the number of management episodes of the run (all
	// devices), Managers the number of distinct workers that held them.
	Episodes, Managers int
}

// PerSecond is the successor throughput: Successors / Elapsed.
func (r NextTaskRun) PerSecond() float64 { return float64(r.Successors) / r.Elapsed.Seconds() }

// Summary describes the run in one line, for benchmark tables and figures.
func (r NextTaskRun) Summary() string {
	pct := func(n int) float64 { return 100 * float64(n) / float64(max(r.Successors, 1)) }
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	s := fmt.Sprintf("%.0f k successors/s; by other workers %.1f%%", r.PerSecond()/1e3, pct(r.ByOthers))
	if r.Graph.CPUParent {
		s += fmt.Sprintf(", by the parent's worker %.1f%%", pct(r.ByParent))
	} else {
		s += fmt.Sprintf(" (%.1f%% while the manager still ran), by the manager after its episode %.1f%%; %d episodes by %d workers",
			pct(r.ByOthersDuring), pct(r.ByParent), r.Episodes, r.Managers)
	}
	return s + fmt.Sprintf("; release to start median %.1f µs, p99 %.1f µs, max %.1f µs",
		us(r.LatencyMedian), us(r.LatencyP99), us(r.LatencyMax))
}

// NextTask runs next_task graphs on one rt Context with devices. Its runs
// are sequential; Close ends it.
type NextTask struct {
	cfg    NextTaskConfig
	c      *rt.Context
	devs   []*gpu.RTDevice
	opened bool // devs were opened here
	tr     *profile.Tracer
	names  ntNames
	body   func(*gpu.Device, *gpu.Task, *gpu.Stream, int) gpu.Result
}

// ntNames are the trace names the analysis looks for.
type ntNames struct {
	parent, succ profile.Name
	own          map[profile.Name]int // "gpu own gpuN" -> device index
}

// NewNextTask starts the Context (with profiling) on cfg's devices.
func NewNextTask(cfg NextTaskConfig) (*NextTask, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Minute
	}
	b := &NextTask{cfg: cfg, devs: cfg.Devices}
	if b.devs == nil {
		if err := b.openSim(); err != nil {
			return nil, err
		}
	}
	if len(b.devs) == 0 {
		return nil, fmt.Errorf("%w: next_task benchmark without devices", gpu.ErrBadArgument)
	}
	b.body = cfg.GPUBody
	if b.body == nil {
		launch := func(st *gpu.Stream) error {
			if cfg.Kernel != "" {
				return st.Launch(cfg.Kernel, gpu.Dim3{X: 1}, gpu.Dim3{X: 32})
			}
			ss, ok := st.Backend().(*sim.Stream)
			if !ok {
				return fmt.Errorf("%w: no kernel given for %s, which is not simulated", gpu.ErrBadArgument, st.Device().Name())
			}
			return ss.Enqueue("nexttask", noop)
		}
		b.body = func(_ *gpu.Device, t *gpu.Task, st *gpu.Stream, g int) gpu.Result {
			if err := launch(st); err != nil {
				return t.Fail(fmt.Errorf("G(%d): %w", g, err))
			}
			return gpu.Done
		}
	}
	opts := []rt.Option{rt.Profiling(), rt.Devices(gpu.RTDevices(b.devs)...)}
	if cfg.Workers > 0 {
		opts = append(opts, rt.Workers(cfg.Workers))
	}
	c, err := rt.New(opts...)
	if err != nil {
		return nil, errors.Join(err, b.closeDevices())
	}
	b.c, b.tr = c, c.Tracer()
	b.names = ntNames{parent: b.tr.Name(ntParentName), succ: b.tr.Name(ntSuccName), own: map[profile.Name]int{}}
	for _, d := range b.devs {
		// The name rt/gpu gives a manager's episode span on its worker's track.
		b.names.own[b.tr.Name("gpu own "+d.Device().Name())] = d.Device().Index()
	}
	return b, nil
}

func (b *NextTask) openSim() error {
	n := b.cfg.Count
	if n <= 0 {
		n = 1
	}
	bes := make([]driver.Backend, n)
	for i := range n {
		bes[i] = sim.New(sim.WithName(fmt.Sprintf("sim%d", i)), sim.WithLatency(b.cfg.Latency))
	}
	devs, err := OpenBackends(nil, bes...)
	if err != nil {
		return err
	}
	b.devs = devs
	b.opened = true
	return nil
}

func (b *NextTask) closeDevices() error {
	if !b.opened {
		return nil
	}
	var errs []error
	for _, d := range b.devs {
		errs = append(errs, d.Close())
	}
	b.devs = nil
	return errors.Join(errs...)
}

// Workers returns the number of workers of the Context.
func (b *NextTask) Workers() int { return b.c.Workers() }

// Close closes the Context, then the devices it opened.
func (b *NextTask) Close() error {
	return errors.Join(b.c.Close(), b.closeDevices())
}

// Run runs graph g once and analyses its trace.
func (b *NextTask) Run(g NextTaskGraph) (NextTaskRun, error) {
	if err := g.check(); err != nil {
		return NextTaskRun{}, err
	}
	gl := &ntGlobals{ng: g.GPUTasks, ns: g.Successors, window: g.Window, spinFor: g.Spin, tr: b.tr,
		gpuBody: b.body, probe: b.cfg.Probe, parent: &ntGPU,
		release: make([]int64, g.GPUTasks), device: make([]int32, g.GPUTasks)}
	if g.CPUParent {
		gl.parent, gl.cpuParent = &ntCPU, true
	}
	tp := rt.NewTaskpool("nexttask", gl, gl.parent, &ntSucc)
	episodes0 := b.episodes()
	t0 := b.tr.Now()
	start := time.Now()
	if err := b.c.Add(tp); err != nil {
		return NextTaskRun{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.cfg.Timeout)
	defer cancel()
	err := tp.Wait(ctx)
	elapsed := time.Since(start)
	if err != nil {
		tp.Cancel(err)
		return NextTaskRun{}, fmt.Errorf("sim: next_task run %+v: %w", g, err)
	}
	r, err := b.analyze(gl, t0, b.episodes()-episodes0)
	r.Graph, r.Workers, r.Elapsed = g, b.c.Workers(), elapsed
	return r, err
}

// episodes sums the management episodes started on the devices so far.
func (b *NextTask) episodes() int {
	n := 0
	for _, d := range b.devs {
		n += int(d.Device().Stats().Episodes)
	}
	return n
}

// ntEpisode is one management episode read from the trace.
type ntEpisode struct {
	dev, worker int
	start, end  int64
}

// analyze reads the run's spans (those that started at t0 or later) from
// the workers' tracks: successors, CPU parents and management episodes.
func (b *NextTask) analyze(gl *ntGlobals, t0 int64, episodes int) (NextTaskRun, error) {
	r := NextTaskRun{Successors: gl.ng * gl.ns}
	// An episode's span is written when the manager leaves, after its last
	// release, which the taskpool may have counted before: wait for every
	// episode the devices counted.
	var eps []ntEpisode
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Microsecond) {
		eps = eps[:0]
		for w := range b.c.Workers() {
			rt.Impl.Worker(b.c, w).Track().Events(func(e *profile.Event) {
				if dev, ok := b.names.own[e.Name]; ok && e.Start >= t0 {
					eps = append(eps, ntEpisode{dev: dev, worker: w, start: e.Start, end: e.End})
				}
			})
		}
		if len(eps) >= episodes {
			break
		}
		if time.Now().After(deadline) {
			return r, fmt.Errorf("sim: next_task: %d of %d management episodes traced (were the devices used by another rt.Context?)", len(eps), episodes)
		}
	}
	slices.SortFunc(eps, func(a, b ntEpisode) int { return cmp.Compare(a.start, b.start) })
	r.Episodes = len(eps)
	managers := map[int]bool{}
	for _, e := range eps {
		managers[e.worker] = true
	}
	r.Managers = len(managers)

	n := gl.ng * gl.ns
	start := make([]int64, n)
	who := make([]int, n)
	parentWorker := make([]int, gl.ng)
	for i := range who {
		who[i] = -1
	}
	for i := range parentWorker {
		parentWorker[i] = -1
	}
	var problems []string
	for w := range b.c.Workers() {
		rt.Impl.Worker(b.c, w).Track().Events(func(e *profile.Event) {
			if e.Start < t0 {
				return
			}
			switch e.Name {
			case b.names.succ:
				k := int(e.Args[0])*gl.ns + int(e.Args[1])
				if who[k] >= 0 {
					problems = append(problems, fmt.Sprintf("S(%d, %d) ran twice", e.Args[0], e.Args[1]))
				}
				start[k], who[k] = e.Start, w
			case b.names.parent:
				parentWorker[e.Args[0]] = w
			}
		})
	}
	lat := make([]int64, 0, n)
	for k := range n {
		g, s := k/gl.ns, k%gl.ns
		if who[k] < 0 {
			problems = append(problems, fmt.Sprintf("no span for S(%d, %d)", g, s))
			continue
		}
		rel := gl.release[g]
		if d := start[k] - rel; d >= 0 {
			lat = append(lat, d)
		} else {
			problems = append(problems, fmt.Sprintf("S(%d, %d) started %d ns before G(%d) released it", g, s, -d, g))
		}
		owner, until := parentWorker[g], int64(-1)
		if !gl.cpuParent {
			ep, ok := episodeAt(eps, int(gl.device[g]), rel)
			if !ok {
				problems = append(problems, fmt.Sprintf("G(%d) was released outside any episode of gpu%d", g, gl.device[g]))
				continue
			}
			owner, until = ep.worker, ep.end
		}
		switch {
		case who[k] != owner:
			r.ByOthers++
			if start[k] < until {
				r.ByOthersDuring++
			}
		case start[k] < until:
			problems = append(problems, fmt.Sprintf("S(%d, %d) ran on worker %d while it managed a device", g, s, owner))
		default:
			r.ByParent++
		}
	}
	if len(problems) > 0 {
		return r, fmt.Errorf("sim: next_task trace: %d problems, first: %s", len(problems), problems[0])
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		r.LatencyMedian = time.Duration(lat[len(lat)/2])
		r.LatencyP99 = time.Duration(lat[(len(lat)*99+99)/100-1])
		r.LatencyMax = time.Duration(lat[len(lat)-1])
	}
	return r, nil
}

// episodeAt finds the episode of device dev that contains time at; eps is
// sorted by start, and the episodes of one device do not overlap.
func episodeAt(eps []ntEpisode, dev int, at int64) (ntEpisode, bool) {
	i := sort.Search(len(eps), func(i int) bool { return eps[i].start > at })
	for i--; i >= 0; i-- {
		if e := eps[i]; e.dev == dev {
			return e, at <= e.end
		}
	}
	return ntEpisode{}, false
}

// ---------------------------------------------------------------- the graph

const (
	ntParentName = "G"
	ntSuccName   = "S"
)

// ntGlobals is the taskpool's globals.
type ntGlobals struct {
	ng, ns, window int
	spinFor        time.Duration
	parent         *rt.TaskClass // ntGPU or ntCPU: the target of S's W flow
	cpuParent      bool
	tr             *profile.Tracer
	gpuBody        func(*gpu.Device, *gpu.Task, *gpu.Stream, int) gpu.Result
	probe          func(g, s int)
	// Per parent, written once by the worker that completes it and read
	// after Wait: when it released its successors (tracer clock), and the
	// device that ran it.
	release []int64
	device  []int32
}

func ntOf(tp *rt.Taskpool) *ntGlobals { return tp.Globals().(*ntGlobals) }

var ntGPU, ntCPU, ntSucc rt.TaskClass

// ntGPUBody is G's GPU body: it notes the device, then runs the configured
// body (by default: launch the kernel, DONE).
var ntGPUBody = &gpu.Incarnation{Name: "G/gpu", Submit: func(d *gpu.Device, t *gpu.Task, st *gpu.Stream) gpu.Result {
	task := t.EC().(*rt.Task)
	gl, g := ntOf(task.Taskpool()), task.Locals()[0]
	gl.device[g] = int32(d.Index())
	return gl.gpuBody(d, t, st, g)
}}

func init() {
	ntGPU = rt.TaskClass{
		Name: ntParentName, ID: 0, Locals: []string{"g"}, Params: []int{0},
		Flows: []rt.Flow{{Name: "X", Access: rt.CTL}, {Name: "W", Access: rt.CTL}},
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			for g := range ntOf(tp).ng {
				l[0] = g
				if !yield(l) {
					return
				}
			}
		},
		Complete: func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < ntOf(tp).ng },
		Goal: func(tp *rt.Taskpool, l *rt.Locals) uint32 {
			if gl := ntOf(tp); gl.window > 0 && l[0] >= gl.window {
				return 1
			}
			return 0
		},
		Successors: func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
			if flows&1 == 0 {
				return
			}
			gl, g := ntOf(tp), l[0]
			gl.release[g] = gl.tr.Now()
			for s := range gl.ns {
				e.L[0], e.L[1] = g, s
				e.Task(0, 0, &ntSucc, 0)
			}
		},
		Predecessors: func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
			if gl := ntOf(tp); flows&2 != 0 && gl.window > 0 && l[0] >= gl.window {
				e.L[0], e.L[1] = l[0]-gl.window, 0
				e.Task(1, 0, &ntSucc, 1)
			}
		},
		Incarnations: []rt.Incarnation{{Kind: rt.GPU, Device: ntGPUBody}},
	}
	ntCPU = ntGPU
	ntCPU.Incarnations = []rt.Incarnation{{Kind: rt.CPU, Hook: func(*rt.Task) error { return nil }}}

	ntSucc = rt.TaskClass{
		Name: ntSuccName, ID: 1, Locals: []string{"g", "s"}, Params: []int{0, 1},
		Flows:     []rt.Flow{{Name: "X", Access: rt.CTL}, {Name: "W", Access: rt.CTL}},
		NoStartup: true,
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			gl := ntOf(tp)
			for g := range gl.ng {
				for s := range gl.ns {
					l[0], l[1] = g, s
					if !yield(l) {
						return
					}
				}
			}
		},
		Complete: func(tp *rt.Taskpool, l *rt.Locals) bool {
			gl := ntOf(tp)
			return l[0] >= 0 && l[0] < gl.ng && l[1] >= 0 && l[1] < gl.ns
		},
		Goal:     func(*rt.Taskpool, *rt.Locals) uint32 { return 1 },
		Priority: func(*rt.Taskpool, *rt.Locals) int32 { return 1 },
		Successors: func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
			if gl := ntOf(tp); flows&2 != 0 && l[1] == 0 && gl.window > 0 && l[0]+gl.window < gl.ng {
				e.L[0] = l[0] + gl.window
				e.Task(1, 0, gl.parent, 1)
			}
		},
		Predecessors: func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
			if flows&1 != 0 {
				e.L[0] = l[0]
				e.Task(0, 0, ntOf(tp).parent, 0)
			}
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(t *rt.Task) error {
			gl := ntOf(t.Taskpool())
			if gl.probe != nil {
				gl.probe(t.Locals()[0], t.Locals()[1])
			}
			if gl.spinFor > 0 {
				spin(gl.spinFor)
			}
			return nil
		}}},
	}
}
