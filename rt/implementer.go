package rt

import (
	"fmt"

	"github.com/jdf2go/jdf2go/rt/profile"
)

// The API for the packages that extend the runtime rather than use it: devices (rt/gpu),
// the distributed layer (rt/remote) and the benchmark harnesses that look inside them. A
// program that runs generated taskpools needs none of it. rt calls the interfaces below;
// the implementers call back through Worker and Impl.

// Worker is the execution stream that hands a task to a Device (Submit) or a dependency to a
// Remote (Activate, WriteBack). Its methods must be called only from that goroutine, inside
// the call or, for a device manager, for as long as Submit keeps the worker.
type Worker interface {
	// ID returns the worker's index in [0, Context.Workers()); -1 for the pseudo-worker
	// that serves goroutines which are not workers.
	ID() int
	// Context returns the worker's Context.
	Context() *Context
	// Track returns the worker's profiling track (nil when profiling is off; nil tracks
	// ignore calls), for spans such as a device manager's "own GPU" interval.
	Track() *profile.Track
	// FlushNextTask moves the task in the private next_task slot, if any, to the shared
	// scheduler so that other workers can run it, and hands off the rest of a startup walk
	// that the worker is in. rt/gpu calls it when this worker becomes a device manager and
	// after each completion inside the manager loop (docs/gpu.md, "next_task").
	FlushNextTask()
	// Complete finishes task t on this worker: it releases t's successors (keeping the
	// best one in the next_task slot), writes back collection outputs and counts t done.
	// For a task whose hook returned Async or that a device owns.
	Complete(t *Task)
	// Reschedule puts t, which a device or an Async body owns, back into the scheduler to
	// try its incarnations from index inc on.
	Reschedule(t *Task, inc int)
}

// Device runs the incarnations of one non-CPU kind (rt/gpu implements it, one value per GPU).
// Register devices with Devices.
//
// The hand-off protocol: rt calls Submit on the worker w that picked the task. Submit returns
// nil once the device owns the task; from then on rt does not touch it, and the device must
// end it exactly once with w.Complete or Task.Complete (done), Worker.Reschedule or
// Task.Reschedule (try other incarnations), or Task.Fail. Submit may keep w busy for a long
// time as the device's manager; it must then call w.FlushNextTask on entry and after each
// completion (docs/gpu.md, "next_task"). Submit returns Next to refuse the task (rt tries the
// next incarnation) and any other error to fail the taskpool.
type Device interface {
	// Name identifies the device in diagnostics ("sim0", "cuda1").
	Name() string
	// Accepts reports whether the device runs incarnations of kind k.
	Accepts(k DeviceKind) bool
	// Load estimates the work queued on the device, in nanoseconds.
	Load() int64
	// Submit hands t, with its chosen incarnation inc, to the device.
	Submit(w Worker, t *Task, inc *Incarnation) error
}

// A Saturator is a Device that accepts tasks faster than it runs them. Submit returns as
// soon as the device owns a task, so a startup walk of a class with an incarnation for the
// device would otherwise make its whole space ready at once: millions of tasks, each holding
// memory, queued on a device that runs them a batch at a time, while the walkers compete
// with the device's manager for its queue. A walk of such a class pauses while one of its
// devices reports Saturated (startup.go).
type Saturator interface {
	// Saturated reports whether the device holds enough accepted work to stay busy.
	Saturated() bool
}

// Estimator is implemented by a Device that can estimate a task's run time on it.
type Estimator interface {
	// Estimate returns the expected time of t's incarnation inc on the device in ns, not
	// counting the work queued before it (that is Load); 0 means unknown.
	Estimate(t *Task, inc *Incarnation) int64
}

// PriorityLoader is implemented by a Device that runs the work it holds by priority, higher
// first: a task then waits only for the work of its priority or above. Without it a task of
// the critical path, the highest priority, would count the whole queue of a busy device,
// and go to a CPU core although the device would run it next.
type PriorityLoader interface {
	// LoadAbove estimates, in ns, the work queued on the device at priority p or above.
	LoadAbove(p int32) int64
}

