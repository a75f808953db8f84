package rt_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/rttest"
)

// prioGlobals is the taskpool struct of the priority program below.
type prioGlobals struct {
	n     int
	mu    sync.Mutex
	order []string
}

func (g *prioGlobals) record(t *rt.Task) error {
	g.mu.Lock()
	g.order = append(g.order, t.String())
	g.mu.Unlock()
	return nil
}

// The priority program:
//
//	P(k)  k = 0 .. N-1   CTL X -> X Q(k)          ; (k*7 % N) * 2
//	Q(k)  k = 0 .. N-1   CTL X <- X P(k)          ; (k*5 % N) * 2 + 1
var prioP, prioQ rt.TaskClass

func prioOf(tp *rt.Taskpool) *prioGlobals { return tp.Globals().(*prioGlobals) }

func init() {
	space := func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
		for k := 0; k < prioOf(tp).n; k++ {
			l[0] = k
			if !yield(l) {
				return
			}
		}
	}
	complete := func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < prioOf(tp).n }
	hook := func(t *rt.Task) error { return prioOf(t.Taskpool()).record(t) }
	prioP = rt.TaskClass{Name: "P", ID: 0, Locals: []string{"k"}, Params: []int{0},
		Flows: []rt.Flow{{Name: "X", Access: rt.CTL}}, Space: space, Complete: complete,
		Priority: func(tp *rt.Taskpool, l *rt.Locals) int32 { return int32(l[0] * 7 % prioOf(tp).n * 2) },
		Successors: func(tp *rt.Taskpool, l *rt.Locals, f rt.FlowMask, e *rt.Edges) {
			e.L[0] = l[0]
			e.Task(0, 0, &prioQ, 0)
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: hook}}}
	prioQ = rt.TaskClass{Name: "Q", ID: 1, Locals: []string{"k"}, Params: []int{0},
		Flows: []rt.Flow{{Name: "X", Access: rt.CTL}}, Space: space, Complete: complete,
		NoStartup: true, Goal: func(*rt.Taskpool, *rt.Locals) uint32 { return 1 },
		Priority:     func(tp *rt.Taskpool, l *rt.Locals) int32 { return int32(l[0]*5%prioOf(tp).n*2 + 1) },
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: hook}}}
}

// Under ap with one worker the execution order is exactly the strict-priority simulation.
func TestPriorityOrderAP(t *testing.T) {
	const n = 50 // distinct priorities; below readyBatch so startup pushes one batch
	c := newCtx(t, rt.Workers(1), rt.Scheduler("ap"))
	g := &prioGlobals{n: n}
	mustRun(t, c, rt.NewTaskpool("prio", g, &prioP, &prioQ))

	// Simulation: ready set starts with every P; always run the highest priority.
	type item struct {
		name string
		prio int
		k    int
		isP  bool
	}
	var ready []item
	for k := 0; k < n; k++ {
		ready = append(ready, item{fmt.Sprintf("P(%d)", k), k * 7 % n * 2, k, true})
	}
	var want []string
	for len(ready) > 0 {
		best := 0
		for i, it := range ready {
			if it.prio > ready[best].prio {
				best = i
			}
		}
		it := ready[best]
		ready = slices.Delete(ready, best, best+1)
		want = append(want, it.name)
		if it.isP {
			ready = append(ready, item{fmt.Sprintf("Q(%d)", it.k), it.k*5%n*2 + 1, it.k, false})
		}
	}
	if !slices.Equal(g.order, want) {
		t.Fatalf("order under ap:\n got %v\nwant %v", g.order, want)
	}
}

// goid returns the current goroutine's id (tests only).
func goid() string {
	var buf [64]byte
	s := string(buf[:runtime.Stack(buf[:], false)])
	return strings.Fields(s)[1]
}

// With the next_task slot on, a chain never leaves the worker that started it (the slot is
// private, so nobody can steal the successor); with it off, tasks go through the scheduler.
func TestNextTaskLocality(t *testing.T) {
	const n = 2000
	for _, keep := range []bool{true, false} {
		t.Run(fmt.Sprint("keep=", keep), func(t *testing.T) {
			c := newCtx(t, rt.Workers(2), rt.KeepNextTask(keep))
			ids := make([]string, n)
			mustRun(t, c, rttest.Chains(1, n, func(t *rt.Task) error {
				ids[t.Locals()[1]] = goid()
				return nil
			}))
			moves := 0
			for k := 1; k < n; k++ {
				if ids[k] != ids[k-1] {
					moves++
				}
			}
			if keep && moves != 0 {
				t.Fatalf("chain changed worker %d times with the next_task slot on", moves)
			}
			t.Logf("worker changes: %d", moves)
		})
	}
}

