package rt

// Limits of the descriptor. They size fixed arrays inside Task, so that a task is one
// allocation-free value.
const (
	// MaxLocals is the number of definition slots (parameters and derived locals) of a class.
	MaxLocals = 20
	// MaxFlows is the number of flows of a class (data and CTL together).
	MaxFlows = 20
	// MaxParams is the number of parameters of a class (they identify an instance).
	MaxParams = 8
)

// Locals holds every definition of a task class, parameters and derived locals, in definition
// order: slot i is the i-th definition. TaskClass.Params says which slots are parameters.
type Locals [MaxLocals]int

// FlowMask selects flows by index: bit i is flow i of TaskClass.Flows.
type FlowMask uint32

// AllFlows selects every flow.
const AllFlows FlowMask = 1<<MaxFlows - 1

// Access is what a flow does with its data.
type Access uint8

// Flow access modes (docs/language.md, "Flows").
const (
	CTL   Access = iota + 1 // no data, ordering only
	Read                    // reads the data; must not modify it
	Write                   // produces fresh data (NEW)
	RW                      // reads, modifies and passes on a new version
)

func (a Access) String() string {
	switch a {
	case CTL:
		return "CTL"
	case Read:
		return "READ"
	case Write:
		return "WRITE"
	case RW:
		return "RW"
	}
	return "Access(?)"
}

// writes reports whether a body holding the flow modifies its data.
func (a Access) writes() bool { return a == Write || a == RW }

// Flow describes one flow of a task class. Its index in TaskClass.Flows is its flow index.
type Flow struct {
	Name   string
	Access Access
}

// Readiness selects how a task's pending inputs are tracked (docs/language.md, "What gen
// produces").
type Readiness uint8

const (
	// Counter: Goal returns the number of expected arrivals (a CTL gather counts each
	// gathered instance); each arrival decrements it. The default.
	Counter Readiness = iota
	// Mask: Goal returns the set of flows (bit per flow index) that expect one arrival each;
	// a second arrival on a flow fails the taskpool.
	Mask
)

// DeviceKind says which devices can run an incarnation.
type DeviceKind uint8

const (
	// CPU incarnations run their Hook on a worker.
	CPU DeviceKind = iota
	// GPU incarnations run on any GPU device, the simulated one included (BODY [type=GPU]).
	GPU
	// CUDA incarnations run on CUDA devices only (BODY [type=CUDA]).
	CUDA
)

func (k DeviceKind) String() string {
	switch k {
	case CPU:
		return "CPU"
	case GPU:
		return "GPU"
	case CUDA:
		return "CUDA"
	}
	return "DeviceKind(?)"
}

// Incarnation is one BODY of a task class. Incarnations are tried in order; see the
// "Life of a task" section of the package documentation.
type Incarnation struct {
	Kind DeviceKind
	// Hook runs a CPU incarnation: it unpacks the locals and typed flow values and runs the
	// user body. It returns nil (done), Next, Again, Async, or an error that fails the taskpool.
	Hook func(t *Task) error
	// Evaluate, when set, runs before Hook or before a device is chosen, and answers for
	// this task: nil runs this incarnation, Next tries the next one, and any other error
	// fails the task (BODY [evaluate = fn]; generated code adapts a func(*Task) bool with
	// EvaluateOf).
	Evaluate func(t *Task) error
	// Select, when set, picks the device for a device incarnation: the result is taken modulo
	// the number of devices that accept Kind (BODY [device = expr]). Without it rt picks the
	// accepting device that is expected to finish the task first (Load plus the task's
	// time), or a later CPU incarnation when a CPU worker is expected to finish it no later
	// (see the "Life of a task" section of the package documentation).
	Select func(t *Task) int
	// Device is the device-specific part of the incarnation (for rt/gpu, its submit hook and
	// batching properties). rt never looks inside it.
	Device any
	// NoTrace disables tracing for this incarnation (BODY [profile = off]).
	NoTrace bool
	// Batch makes a CPU incarnation batch-capable (BODY [batch = true | manual]): its Hook
	// may call Task.CollectBatch to run a ring of ready tasks of the class at once, and rt
	// then completes every member of the ring (batch.go).
	Batch bool
	// Scratch says that the CPU Hook calls Task.Scratch (gen sets it when a body's text
	// does). rt then names the worker on the task while the hook runs: a store on a cache
	// line that a task with CTL flows only never touches otherwise, so it is made only for
	// the incarnations that ask (and for batch-capable ones, which need it for
	// CollectBatch).
	Scratch bool
	// Admit, when set on a batch-capable CPU incarnation, checks a task that joins a ring
	// before the body sees it (generated code checks the types of its flow values); an
	// error fails that task's taskpool with a TaskError naming it.
	Admit func(t *Task) error
}

