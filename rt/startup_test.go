package rt_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
)

// managerDevice plays a device whose first Submit makes the worker its manager for a long
// time, as rt/gpu's manager does: it flushes the worker's private work (or not), releases the
// other worker, and waits until every other instance has run, which only happens when the
// rest of the walk the manager was in has gone to the other worker.
type managerDevice struct {
	flush   bool
	n       int
	release chan struct{} // closed by the first Submit: the other worker may leave Hold
	others  chan struct{} // closed when the n-1 other instances have completed
	first   atomic.Bool
	done    atomic.Int64
	sat     atomic.Bool
	got     atomic.Bool
}

func (d *managerDevice) Name() string                 { return "managerdev" }
func (d *managerDevice) Accepts(k rt.DeviceKind) bool { return k == rt.GPU }
func (d *managerDevice) Load() int64                  { return 0 }

// Saturated holds the walk in its pause until the first Submit, so that the walker itself
// makes that Submit from inside its walk.
func (d *managerDevice) Saturated() bool { return d.sat.Load() }

func (d *managerDevice) Submit(w rt.Worker, t *rt.Task, inc *rt.Incarnation) error {
	if !d.first.CompareAndSwap(false, true) {
		w.Complete(t)
		if d.done.Add(1) == int64(d.n-1) {
			close(d.others)
		}
		return nil
	}
	if d.flush {
		w.FlushNextTask()
	}
	d.sat.Store(false)
	close(d.release)
	wait := 200 * time.Millisecond
	if d.flush {
		wait = 20 * time.Second // allow for a loaded machine
	}
	select {
	case <-d.others:
		d.got.Store(true)
	case <-time.After(wait):
	}
	w.Complete(t)
	return nil
}

// TestManagerHandsOffItsWalk runs a class of independent GPU tasks whose one startup walk
// is made by the worker that becomes the device's manager, while the other worker is held
// elsewhere. The manager's FlushNextTask must give the rest of its walk to the other
// worker; without it, the instances it has not reached wait for the manager to return.
func TestManagerHandsOffItsWalk(t *testing.T) {
	const n = 1000 // one startup part, several batches
	for _, flush := range []bool{true, false} {
		t.Run(fmt.Sprint("flush=", flush), func(t *testing.T) {
			dev := &managerDevice{flush: flush, n: n, release: make(chan struct{}), others: make(chan struct{})}
			dev.sat.Store(true)
			c := newCtx(t, rt.Workers(2), rt.Devices(dev))
			// The hold occupies one worker until the device's first Submit, so that the
			// other one walks the GPU class alone.
			held := make(chan struct{})
			hold := rt.NewTaskpool("hold", nil, cpuClass("Hold", 1, func() {
				close(held)
				select {
				case <-dev.release:
				case <-time.After(20 * time.Second):
				}
			}))
			if err := c.Add(hold); err != nil {
				t.Fatal(err)
			}
			<-held
			var ran atomic.Int64
			tc := cpuClass("G", n, func() { ran.Add(1) })
			tc.Incarnations = append([]rt.Incarnation{{Kind: rt.GPU}}, tc.Incarnations...)
			mustRun(t, c, rt.NewTaskpool("walk", nil, tc))
			if err := hold.Wait(t.Context()); err != nil {
				t.Fatal(err)
			}
			if dev.got.Load() != flush {
				t.Fatalf("flush %v: the other instances ran while the manager held its walk: %v", flush, dev.got.Load())
			}
			if got := dev.done.Load() + 1 + ran.Load(); got != n {
				t.Fatalf("%d instances ran, want %d", got, n)
			}
		})
	}
}

// cpuClass is n independent instances of a class with one CPU incarnation that calls body.
func cpuClass(name string, n int, body func()) *rt.TaskClass {
	tc := &rt.TaskClass{Name: name, Locals: []string{"k"}, Params: []int{0}}
	tc.Space = func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
		for k := range n {
			l[0] = k
			if !yield(l) {
				return
			}
		}
	}
	tc.Complete = func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < n }
	tc.Successors = func(*rt.Taskpool, *rt.Locals, rt.FlowMask, *rt.Edges) {}
	tc.Incarnations = []rt.Incarnation{{Kind: rt.CPU, Hook: func(*rt.Task) error { body(); return nil }}}
	return tc
}

// flushingDevice runs every task at once, calling FlushNextTask first as a device manager
// does, and reports itself saturated at every other question, so that a walk pauses and
// runs one task from inside itself after each batch.
type flushingDevice struct {
	asked atomic.Int64
	ran   atomic.Int64
}

func (d *flushingDevice) Name() string                 { return "flushingdev" }
func (d *flushingDevice) Accepts(k rt.DeviceKind) bool { return k == rt.GPU }
func (d *flushingDevice) Load() int64                  { return 0 }
func (d *flushingDevice) Saturated() bool              { return d.asked.Add(1)%2 == 1 }

func (d *flushingDevice) Submit(w rt.Worker, t *rt.Task, inc *rt.Incarnation) error {
	w.FlushNextTask()
	d.ran.Add(1)
	w.Complete(t)
	return nil
}

// TestHandOffOncePerSlice checks the bound on handing off walks: the walk that takes over a
// slice skips the instances before it again, so a slice is handed off once, not at every
// pause of every walk after it, which would walk the space about n/64 times.
func TestHandOffOncePerSlice(t *testing.T) {
	const n = 2000
	dev := &flushingDevice{}
	c := newCtx(t, rt.Workers(1), rt.Devices(dev))
	tc := cpuClass("G", n, func() { t.Error("a task ran on the CPU") })
	tc.Incarnations = append([]rt.Incarnation{{Kind: rt.GPU}}, tc.Incarnations...)
	var yields atomic.Int64
	space := tc.Space
	tc.Space = func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
		space(tp, l, func(l *rt.Locals) bool { yields.Add(1); return yield(l) })
	}
	mustRun(t, c, rt.NewTaskpool("walk", nil, tc))
	if got := dev.ran.Load(); got != n {
		t.Fatalf("%d instances ran, want %d", got, n)
	}
	// Add enumerates the space once (n), the walks pass over it once (n), and the walk that
	// took over the handed-off slice skipped its start again (under n).
	if got := yields.Load(); got > 3*n {
		t.Fatalf("the space was visited %d times for %d instances: more than one hand-off", got, n)
	}
}