// Remote carries dependencies between ranks; rt/remote implements it over rt/ce and registers
// it with Rank. Without one, a dependency that crosses ranks fails the taskpool.
//
// rt calls Activate when task src, completing on worker w, releases flow of src to flow
// peerFlow of the instance of peer whose locals are in l and whose affinity places it on rank;
// WriteBack when src writes flow back to element ix of collection coll owned by rank. w is the
// ext pseudo-worker (ID -1) when the completion came from a goroutine that is not a worker.
// Both run on rt's hot path: they must queue the work and return. src's copies are valid
// only during the call: keep one with Impl.Retain (and Impl.Release it when sent). Until the
// sends are done, hold the taskpool open with Impl.AddActions. The receiving side calls
// Impl.Deliver.
//
// The values of src's copies are the producer's during every call of a release: rt starts no
// local task that receives one of them at a writing flow (RW, WRITE) before the release's
// calls have returned (deps.go, "Local writers in a distributed run"). A send that reads a
// copy after its call returned must copy it first when a local task may write it.
type Remote interface {
	Activate(w Worker, src *Task, flow int, peer *TaskClass, peerFlow int, l *Locals, rank int) error
	WriteBack(w Worker, src *Task, flow int, coll Collection, ix Index, rank int) error
}

// Impl is the implementer API: what the packages that extend the runtime (rt/gpu, rt/remote,
// rt/dynamic) and the harnesses that look inside them reach in rt's objects beyond what a
// program may touch: the coherency state of copies, the counts that hold a taskpool open, the
// arrivals from other ranks and the tasks inserted at run time. Its methods are grouped here,
// on one value, so that the types' own method sets are what programs use; they change with
// the implementers.
var Impl Implementer = implementer{}

