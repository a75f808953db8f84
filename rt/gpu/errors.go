package gpu

import (
	"errors"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/gpu/driver"
)

// Sentinel errors. Errors returned by this package wrap one of them; test
// with errors.Is.
var (
	// ErrTaskFailed: a wrapper ended with ERROR (hook, stage function,
	// complete-stage callback, event record or query failure).
	ErrTaskFailed = errors.New("gpu: task failed on the device")
	// ErrDeviceDisabled: a wrapper ended with DISABLE.
	ErrDeviceDisabled = errors.New("gpu: device disabled for the task")
	// ErrInvalidAction: a batch-match callback returned a value other than
	// Accept, Reject or Stop (rt's, shared with CPU rings).
	ErrInvalidAction = rt.ErrInvalidAction
	// ErrReentrantCollect: CollectBatch was called from inside a batch-match
	// callback on the same stream (rt's, shared with CPU rings).
	ErrReentrantCollect = rt.ErrReentrantCollect
	// ErrOutOfMemory: a device allocation did not fit.
	ErrOutOfMemory = driver.ErrOutOfMemory
	// ErrBadArgument: a body API call has arguments that do not fit its
	// buffers (sizes, leading dimensions, element types).
	ErrBadArgument = driver.ErrBadArgument
	// ErrNotPositiveDefinite: Dpotrf met a matrix that is not positive
	// definite (rt/blas's, which the CPU factorization returns too).
	ErrNotPositiveDefinite = driver.ErrNotPositiveDefinite
	// ErrUnknownKernel: no kernel of that name is registered.
	ErrUnknownKernel = driver.ErrUnknownKernel
	// ErrDuplicateKernel: a kernel of that name is already registered.
	ErrDuplicateKernel = driver.ErrDuplicateKernel
	// ErrClosed: the device is closed, or its manager was abandoned through
	// context cancellation.
	ErrClosed = driver.ErrClosed
	// ErrLeak: Close found wrappers that were never released, or a non-zero
	// outstanding counter.
	ErrLeak = errors.New("gpu: leaked wrappers")
	// ErrBadSpec: a JDF2GO_GPUS value that cannot be parsed.
	ErrBadSpec = errors.New("gpu: bad device specification")
	// ErrNoBackend: the device specification names a backend that is not
	// linked into the program (import rt/gpu/sim or rt/gpu/cuda).
	ErrNoBackend = errors.New("gpu: backend not available")
	// ErrNoDevice: the device specification names a backend explicitly
	// ("cuda") and it finds no device, or cannot be used at all (the error
	// then also wraps the backend's reason).
	ErrNoDevice = errors.New("gpu: no device")
	// ErrMisuse: the API was used against its contract (a wrapper submitted
	// twice, a flow index out of range, ...).
	ErrMisuse = errors.New("gpu: misuse")
	// ErrNoProgress: a submit hook returned AGAIN or NEXT more times in a row
	// than the retry limit (WithRetryLimit) while the device made no other
	// progress: nothing released, nothing in flight.
	ErrNoProgress = errors.New("gpu: hook makes no progress")
	// ErrGoexit: a body called runtime.Goexit (t.FailNow in a test helper
	// does) on the manager's goroutine; its wrapper fails, the manager goes on
	// in a new goroutine.
	ErrGoexit = errors.New("gpu: body called runtime.Goexit")
	// ErrCancelled: the owner of the logical task gave it up (its taskpool
	// failed or was cancelled); the manager dropped the wrapper.
	ErrCancelled = errors.New("gpu: task cancelled by its owner")
)
