package rt_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/rttest"
)

// waitWithin waits for tp with a deadline d and fails the test when Wait takes longer than
// limit (Wait itself must honour its context).
func waitWithin(t *testing.T, tp *rt.Taskpool, d, limit time.Duration) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- tp.Wait(ctx) }()
	select {
	case err := <-errc:
		return err
	case <-time.After(limit):
		t.Fatalf("Wait of %s did not return within %v (its context ends after %v)", tp.Name(), limit, d)
		return nil
	}
}

func TestAddNilTaskpool(t *testing.T) {
	c := newCtx(t, rt.Workers(1))
	if err := c.Add(nil); !errors.Is(err, rt.ErrNilTaskpool) {
		t.Fatalf("Add(nil) = %v, want ErrNilTaskpool", err)
	}
}

// A body that calls runtime.Goexit (t.FailNow in a helper does) fails its task with
// ErrGoexit; the worker is replaced, so the Context still runs later taskpools.
func TestGoexitInBodyFailsTaskAndReplacesWorker(t *testing.T) {
	c := newCtx(t, rt.Workers(1))
	tp := rttest.Independent(10, func(task *rt.Task) error {
		if task.Locals()[0] == 3 {
			runtime.Goexit()
		}
		return nil
	})
	if err := c.Add(tp); err != nil {
		t.Fatal(err)
	}
	err := waitWithin(t, tp, 5*time.Second, 6*time.Second)
	if !errors.Is(err, rt.ErrGoexit) || !strings.Contains(err.Error(), "T(3)") {
		t.Fatalf("Wait = %v, want ErrGoexit naming T(3)", err)
	}
	mustRun(t, c, rttest.Chains(2, 100, nil))
}

// Cancel then Wait on one taskpool returns at once while a body of another taskpool runs on
// every worker: Wait only waits for bodies of its own taskpool.
func TestCancelDoesNotWaitForOtherTaskpool(t *testing.T) {
	c := newCtx(t, rt.Workers(2))
	release := make(chan struct{})
	var started atomic.Int32
	busy := rttest.Independent(2, func(*rt.Task) error {
		started.Add(1)
		<-release
		return nil
	})
	if err := c.Add(busy); err != nil {
		t.Fatal(err)
	}
	defer func() {
		close(release)
		if err := waitWithin(t, busy, 10*time.Second, 11*time.Second); err != nil {
			t.Errorf("busy taskpool: %v", err)
		}
	}()
	for deadline := time.Now().Add(5 * time.Second); started.Load() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the busy bodies did not start")
		}
	}
	tp := rttest.Independent(100, nil)
	if err := c.Add(tp); err != nil {
		t.Fatal(err)
	}
	cause := errors.New("cancelled by the test")
	tp.Cancel(cause)
	if err := waitWithin(t, tp, 10*time.Second, 2*time.Second); !errors.Is(err, cause) {
		t.Fatalf("Wait = %v, want the cancellation", err)
	}
}

// Wait returns when its context ends even while a body of its taskpool never returns.
func TestWaitHonoursContextWhileABodyBlocks(t *testing.T) {
	c := newCtx(t, rt.Workers(1))
	release := make(chan struct{})
	defer close(release)
	tp := rttest.Independent(1, func(*rt.Task) error {
		<-release
		return nil
	})
	if err := c.Add(tp); err != nil {
		t.Fatal(err)
	}
	if err := waitWithin(t, tp, 100*time.Millisecond, 2*time.Second); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait = %v, want the context's deadline", err)
	}
}

// stallT is a chain T(0) -> T(1) -> T(2) -> T(3) where T(2) expects two arrivals but only
// one predecessor exists: T(2) waits forever in the dependency table and T(3) never gets an
// input. Verify would report it; without it the run must end in ErrStalled.
var stallT rt.TaskClass

