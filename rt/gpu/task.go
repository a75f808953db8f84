package gpu

import (
	"fmt"
	"iter"
	"sync/atomic"
	"time"
)

// EC is the logical task (PaRSEC's execution context) as the manager sees
// it: *rt.Task satisfies it, so submitting an rt task allocates nothing
// beyond its wrapper. Trace records name a member by its own task (
// never by the head's saved fields): a Profiler gets the wrapper, and the
// profiler may ask the task for its TraceID when it implements Traced.
type EC interface {
	// Priority is read before every FIFO insertion of the wrapper, so a
	// hook that changes it is honoured at the next insertion.
	Priority() int32
}

// Traced is implemented by logical tasks that name themselves in traces.
type Traced interface {
	TraceID() TraceID
}

// SubmitHook is a GPU body: it enqueues device work for every member of the
// ring headed by task on stream and says what happens next. Generated
// code builds one per `BODY [type=CUDA]` or `[type=GPU]`.
type SubmitHook func(dev *Device, task *Task, stream *Stream) Result

// CompleteFn is a one-shot callback run at the next successful event
// completion of the stage; its result has the meaning of a hook
// result at that point.
type CompleteFn func(dev *Device, head *Task, stream *Stream) Result

// StageFn replaces the default transfers of a stage for an incarnation (the
// JDF stage_in/stage_out properties). Device memory is already reserved: the
// function enqueues its copies on s, using t.Buffer and t.Flow, and returns
// how many it enqueued.
type StageFn func(dev *Device, t *Task, s *Stream) (copies int, r Result)

// Incarnation is a static descriptor of one device body of a task class.
// Wrappers of the same class and body share the same *Incarnation, so
// pointer equality is the "same class and incarnation" test of the batch
// callback.
type Incarnation struct {
	// Name is "class/body" for traces and messages.
	Name string
	// Type is the device family the body targets; TypeAny runs on every GPU
	// backend, the simulated one included.
	Type DeviceType
	// Submit is the body.
	Submit SubmitHook
	// Batch marks the body batch-capable (JDF batch = true | manual).
	Batch bool
	// NoProfile turns execution intervals off for this body (DSL
	// policy): its wrappers start DISABLED.
	NoProfile bool
	// StageIn and StageOut replace the default transfers when not nil.
	StageIn, StageOut StageFn
	// Size, when set, gives the device size in bytes of flow i of a task
	// (JDF X.size); 0 keeps the size of the host copy. Adapters that build
	// flows from a runtime task (RTDevice) call it.
	Size func(ec EC, flow int) int64
	// Data, when set, gives the data of a task whose class declares no
	// flows, a task inserted at run time (rt/dynamic): RTDevice makes flow i
	// of the wrapper from the i-th DataFlow that Data appends to buf, instead
	// of reading the class's flows (taskdata.go).
	Data func(ec EC, buf []DataFlow) []DataFlow
	// Before, when set, runs in RTDevice.Submit on the submitting goroutine, before
	// the task is wrapped: true means that the implementer keeps the task, as a
	// body that returned Async does (it reschedules or fails it later), and
	// nothing is submitted. rt/dynamic uses it to bring a datum whose newest
	// version is on another device back to the host first (RTDevice.Recall).
	Before func(r *RTDevice, ec EC) bool
}

// runsOn reports whether the incarnation targets dev's device type.
func (inc *Incarnation) runsOn(dev *Device) bool {
	return inc.Type == TypeAny || inc.Type == dev.info.Type
}

// Task is the GPU task wrapper: one per (logical task, submission).
// Wrappers of one batch form an intrusive circular ring whose head is the
// wrapper handed to the submit hook. Only the manager and the hook running
// under it touch a submitted wrapper.
type Task struct {
	ec   EC
	inc  *Incarnation
	dev  *Device
	kind Kind

	// Ring links; a singleton points to itself.
	next, prev *Task
	// FIFO links and the FIFO holding the wrapper (nil when none).
	qnext, qprev *Task
	queue        *fifo
	// The next newer wrapper in device.pending (pending.go).
	pendingNext atomic.Pointer[Task]

	priority     int32
	collected    int32 // ring length while CollectBatch scans for this head; 0 otherwise
	lastStatus   Result
	continuation bool
	state        State
	counted      bool
	inBacklog    bool    // counted in the device's backlog, at backlogPrio
	backlogPrio  int32   // the priority at submission
	stream       *Stream // compute stream, fixed at stage-in completion

	completeStage CompleteFn
	onRelease     func(*Task)

	flows     []Flow
	fs        []flowState
	pushout   uint64
	dataEpoch uint64
	// early: the logical task completed before its Late write-backs landed;
	// hold keeps its owner waiting for them. ec is nil from then on: the
	// owner may already reuse the logical task.
	early   bool
	hold    Hold
	earlyID TraceID // traceID once ec is gone

	stage     stageSpan
	exec      ExecState
	execStart time.Duration // device clock at the first commit of the exec stage
	// execStream and execLane: where the open execution interval is recorded.
	execStream *Stream
	execLane   int
	wb         []*devCopy // copies written back by a KindWriteBack wrapper
	cause      error      // why the body failed (Fail), for the cleanout
	// retries counts the AGAIN and NEXT results in a row while the device made
	// no other progress; retryMark is the device's decrement count at the last.
	retries   int32
	retryMark uint64
	// peer is the copy whose peer reader a KindD2DComplete command releases.
	peer        *devCopy
	peerCounted bool
	// recalled is the callback of a KindRecall wrapper (recall.go).
	recalled func(error)
}

