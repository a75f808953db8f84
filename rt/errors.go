package rt

import (
	"errors"
	"fmt"
)

// Body results that are not failures (docs/language.md, "CPU bodies"). A hook returns them
// unwrapped; rt compares them by identity.
var (
	// Next asks rt to try the task's next incarnation.
	Next = errors.New("rt: next incarnation")
	// Again asks rt to reschedule the task and run the same incarnation later.
	Again = errors.New("rt: run again later")
	// Async says the body took over the task: it calls Task.Complete (or Task.Fail) later.
	Async = errors.New("rt: completes asynchronously")
)

// Sentinel errors. Errors returned by rt wrap one of them, so errors.Is works.
var (
	// ErrTaskpoolFailed: a task's body returned an error or panicked (see TaskError).
	ErrTaskpoolFailed = errors.New("rt: taskpool failed")
	// ErrClosed: the Context was closed.
	ErrClosed = errors.New("rt: context closed")
	// ErrUnknownScheduler: the scheduler name is not lfq, ap or gd.
	ErrUnknownScheduler = errors.New("rt: unknown scheduler")
	// ErrBadOption: an option or JDF2GO_* environment variable has an invalid value.
	ErrBadOption = errors.New("rt: bad option")
	// ErrBadTaskClass: a TaskClass descriptor is incomplete or inconsistent.
	ErrBadTaskClass = errors.New("rt: bad task class")
	// ErrAlreadyAdded: the taskpool was already added to a Context.
	ErrAlreadyAdded = errors.New("rt: taskpool already added")
	// ErrNotAdded: Wait on a taskpool that was never added.
	ErrNotAdded = errors.New("rt: taskpool not added")
	// ErrNoInput: no input guard of a data flow holds (generated Prepare wraps it).
	ErrNoInput = errors.New("rt: no input dependency guard holds")
	// ErrNoIncarnation: every incarnation of a task refused it (Next or Evaluate).
	ErrNoIncarnation = errors.New("rt: no incarnation accepted the task")
	// ErrNoArena: NEW from an arena that was not registered with Taskpool.SetArena.
	ErrNoArena = errors.New("rt: no such arena")
	// ErrOutsideSpace: a dependency names an instance outside its class's execution space.
	ErrOutsideSpace = errors.New("rt: task outside its execution space")
	// ErrDependency: an arrival the target did not expect (duplicate flow, too many arrivals,
	// or data on a flow that already has a copy).
	ErrDependency = errors.New("rt: unexpected dependency")
	// ErrKeySpace: the mixed-radix key of a class does not fit in 64 bits.
	ErrKeySpace = errors.New("rt: key space too large")
	// ErrCopyExists: Impl.Attach on a device slot that already holds a copy.
	ErrCopyExists = errors.New("rt: device copy already attached")
	// ErrWriteBack: the value of a copy cannot be written back to its collection element.
	ErrWriteBack = errors.New("rt: cannot write back")
	// ErrNilTaskpool: Context.Add of a nil taskpool.
	ErrNilTaskpool = errors.New("rt: nil taskpool")
	// ErrZeroTaskpool: Context.Add of a Taskpool that NewTaskpool did not make (a zero
	// Taskpool has no termination state).
	ErrZeroTaskpool = errors.New("rt: taskpool not made by NewTaskpool")
	// ErrGoexit: a body called runtime.Goexit (t.FailNow in a test helper does); the task
	// fails with it and its worker is replaced.
	ErrGoexit = errors.New("rt: body called runtime.Goexit")
	// ErrInvalidAction: a batch-match callback answered something other than Accept, Reject
	// or Stop (CPU rings here, GPU rings in rt/gpu).
	ErrInvalidAction = errors.New("rt: invalid batch action")
	// ErrReentrantCollect: a batch collection was started from inside a batch-match
	// callback of the same collection.
	ErrReentrantCollect = errors.New("rt: re-entrant CollectBatch")
	// ErrNotBatched: Task.CollectBatch on a task that is not running the hook of a
	// batch-capable CPU incarnation.
	ErrNotBatched = errors.New("rt: task is not running a batch-capable CPU body")
	// ErrScratch: Task.Scratch was asked for a negative length, or called on a task that is
	// not running its CPU body on a worker (from a device body, an evaluate function, an Async
	// goroutine or a body of a task inserted at run time).
	ErrScratch = errors.New("rt: bad scratch request")
	// ErrNullForwarded: a task forwards the NULL its flow holds to a data flow of a
	// successor; the task fails with an error naming both tasks and flows.
	ErrNullForwarded = errors.New("rt: NULL forwarded")
	// ErrSkip: Taskpool.SkipTasks was given a negative count, or more tasks than are left to
	// run.
	ErrSkip = errors.New("rt: bad task skip")
	// ErrStalled: a taskpool cannot progress: no task is ready or running, none is owned by a
	// device or an Async body, no communication is in flight, and tasks remain (an input that
	// no predecessor sends, or a cycle). The error names up to 10 tasks: those waiting with
	// their missing inputs, then tasks that received no input and never can (a cycle, or a
	// chain back to a waiting task) with their inputs' sources.
	ErrStalled = errors.New("rt: taskpool stalled")
)

// TaskError is the error of a failed task: its taskpool, its name with parameters, and the
// cause. It matches ErrTaskpoolFailed with errors.Is and unwraps to the cause.
type TaskError struct {
	Taskpool string
	Task     string // "GEMM(1, 2, 3)"
	Err      error
}

func (e *TaskError) Error() string {
	return fmt.Sprintf("rt: taskpool %s failed: %s: %v", e.Taskpool, e.Task, e.Err)
}

// Unwrap returns the cause.
func (e *TaskError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrTaskpoolFailed) true.
func (e *TaskError) Is(target error) bool { return target == ErrTaskpoolFailed }
