package rt

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jdf2go/jdf2go/rt/profile"
)

// Taskpool is one instance of a JDF program: its task classes, its globals and its
// termination state. Build it with NewTaskpool (generated constructors do), add it to a
// Context with Context.Add, and join it with Wait. A Taskpool runs once and is not reused.
type Taskpool struct {
	name    string
	globals any
	classes []*TaskClass
	cs      []classState
	prio    int32

	arenaMu sync.Mutex
	arenas  atomic.Pointer[map[string]*Arena]

	ctx *Context
	// owner is ctx for the goroutines that may run while Add still enumerates (Wait,
	// Cancel): Add stores it once ctx is set.
	owner atomic.Pointer[Context]
	id    int
	// local: a nested taskpool (RunNested) runs every task on its Context's rank and takes
	// no sequence number (id is -1). Set before Add.
	local bool
	added atomic.Bool
	// counted: Add's enumeration finished, so cs is complete. A Wait that cancels the
	// taskpool while Add still enumerates must not scrub cs meanwhile (nothing was queued).
	counted atomic.Bool
	start   time.Time // when Add was called (progress.go)
	total   int64
	dyn     dynClasses // classes added at run time (dynamic.go)

	// The counters written per inserted task (AddTasks) lie on lines of their own, so that
	// an inserting goroutine does not pull away the lines that workers read per task (the
	// classes, failed, done).
	_ [128]byte
	// inserted counts the tasks added at run time (AddTasks).
	inserted atomic.Int64
	pending  atomic.Int64                  // local tasks not yet counted done
	skipped  atomic.Int64                  // local tasks that bodies said will not run (SkipTasks)
	dropped  atomic.Pointer[droppedOutput] // for the stall report (Edges.outside)
	actions  atomic.Int64                  // runtime actions in flight (AddActions), also counted in pending
	_        [128]byte

	failed   atomic.Bool
	scrubbed atomic.Bool
	doneOnce sync.Once
	done     chan struct{}
	err      error // written before done is closed
}

// NewTaskpool returns a taskpool named name running classes, whose generated functions find
// the JDF globals in globals (usually a pointer to the generated taskpool struct). classes[i]
// must have ID i.
func NewTaskpool(name string, globals any, classes ...*TaskClass) *Taskpool {
	return &Taskpool{name: name, globals: globals, classes: classes, done: make(chan struct{})}
}

// Name returns the taskpool's name.
func (tp *Taskpool) Name() string { return tp.name }

// Globals returns the value given to NewTaskpool; generated code type-asserts it.
func (tp *Taskpool) Globals() any { return tp.globals }

// Classes returns the task classes.
func (tp *Taskpool) Classes() []*TaskClass { return tp.classes }

// SetPriority sets the taskpool priority, added to every task's priority. Call before Add.
func (tp *Taskpool) SetPriority(p int32) { tp.prio = p }

// Context returns the Context the taskpool was added to, or nil.
func (tp *Taskpool) Context() *Context { return tp.ctx }

// SetArena registers arena a under name (the [type = NAME] of dependencies; "DEFAULT" when a
// dependency names none). Safe to call at any time.
func (tp *Taskpool) SetArena(name string, a *Arena) {
	tp.arenaMu.Lock()
	defer tp.arenaMu.Unlock()
	m := map[string]*Arena{}
	if old := tp.arenas.Load(); old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	m[name] = a
	tp.arenas.Store(&m)
}

// Arena returns the arena registered under name, or nil.
func (tp *Taskpool) Arena(name string) *Arena {
	if m := tp.arenas.Load(); m != nil {
		return (*m)[name]
	}
	return nil
}

// newCopy returns a fresh copy from the arena registered under name (NEW in JDF).
func (tp *Taskpool) newCopy(name string) (*Copy, error) {
	a := tp.Arena(name)
	if a == nil {
		return nil, fmt.Errorf("%w: %q in taskpool %s (NEW inputs and WRITE flows take their buffers "+
			"from it: call tp.SetArena(%q, rt.NewArena(bytes)) before Add)", ErrNoArena, name, tp.name, name)
	}
	c := a.Get()
	c.fresh, c.born = true, c.version.Load()
	return c, nil
}

// Total returns the number of local tasks, known once Add returned, plus those inserted
// at run time so far.
func (tp *Taskpool) Total() int64 { return tp.total + tp.inserted.Load() - tp.skipped.Load() }

