package driver

import (
	"errors"

	"github.com/jdf2go/jdf2go/rt/blas"
)

// Sentinel errors that backends wrap and rt/gpu re-exports, so that an
// error from either side is tested with one errors.Is.
var (
	// ErrOutOfMemory: a device allocation did not fit.
	ErrOutOfMemory = errors.New("gpu: out of device memory")
	// ErrBadArgument: a call has arguments that do not fit its buffers
	// (sizes, leading dimensions, element types) or the device.
	ErrBadArgument = errors.New("gpu: bad argument")
	// ErrNotPositiveDefinite: Dpotrf met a matrix that is not positive
	// definite. It is rt/blas's, so that the CPU and device factorizations
	// fail alike.
	ErrNotPositiveDefinite = blas.ErrNotPositiveDefinite
	// ErrUnknownKernel: no kernel of that name is registered.
	ErrUnknownKernel = errors.New("gpu: unknown kernel")
	// ErrDuplicateKernel: a kernel of that name is already registered.
	ErrDuplicateKernel = errors.New("gpu: kernel registered twice")
	// ErrClosed: the device or stream is closed.
	ErrClosed = errors.New("gpu: device closed")
)