// TaskClass is the static descriptor of one JDF task class: codegen emits one per class as a
// package-level variable, and rt never interprets JDF. Every function field receives the
// taskpool (whose Globals hold the JDF globals) and a Locals. None may allocate or block: they
// run on the runtime's hot path. See the package documentation for a complete example.
type TaskClass struct {
	// Name is the JDF class name; it names tasks in errors and traces: "GEMM(1, 2, 3)".
	Name string
	// ID is the class's index in the taskpool's class list (source order).
	ID int
	// Locals names every definition slot, in definition order.
	Locals []string
	// Params lists the slots of the parameters in parameter order; they identify an instance.
	Params []int
	// Flows lists the flows; a flow's index is its position here.
	Flows []Flow
	// Readiness selects counter or mask tracking of inputs (counter by default).
	Readiness Readiness
	// HighPriority makes ready tasks of this class go before the others of equal priority
	// (and to the front of the gd FIFO): the JDF class property high_priority = on.
	HighPriority bool
	// NoStartup says that no instance can be ready at startup (every instance has an input
	// from a task), so rt skips the startup walk of this class.
	NoStartup bool
	// NoTrace disables tracing of this class (the JDF property profile = off).
	NoTrace bool

	// Space enumerates the execution space in definition order: nested loops over the
	// definitions, filling every slot of l (parameters and derived locals), calling yield
	// once per instance and returning as soon as yield returns false. Required.
	Space func(tp *Taskpool, l *Locals, yield func(*Locals) bool)
	// Complete computes the derived locals of the instance whose parameter slots are set in l
	// and reports whether the instance lies in the execution space (bounds only). Generated
	// successor iteration calls its own copy before each Edges.Task; rt calls it for
	// instances named from outside (remote activations, Verify). Required.
	Complete func(tp *Taskpool, l *Locals) bool
	// OffStep, set by generated code for a class with a stepped range, names the parameter
	// of an instance that Complete rejects only because that parameter lies between the
	// steps of its range, every parameter being within its bounds; it returns "" for any
	// other instance. Such an instance is outside the space (PaRSEC, which checks only the
	// bounds, would run it): Verify and the stall report say so when a dependency names one.
	OffStep func(tp *Taskpool, l *Locals) string
	// Inputs lists the input chains of the data flows (generated code; see generated.go).
	// rt derives from them the part of the readiness goal, of the input binding and of the
	// predecessor iteration that concerns those flows; Goal, Prepare and Predecessors then
	// cover only the other inputs (CTL flows, WRITE flows without inputs).
	Inputs []InputChain
	// Goal returns the readiness goal of an instance: with Counter, the number of expected
	// arrivals (one per data flow whose selected input is a task, plus for CTL flows one per
	// gathered instance whose guard holds); with Mask, the bit set of flows that expect an
	// arrival. Zero means ready at startup (unless a data flow of Inputs selects nothing:
	// TaskClass.startsReady). Nil means zero for every instance. With Inputs, it
	// returns the goal of the other flows, and rt adds (Mask: ors) the chains' own.
	Goal func(tp *Taskpool, l *Locals) uint32
	// Startup, when set, replaces "Goal == 0" as the test for ready-at-startup instances.
	Startup func(tp *Taskpool, l *Locals) bool
	// Key, when set, replaces rt's mixed-radix key over the parameters (make_key_fn). It must
	// be unique per instance.
	Key func(tp *Taskpool, l *Locals) uint64
	// Priority, when set, returns the priority expression; a task's priority is the
	// taskpool's priority plus it. Higher runs first.
	Priority func(tp *Taskpool, l *Locals) int32
	// Affinity, when set, returns the collection element that owns the instance; rt runs the
	// instance on the rank Collection.RankOf(Index). Nil means the local rank.
	Affinity func(tp *Taskpool, l *Locals) (Collection, Index)
	// Prepare binds the memory of the data flows that are not fed by a predecessor: it runs
	// each flow's input chain (first true guard wins) and calls Task.SetFlow with a
	// collection element's host copy, a copy from an arena (NEW) or nil (NULL). Flows fed by a
	// predecessor already hold their copy. If no guard of a data flow holds it returns an
	// error wrapping ErrNoInput that names the flow. Nil when the class has no such flow. With
	// Inputs, rt binds the chains' flows after Prepare, which binds only the others.
	Prepare func(t *Task) error
	// Successors enumerates, for the flows in flows, the output dependencies whose guards
	// hold: for each one it sets e.L to the target's locals (parameter slots, then the
	// target class's Complete) and calls e.Task, or calls e.Data for a collection endpoint.
	// Targets outside their space are skipped. Nil when the class has no outputs.
	Successors func(tp *Taskpool, l *Locals, flows FlowMask, e *Edges)
	// Predecessors is the mirror image over input dependencies (the input chain's selected
	// dep for data flows, every holding dep for CTL flows), for Verify and remote deps. With
	// Inputs, rt reports the chains' flows itself, before Predecessors.
	Predecessors func(tp *Taskpool, l *Locals, flows FlowMask, e *Edges)
	// Incarnations lists the bodies in BODY order. At least one is required.
	Incarnations []Incarnation
	// TimeEstimate, when set, estimates the run time of t on dev in nanoseconds, or on a CPU
	// worker when dev is nil (time_estimate). rt adds it to dev.Load() when it chooses a
	// device, and compares the result with the CPU time when the class shares its work
	// between devices and CPU workers (choice.go). Without it rt uses measured times.
	TimeEstimate func(t *Task, dev Device) int64
}