// Implementer is the type of Impl; rt is its only implementation.
type Implementer interface {
	// Copies and their coherency (for rt/gpu, which keeps device copies in Data slots
	// 1..MaxDevices-1 and moves versions and states as it transfers them).

	// CopyData returns the datum c belongs to.
	CopyData(c *Copy) *Data
	// DeviceCopy returns d's copy on device slot dev, or nil (slots 1.. are rt/gpu's mirrors;
	// slot 0 is Data.Host).
	DeviceCopy(d *Data, dev int) *Copy
	// Attach installs c as d's copy on slot dev. It fails with ErrCopyExists when the slot is
	// occupied, leaving both unchanged.
	Attach(d *Data, dev int, c *Copy) error
	// Detach removes c from d's slot dev and reports whether it was there.
	Detach(d *Data, dev int, c *Copy) bool
	// Version returns c's version; each write bumps it.
	Version(c *Copy) uint64
	// SetVersion sets c's version after a transfer makes it equal to another copy.
	SetVersion(c *Copy, v uint64)
	// BumpVersion records a write into c and returns the new version (rt/remote writes
	// received data into collection elements).
	BumpVersion(c *Copy) uint64
	// State returns c's coherency state.
	State(c *Copy) Coherency
	// SetState sets c's coherency state.
	SetState(c *Copy, s Coherency)
	// Unwritten reports whether c is a buffer handed out for a NEW input that no task has
	// written since. Its content is undefined, so a device that runs the task need not copy
	// it in. A copy taken with Arena.Get, such as one that received a remote rank's data,
	// is never unwritten.
	Unwritten(c *Copy) bool
	// Retain adds a reference to an arena copy (a no-op for other copies), for code that
	// keeps a copy beyond the task holding it (rt/remote until a send is acknowledged).
	Retain(c *Copy)
	// Release drops a reference taken by Retain; the last one returns an arena copy to its
	// arena.
	Release(c *Copy)

	// Tasks and taskpools.

	// Incarnation returns the index of t's incarnation being run or to be tried next.
	Incarnation(t *Task) int
	// Key returns t's key within its class.
	Key(t *Task) uint64
	// TaskpoolID returns tp's sequence number in its Context (0 for the first one added; -1
	// for a nested taskpool, which runs on its rank alone: Task.RunNested),
	// the same on every rank when every rank adds its taskpools in the same order.
	TaskpoolID(tp *Taskpool) int
	// AddActions adds delta to the runtime actions (communications in flight, a graph open
	// for insertion) that keep tp from finishing: +1 when one starts, -1 when it ends.
	// Counted termination then waits for both the local tasks and the actions. Actions
	// added before Context.Add hold tp from its start (a remote layer expecting arrivals
	// that no local task waits for).
	AddActions(tp *Taskpool, delta int)
	// VisitSuccessors runs tc's successor iteration for the instance in l (its parameter
	// slots set; derived locals are computed here) and reports every output dependency to v
	// without running anything: the walk behind Verify and DOT output. It returns false when
	// the instance lies outside tc's space.
	VisitSuccessors(tp *Taskpool, tc *TaskClass, l *Locals, v EdgeVisitor) bool

	// Ranks (for rt/remote; docs/ce.md).

	// Deliver is an arrival from another rank: flow peerFlow of the local instance of peer
	// whose parameter slots are set in l receives c (nil for CTL). The instance's derived
	// locals are computed here, into *l, which the caller must not share with another
	// goroutine during the call. It is safe from any goroutine (rt/ce's communication
	// goroutine calls it). An inconsistent arrival fails tp and is returned.
	Deliver(tp *Taskpool, peer *TaskClass, peerFlow int, l *Locals, c *Copy) error

	// Contexts.

	// Worker returns worker i of ctx, for devices and communication engines that keep
	// per-worker state.
	Worker(ctx *Context, i int) Worker
	// SharesWork reports whether ctx's CPU workers share device classes' tasks (ShareWork):
	// a device keeps a written value for its successors when no CPU body may read it.
	SharesWork(ctx *Context) bool
	// Ranks returns the number of ranks ctx runs with (Rank), for the extensions whose
	// protocol changes when there are several.
	Ranks(ctx *Context) int
	// AddDashboardProvider adds p's state to every dashboard snapshot of ctx from now on.
	// Devices given to Devices, and the Remote, that implement DashboardProvider are added
	// by New. It does nothing when the dashboard is off.
	AddDashboardProvider(ctx *Context, p DashboardProvider)

	// Tasks inserted at run time (for rt/dynamic; the protocol is in dynamic.go).

	// AddClass registers tc with tp, which has been added to a Context and has not
	// finished, for tasks made by Schedule and Ready. It sets tc.ID. tc needs a Name and
	// incarnations; Space, Complete, Inputs and Goal are not used, and a batch-capable CPU
	// incarnation is refused.
	AddClass(tp *Taskpool, tc *TaskClass) error
	// AddTasks counts n more tasks of tc (registered with AddClass) that tp waits for. Call
	// it before the tasks can complete: before Schedule, or before a task is linked where a
	// completing predecessor can make it ready.
	AddTasks(tp *Taskpool, tc *TaskClass, n int64)
	// Schedule makes a task of tc, a class registered with AddClass, ready with the locals
	// in l (its parameters name it in errors and traces), priority prio (added to tp's) and
	// payload, which Payload returns. It is safe from any goroutine. It returns tp's error
	// once tp has failed, and the task is then dropped.
	Schedule(tp *Taskpool, tc *TaskClass, l *Locals, prio int32, payload any) error
	// Ready is Schedule from inside the Successors function of a class added with AddClass,
	// on the worker that runs the release: the best ready task of the release goes to the
	// worker's next_task slot, as in a PTG release.
	Ready(e *Edges, tc *TaskClass, l *Locals, prio int32, payload any)
	// From returns the task whose successors e is releasing, inside a Successors function.
	From(e *Edges) *Task
	// Payload returns the payload given to Schedule or Ready for t, or nil.
	Payload(t *Task) any
	// NewProducer returns a Producer for tp's classes added with AddClass: it makes their
	// ready tasks ready in batches, for an inserting goroutine that is not a worker.
	NewProducer(tp *Taskpool) *Producer
	// Help runs ready tasks of tp on the calling goroutine, which is not a worker, until stop
	// reports true, tp has finished or failed, or no task it may run is ready at the head of
	// a scheduler queue (rt/dynready.go). It returns the number of tasks it ran. The caller
	// holds no lock that a body may take and is not running a body; stop is called before
	// each task.
	Help(tp *Taskpool, stop func() bool) int
}

type implementer struct{}

func (implementer) CopyData(c *Copy) *Data            { return c.data }
func (implementer) DeviceCopy(d *Data, dev int) *Copy { return d.copies[dev].Load() }