// stageSpan is a stage interval whose end is due at the wrapper's next event
// completion (it belongs to the stage, not to the logical execution).
type stageSpan struct {
	name    string
	stream  *Stream // the stream and trace lane the interval is recorded on
	lane    int
	pending bool
}

// NewTask returns a wrapper for ec running inc on d, with the given flows
// (copied). The wrapper is a clean singleton in state NEW, ready for Submit.
func (d *Device) NewTask(ec EC, inc *Incarnation, flows ...Flow) *Task {
	t := d.allocTask()
	t.ec = ec
	t.inc = inc
	t.kind = KindKernel
	t.flows = append(t.flows[:0], flows...)
	if ec != nil {
		t.priority = ec.Priority()
	}
	if d.prof != nil && inc != nil && !inc.NoProfile {
		t.exec = ExecPending
	}
	return t
}

// SetCompleteStage installs fn as the one-shot callback of the current stage.
// A hook uses it to learn when its work for the whole ring is done;
// it runs once, at the DONE event of the ring, never at AGAIN events.
func (t *Task) SetCompleteStage(fn CompleteFn) { t.completeStage = fn }

// Fail records err as the reason why the body gives up on this wrapper's
// task and returns Error, for `return task.Fail(err)` in a body: the
// manager's terminal path fails the logical task with err instead of
// a bare "returned ERROR".
func (t *Task) Fail(err error) Result {
	if t.cause == nil {
		t.cause = err
	}
	return Error
}

// EC returns the logical task.
func (t *Task) EC() EC { return t.ec }

// Incarnation returns the body descriptor.
func (t *Task) Incarnation() *Incarnation { return t.inc }

// Device returns the device the wrapper was made for.
func (t *Task) Device() *Device { return t.dev }

// Stream returns the compute stream the wrapper's exec life is bound to, or
// nil before its stage-in completed.
func (t *Task) Stream() *Stream { return t.stream }

func (t *Task) String() string {
	name := t.traceID().String()
	if s, ok := t.ec.(fmt.Stringer); ok {
		name = s.String()
	}
	return fmt.Sprintf("%s[%s p=%d]", name, t.state, t.priority)
}

// makeSingleton resets the ring links.
func (t *Task) makeSingleton() { t.next, t.prev = t, t }

// IsSingleton reports whether the wrapper is alone in its ring.
func (t *Task) IsSingleton() bool { return t.next == t }

// RingLen returns the number of wrappers in t's ring, t included.
func (t *Task) RingLen() int {
	n := 1
	for x := t.next; x != t; x = x.next {
		n++
	}
	return n
}

// ringLen is RingLen in O(1) while a collection for t runs (a batch
// callback asking at every candidate would make collection quadratic).
func (t *Task) ringLen() int {
	if t.collected > 0 {
		return int(t.collected)
	}
	return t.RingLen()
}

// Followers returns the number of wrappers in t's ring besides t.
func (t *Task) followers() int { return t.RingLen() - 1 }

// Ring iterates over t's ring: t first, then its followers in ring order.
// The ring must not change during the iteration.
func (t *Task) Ring() iter.Seq[*Task] {
	return func(yield func(*Task) bool) {
		x := t
		for {
			nx := x.next
			if !yield(x) {
				return
			}
			if nx == t {
				return
			}
			x = nx
		}
	}
}

// appendRing moves the singleton x to the tail of t's ring.
func (t *Task) appendRing(x *Task) {
	tail := t.prev
	x.prev, x.next = tail, t
	tail.next = x
	t.prev = x
}

// Chop removes t from its ring and makes it a singleton again. It returns a
// member of what remains (the wrapper after t), or nil when t was alone. A
// hook that chops followers off its ring owns them: it must requeue them
// (Stream.RequeueFollowers does both steps), or they leak.
func (t *Task) chop() *Task {
	if t.next == t {
		return nil
	}
	rest := t.next
	t.prev.next = t.next
	t.next.prev = t.prev
	t.makeSingleton()
	return rest
}

// forEachChopped calls fn on every member of the ring headed by head, in
// ring order, each after it was made a singleton.
func forEachChopped(head *Task, fn func(*Task)) {
	for x := head; x != nil; {
		rest := x.chop()
		fn(x)
		x = rest
	}
}

// AddFlow appends a flow to a wrapper that was not submitted yet; flow
// indices follow the order of NewTask's flows, then of AddFlow calls.
func (t *Task) addFlow(f Flow) { t.flows = append(t.flows, f) }

// Flow returns flow i as given to NewTask.
func (t *Task) Flow(i int) Flow { return t.flows[i] }

// Buffer returns the device buffer of flow i. It is valid from the stage-in
// completion on (in hooks and custom stage functions); a NULL flow gives the
// zero Buffer.
func (t *Task) Buffer(i int) Buffer {
	c := t.fs[i].copy
	if c == nil {
		return Buffer{}
	}
	f := &t.flows[i]
	return Buffer{Ptr: c.ptr, Len: int(c.size / int64(f.Elem.Size())), Elem: f.Elem}
}

func (t *Task) resetFlowState() {
	if cap(t.fs) >= len(t.flows) {
		t.fs = t.fs[:len(t.flows)]
		clear(t.fs)
	} else {
		t.fs = make([]flowState, len(t.flows))
	}
}

// reset prepares a released wrapper for reuse.
func (t *Task) reset() {
	d := t.dev
	flows, fs, wb := t.flows[:0], t.fs[:0], t.wb[:0]
	clear(t.flows[:cap(t.flows)])
	clear(t.wb[:cap(t.wb)])
	*t = Task{dev: d, flows: flows, fs: fs, wb: wb}
	t.makeSingleton()
}
