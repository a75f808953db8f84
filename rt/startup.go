package rt

// Startup (docs/architecture.md decision 8: the init pass becomes a walk at Add time).
//
// Context.Add enumerates every class's space once, on the caller's goroutine: it counts the
// local instances (those whose affinity is this rank) and measures each parameter's range,
// from which the mixed-radix keys are built. The counts give the taskpool's termination
// count before any task can run, so no later counter adjustment is needed. Every walk stops
// soon after its taskpool fails or the Context closes (walkCheck): a cancelled Add returns
// the cancellation, and Close does not wait for a walk over a huge space.
//
// Then startup pseudo-tasks (kindStartup) are queued with the highest priority: one per class,
// or, for a class of at least 2*startupPart instances, one per worker (at most one per
// startupPart instances), each owning a contiguous slice of the class's instances in walk
// order, so that the workers make a large space ready in parallel instead of one worker
// feeding all others (the parts go to different workers' queues). A worker running a part
// walks the space again, skips the instances before its slice, stops after it, and makes ready
// every local instance of its slice whose goal is zero (or whose Startup predicate holds), in
// batches of readyBatch. Skipping costs one callback per instance, far less than making a task
// ready. To bound memory when a space is huge, the walker stops after each batch while its
// backlog exceeds startupHigh and runs tasks itself, as any worker would, until the backlog is
// down to startupLow; other workers steal from it meanwhile. A startup pseudo-task met while
// draining is set aside and requeued, so walks never nest. Tasks submitted to a device leave
// the backlog at once, so a walk of a class with a device incarnation also pauses after each
// batch while one of its devices is saturated (Saturator), running other tasks meanwhile.
// One of those tasks may make the walker a device's manager until the device is idle again;
// the manager's first FlushNextTask then hands the rest of the slice to the other workers as
// a new startup pseudo-task (handOffWalk), which skips the instances before it again. A slice
// is handed off at most once.

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"time"
)

// walkCheck: every walk of a space (Add's enumeration, the startup walks) looks every
// walkCheck+1 instances whether its taskpool failed or the Context closed, ready instances
// or not, so that cancelling stops it at once even in a sparse space of billions of
// instances; the look is two atomic loads, little against a callback per instance.
const walkCheck = 1<<8 - 1

// errWalkStopped: Add's enumeration stopped because the taskpool failed or the Context closed.
var errWalkStopped = errors.New("rt: walk stopped")

const (
	startupHigh = 4 * readyBatch
	startupLow  = readyBatch
	startupPart = 4096 // least instances per startup part
)

// startupParts returns the number of startup pseudo-tasks of a class of all instances on a
// Context of workers workers.
func startupParts(all int64, workers int) int {
	return int(max(1, min(int64(workers), all/startupPart)))
}

// startupTask returns a startup pseudo-task that walks instances [lo, hi) of cs's class, in
// walk order; handed marks the rest of a walk that handOffWalk gave away.
func (w *worker) startupTask(cs *classState, lo, hi int64, handed bool) *Task {
	t := w.newTask()
	t.kind, t.cs = kindStartup, cs
	t.l[0], t.l[1], t.l[2] = int(lo), int(hi), 0
	if handed {
		t.l[2] = 1
	}
	t.prio = 1<<31 - 1
	return t
}

// handOffWalk gives the rest of the walk in progress on w, if any, to the other workers as a
// new startup pseudo-task, and ends the walk after the instance it is at. A walk runs bodies
// while it pauses (drain, pauseWhileSaturated); one of them may make w a device's manager
// for a long time, and the instances it has not reached yet would wait for it meanwhile.
//
// The new walk skips every instance before its slice again, one callback each, so a slice
// is handed off at most once, and only when at least a batch of it is left: then the
// skipping costs at most one pass over the space per startup part.
func (w *worker) handOffWalk() {
	st := w.walk
	if st == nil || st.l[2] != 0 || w.walkEnd-(w.walkAt+1) < readyBatch {
		return
	}
	w.pushOne(w.startupTask(st.cs, w.walkAt+1, w.walkEnd, true))
	w.walkEnd = w.walkAt + 1
}

