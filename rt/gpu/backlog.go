package gpu

import (
	"slices"
	"sync"
)

// The device's backlog by priority.
//
// rt decides where a task of a class that shares work runs by comparing estimated finish
// times (rt's choice.go): on a device, the work the task would wait for plus its own time.
// The manager keeps its FIFOs sorted by priority, so a task waits only for the outstanding
// work of its priority or above, not for the whole of Load: counting everything sent the
// critical tasks of a factorisation (the highest priorities) to CPU cores, hundreds of times
// slower than the GPU they would have reached at once. LoadAbove counts what a task really
// waits for. It ignores that a ring already committed to a stream runs before anything
// queued, whatever its priority: at most a few rings per stream. A wrapper counts from the
// manager iteration that takes it from device.pending, the next one after its submission,
// to its release: the manager alone updates the backlog, so that the submitting workers do
// not all take its lock.

// prioCount is the number of outstanding kernel wrappers of one priority.
type prioCount struct{ p, n int32 }

// backlog counts the outstanding kernel wrappers by priority. A program's priorities take
// few distinct values at a time (a few per step of a factorisation), so a sorted slice does.
type backlog struct {
	mu sync.Mutex
	c  []prioCount // by descending priority, every count > 0
}

// add adds n (negative: removes) wrappers of priority p.
func (b *backlog) add(p, n int32) {
	b.mu.Lock()
	i, found := slices.BinarySearchFunc(b.c, p, func(e prioCount, p int32) int {
		switch {
		case e.p > p:
			return -1
		case e.p < p:
			return 1
		}
		return 0
	})
	switch {
	case found:
		if b.c[i].n += n; b.c[i].n <= 0 {
			b.c = slices.Delete(b.c, i, i+1)
		}
	case n > 0:
		b.c = slices.Insert(b.c, i, prioCount{p, n})
	}
	b.mu.Unlock()
}

// backlogRun gathers changes of the backlog at one priority: the manager adds the wrappers it
// takes, and subtracts those it releases, in runs, so that it takes the backlog's lock once
// per run of one priority and once per counter update rather than once per wrapper, while
// the workers that choose devices read it.
type backlogRun struct{ p, n int32 }

// add gathers n wrappers of priority p, applying the run so far to b when p differs.
func (r *backlogRun) add(b *backlog, p, n int32) {
	if r.n != 0 && r.p != p {
		b.add(r.p, r.n)
		r.n = 0
	}
	r.p, r.n = p, r.n+n
}

// flush applies the run to b.
func (r *backlogRun) flush(b *backlog) {
	if r.n != 0 {
		b.add(r.p, r.n)
		r.n = 0
	}
}

// atOrAbove returns the number of wrappers of priority p or above.
func (b *backlog) atOrAbove(p int32) int64 {
	b.mu.Lock()
	var n int64
	for _, e := range b.c {
		if e.p < p {
			break
		}
		n += int64(e.n)
	}
	b.mu.Unlock()
	return n
}

// LoadAbove estimates, in ns, the work accepted by the device that a task of priority p
// would wait for: the outstanding kernel wrappers of priority p or above times the device
// time per task (Cost).
func (d *Device) loadAbove(p int32) int64 {
	n := d.backlog.atOrAbove(p)
	if n == 0 {
		return 0
	}
	return n * d.timePerTask()
}
