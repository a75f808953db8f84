package driver

import "github.com/jdf2go/jdf2go/rt/blas"

// Backend is one accelerator as rt/gpu's manager drives it: only what the
// manager and the body API call. The manager never type-switches on a
// backend.
//
// Every method except SetCurrent may be called from any goroutine that holds
// the device's manager role; none is called concurrently with itself on the
// same stream.
type Backend interface {
	// Info describes the device; it is read once, when the device opens.
	Info() DeviceInfo
	// SetCurrent binds the device to the calling OS thread (cuCtxSetCurrent).
	// The manager calls it once per management episode, after
	// runtime.LockOSThread when the device is ThreadBound.
	SetCurrent() error
	// NewStream creates an in-order queue with events+1 event slots (the
	// manager uses the last one as its quiescing marker).
	NewStream(name string, events int) (Stream, error)
	// MemInfo reports free and total device memory in bytes.
	MemInfo() (free, total int64, err error)
	// Alloc returns device memory of at least n bytes, 256-byte aligned. It
	// fails with an error wrapping ErrOutOfMemory when the device is full.
	Alloc(n int64) (Ptr, error)
	// Free returns memory obtained from Alloc.
	Free(p Ptr) error
	// Kernel resolves a kernel registered with RegisterKernel.
	Kernel(name string) (Kernel, error)
	// Close releases every stream, event and allocation of the device.
	Close() error
}

// Stream is one in-order device queue. Every enqueue call returns at
// once; the work runs in enqueue order, and an error found while it runs is
// reported by the Query of the first event recorded after it. Host slices
// passed to copies must stay untouched until an event recorded after the copy
// has completed (the manager guarantees this for the copies it issues).
type Stream interface {
	CopyHtoD(dst Ptr, src []byte) error
	CopyDtoH(dst []byte, src Ptr) error
	CopyDtoD(dst, src Ptr, n int64) error

	// Record places event slot at the current end of the queue.
	Record(slot int) error
	// Query reports whether every operation enqueued before the last Record
	// of slot has run. A failure is an error, never "not ready".
	Query(slot int) (bool, error)

	BLAS

	// Launch enqueues kernel k with the given geometry and arguments
	// (Buffers, ints, float64s).
	Launch(k Kernel, grid, block Dim3, shared int, args []any) error

	// Close waits for nothing: the manager closes streams only once they are
	// quiescent.
	Close() error
}

// ComputePreparer is implemented by streams that can set up ahead of time
// what bodies need on a compute stream (library handles, workspaces): rt/gpu
// calls PrepareCompute on each compute stream when the device opens, so that
// opening a device, not the first tasks, pays for it (on CUDA the first
// cuBLAS and cuSOLVER calls of a process load the libraries and create
// handles). A failure is not fatal: the stream sets up on first use as
// before, and reports the error there.
type ComputePreparer interface {
	PrepareCompute() error
}

// TransferPreparer is implemented by streams that can set up ahead of time
// what the runtime's copies need on the stage-in and stage-out streams (on
// CUDA the pinned ring through which ordinary host memory is staged): rt/gpu
// calls PrepareTransfers on both when the device opens, for the same reason
// as PrepareCompute, and a failure is not fatal either.
type TransferPreparer interface {
	PrepareTransfers() error
}

// BLAS is the device BLAS subset in cuBLAS conventions: column-major
// matrices, leading dimensions in elements, device pointers to float64, and
// rt/blas's flags. Arguments have been checked against the buffers by
// rt/gpu before a backend sees them.
type BLAS interface {
	Dgemm(ta, tb blas.Transpose, m, n, k int, alpha float64, a Ptr, lda int, b Ptr, ldb int, beta float64, c Ptr, ldc int) error
	Dtrsm(side blas.Side, uplo blas.Uplo, ta blas.Transpose, diag blas.Diag, m, n int, alpha float64, a Ptr, lda int, b Ptr, ldb int) error
	// Dtrmm multiplies in place: B = alpha*op(A)*B (side Left) or
	// B = alpha*B*op(A) (side Right), A triangular.
	Dtrmm(side blas.Side, uplo blas.Uplo, ta blas.Transpose, diag blas.Diag, m, n int, alpha float64, a Ptr, lda int, b Ptr, ldb int) error
	Dsyrk(uplo blas.Uplo, t blas.Transpose, n, k int, alpha float64, a Ptr, lda int, beta float64, c Ptr, ldc int) error
	// Dpotrf factors in place. A matrix that is not positive definite is
	// reported like any failure found while running: by the next Query,
	// wrapping ErrNotPositiveDefinite.
	Dpotrf(uplo blas.Uplo, n int, a Ptr, lda int) error
	// Dtrtri inverts the uplo triangle of A in place (LAPACK's dtrtri); the
	// other triangle is not touched. Like Dtrsm it does not check the
	// diagonal: a zero there leaves infinities, not an error.
	Dtrtri(uplo blas.Uplo, diag blas.Diag, n int, a Ptr, lda int) error
	DgemmStridedBatched(ta, tb blas.Transpose, m, n, k int, alpha float64, a Ptr, lda int, strideA int64, b Ptr, ldb int, strideB int64, beta float64, c Ptr, ldc int, strideC int64, count int) error
	// DgemmBatched multiplies count independent matrices given by host
	// arrays of device pointers (cublasDgemmBatched; the backend stages the
	// pointer arrays itself).
	DgemmBatched(ta, tb blas.Transpose, m, n, k int, alpha float64, a []Ptr, lda int, b []Ptr, ldb int, beta float64, c []Ptr, ldc int) error
}

// PeerBackend is implemented by backends whose devices can read each other's
// memory.
type PeerBackend interface {
	// EnablePeer makes this device able to copy from other's memory on its
	// streams. It reports false, with no error, when the pair cannot do it
	// (other backend family, no peer access between the two devices).
	EnablePeer(other Backend) (bool, error)
}

// PeerStream is implemented by the streams of a PeerBackend.
type PeerStream interface {
	// CopyPeer enqueues a copy of n bytes from src, in the memory of the
	// device of backend from (linked with EnablePeer), to dst in this
	// stream's device.
	CopyPeer(dst Ptr, from Backend, src Ptr, n int64) error
}
