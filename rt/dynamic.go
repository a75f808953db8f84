package rt

// Tasks inserted at run time: what a package that builds task graphs while the program runs
// (rt/dynamic) calls, through Impl (AddClass, AddTasks, Schedule, Ready, From, Payload and
// AddActions below are Impl's methods). Generated code never does.
//
// Actors: an inserting goroutine, which is usually not a worker; workers, which complete
// inserted tasks and may run bodies that insert more; and the implementing package, which owns
// the dependencies between inserted tasks (rt keeps no table for them) and tells rt when a task
// is ready.
//
// The protocol:
//  1. The implementer creates a Taskpool with no static class, holds it open with AddActions(1)
//     and adds it to a Context. Its startup walk has nothing to walk.
//  2. AddClass registers a class, at any time; a class has no space, no goal and no Prepare,
//     and its tasks are made only by Schedule and Ready.
//  3. Before a task can complete, AddTasks counts it: the taskpool's pending count never
//     reaches zero while a counted task is not done, so a graph whose last task completes
//     while the program inserts the next one cannot finish early.
//  4. A task whose predecessors are done is made ready with Impl.Schedule (from any goroutine), with
//     a Producer (one inserting goroutine at a time, in batches: dynready.go) or, inside the
//     Successors function of a completing task, with Impl.Ready, which keeps the best one in
//     the worker's next_task slot exactly as a PTG release does. An inserting goroutine that
//     waits may run ready tasks of the taskpool with Help (dynready.go).
//  5. The implementer drops its hold (AddActions(-1)) when nothing more will be inserted from
//     outside a body; bodies still running may insert, since their own task is still counted.
//
// Invariants: a dynamic task carries its implementer's payload in Task.aux for its whole life,
// through Async, Reschedule and device submission (the payload is the implementer's task
// record; rt never looks inside it). A dynamic class has no batch-capable CPU incarnation, so
// aux is never needed for a CPU ring. Its device incarnation may batch: rt/gpu's rings link
// device wrappers, each holding its own rt task, whose aux stays the payload. Failure works as for PTG: a failing body fails the taskpool, and
// tasks in flight are dropped without their Successors running.
//
// Rejected designs: deriving inserted tasks' readiness from rt's dependency tables (their goal
// is known only once every datum of the task has been looked at, while predecessors complete
// concurrently: a goal read early would make a task ready twice or never); one rt.Taskpool per
// inserted task (a Context's bookkeeping per taskpool costs microseconds); classes fixed when
// the taskpool is created (a program names its classes as it inserts).

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// dynClasses holds the classes registered at run time; append-only, copied on write, so that
// the dashboard and diagnostics read it without a lock.
type dynClasses struct {
	mu sync.Mutex
	cs atomic.Pointer[[]*classState]
}

// eachClass calls f for every class state of tp, static and registered at run time.
func (tp *Taskpool) eachClass(f func(cs *classState)) {
	for i := range tp.cs {
		f(&tp.cs[i])
	}
	if p := tp.dyn.cs.Load(); p != nil {
		for _, cs := range *p {
			f(cs)
		}
	}
}

// addClass registers tc with tp, which has been added to a Context and has not finished, for
// tasks made by schedule and ready. It sets tc.ID. tc needs a Name and incarnations;
// Space, Complete, Goal, Prepare and Predecessors are not used, and a batch-capable CPU
// incarnation is refused.
func (tp *Taskpool) addClass(tc *TaskClass) error {
	if !tp.added.Load() {
		return ErrNotAdded
	}
	if err := tp.Err(); err != nil {
		return err
	}
	if tc == nil {
		return fmt.Errorf("%w: nil class added to taskpool %s", ErrBadTaskClass, tp.name)
	}
	if err := tc.check(); err != nil {
		return err
	}
	for j, inc := range tc.Incarnations {
		if inc.Batch {
			return tc.bad("incarnation %d is batch-capable, which a class added at run time cannot be", j)
		}
	}
	c := tp.ctx
	cs := &classState{tc: tc, tp: tp, nparams: len(tc.Params), nlocals: len(tc.Locals)}
	copy(cs.pslot[:], tc.Params)
	for _, s := range tc.Params {
		cs.nlocals = max(cs.nlocals, s+1)
	}
	if c.tracer != nil {
		cs.trace = c.tracer.Name(tc.Name)
	}
	cs.shared = len(c.cfg.devices) > 0 && sharesWork(tc)
	tc.NoStartup = true

	d := &tp.dyn
	d.mu.Lock()
	defer d.mu.Unlock()
	var list []*classState
	if p := d.cs.Load(); p != nil {
		list = *p
	}
	tc.ID = len(tp.classes) + len(list)
	next := make([]*classState, len(list)+1)
	copy(next, list)
	next[len(list)] = cs
	d.cs.Store(&next)
	return nil
}

