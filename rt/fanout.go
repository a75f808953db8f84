package rt

// Large releases (broadcasts) spread over the workers.
//
// A task whose Successors reports thousands of local arrivals (one task releasing a whole
// row, or 100 000 CTL successors) would otherwise make all of them ready on its own worker,
// one after the other: creating, filling and queueing a successor costs far more than
// enumerating it, so the release is serial and the other workers wait for its batches.
//
// So a release that reaches fanInline arrivals stops making them itself: Edges.Task records
// each further arrival (the peer's locals) in a fanout, and every fanBatch arrivals the
// fanout becomes a pseudo-task (kindFanout) queued on another worker's queue, round-robin as
// pushAway does, ranked just below its first arrival. The worker that runs it makes those
// arrivals and keeps the tasks that become ready in its own queue, where they already are
// spread; it runs them before it takes the next fanout, which bounds the live tasks. The last,
// partial fanout of a release is made by the releasing worker itself before the task
// completes. A fanout holds a reference to the copy it carries, so the source task completes
// and is recycled at once; the successors it has not yet made ready stay counted in the
// taskpool, so termination waits for them. An error in a deferred arrival fails the taskpool
// naming the source task, as an inline one does.
//
// Rejected: splitting the generated successor loops themselves into ranges that other
// workers walk (it needs every range loop of every Successors, hand-written ones included, to
// take part, and re-running the guards of the other dependencies); enumeration is the cheap
// part of a release.

import (
	"fmt"
	"math"
	"runtime/debug"
	"sync"
)

const (
	fanInline = 2 * readyBatch // arrivals of one release that its worker makes itself
	fanBatch  = 4 * readyBatch // arrivals per deferred fanout
)

// fanout is a run of arrivals, all carrying the same copy to the same flow of one class,
// deferred by a large release.
type fanout struct {
	peer     *TaskClass
	peerFlow int
	c        *Copy // the copy carried (nil for CTL); retained by a queued fanout's task
	stride   int   // locals per arrival: the peer class's slots
	prio     int32 // the rank of the pseudo-task
	hi       bool
	ls       []int // the peers' locals, stride per arrival

	// The source task, for an error naming it.
	src  *TaskClass
	srcL Locals
}

var fanoutPool = sync.Pool{New: func() any { return &fanout{ls: make([]int, 0, 2*fanBatch)} }}

// deferArrival records the arrival at the instance of peer in e.L in the release's fanout,
// and queues the fanout once it is full. It reports false, having recorded nothing, when
// the arrival must be made inline (a class that is not in the taskpool: arrive reports it).
func (e *Edges) deferArrival(c *Copy, peer *TaskClass, peerFlow int) bool {
	tp := e.tp
	if peer.ID < 0 || peer.ID >= len(tp.cs) || tp.cs[peer.ID].tc != peer {
		return false
	}
	f := e.fan
	if f != nil && (f.peer != peer || f.peerFlow != peerFlow || f.c != c) {
		if len(f.ls) >= readyBatch*f.stride {
			e.shipFanout()
		} else { // a short run, as when calls alternate between peers, is made here
			e.endFanout()
		}
		f = nil
	}
	if f == nil {
		f = fanoutPool.Get().(*fanout)
		f.peer, f.peerFlow, f.c, f.stride = peer, peerFlow, c, tp.cs[peer.ID].nlocals
		// Just below its first arrival's rank: a worker runs the tasks a fanout made ready
		// before it makes more, so a broadcast holds a few hundred live tasks per worker,
		// not all of them.
		f.prio, f.hi = tp.prio, peer.HighPriority
		if peer.Priority != nil {
			f.prio += peer.Priority(tp, &e.L)
		}
		if f.prio > math.MinInt32 {
			f.prio--
		}
		f.src = e.src.cs.tc
		n := e.src.cs.nlocals
		copy(f.srcL[:n], e.src.l[:n])
		e.fan = f
	}
	f.ls = append(f.ls, e.L[:f.stride]...)
	if len(f.ls) >= fanBatch*f.stride {
		e.shipFanout()
	}
	return true
}

// shipFanout queues the release's fanout as a pseudo-task on another worker.
func (e *Edges) shipFanout() {
	f, w := e.fan, e.w
	e.fan = nil
	t := w.newTask()
	t.kind, t.cs, t.aux = kindFanout, &e.tp.cs[f.peer.ID], f
	t.prio, t.hi = f.prio, f.hi
	if f.c != nil {
		f.c.retain()
		t.flows[0], t.held = f.c, 1
	}
	w.one[0] = t
	w.c.sched.pushAway(w, w.one[:])
	w.one[0] = nil
	w.c.notify()
}

// endFanout makes the arrivals of the release's fanout on the releasing worker: those of the
// last one, at the end of the release, and of a short one, when the peer changes.
func (e *Edges) endFanout() {
	f := e.fan
	if f == nil {
		return
	}
	e.fan = nil
	if e.err == nil { // else the taskpool fails: the arrivals would only be dropped
		e.err = e.w.arriveAll(e.tp, f)
	}
	putFanout(f)
}

// runFanout makes the arrivals of a queued fanout; the tasks that become ready stay on this
// worker's queue.
func (w *worker) runFanout(t *Task) {
	f, tp := t.aux.(*fanout), t.cs.tp
	w.fanning = true
	err := w.arriveAll(tp, f)
	w.flushReady()
	w.fanning = false
	if err != nil {
		tp.fail(&TaskError{Taskpool: tp.name, Task: taskName(f.src, &f.srcL), Err: err})
	}
	w.freeTask(t) // puts f back and releases the copy
}

// arriveAll makes the arrivals of f. Goal and Priority evaluate user expressions, so a panic
// becomes an error as in Successors.
func (w *worker) arriveAll(tp *Taskpool, f *fanout) (err error) {
	returned := false // not recover's value: panic(nil) under GODEBUG=panicnil=1 (worker.go)
	defer func() {
		if !returned {
			err = fmt.Errorf("panic releasing successors: %v\n%s", recover(), debug.Stack())
		}
	}()
	l := &w.fanL
	for i := 0; i+f.stride <= len(f.ls); i += f.stride {
		copy(l[:f.stride], f.ls[i:i+f.stride])
		if err = w.arrive(tp, f.c, f.peer, f.peerFlow, l); err != nil {
			returned = true
			return err
		}
	}
	returned = true
	return nil
}

// putFanout recycles f.
func putFanout(f *fanout) {
	f.peer, f.c, f.src = nil, nil, nil
	f.ls = f.ls[:0]
	fanoutPool.Put(f)
}
