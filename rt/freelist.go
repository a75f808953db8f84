package rt

import (
	"math/bits"
	"sync"
)

// Task recycling. Each worker keeps a stack of free task pointers (a slice, so that taking a
// task does not chase a pointer through cold memory the way a linked list would). A task is
// often created on one worker and freed on another (stealing, fan-in), so stacks drift: a
// worker whose stack reaches freeKeep*freeBatch moves freeBatch pointers into a batch in the
// Context's depot, and a worker whose stack is empty takes a batch back, touching the depot's
// mutex once per freeBatch tasks. Batch slices are recycled too, so once the high-water mark
// is reached nothing is allocated. Fresh tasks are allocated freeBatch at a time.

// A worker keeps up to freeKeep batches: a startup walk holds a few batches of live tasks
// (startupHigh), and a smaller stack would go to the depot, behind its one mutex, every
// batch.
const (
	freeBatch = 64
	freeKeep  = 8
)

// depot holds full batches of free tasks and empty batch slices.
type depot struct {
	mu    sync.Mutex
	full  [][]*Task
	empty [][]*Task
}

// refill moves one full batch into free; false when the depot has none.
func (d *depot) refill(free *[]*Task) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := len(d.full)
	if n == 0 {
		return false
	}
	b := d.full[n-1]
	d.full[n-1] = nil
	d.full = d.full[:n-1]
	*free = append(*free, b...)
	clear(b)
	d.empty = append(d.empty, b[:0])
	return true
}

// spill moves the top freeBatch pointers of free into a batch of the depot.
func (d *depot) spill(free *[]*Task) {
	f := *free
	top := f[len(f)-freeBatch:]
	d.mu.Lock()
	var b []*Task
	if n := len(d.empty); n > 0 {
		b = d.empty[n-1]
		d.empty[n-1] = nil
		d.empty = d.empty[:n-1]
	} else {
		b = make([]*Task, 0, freeBatch)
	}
	b = append(b, top...)
	d.full = append(d.full, b)
	d.mu.Unlock()
	clear(top)
	*free = f[:len(f)-freeBatch]
}

// newTask returns a clean task from the worker's free stack.
func (w *worker) newTask() *Task {
	if len(w.free) == 0 && !w.c.depot.refill(&w.free) {
		slab := make([]Task, freeBatch)
		for i := range slab {
			w.free = append(w.free, &slab[i])
		}
	}
	n := len(w.free) - 1
	t := w.free[n]
	w.free[n] = nil
	w.free = w.free[:n]
	return t
}

// freeTask drops t's flow references and puts it back on the free stack.
func (w *worker) freeTask(t *Task) {
	if h := t.held; h != 0 {
		for ; h != 0; h &= h - 1 {
			i := bits.TrailingZeros32(h)
			t.flows[i].release()
			t.flows[i] = nil
		}
		t.held = 0
	}
	if t.kind == kindFanout { // not t.aux: the last line of a task is cold for most tasks
		putFanout(t.aux.(*fanout))
	}
	// pending is set when a dependency table creates a record.
	t.cs, t.next, t.aux = nil, nil, nil
	t.key, t.prio, t.inc, t.kind, t.prepared, t.hi, t.ring = 0, 0, 0, kindTask, false, false, 0
	w.free = append(w.free, t)
	if len(w.free) >= freeKeep*freeBatch {
		w.c.depot.spill(&w.free)
	}
}