func init() {
	stallT = rt.TaskClass{
		Name: "T", ID: 0, Locals: []string{"i"}, Params: []int{0},
		Flows: []rt.Flow{{Name: "X", Access: rt.CTL}},
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			for i := range 4 {
				l[0] = i
				if !yield(l) {
					return
				}
			}
		},
		Complete: func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < 4 },
		Goal: func(tp *rt.Taskpool, l *rt.Locals) uint32 {
			switch l[0] {
			case 0:
				return 0
			case 2:
				return 2
			}
			return 1
		},
		Successors: func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
			if l[0] < 3 {
				e.L[0] = l[0] + 1
				e.Task(0, 0, &stallT, 0)
			}
		},
		Predecessors: func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
			if l[0] > 0 {
				e.L[0] = l[0] - 1
				e.Task(0, 0, &stallT, 0)
			}
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(*rt.Task) error { return nil }}},
	}
}

func TestStallNamesWaitingTasks(t *testing.T) {
	c := newCtx(t, rt.Workers(2), rt.StallTimeout(100*time.Millisecond))
	tp := rt.NewTaskpool("stall", nil, &stallT)
	if err := c.Add(tp); err != nil {
		t.Fatal(err)
	}
	err := waitWithin(t, tp, 10*time.Second, 5*time.Second)
	if !errors.Is(err, rt.ErrStalled) {
		t.Fatalf("Wait = %v, want ErrStalled", err)
	}
	for _, want := range []string{"T(2)", "1 of 2", "X", "T(1)", "2 tasks"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the stall error does not mention %q:\n%v", want, err)
		}
	}
}

// A body that sleeps is live: stall detection never fires on it.
func TestSlowBodyIsNotAStall(t *testing.T) {
	if testing.Short() {
		t.Skip("sleeps 2 s")
	}
	c := newCtx(t, rt.Workers(2), rt.StallTimeout(50*time.Millisecond))
	tp := rttest.Chains(1, 2, func(task *rt.Task) error {
		if task.Locals()[1] == 0 {
			time.Sleep(2 * time.Second)
		}
		return nil
	})
	if err := c.Add(tp); err != nil {
		t.Fatal(err)
	}
	if err := waitWithin(t, tp, 10*time.Second, 11*time.Second); err != nil {
		t.Fatal(err)
	}
}

// A body that hands its task to another goroutine (Async) which completes it later is live
// too: the Context counts the task as away.
func TestSlowAsyncBodyIsNotAStall(t *testing.T) {
	c := newCtx(t, rt.Workers(2), rt.StallTimeout(20*time.Millisecond))
	tp := rttest.Chains(1, 3, func(task *rt.Task) error {
		go func() {
			time.Sleep(200 * time.Millisecond)
			task.Complete()
		}()
		return rt.Async
	})
	if err := c.Add(tp); err != nil {
		t.Fatal(err)
	}
	if err := waitWithin(t, tp, 10*time.Second, 11*time.Second); err != nil {
		t.Fatal(err)
	}
}

// A failed taskpool leaves nothing behind once Wait returned: the tasks that waited in its
// dependency tables are given back, so its globals can be collected.
func TestFailedTaskpoolIsCollected(t *testing.T) {
	c := newCtx(t, rt.Workers(2), rt.StallTimeout(10*time.Millisecond))
	const n = 4
	var collected atomic.Int32
	for range n {
		g := new([1 << 16]byte)
		runtime.AddCleanup(g, func(*atomic.Int32) { collected.Add(1) }, &collected)
		tp := rt.NewTaskpool("stall", g, &stallT) // T(2) waits in the table for ever
		if err := c.Add(tp); err != nil {
			t.Fatal(err)
		}
		if err := waitWithin(t, tp, 10*time.Second, 11*time.Second); !errors.Is(err, rt.ErrStalled) {
			t.Fatalf("Wait = %v, want ErrStalled", err)
		}
	}
	mustRun(t, c, rttest.Chains(2, 1000, nil)) // reuse the free lists
	for deadline := time.Now().Add(5 * time.Second); collected.Load() < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d failed taskpools collected", collected.Load(), n)
		}
		runtime.GC()
	}
}