// goal returns the readiness goal of the instance in l: Goal's, and the input chains'.
func (tc *TaskClass) goal(tp *Taskpool, l *Locals) uint32 {
	if tc.Inputs == nil {
		if tc.Goal == nil {
			return 0
		}
		return tc.Goal(tp, l)
	}
	return tc.chainsGoal(tp, l)
}

func (tc *TaskClass) chainsGoal(tp *Taskpool, l *Locals) uint32 {
	n := inputGoal(tp, l, tc.Inputs, tc.Readiness)
	if tc.Goal != nil {
		if tc.Readiness == Mask {
			n |= tc.Goal(tp, l)
		} else {
			n += tc.Goal(tp, l)
		}
	}
	return n
}

// hasGoal reports whether an instance may wait for an input: whether goal may return more
// than zero.
func (tc *TaskClass) hasGoal() bool {
	if tc.Goal != nil {
		return true
	}
	for i := range tc.Inputs {
		if tc.Inputs[i].Task {
			return true
		}
	}
	return false
}

// hasPrepare reports whether prepare has anything to do.
func (tc *TaskClass) hasPrepare() bool { return tc.Prepare != nil || tc.Inputs != nil }

// prepare binds the inputs of t that no predecessor feeds: Prepare's, then the chains'.
func (tc *TaskClass) prepare(t *Task) error {
	if tc.Prepare != nil {
		if err := tc.Prepare(t); err != nil {
			return err
		}
	}
	return t.bindInputs(tc.Inputs)
}

// hasPredecessors reports whether predecessors reports anything.
func (tc *TaskClass) hasPredecessors() bool { return tc.Predecessors != nil || tc.Inputs != nil }

// predecessors reports the input dependencies of the instance in l: the chains', then
// Predecessors'.
func (tc *TaskClass) predecessors(tp *Taskpool, l *Locals, flows FlowMask, e *Edges) {
	e.inputs(tp, l, flows, tc.Inputs)
	if tc.Predecessors != nil {
		tc.Predecessors(tp, l, flows, e)
	}
}
