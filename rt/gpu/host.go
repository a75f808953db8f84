package gpu

// The interfaces in this file are what the host runtime (rt, or a test
// harness) provides to a device. They are defined here, by their consumer, so
// that rt/gpu builds and is tested without rt.

// Worker is the CPU worker that calls Submit. When it wins the election it
// becomes the device's manager for the episode (docs/gpu.md, "The manager").
type Worker interface {
	// FlushNextTask moves the task in the worker's private next_task slot, if
	// any, to the shared scheduler, where other workers can take it, with any
	// other work the worker holds alone (rt.Worker: the rest of a startup
	// walk it was in). The manager calls it right after winning the election
	// and after every completion it runs.
	FlushNextTask()
}

// Completer ends logical tasks on behalf of the manager.
type Completer interface {
	// Complete completes t's logical task exactly once (release its
	// dependencies, count it for termination). It runs on the manager's
	// goroutine after the data epilog, so the host copies of pushed-out
	// flows are current. w is the manager's worker, or nil.
	Complete(w Worker, t *Task) error
	// Cleanout is the end of a logical task that failed terminally (ERROR or
	// DISABLE): it will never complete; the runtime fails its taskpool with
	// cause.
	Cleanout(t *Task, cause error)
}

// Holder is an optional interface of a Completer. A wrapper whose written-back
// flows are all Flow.Late completes when its kernels are done, before its
// copies to the host land: Hold runs just before that Complete, on the
// manager's goroutine, and returns what keeps the task's owner from
// finishing meanwhile. Without a Holder, Late is ignored.
type Holder interface {
	Hold(t *Task) Hold
}

// Hold keeps the owner of a task that completed before its write-backs
// landed from finishing. The manager calls Release exactly once: with nil
// when the copies have landed, or with the error that kept them from the
// host (the owner must then fail: its result is lost).
type Hold interface {
	Release(err error)
}

// Canceller is an optional interface of a Completer: Cancelled returns a
// non-nil error once the owner of t's logical task has given it up (its
// taskpool failed or was cancelled). The manager then drops the wrapper at
// its next pass instead of running or retrying its hook.
type Canceller interface {
	Cancelled(t *Task) error
}

// Scheduler takes logical tasks back from the device.
type Scheduler interface {
	// Reschedule gives t's logical task up on this device (NEXT from a
	// complete-stage callback): the runtime runs it elsewhere, usually
	// through its CPU body. The wrapper is released right after the call.
	Reschedule(t *Task) error
}