// flushDevice completes A(0) on the submitting worker, which parks A(1) in that worker's
// next_task slot, then flushes the slot (or not) and waits for A(1) to run elsewhere.
type flushDevice struct {
	flush bool
	ran1  chan struct{}
	got   atomic.Bool
}

func (d *flushDevice) Name() string                 { return "flushdev" }
func (d *flushDevice) Accepts(k rt.DeviceKind) bool { return k == rt.GPU }
func (d *flushDevice) Load() int64                  { return 0 }
func (d *flushDevice) Submit(w rt.Worker, t *rt.Task, inc *rt.Incarnation) error {
	w.Complete(t)
	if d.flush {
		w.FlushNextTask()
	}
	// A device manager busy with other work: with the flush, another worker runs the successor
	// (allow for a loaded machine); without it, nobody can within the wait.
	wait := 200 * time.Millisecond
	if d.flush {
		wait = 20 * time.Second
	}
	select {
	case <-d.ran1:
		d.got.Store(true)
	case <-time.After(wait):
	}
	return nil
}

func TestFlushNextTask(t *testing.T) {
	for _, flush := range []bool{true, false} {
		t.Run(fmt.Sprint("flush=", flush), func(t *testing.T) {
			dev := &flushDevice{flush: flush, ran1: make(chan struct{})}
			c := newCtx(t, rt.Workers(2), rt.Devices(dev))
			tc := chainClassWithGPU(dev.ran1)
			mustRun(t, c, rt.NewTaskpool("flush", &rttestN{n: 2}, tc))
			if dev.got.Load() != flush {
				t.Fatalf("successor ran on another worker while the manager was busy: %v, want %v",
					dev.got.Load(), flush)
			}
		})
	}
}

type rttestN struct{ n int }

// chainClassWithGPU is A(k), k = 0..n-1, a CTL chain whose A(0) runs on a GPU incarnation
// and whose A(1) closes ran1 when it runs on the CPU.
func chainClassWithGPU(ran1 chan struct{}) *rt.TaskClass {
	tc := &rt.TaskClass{Name: "A", Locals: []string{"k"}, Params: []int{0},
		Flows: []rt.Flow{{Name: "X", Access: rt.CTL}}}
	n := func(tp *rt.Taskpool) int { return tp.Globals().(*rttestN).n }
	tc.Space = func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
		for k := 0; k < n(tp); k++ {
			l[0] = k
			if !yield(l) {
				return
			}
		}
	}
	tc.Complete = func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < n(tp) }
	tc.Goal = func(tp *rt.Taskpool, l *rt.Locals) uint32 { return uint32(min(l[0], 1)) }
	tc.Successors = func(tp *rt.Taskpool, l *rt.Locals, f rt.FlowMask, e *rt.Edges) {
		e.L[0] = l[0] + 1
		if tc.Complete(tp, &e.L) {
			e.Task(0, 0, tc, 0)
		}
	}
	tc.Incarnations = []rt.Incarnation{
		{Kind: rt.GPU, Evaluate: rt.EvaluateOf(func(t *rt.Task) bool { return t.Locals()[0] == 0 })},
		{Kind: rt.CPU, Hook: func(t *rt.Task) error {
			if t.Locals()[0] == 1 {
				close(ran1)
			}
			return nil
		}},
	}
	return tc
}

var errBoom = errors.New("boom")

func TestTaskErrorFailsOnlyItsTaskpool(t *testing.T) {
	for _, sched := range schedulers {
		t.Run(sched, func(t *testing.T) {
			c := newCtx(t, rt.Workers(2), rt.Scheduler(sched))
			other := rttest.Grid(40, 40, nil)
			if err := c.Add(other); err != nil {
				t.Fatal(err)
			}
			var after atomic.Int32
			err := run(t, c, rttest.Chains(2, 100, func(t *rt.Task) error {
				if t.Locals()[0] == 1 && t.Locals()[1] == 7 {
					return errBoom
				}
				if t.Locals()[0] == 1 && t.Locals()[1] > 7 {
					after.Add(1)
				}
				return nil
			}))
			var te *rt.TaskError
			if !errors.As(err, &te) || !errors.Is(err, rt.ErrTaskpoolFailed) || !errors.Is(err, errBoom) {
				t.Fatalf("err = %v, want a TaskError wrapping errBoom", err)
			}
			if te.Task != "T(1, 7)" || !strings.Contains(err.Error(), "T(1, 7): boom") {
				t.Fatalf("error %q does not name T(1, 7)", err)
			}
			if after.Load() != 0 {
				t.Fatalf("%d successors of the failed task ran", after.Load())
			}
			if err := wait(t, other); err != nil {
				t.Fatalf("the other taskpool failed too: %v", err)
			}
			mustRun(t, c, rttest.Chains(1, 10, nil)) // the Context still works
		})
	}
}

