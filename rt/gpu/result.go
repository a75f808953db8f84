package gpu

import (
	"strconv"

	"github.com/jdf2go/jdf2go/rt"
)

// Result is what a submit hook, a stage function or a complete-stage callback
// returns (docs/gpu.md, "Result codes"). The values are PaRSEC's, so traces of both
// runtimes can be compared. Any non-negative value is treated as Done by the
// exec stage, and an unknown negative value as Error.
type Result int32

// Hook results.
const (
	// Done: device work for every member of the ring is enqueued; the ring
	// completes at the next event.
	Done Result = 0
	// Again: committed progress; the same ring re-enters the hook after the
	// event recorded behind the enqueued work.
	Again Result = -1
	// Next: physical constraint, try this head later; followers go back to the
	// FIFO.
	Next Result = -2
	// Disable: terminal failure with the DISABLE status.
	Disable Result = -3
	// Async: every member's logical task was handed to another owner.
	Async Result = -4
	// Error: terminal failure.
	Error Result = -5
)

// normalize maps a raw hook result to one of the six named results: any
// non-negative value is Done and an unknown negative value is Error.
func (r Result) normalize() Result {
	switch {
	case r >= 0:
		return Done
	case r == Again, r == Next, r == Disable, r == Async, r == Error:
		return r
	default:
		return Error
	}
}

func (r Result) String() string {
	switch r {
	case Done:
		return "DONE"
	case Again:
		return "AGAIN"
	case Next:
		return "NEXT"
	case Disable:
		return "DISABLE"
	case Async:
		return "ASYNC"
	case Error:
		return "ERROR"
	}
	return "Result(" + strconv.Itoa(int(r)) + ")"
}

// Action is what a batch-match callback answers for one candidate: rt's
// BatchAction, shared with the CPU rings of rt. Any other value makes the
// collector fail with ErrInvalidAction.
type Action = rt.BatchAction

// Batch-match actions (rt's).
const (
	// Accept moves the candidate to the tail of the head's ring.
	Accept = rt.Accept
	// Reject leaves the candidate in place; the scan goes on.
	Reject = rt.Reject
	// Stop ends the scan; the candidate and every later one stay pending.
	Stop = rt.Stop
)

// State is where a wrapper is in its life (docs/gpu.md, "Life of a GPU task").
type State uint8

// Wrapper states.
const (
	StateNew        State = iota // allocated, not submitted yet
	StateSubmitting              // the worker is in Submit
	StateDevPending              // in the device-wide pending queue
	StateInQ                     // stage-in FIFO
	StateInParked                // stage-in slot, waiting to retry a reservation
	StateInFlight                // stage-in slot, copies queued
	StateExQ                     // FIFO of its compute stream
	StateExFollower              // member (not head) of a ring on its compute stream
	StateExParked                // compute slot, ring retained after AGAIN
	StateExFlight                // compute slot, ring recorded after DONE
	StateOutQ                    // stage-out FIFO
	StateOutFlight               // stage-out slot
	StateCompleting              // the manager runs the epilog and the completion
	StateHandedOff               // released after ASYNC; the logical task has another owner
	StateFailed                  // released after a terminal failure
	StateReleased                // back to the allocator
)

var stateNames = [...]string{
	StateNew:        "NEW",
	StateSubmitting: "SUBMITTING",
	StateDevPending: "DEV_PENDING",
	StateInQ:        "IN_Q",
	StateInParked:   "IN_PARKED",
	StateInFlight:   "IN_FLIGHT",
	StateExQ:        "EX_Q",
	StateExFollower: "EX_FOLLOWER",
	StateExParked:   "EX_PARKED",
	StateExFlight:   "EX_FLIGHT",
	StateOutQ:       "OUT_Q",
	StateOutFlight:  "OUT_FLIGHT",
	StateCompleting: "COMPLETING",
	StateHandedOff:  "HANDED_OFF",
	StateFailed:     "FAILED",
	StateReleased:   "RELEASED",
}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// ExecState is the state of a wrapper's logical execution interval.
type ExecState uint8

// Execution interval states.
const (
	// ExecDisabled: never traced (profiling off for the body, or no profiler).
	ExecDisabled ExecState = iota
	// ExecPending: eligible, no start emitted yet.
	ExecPending
	// ExecOpen: start emitted, end pending.
	ExecOpen
	// ExecClosed: start and end emitted.
	ExecClosed
)

func (e ExecState) String() string {
	switch e {
	case ExecDisabled:
		return "DISABLED"
	case ExecPending:
		return "PENDING"
	case ExecOpen:
		return "OPEN"
	case ExecClosed:
		return "CLOSED"
	}
	return "ExecState(" + strconv.Itoa(int(e)) + ")"
}

// Kind says what a wrapper does on the device.
type Kind uint8

// Wrapper kinds.
const (
	// KindKernel is a logical task running a submit hook.
	KindKernel Kind = iota
	// KindPrefetch only stages data in; it ends at its stage-in completion.
	KindPrefetch
	// KindWriteBack is a manager-internal eviction wrapper: it writes dirty
	// device copies back to the host and is never counted.
	KindWriteBack
	// KindD2DComplete is a command from a linked device: a peer copy of one of
	// this device's copies completed, and its reader is released here (peer.go).
	KindD2DComplete
	// KindRecall is a counted request to write dirty device copies of named
	// data back to the host (recall.go).
	KindRecall
)

func (k Kind) String() string {
	switch k {
	case KindKernel:
		return "KERNEL"
	case KindPrefetch:
		return "PREFETCH"
	case KindWriteBack:
		return "W2R"
	case KindD2DComplete:
		return "D2D_COMPLETE"
	case KindRecall:
		return "RECALL"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}