// SkipTasks tells rt that n local tasks that Add counted will not run. In a graph whose
// guards read data that bodies write (a body decides which of two successors runs), the
// instances of the branch not taken never receive an input: counted termination still
// expects them, so the body that makes the choice calls tp.SkipTasks(1) for each local task
// it leaves out (PaRSEC's bodies call taskpool_addto_nb_tasks with -n). The count is this
// rank's: skip only tasks whose affinity is the calling rank.
//
// Call it from a body of tp, before the body returns (the caller is still counted). It never
// lets the count of tasks left drop below the tasks that still have to run: a negative n, or
// an n of more tasks than are left besides the caller, fails the taskpool and returns an
// error wrapping ErrSkip. Completions are counted in per-worker batches, so an excess within
// those batches is found later, when more tasks complete than counted: the taskpool fails
// with ErrSkip then, or, if its count reached zero first, it has ended before its last
// tasks and rt logs the excess.
func (tp *Taskpool) SkipTasks(n int) error {
	if n == 0 {
		return nil
	}
	if !tp.added.Load() {
		return fmt.Errorf("%w: SkipTasks(%d) on taskpool %s: %w", ErrSkip, n, tp.name, ErrNotAdded)
	}
	if n < 0 {
		err := fmt.Errorf("%w: SkipTasks(%d) on taskpool %s: the count of tasks to skip is negative", ErrSkip, n, tp.name)
		tp.fail(err)
		return err
	}
	for {
		cur := tp.pending.Load()
		// The caller is still counted: at least it must be left.
		if left := cur - tp.actions.Load() - 1; int64(n) > left {
			err := fmt.Errorf("%w: SkipTasks(%d) on taskpool %s: only %d tasks are left to run besides the caller",
				ErrSkip, n, tp.name, max(left, 0))
			tp.fail(err)
			return err
		}
		if tp.pending.CompareAndSwap(cur, cur-int64(n)) {
			tp.skipped.Add(int64(n))
			return nil
		}
	}
}

// remaining returns an estimate of the local tasks not yet done (workers count in batches).
func (tp *Taskpool) remaining() int64 { return max(tp.pending.Load(), 0) }

// Done returns a channel closed when the taskpool has finished or failed.
func (tp *Taskpool) Done() <-chan struct{} { return tp.done }

// isDone reports whether the taskpool has finished or failed.
func (tp *Taskpool) isDone() bool {
	select {
	case <-tp.done:
		return true
	default:
		return false
	}
}

// Err returns nil while the taskpool runs or after it succeeded, and its error after it failed.
func (tp *Taskpool) Err() error {
	select {
	case <-tp.done:
		return tp.err
	default:
		return nil
	}
}

// Wait blocks until every local task has completed, the taskpool failed, or ctx ends. When ctx
// ends first the taskpool is cancelled with ctx's cause. After a failure Wait returns only once
// no worker is still running a body of this taskpool (device-owned and Async tasks excepted),
// or when ctx ends, whichever comes first; bodies of other taskpools are not waited for.
// Wait can be called any number of times and from several goroutines, but never from a task
// body. It returns nil on success, the first task error (a *TaskError) or the cancellation.
func (tp *Taskpool) Wait(ctx context.Context) error {
	c := tp.owner.Load()
	if c == nil {
		return ErrNotAdded
	}
	select {
	case <-tp.done:
	case <-ctx.Done():
		tp.Cancel(context.Cause(ctx))
		<-tp.done
	}
	if tp.failed.Load() && tp.counted.Load() && c.quiesce(ctx, tp) {
		tp.scrub()
	}
	c.flushProgress()
	return tp.err
}

// scrub drops the records left in the dependency tables of a failed taskpool, once (Wait
// calls it when no worker runs a task of the taskpool any more). A record holds copies and
// its class's state, so the taskpool's data; and it lives in a slab of tasks that the free
// lists keep alive: without the scrub every failed taskpool would stay in memory. Holding
// extMu keeps out arrivals from goroutines that are not workers (Deliver, Task.Complete);
// those that come later see the failure and drop their task.
func (tp *Taskpool) scrub() {
	if !tp.scrubbed.CompareAndSwap(false, true) {
		return
	}
	c := tp.ctx
	c.extMu.Lock()
	defer c.extMu.Unlock()
	for i := range tp.cs {
		cs := &tp.cs[i]
		if d := cs.dense.Load(); d != nil {
			for j := range d.slots {
				if t := d.slots[j].Swap(nil); t != nil && t != &readyRecord {
					c.ext.freeTask(t)
				}
			}
		}
		for j := range cs.deps.shards {
			sh := &cs.deps.shards[j]
			sh.mu.Lock()
			for k, s := range sh.tab.slots {
				if s.t != nil {
					c.ext.freeTask(s.t)
					sh.tab.slots[k] = tabSlot{}
				}
			}
			sh.tab.n, sh.hot = 0, nil
			sh.mu.Unlock()
		}
	}
}

// Cancel fails the taskpool with cause (if it has not finished); its remaining tasks are
// dropped. Other taskpools are not affected.
func (tp *Taskpool) Cancel(cause error) {
	tp.fail(fmt.Errorf("rt: taskpool %s cancelled: %w", tp.name, cause))
}

// fail records the first error, wakes Wait and forgets the taskpool in its Context.
func (tp *Taskpool) fail(err error) {
	if !tp.failed.CompareAndSwap(false, true) {
		return
	}
	if c := tp.owner.Load(); c != nil && c.dash != nil {
		c.dash.reportError(tp, err)
	}
	tp.finish(err)
}