// validate checks the descriptors that rt relies on.
func (tp *Taskpool) validate() error {
	for i, tc := range tp.classes {
		switch {
		case tc == nil:
			return fmt.Errorf("%w: class %d of taskpool %s is nil", ErrBadTaskClass, i, tp.name)
		case tc.ID != i:
			return tc.bad("ID %d, but it is class %d of taskpool %s", tc.ID, i, tp.name)
		case tc.Space == nil:
			return tc.bad("no Space function")
		case tc.Complete == nil:
			return tc.bad("no Complete function")
		}
		if err := tc.check(); err != nil {
			return err
		}
	}
	return nil
}

// bad returns an ErrBadTaskClass naming tc.
func (tc *TaskClass) bad(why string, a ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrBadTaskClass, tc.Name, fmt.Sprintf(why, a...))
}

// check checks what every class needs, whether its tasks come from a space or are inserted
// at run time: a name, incarnations with their hooks, and sizes within the Task's arrays.
func (tc *TaskClass) check() error {
	switch {
	case tc.Name == "":
		return tc.bad("no name")
	case len(tc.Incarnations) == 0:
		return tc.bad("no incarnation")
	case len(tc.Params) > MaxParams:
		return tc.bad("%d parameters (max %d)", len(tc.Params), MaxParams)
	case len(tc.Flows) > MaxFlows:
		return tc.bad("%d flows (max %d)", len(tc.Flows), MaxFlows)
	case len(tc.Locals) > MaxLocals:
		return tc.bad("%d locals (max %d)", len(tc.Locals), MaxLocals)
	}
	for _, s := range tc.Params {
		if s < 0 || s >= MaxLocals {
			return tc.bad("parameter slot %d out of range", s)
		}
	}
	for j, inc := range tc.Incarnations {
		if inc.Kind == CPU && inc.Hook == nil {
			return tc.bad("CPU incarnation %d has no Hook", j)
		}
	}
	return nil
}

// enumerate validates the classes, counts local instances and builds the key radices.
func (tp *Taskpool) enumerate() (err error) {
	if err := tp.validate(); err != nil {
		return err
	}
	tp.cs = make([]classState, len(tp.classes))
	c := tp.ctx
	for i, tc := range tp.classes {
		cs := &tp.cs[i]
		cs.tc, cs.tp, cs.nparams, cs.nlocals = tc, tp, len(tc.Params), len(tc.Locals)
		copy(cs.pslot[:], tc.Params)
		for _, s := range tc.Params {
			cs.nlocals = max(cs.nlocals, s+1)
		}
		if c.tracer != nil {
			cs.trace = c.tracer.Name(tc.Name)
			cs.strace = c.tracer.Name("startup:" + tc.Name)
		}
		// Without devices nothing is shared, and CPU hooks are not timed.
		cs.shared = len(c.cfg.devices) > 0 && sharesWork(tc)
		if err := cs.count(); err != nil {
			return err
		}
		tp.total += cs.total
	}
	return nil
}

