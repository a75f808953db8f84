package rt

import (
	"fmt"

	"github.com/jdf2go/jdf2go/rt/profile"
)

// The API for the packages that extend the runtime rather than use it: devices (rt/gpu),
// the distributed layer (rt/remote) and the benchmark harnesses that look inside them. A
// program that runs generated taskpools needs none of it. rt calls the interfaces below;
// the implementers call back through Worker and through the methods marked "for rt/gpu" or
// "for rt/remote" on Context, Taskpool, Task, Data, Copy and Arena.

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
// only during the call: keep one with Copy.Retain (and Copy.Release it when sent). Until the
// sends are done, hold the taskpool open with Taskpool.AddActions. The receiving side calls
// Taskpool.Deliver.
type Remote interface {
	Activate(w Worker, src *Task, flow int, peer *TaskClass, peerFlow int, l *Locals, rank int) error
	WriteBack(w Worker, src *Task, flow int, coll Collection, ix Index, rank int) error
}

// What rt/remote calls on a taskpool.

// Deliver is an arrival from another rank: flow peerFlow of the local instance of peer whose
// parameter slots are set in l receives c (nil for CTL). The instance's derived locals are
// computed here. It is safe from any goroutine (rt/ce's communication goroutine calls it). An
// inconsistent arrival fails the taskpool and is returned.
func (tp *Taskpool) Deliver(peer *TaskClass, peerFlow int, l *Locals, c *Copy) error {
	if !tp.added.Load() {
		return ErrNotAdded
	}
	if err := tp.Err(); err != nil {
		return err
	}
	ll := *l
	if !peer.Complete(tp, &ll) {
		err := fmt.Errorf("%w: remote arrival for %s", ErrOutsideSpace, taskName(peer, &ll))
		tp.fail(err)
		return err
	}
	ctx := tp.ctx
	ctx.extMu.Lock()
	err := ctx.ext.arrive(tp, c, peer, peerFlow, &ll)
	ctx.ext.flushReady()
	ctx.extMu.Unlock()
	if err != nil {
		tp.fail(fmt.Errorf("rt: taskpool %s: remote arrival: %w", tp.name, err))
	}
	return err
}

// AddActions adds delta to the runtime actions (communications in flight) that keep the
// taskpool from finishing: +1 when one starts, -1 when it ends. Counted termination then
// waits for both the local tasks and the actions. Actions added before Context.Add hold the
// taskpool from its start (a remote layer expecting arrivals that no local task waits for).
func (tp *Taskpool) AddActions(delta int) {
	tp.actions.Add(int64(delta))
	tp.countDone(-int64(delta))
}

// ID returns the taskpool's sequence number in its Context (0 for the first one added), the
// same on every rank when every rank adds its taskpools in the same order.
func (tp *Taskpool) ID() int { return tp.id }

// What devices and harnesses read from a Context.

// Worker returns worker i, for devices and communication engines that keep per-worker state.
func (c *Context) Worker(i int) Worker { return c.workers[i] }

// SharesWork reports whether CPU workers share device classes' tasks (ShareWork): a
// device keeps a written value for its successors when no CPU body may read it.
func (c *Context) SharesWork() bool { return c.cfg.share }

// AddDashboardProvider adds p's state to every dashboard snapshot from now on. Devices
// given to Devices, and the Remote, that implement DashboardProvider are added by New. It
// does nothing when the dashboard is off.
func (c *Context) AddDashboardProvider(p DashboardProvider) {
	if d := c.dash; d != nil && p != nil {
		d.mu.Lock()
		d.providers = append(d.providers, p)
		d.mu.Unlock()
	}
}