// finish closes done exactly once with err.
func (tp *Taskpool) finish(err error) {
	tp.doneOnce.Do(func() {
		tp.err = err
		if tp.done != nil { // nil in a Taskpool not made by NewTaskpool, which Add refuses
			close(tp.done)
		}
		if c := tp.owner.Load(); c != nil {
			c.forget(tp)
		}
	})
}

// countDone records n completed tasks; the call that reaches zero finishes the taskpool.
// Only SkipTasks can make more tasks complete than were counted: the call that takes the
// count below zero fails the taskpool (it never reaches zero, so it would never end), or,
// when the count reached zero first and the taskpool has ended, logs it.
func (tp *Taskpool) countDone(n int64) {
	switch left := tp.pending.Add(-n); {
	case left == 0:
		tp.recycleDense()
		tp.finish(nil)
	case left < 0 && left+n > 0:
		tp.fail(fmt.Errorf("%w: taskpool %s: more tasks completed than counted: SkipTasks skipped %d tasks, some of which ran",
			ErrSkip, tp.name, tp.skipped.Load()))
	case left < 0 && left+n == 0 && tp.ctx != nil:
		tp.ctx.log.Error("rt: more tasks completed than counted: SkipTasks skipped tasks that ran",
			"taskpool", tp.name, "skipped", tp.skipped.Load())
	}
}

// classState is the per-taskpool state of one class: its key radix, task count and dependency
// table.
type classState struct {
	tc      *TaskClass
	tp      *Taskpool
	nparams int
	nlocals int // slots copied between Locals: the definitions, and every parameter slot
	pslot   [MaxParams]int
	min     [MaxParams]int
	span    [MaxParams]uint64 // max - min
	stride  [MaxParams]uint64
	total   int64 // local instances
	all     int64 // instances on every rank: the length of the walk
	// denseN > 0 means that a dense table of denseN slots, one per key of the parameters'
	// bounding box, replaces deps (deps.go, arriveDense). It is allocated by the first
	// arrival that needs a record, so classes whose goals never exceed one arrival (chains,
	// broadcasts) allocate nothing.
	denseN int
	dense  atomic.Pointer[denseTable]
	deps   depTable
	trace  profile.Name // span name of the class
	strace profile.Name // span name of its startup walk
	// shared: the class has a device incarnation followed by a CPU one, so rt chooses
	// between them by estimated time (choice.go) and measures its CPU hook's time.
	shared  bool
	cpuMean atomic.Int64 // running mean of the CPU hook's time in ns; 0 until measured
	// measuring: a task of the class runs on a CPU worker to measure cpuMean (choice.go).
	measuring atomic.Bool
	done      atomic.Int64 // tasks completed, counted only while the dashboard is on
	inserted  atomic.Int64 // tasks inserted at run time (AddTasks)
}

// keyOf computes the mixed-radix key of the instance in l; false when a parameter lies outside
// the range measured during enumeration (so the instance does not exist).
func (cs *classState) keyOf(tp *Taskpool, l *Locals) (uint64, bool) {
	if cs.tc.Key != nil {
		return cs.tc.Key(tp, l), true
	}
	var k uint64
	for i := 0; i < cs.nparams; i++ {
		v := uint64(l[cs.pslot[i]] - cs.min[i])
		if v > cs.span[i] {
			return 0, false
		}
		k += v * cs.stride[i]
	}
	return k, true
}

// visitSuccessors runs tc's generated successor iteration for the instance in l (its
// parameter slots set; derived locals are computed here) and reports every output dependency
// to v without running anything. It is the walk behind Verify and DOT output.
func (tp *Taskpool) visitSuccessors(tc *TaskClass, l *Locals, v EdgeVisitor) bool {
	return tp.visit(tc, l, v, false)
}

// visitPredecessors is visitSuccessors over input dependencies.
func (tp *Taskpool) visitPredecessors(tc *TaskClass, l *Locals, v EdgeVisitor) bool {
	return tp.visit(tc, l, v, true)
}

// visit runs tc's successor iteration, or its predecessor iteration when in is set.
func (tp *Taskpool) visit(tc *TaskClass, l *Locals, v EdgeVisitor, in bool) bool {
	// rt/remote visits the successors of every arrival on the comm goroutine: the instance's
	// Locals and the Edges (a Locals array and more) would be allocated per message, since
	// the generated functions that receive them escape them.
	s := visitPool.Get().(*visitScratch)
	defer visitPool.Put(s)
	s.l = *l
	if !tc.Complete(tp, &s.l) {
		return false
	}
	if (!in && tc.Successors != nil) || (in && tc.hasPredecessors()) {
		e := &s.e
		*e = Edges{tp: tp, visit: v}
		if in {
			tc.predecessors(tp, &s.l, AllFlows, e)
		} else {
			tc.Successors(tp, &s.l, AllFlows, e)
		}
		*e = Edges{}
	}
	return true
}

// visitScratch is what one visit needs beyond the caller's Locals, recycled through
// visitPool.
type visitScratch struct {
	l Locals
	e Edges
}

var visitPool = sync.Pool{New: func() any { return new(visitScratch) }}