// count walks the space of one class.
func (cs *classState) count() (err error) {
	tc, tp := cs.tc, cs.tp
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("rt: enumerating %s: panic: %v\n%s", tc.Name, r, debug.Stack())
		}
	}()
	// The callback runs once per instance, serially, before any task can run: it keeps to
	// locals and skips the affinity call when every instance is local.
	var lo, hi [MaxParams]int
	for i := range lo {
		lo[i], hi[i] = math.MaxInt, math.MinInt
	}
	np, slots := cs.nparams, cs.pslot
	everyLocal := tp.ctx.cfg.nranks == 1 || tp.local || tc.Affinity == nil
	var l Locals
	remote := int64(0)
	all := int64(0) // the key ranges cover every instance, so keys agree across ranks
	c := tp.ctx
	tc.Space(tp, &l, func(l *Locals) bool {
		if all&walkCheck == 0 && (tp.failed.Load() || c.closed.Load()) {
			err = errWalkStopped
			return false
		}
		for i := 0; i < np; i++ {
			v := l[slots[i]]
			lo[i] = min(lo[i], v)
			hi[i] = max(hi[i], v)
		}
		all++
		if !everyLocal && !tp.isLocal(tc, l) {
			remote++
		}
		return true
	})
	if err != nil {
		return err
	}
	if all == 0 {
		lo, hi = [MaxParams]int{}, [MaxParams]int{}
	}
	cs.total, cs.all = all-remote, all
	stride := uint64(1)
	for i := cs.nparams - 1; i >= 0; i-- {
		cs.min[i] = lo[i]
		cs.span[i] = uint64(hi[i] - lo[i])
		cs.stride[i] = stride
		r := cs.span[i] + 1
		if r != 0 && stride > ^uint64(0)/r {
			if tc.Key == nil {
				return fmt.Errorf("%w: class %s", ErrKeySpace, tc.Name)
			}
		}
		stride *= r
	}
	if box, ok := denseSize(cs, all); ok {
		cs.denseN = box
	}
	return nil
}

// Dense dependency tables (deps.go): a class whose instances can wait for several inputs,
// keyed by rt's mixed-radix key, gets one slot per key of its parameters' bounding box when
// the box has at most denseRatio slots per instance (plus denseSlack) and at most denseMax
// slots (64 MiB). Larger boxes, and classes with their own Key, use the sharded table.
const (
	denseRatio = 8
	denseSlack = 4096
	denseMax   = 1 << 23
)

// denseSize returns the size of cs's dense table, and whether it gets one.
func denseSize(cs *classState, instances int64) (int, bool) {
	if cs.tc.Key != nil || !cs.tc.hasGoal() || instances == 0 {
		return 0, false
	}
	box := uint64(1)
	for i := 0; i < cs.nparams; i++ {
		r := cs.span[i] + 1
		if r == 0 || box > denseMax/r {
			return 0, false
		}
		box *= r
	}
	if box > uint64(instances)*denseRatio+denseSlack {
		return 0, false
	}
	return int(box), true
}

// startsReady reports whether the instance in l is ready at startup: its goal is zero, and,
// when the class can receive an arrival at all, every data flow's input chain selects an
// endpoint. A chain whose guards all fail may read data that bodies have not written yet (a
// predecessor's body decides which branch runs): such an instance is not started, it waits
// for an activation, and arrive evaluates the guards again when one comes. PaRSEC's startup
// does the same. In a class that nothing can activate, no later evaluation can come: the
// instance starts, and binding its inputs fails with ErrNoInput.
func (tc *TaskClass) startsReady(tp *Taskpool, l *Locals) bool {
	if !tc.hasGoal() {
		return true
	}
	// One pass over the chains: the goal's share of each (a task in its space) and the
	// guards that all fail.
	for i := range tc.Inputs {
		switch in := tc.Inputs[i].Select(tp, l); {
		case in.kind == inputNone, in.kind == inputTask && in.inSpace:
			return false
		}
	}
	return tc.Goal == nil || tc.Goal(tp, l) == 0
}

// isLocal reports whether the instance in l runs on this rank.
func (tp *Taskpool) isLocal(tc *TaskClass, l *Locals) bool {
	if tp.ctx.cfg.nranks == 1 || tp.local || tc.Affinity == nil {
		return true
	}
	coll, ix := tc.Affinity(tp, l)
	return coll == nil || coll.RankOf(ix) == tp.ctx.cfg.rank
}

