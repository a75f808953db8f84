package rt_test

import (
	"errors"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/jdf2go/jdf2go/rt"
)

// The rules of docs/runtime.md, "Buffer sharing": flows pass copies, never bytes, on one
// rank. Each test fails if rt starts copying a version for its readers, makes a writer wait
// for the readers of the version it overwrites, or runs a task before its inputs.

// flowClass is a class X(k), k = 0 .. n-1, with the given flows and CPU body; goal > 0
// makes every instance wait for that many arrivals (no startup task).
func flowClass(name string, id, n int, flows []rt.Flow, goal uint32, body func(*rt.Task) error) *rt.TaskClass {
	tc := &rt.TaskClass{Name: name, ID: id, Locals: []string{"k"}, Params: []int{0}, Flows: flows}
	tc.Space = func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
		for k := range n {
			l[0] = k
			if !yield(l) {
				return
			}
		}
	}
	tc.Complete = func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < n }
	if goal > 0 {
		tc.Goal = func(*rt.Taskpool, *rt.Locals) uint32 { return goal }
		tc.NoStartup = true
	}
	tc.Incarnations = []rt.Incarnation{{Kind: rt.CPU, Hook: body}}
	return tc
}

// producer is P(0): RW X <- coll(0), written by body, released by successors.
func producer(coll rt.Collection, body func(x []float64), successors func(e *rt.Edges)) *rt.TaskClass {
	p := flowClass("P", 0, 1, []rt.Flow{{Name: "X", Access: rt.RW}}, 0, func(t *rt.Task) error {
		body(t.Flow(0).Float64s())
		return nil
	})
	p.Prepare = func(t *rt.Task) error { return t.BindElement(0, coll, rt.Ix(0)) }
	p.Successors = func(tp *rt.Taskpool, l *rt.Locals, f rt.FlowMask, e *rt.Edges) { successors(e) }
	return p
}

func addr(x []float64) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(x))) }

// A memory input is the element's own buffer, and the readers of a version all get the
// producer's buffer, not copies. Only the writer's completion moves the version.
func TestReadersShareTheProducersBuffer(t *testing.T) {
	const readers = 8
	d := rt.NewData(0, []float64{1, 2, 3, 4})
	elem := addr(d.Host().Float64s())
	var mu sync.Mutex
	var seen []uintptr
	var vals []float64
	var pAddr uintptr
	r := flowClass("R", 1, readers, []rt.Flow{{Name: "X", Access: rt.Read}}, 1, func(t *rt.Task) error {
		x := t.Flow(0).Float64s()
		mu.Lock()
		seen, vals = append(seen, addr(x)), append(vals, x[0])
		mu.Unlock()
		return nil
	})
	p := producer(oneColl{d}, func(x []float64) {
		pAddr = addr(x)
		x[0] = 10
	}, func(e *rt.Edges) {
		for i := range readers {
			e.L[0] = i
			e.Task(0, 0, r, 0)
		}
	})
	mustRun(t, newCtx(t, rt.Workers(4)), rt.NewTaskpool("share", nil, p, r))
	if pAddr != elem {
		t.Errorf("P's flow X is at %#x, the element's buffer at %#x: a memory input was copied", pAddr, elem)
	}
	if len(seen) != readers {
		t.Fatalf("%d readers ran, want %d", len(seen), readers)
	}
	for i, a := range seen {
		if a != elem || vals[i] != 10 {
			t.Errorf("reader %d: buffer %#x value %g, want the producer's %#x holding 10", i, a, vals[i], elem)
		}
	}
	if v := rt.Impl.Version(d.Host()); v != 1 {
		t.Errorf("version %d after one RW task and %d READ tasks, want 1", v, readers)
	}
}

// A writer of a version runs while a reader of the version before it still runs, on the
// same buffer: rt neither copies the version for the reader nor makes the writer wait. R
// waits for W's write and then sees it.
func TestWriterBesideReaderSharesTheBuffer(t *testing.T) {
	d := rt.NewData(0, []float64{1})
	wrote := make(chan struct{})
	r := flowClass("R", 1, 1, []rt.Flow{{Name: "X", Access: rt.Read}}, 1, func(t *rt.Task) error {
		select {
		case <-wrote:
		case <-time.After(testDeadline / 2):
			return errors.New("the writer did not run while a reader of the version it overwrites ran")
		}
		if x := t.Flow(0).Float64s(); x[0] != 99 {
			return errors.New("the reader does not see the writer's value: it holds a copy")
		}
		return nil
	})
	w := flowClass("W", 2, 1, []rt.Flow{{Name: "X", Access: rt.RW}}, 1, func(t *rt.Task) error {
		t.Flow(0).Float64s()[0] = 99
		close(wrote)
		return nil
	})
	p := producer(oneColl{d}, func(x []float64) { x[0] = 10 }, func(e *rt.Edges) {
		e.L[0] = 0
		e.Task(0, 0, r, 0)
		e.Task(0, 1, w, 0)
	})
	mustRun(t, newCtx(t, rt.Workers(2)), rt.NewTaskpool("war", nil, p, r, w))
	if got := d.Host().Float64s()[0]; got != 99 {
		t.Fatalf("element holds %g, want the writer's 99", got)
	}
}

// Ordered by the graph (W waits for R through a CTL flow), a reader sees the version it
// was sent and never a later writer's values, though both use one buffer.
func TestReaderBeforeLaterWriter(t *testing.T) {
	for range 20 {
		d := rt.NewData(0, []float64{1})
		var got float64
		var rAddr, wAddr uintptr
		var w *rt.TaskClass
		r := flowClass("R", 1, 1, []rt.Flow{{Name: "X", Access: rt.Read}, {Name: "Done", Access: rt.CTL}}, 1,
			func(t *rt.Task) error {
				x := t.Flow(0).Float64s()
				time.Sleep(100 * time.Microsecond) // give an early writer time to show
				got, rAddr = x[0], addr(x)
				return nil
			})
		w = flowClass("W", 2, 1, []rt.Flow{{Name: "X", Access: rt.RW}, {Name: "After", Access: rt.CTL}}, 2,
			func(t *rt.Task) error {
				x := t.Flow(0).Float64s()
				x[0], wAddr = 99, addr(x)
				return nil
			})
		r.Successors = func(tp *rt.Taskpool, l *rt.Locals, f rt.FlowMask, e *rt.Edges) {
			e.L[0] = 0
			e.Task(1, 0, w, 1)
		}
		p := producer(oneColl{d}, func(x []float64) { x[0] = 10 }, func(e *rt.Edges) {
			e.L[0] = 0
			e.Task(0, 0, r, 0)
			e.Task(0, 1, w, 0)
		})
		mustRun(t, newCtx(t, rt.Workers(2)), rt.NewTaskpool("raw", nil, p, r, w))
		if got != 10 || rAddr != wAddr || d.Host().Float64s()[0] != 99 {
			t.Fatalf("reader saw %g in %#x, writer wrote %#x, element holds %g; want 10, one buffer, 99",
				got, rAddr, wAddr, d.Host().Float64s()[0])
		}
	}
}
