package rt

import "strconv"

// taskKind separates real tasks from rt's own pseudo-tasks.
type taskKind uint8

const (
	kindTask    taskKind = iota
	kindStartup          // walks a class's space and schedules its ready-at-startup instances
	kindFanout           // makes arrivals deferred by a large release (fanout.go)
)

// Task is one instance of a task class. Tasks are values recycled through per-worker free
// lists: a *Task is valid from the moment rt hands it to a hook, a device or a visitor until
// it completes, fails or is rescheduled, and must not be kept after that.
type Task struct {
	// The fields rt touches on every task come first, in 48 bytes, so that the first two
	// locals share their cache line: a task with two parameters and CTL flows only (held is
	// zero) touches one line. The class is cs.tc, the taskpool cs.tp.
	cs   *classState
	next *Task // gd FIFO while queued; the next member of a CPU ring while it runs (batch.go)
	key  uint64
	prio int32
	// pending is, with Counter readiness, the arrivals still expected; with Mask, the flows
	// arrived so far.
	pending uint32
	// held has bit i set exactly when flows[i] holds a copy, so that completion and
	// recycling visit only those (a task with CTL flows only never touches flows) and a
	// second copy on one flow is reported rather than lost. Zero in a free task.
	//
	// While a record is published in a dense dependency table (deps.go), arrivals update
	// pending and held with sync/atomic functions and no lock; in a sharded table they hold
	// the shard's lock; otherwise one goroutine owns the task.
	held     uint32
	inc      int32 // next incarnation to try
	kind     taskKind
	prepared bool
	hi       bool // the class is high_priority
	// ring is, on the head of a CPU ring (batch.go), the number of followers linked from it
	// through next; 0 everywhere else.
	ring int32

	l     Locals // only the first classState.nlocals slots are meaningful
	flows [MaxFlows]*Copy
	// aux is one of three things, never two at once: the *worker running t's CPU hook, for
	// Task.CollectBatch and Task.Scratch; a kindFanout task's *fanout; or the payload that
	// Impl.Schedule or Impl.Ready attached to a task inserted at run time (dynamic.go),
	// whose classes have no batch-capable incarnation. 384 bytes in all: tasks in a slab
	// (newTask) start on cache lines.
	aux any
}

// Class returns the task's class.
func (t *Task) Class() *TaskClass {
	if t.kind != kindTask || t.cs == nil {
		return nil
	}
	return t.cs.tc
}

// Taskpool returns the task's taskpool.
func (t *Task) Taskpool() *Taskpool {
	if t.cs == nil {
		return nil
	}
	return t.cs.tp
}

// Locals returns the task's definition slots (parameters and derived locals). Bodies read
// them; only rt and generated Complete write them.
func (t *Task) Locals() *Locals { return &t.l }

// Flow returns the copy bound to flow i (nil for CTL flows, NULL inputs and unbound flows).
func (t *Task) Flow(i int) *Copy { return t.flows[i] }

// SetFlow binds c to flow i (generated Prepare does it for memory inputs). The task takes over
// the reference of an arena copy from Arena.Get; any copy bound before is released.
func (t *Task) SetFlow(i int, c *Copy) {
	if old := t.flows[i]; old != nil && old != c {
		old.release()
	}
	t.flows[i] = c
	if bit := uint32(1) << uint(i); c != nil {
		t.held |= bit
	} else {
		t.held &^= bit
	}
}

// Priority returns the task's priority (taskpool priority plus the class's expression).
func (t *Task) Priority() int32 { return t.prio }

// String returns the class name and parameters: "GEMM(1, 2, 3)". It allocates; use it for
// errors and diagnostics, not on a hot path.
func (t *Task) String() string {
	switch t.kind {
	case kindStartup:
		return "startup:" + t.cs.tc.Name
	case kindFanout:
		return "fanout:" + t.aux.(*fanout).src.Name
	}
	return taskName(t.cs.tc, &t.l)
}

// taskName formats class(params) for the instance in l.
func taskName(tc *TaskClass, l *Locals) string {
	b := append([]byte(tc.Name), '(')
	for i, s := range tc.Params {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, int64(l[s]), 10)
	}
	return string(append(b, ')'))
}

// Complete finishes a task whose body returned Async (or that a device owns): it releases
// the successors, writes back collection outputs and counts the task for termination. It is
// safe from any goroutine; a device manager running on a worker should call Worker.Complete
// instead, which keeps the best successor in the worker's next_task slot.
func (t *Task) Complete() {
	c := t.cs.tp.ctx
	c.extMu.Lock()
	defer c.extMu.Unlock()
	c.ext.Complete(t)
}

// Fail fails the task's taskpool with err, naming the task, and drops the task. Safe from any
// goroutine, for a task that a body (Async) or a device owns.
func (t *Task) Fail(err error) {
	c := t.cs.tp.ctx
	c.ext.handed.Add(-1)
	c.extMu.Lock()
	defer c.extMu.Unlock()
	c.ext.failTask(t, err)
}

// Reschedule puts a task owned by a device or an Async body back into the scheduler, to try
// incarnations from index inc on (for example the CPU one after a device was disabled).
// Safe from any goroutine.
func (t *Task) Reschedule(inc int) {
	c := t.cs.tp.ctx
	c.extMu.Lock()
	defer c.extMu.Unlock()
	c.ext.Reschedule(t, inc)
}