func TestPanicFailsTaskpool(t *testing.T) {
	c := newCtx(t, rt.Workers(2))
	err := run(t, c, rttest.Grid(20, 20, func(t *rt.Task) error {
		if t.Locals()[0] == 3 && t.Locals()[1] == 4 {
			var m map[string]int
			m["x"] = 1 // nil map write
		}
		return nil
	}))
	if !errors.Is(err, rt.ErrTaskpoolFailed) || !strings.Contains(err.Error(), "T(3, 4): panic: assignment to entry in nil map") {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "control_test.go") {
		t.Fatalf("panic error carries no stack: %v", err)
	}
}

func TestCancelLeavesNoGoroutine(t *testing.T) {
	c, err := rt.New(rt.Workers(2), rt.Progress(&strings.Builder{}))
	if err != nil {
		t.Fatal(err)
	}
	var ran atomic.Int32
	tp := rttest.Chains(2, 100000, func(t *rt.Task) error {
		ran.Add(1)
		time.Sleep(100 * time.Microsecond)
		return nil
	})
	if err := c.Add(tp); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	err = tp.Wait(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait = %v, want DeadlineExceeded", err)
	}
	n := ran.Load()
	time.Sleep(20 * time.Millisecond)
	if extra := ran.Load() - n; extra > 0 {
		t.Fatalf("%d bodies ran after Wait returned from a cancelled taskpool", extra)
	}
	// A second taskpool still runs, then Close stops everything.
	if err := c.Add(rttest.Chains(1, 10, nil)); err != nil {
		t.Fatal(err)
	}
	long := rttest.Chains(1, 1<<20, func(*rt.Task) error { time.Sleep(time.Millisecond); return nil })
	if err := c.Add(long); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := wait(t, long); !errors.Is(err, rt.ErrClosed) {
		t.Fatalf("Wait after Close = %v, want ErrClosed", err)
	}
	if err := c.Add(rttest.Chains(1, 1, nil)); !errors.Is(err, rt.ErrClosed) {
		t.Fatalf("Add after Close = %v, want ErrClosed", err)
	}
	checkNoLeak(t)
}

// The results Next, Again and Async (docs/language.md, "CPU bodies").
func TestBodyResults(t *testing.T) {
	c := newCtx(t, rt.Workers(2))
	const n = 300
	var again, cpu, next, async sync.Map
	tc := &rt.TaskClass{Name: "R", Locals: []string{"k"}, Params: []int{0},
		Flows: []rt.Flow{{Name: "X", Access: rt.CTL}}}
	tc.Space = func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
		for k := 0; k < n; k++ {
			l[0] = k
			if !yield(l) {
				return
			}
		}
	}
	tc.Complete = func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < n }
	tc.Goal = func(tp *rt.Taskpool, l *rt.Locals) uint32 { return uint32(min(l[0], 1)) }
	tc.Successors = func(tp *rt.Taskpool, l *rt.Locals, f rt.FlowMask, e *rt.Edges) {
		e.L[0] = l[0] + 1
		if tc.Complete(tp, &e.L) {
			e.Task(0, 0, tc, 0)
		}
	}
	var wg sync.WaitGroup
	tc.Incarnations = []rt.Incarnation{
		{Kind: rt.CPU, Hook: func(t *rt.Task) error { // "RECURSIVE": falls through on odd k
			if t.Locals()[0]%2 == 1 {
				next.Store(t.Locals()[0], true)
				return rt.Next
			}
			if _, ok := again.LoadOrStore(t.Locals()[0], true); !ok {
				return rt.Again
			}
			if t.Locals()[0]%4 == 0 {
				async.Store(t.Locals()[0], true)
				wg.Add(1)
				go func() {
					defer wg.Done()
					time.Sleep(50 * time.Microsecond)
					t.Complete()
				}()
				return rt.Async
			}
			return nil
		}},
		{Kind: rt.CPU, Hook: func(t *rt.Task) error {
			cpu.Store(t.Locals()[0], true)
			return nil
		}},
	}
	mustRun(t, c, rt.NewTaskpool("results", nil, tc))
	wg.Wait()
	for k := 0; k < n; k++ {
		_, a := again.Load(k)
		_, cp := cpu.Load(k)
		_, nx := next.Load(k)
		_, as := async.Load(k)
		odd := k%2 == 1
		if cp != odd || nx != odd || a == odd || as != (k%4 == 0) {
			t.Fatalf("R(%d): again=%v cpu=%v next=%v async=%v", k, a, cp, nx, as)
		}
	}
}