// dynState returns the state of a class registered with AddClass, or nil.
func (tp *Taskpool) dynState(tc *TaskClass) *classState {
	p := tp.dyn.cs.Load()
	if p == nil {
		return nil
	}
	i := tc.ID - len(tp.classes)
	if i < 0 || i >= len(*p) || (*p)[i].tc != tc {
		return nil
	}
	return (*p)[i]
}

// readyState returns the state of tc, a class added with AddClass, for a task about to be
// made ready: an error when tc is no such class or tp has failed.
func (tp *Taskpool) readyState(tc *TaskClass) (*classState, error) {
	cs := tp.dynState(tc)
	if cs == nil {
		return nil, fmt.Errorf("%w: %s is not a class added to taskpool %s", ErrBadTaskClass, tc.Name, tp.name)
	}
	return cs, tp.Err()
}

// addTasks counts n more tasks of tc (registered with AddClass) that tp waits for. Call it
// before the tasks can complete: before Schedule or before the task is linked where a
// completing predecessor can make it ready.
func (tp *Taskpool) addTasks(tc *TaskClass, n int64) {
	tp.inserted.Add(n)
	if cs := tp.dynState(tc); cs != nil {
		cs.inserted.Add(n)
	}
	tp.countDone(-n)
}

// fill sets up t as a ready task of the dynamic class state cs.
func (t *Task) fillDynamic(cs *classState, l *Locals, prio int32, payload any) {
	t.cs, t.kind = cs, kindTask
	copy(t.l[:cs.nlocals], l[:cs.nlocals])
	t.prio, t.hi = cs.tp.prio+prio, cs.tc.HighPriority
	t.aux = payload
}

// schedule makes a task of tc, a class registered with AddClass, ready with the locals in l
// (its parameters name it in errors and traces), priority prio (added to the taskpool's) and
// payload, which Impl.Payload returns. It is safe from any goroutine. It returns the
// taskpool's error once the taskpool has failed, and the task is then dropped.
func (tp *Taskpool) schedule(tc *TaskClass, l *Locals, prio int32, payload any) error {
	cs, err := tp.readyState(tc)
	if err != nil {
		return err
	}
	c := tp.ctx
	c.extMu.Lock()
	t := c.ext.newTask()
	t.fillDynamic(cs, l, prio, payload)
	c.ext.pushOne(t)
	c.extMu.Unlock()
	return nil
}

// ready makes a task of tc, a class registered with AddClass, ready on the worker that runs
// this release, as Schedule does: the best ready task of the release goes to the worker's
// next_task slot. Call it only from the Successors function of a class added with AddClass.
func (e *Edges) ready(tc *TaskClass, l *Locals, prio int32, payload any) {
	if e.visit != nil || e.w == nil {
		return
	}
	cs := e.tp.dynState(tc)
	if cs == nil {
		e.err = fmt.Errorf("%w: %s is not a class added to taskpool %s", ErrBadTaskClass, tc.Name, e.tp.name)
		return
	}
	t := e.w.newTask()
	t.fillDynamic(cs, l, prio, payload)
	e.w.makeReady(t)
}