// startup runs a startup pseudo-task: it makes ready the instances of its class that have no
// pending input.
func (w *worker) startup(st *Task) {
	cs, tp := st.cs, st.cs.tp
	tc := cs.tc
	var start int64
	if w.track != nil {
		start = w.c.tracer.Now()
	}
	var l Locals
	w.walk = st
	sats := w.c.saturators(tc)
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic during startup: %v\n%s", r, debug.Stack())
			}
		}()
		n := 0
		// This part's slice of the walk: instances [lo, hi) in walk order. handOffWalk may
		// lower walkEnd while a body runs inside the walk.
		lo := int64(st.l[0])
		w.walkEnd = int64(st.l[1])
		w.walkAt = -1
		tc.Space(tp, &l, func(l *Locals) bool {
			i := w.walkAt + 1
			if i&walkCheck == 0 && (tp.failed.Load() || w.c.closed.Load()) {
				return false // most instances of a sparse space are not ready: look here too
			}
			if w.walkAt = i; i < lo {
				return true
			}
			if i >= w.walkEnd {
				return false
			}
			if !tp.isLocal(tc, l) {
				return true
			}
			var ready bool
			switch {
			case tc.Startup != nil:
				ready = tc.Startup(tp, l)
			default:
				ready = tc.startsReady(tp, l)
			}
			if !ready {
				return true
			}
			key, _ := cs.keyOf(tp, l)
			t := w.newTask()
			w.initTask(t, tp, cs, l, key)
			w.buf = append(w.buf, t)
			if n++; len(w.buf) == cap(w.buf) {
				w.pushBuf()
				if tp.failed.Load() {
					return false
				}
				w.deferred = w.drain(w.deferred)
				if len(sats) > 0 {
					w.deferred = w.pauseWhileSaturated(sats, tp, w.deferred)
				}
				w.setCur(tp) // the tasks drained may belong to other taskpools
			}
			return true
		})
		return nil
	}()
	if w.track != nil { // before the last push: Wait cannot return before it
		w.track.Span(cs.strace, start, w.c.tracer.Now())
	}
	w.walk = nil
	w.pushBuf()
	for _, t := range w.deferred {
		w.pushOne(t)
	}
	w.deferred = w.deferred[:0]
	w.freeTask(st)
	if err != nil {
		tp.fail(&TaskError{Taskpool: tp.name, Task: "startup:" + tc.Name, Err: err})
	}
}

// drain runs tasks while the walker's backlog is above startupHigh, down to startupLow.
// Startup pseudo-tasks met on the way are returned in deferred instead of being run.
func (w *worker) drain(deferred []*Task) []*Task {
	if w.c.sched.backlog(w) <= startupHigh {
		return deferred
	}
	for w.c.sched.backlog(w) > startupLow && !w.c.closed.Load() {
		t := w.take()
		if t == nil {
			break
		}
		if t.kind == kindStartup {
			deferred = append(deferred, t)
			continue
		}
		w.run(t)
	}
	return deferred
}

// saturators returns the registered devices that can run an incarnation of tc and report
// saturation.
func (c *Context) saturators(tc *TaskClass) []Saturator {
	var sats []Saturator
	for _, inc := range tc.Incarnations {
		if inc.Kind == CPU {
			continue
		}
		for _, d := range c.byKind[inc.Kind] {
			if s, ok := d.(Saturator); ok && !slices.Contains(sats, s) {
				sats = append(sats, s)
			}
		}
	}
	return sats
}

// pauseWhileSaturated runs other tasks, or waits, while one of sats is saturated, so that a
// walk does not outrun the devices its tasks go to. A device's manager is another worker,
// busy until the device's queue empties, so the wait ends. Startup pseudo-tasks met on the
// way are returned in deferred, as in drain.
func (w *worker) pauseWhileSaturated(sats []Saturator, tp *Taskpool, deferred []*Task) []*Task {
	for idle := 0; anySaturated(sats) && !w.c.closed.Load() && !tp.failed.Load(); {
		t := w.take()
		switch {
		case t == nil:
			// Nothing to run: wait for the devices. Short sleeps keep the waiting walkers
			// off the cores and off the devices' counters.
			if idle++; idle < 16 {
				gosched()
			} else {
				time.Sleep(20 * time.Microsecond)
			}
		case t.kind == kindStartup:
			deferred = append(deferred, t)
		default:
			idle = 0
			w.run(t)
		}
	}
	return deferred
}

func anySaturated(sats []Saturator) bool {
	for _, s := range sats {
		if s.Saturated() {
			return true
		}
	}
	return false
}