func TestNoIncarnation(t *testing.T) {
	c := newCtx(t, rt.Workers(1))
	tc := &rt.TaskClass{Name: "N", Space: func(tp *rt.Taskpool, l *rt.Locals, y func(*rt.Locals) bool) { y(l) },
		Complete: func(*rt.Taskpool, *rt.Locals) bool { return true },
		Incarnations: []rt.Incarnation{
			{Kind: rt.GPU}, // no GPU device: skipped
			{Kind: rt.CPU, Hook: func(*rt.Task) error { return rt.Next }},
		}}
	err := run(t, c, rt.NewTaskpool("noinc", nil, tc))
	if !errors.Is(err, rt.ErrNoIncarnation) || !strings.Contains(err.Error(), "N()") {
		t.Fatalf("err = %v, want ErrNoIncarnation naming N()", err)
	}
}

func TestOptionsAndEnv(t *testing.T) {
	t.Setenv("JDF2GO_WORKERS", "3")
	t.Setenv("JDF2GO_SCHED", "gd")
	c := newCtx(t)
	if c.Workers() != 3 || c.SchedulerName() != "gd" {
		t.Fatalf("env not applied: %d workers, %s", c.Workers(), c.SchedulerName())
	}
	c2 := newCtx(t, rt.Workers(1), rt.Scheduler("ap"))
	if c2.Workers() != 1 || c2.SchedulerName() != "ap" {
		t.Fatalf("options do not override env: %d workers, %s", c2.Workers(), c2.SchedulerName())
	}
	for _, tc := range []struct {
		env, val string
		want     error
	}{
		{"JDF2GO_WORKERS", "zero", rt.ErrBadOption},
		{"JDF2GO_WORKERS", "0", rt.ErrBadOption},
		{"JDF2GO_SCHED", "fifo", rt.ErrUnknownScheduler},
		{"JDF2GO_PROGRESS", "maybe", rt.ErrBadOption},
		{"JDF2GO_BIND", "core", rt.ErrBadOption},
	} {
		t.Setenv(tc.env, tc.val)
		if _, err := rt.New(); !errors.Is(err, tc.want) {
			t.Errorf("%s=%s: err = %v, want %v", tc.env, tc.val, err, tc.want)
		}
		t.Setenv(tc.env, "")
	}
	if _, err := rt.New(rt.Workers(0)); !errors.Is(err, rt.ErrBadOption) {
		t.Errorf("Workers(0): %v", err)
	}
	if _, err := rt.New(rt.BindWorkers("socket")); !errors.Is(err, rt.ErrBadOption) {
		t.Errorf(`BindWorkers("socket"): %v`, err)
	}
}

// Workers bound to threads or CPUs run a numerical DAG like unbound ones, and Close leaves
// no worker behind (a worker bound to a CPU ends its thread with it).
func TestBindWorkers(t *testing.T) {
	modes := []string{"none", "thread"}
	if runtime.GOOS == "linux" {
		modes = append(modes, "cpu")
	}
	for _, m := range modes {
		t.Run(m, func(t *testing.T) {
			c, err := rt.New(rt.Workers(3), rt.BindWorkers(m))
			if err != nil {
				t.Fatal(err)
			}
			var sum atomic.Int64
			mustRun(t, c, rttest.Grid(20, 30, func(task *rt.Task) error {
				sum.Add(int64(task.Locals()[0]*30 + task.Locals()[1]))
				return nil
			}))
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if want := int64(600 * 599 / 2); sum.Load() != want {
				t.Fatalf("sum of task indices %d, want %d", sum.Load(), want)
			}
			checkNoLeak(t)
		})
	}
}

func TestMisuse(t *testing.T) {
	c := newCtx(t, rt.Workers(1))
	tp := rttest.Chains(1, 5, nil)
	if err := tp.Wait(t.Context()); !errors.Is(err, rt.ErrNotAdded) {
		t.Fatalf("Wait before Add: %v", err)
	}
	mustRun(t, c, tp)
	if err := c.Add(tp); !errors.Is(err, rt.ErrAlreadyAdded) {
		t.Fatalf("second Add: %v", err)
	}
	bad := &rt.TaskClass{Name: "B", ID: 3}
	if err := c.Add(rt.NewTaskpool("bad", nil, bad)); !errors.Is(err, rt.ErrBadTaskClass) {
		t.Fatalf("bad class: %v", err)
	}
	panicky := &rt.TaskClass{Name: "S", Complete: func(*rt.Taskpool, *rt.Locals) bool { return true },
		Space:        func(*rt.Taskpool, *rt.Locals, func(*rt.Locals) bool) { panic("bad bound") },
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(*rt.Task) error { return nil }}}}
	if err := c.Add(rt.NewTaskpool("panicky", nil, panicky)); err == nil || !strings.Contains(err.Error(), "bad bound") {
		t.Fatalf("panic in Space: %v", err)
	}
}