func (implementer) Attach(d *Data, dev int, c *Copy) error {
	if dev < 0 || dev >= MaxDevices {
		return fmt.Errorf("%w: device slot %d out of range", ErrBadOption, dev)
	}
	// Set before the copy is published; undone when it is not.
	prevData, prevDev := c.data, c.device
	c.data, c.device = d, dev
	if !d.copies[dev].CompareAndSwap(nil, c) {
		c.data, c.device = prevData, prevDev
		return ErrCopyExists
	}
	return nil
}

func (implementer) Detach(d *Data, dev int, c *Copy) bool {
	return d.copies[dev].CompareAndSwap(c, nil)
}
func (implementer) Version(c *Copy) uint64        { return c.version.Load() }
func (implementer) SetVersion(c *Copy, v uint64)  { c.version.Store(v) }
func (implementer) BumpVersion(c *Copy) uint64    { return c.bumpVersion() }
func (implementer) State(c *Copy) Coherency       { return Coherency(c.state.Load()) }
func (implementer) SetState(c *Copy, s Coherency) { c.state.Store(uint32(s)) }
func (implementer) Unwritten(c *Copy) bool        { return c.fresh && c.version.Load() == c.born }
func (implementer) Retain(c *Copy)                { c.retain() }
func (implementer) Release(c *Copy)               { c.release() }
func (implementer) Incarnation(t *Task) int       { return int(t.inc) }
func (implementer) Key(t *Task) uint64            { return t.key }
func (implementer) TaskpoolID(tp *Taskpool) int   { return tp.id }

func (implementer) AddActions(tp *Taskpool, delta int) {
	tp.actions.Add(int64(delta))
	tp.countDone(-int64(delta))
}

func (implementer) VisitSuccessors(tp *Taskpool, tc *TaskClass, l *Locals, v EdgeVisitor) bool {
	return tp.visitSuccessors(tc, l, v)
}

func (implementer) Deliver(tp *Taskpool, peer *TaskClass, peerFlow int, l *Locals, c *Copy) error {
	if !tp.added.Load() {
		return ErrNotAdded
	}
	if err := tp.Err(); err != nil {
		return err
	}
	// l is the caller's: the derived locals go into it, and no copy escapes to the heap on
	// every arrival.
	if !peer.Complete(tp, l) {
		err := fmt.Errorf("%w: remote arrival for %s", ErrOutsideSpace, taskName(peer, l))
		tp.fail(err)
		return err
	}
	ctx := tp.ctx
	ctx.extMu.Lock()
	err := ctx.ext.arrive(tp, c, peer, peerFlow, l)
	ctx.ext.flushReady()
	ctx.extMu.Unlock()
	if err != nil {
		tp.fail(fmt.Errorf("rt: taskpool %s: remote arrival: %w", tp.name, err))
	}
	return err
}

func (implementer) Worker(ctx *Context, i int) Worker { return ctx.workers[i] }
func (implementer) SharesWork(ctx *Context) bool      { return ctx.cfg.share }
func (implementer) Ranks(ctx *Context) int            { return ctx.cfg.nranks }

func (implementer) AddDashboardProvider(ctx *Context, p DashboardProvider) {
	if d := ctx.dash; d != nil && p != nil {
		d.mu.Lock()
		d.providers = append(d.providers, p)
		d.mu.Unlock()
	}
}

func (implementer) AddClass(tp *Taskpool, tc *TaskClass) error    { return tp.addClass(tc) }
func (implementer) AddTasks(tp *Taskpool, tc *TaskClass, n int64) { tp.addTasks(tc, n) }

func (implementer) Schedule(tp *Taskpool, tc *TaskClass, l *Locals, prio int32, payload any) error {
	return tp.schedule(tc, l, prio, payload)
}

func (implementer) Ready(e *Edges, tc *TaskClass, l *Locals, prio int32, payload any) {
	e.ready(tc, l, prio, payload)
}

func (implementer) From(e *Edges) *Task                     { return e.src }
func (implementer) NewProducer(tp *Taskpool) *Producer      { return tp.newProducer() }
func (implementer) Help(tp *Taskpool, stop func() bool) int { return tp.help(stop) }

func (implementer) Payload(t *Task) any {
	if _, ok := t.aux.(*worker); ok || t.kind != kindTask {
		return nil
	}
	return t.aux
}
