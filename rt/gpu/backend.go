package gpu

import (
	"fmt"
	"strconv"
)

// Backend is one accelerator as the manager drives it: only what the manager
// and the body API call. The simulated device (rt/gpu/sim) and the CUDA
// binding (rt/gpu/cuda) implement it; the manager never type-switches on them.
//
// Every method except SetCurrent may be called from any goroutine that holds
// the device's manager role; none is called concurrently with itself on the
// same stream.
type Backend interface {
	// Info describes the device; it is read once, by NewDevice.
	Info() DeviceInfo
	// SetCurrent binds the device to the calling OS thread (cuCtxSetCurrent).
	// The manager calls it once per management episode, after
	// runtime.LockOSThread when the device is ThreadBound.
	SetCurrent() error
	// NewStream creates an in-order queue with events+1 event slots (the
	// manager uses the last one as its quiescing marker).
	NewStream(name string, events int) (BackendStream, error)
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

// BackendStream is one in-order device queue. Every enqueue call returns at
// once; the work runs in enqueue order, and an error found while it runs is
// reported by the Query of the first event recorded after it. Host slices
// passed to copies must stay untouched until an event recorded after the copy
// has completed (the manager guarantees this for the copies it issues).
type BackendStream interface {
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

// ComputePreparer is implemented by backend streams that can set up ahead of
// time what bodies need on a compute stream (library handles, workspaces):
// NewDevice calls PrepareCompute on each compute stream, so that opening a
// device, not the first tasks, pays for it (on CUDA the first cuBLAS and
// cuSOLVER calls of a process load the libraries and create handles, tens to
// hundreds of milliseconds). A failure is not fatal: the stream sets up on
// first use as before, and reports the error there.
type ComputePreparer interface {
	PrepareCompute() error
}

// TransferPreparer is implemented by backend streams that can set up ahead of
// time what the runtime's copies need on the stage-in and stage-out streams
// (on CUDA the pinned ring through which ordinary host memory is staged,
// whose allocation takes tens of milliseconds): NewDevice calls
// PrepareTransfers on both, for the same reason as PrepareCompute, and a
// failure is not fatal either.
type TransferPreparer interface {
	PrepareTransfers() error
}

// BLAS is the device BLAS subset in cuBLAS conventions: column-major
// matrices, leading dimensions in elements, device pointers to float64.
// Arguments have been checked against the buffers by Stream before a backend
// sees them.
type BLAS interface {
	Dgemm(ta, tb Transpose, m, n, k int, alpha float64, a Ptr, lda int, b Ptr, ldb int, beta float64, c Ptr, ldc int) error
	Dtrsm(side Side, uplo Uplo, ta Transpose, diag Diag, m, n int, alpha float64, a Ptr, lda int, b Ptr, ldb int) error
	// Dtrmm multiplies in place: B = alpha*op(A)*B (side Left) or
	// B = alpha*B*op(A) (side Right), A triangular.
	Dtrmm(side Side, uplo Uplo, ta Transpose, diag Diag, m, n int, alpha float64, a Ptr, lda int, b Ptr, ldb int) error
	Dsyrk(uplo Uplo, t Transpose, n, k int, alpha float64, a Ptr, lda int, beta float64, c Ptr, ldc int) error
	// Dpotrf factors in place. A matrix that is not positive definite is
	// reported like any failure found while running: by the next Query.
	Dpotrf(uplo Uplo, n int, a Ptr, lda int) error
	// Dtrtri inverts the uplo triangle of A in place (LAPACK's dtrtri); the
	// other triangle is not touched. Like Dtrsm it does not check the
	// diagonal: a zero there leaves infinities, not an error.
	Dtrtri(uplo Uplo, diag Diag, n int, a Ptr, lda int) error
	DgemmStridedBatched(ta, tb Transpose, m, n, k int, alpha float64, a Ptr, lda int, strideA int64, b Ptr, ldb int, strideB int64, beta float64, c Ptr, ldc int, strideC int64, count int) error
	// DgemmBatched multiplies count independent matrices given by host
	// arrays of device pointers (cublasDgemmBatched; the backend stages the
	// pointer arrays itself).
	DgemmBatched(ta, tb Transpose, m, n, k int, alpha float64, a []Ptr, lda int, b []Ptr, ldb int, beta float64, c []Ptr, ldc int) error
}

// DeviceInfo describes a backend device.
type DeviceInfo struct {
	// Name is for humans and traces ("sim0", "NVIDIA H200").
	Name string
	// Type is the backend family, matched against Incarnation.Type.
	Type DeviceType
	// Batching reports whether the device type supports batch collection
	// (docs/gpu.md, "Batching" step 3).
	Batching bool
	// ThreadBound says that backend calls must come from the OS thread on
	// which SetCurrent ran (a CUDA context is current per thread): the
	// manager then locks its goroutine to its thread for the episode. A
	// locked goroutine pays two thread switches per yield, so backends that
	// do not need it leave it false.
	ThreadBound bool
}

// DeviceType is a backend family.
type DeviceType uint8

// Device types. TypeAny in an incarnation matches every device type.
const (
	TypeAny DeviceType = iota
	TypeSim
	TypeCUDA
)

func (t DeviceType) String() string {
	switch t {
	case TypeAny:
		return "gpu"
	case TypeSim:
		return "sim"
	case TypeCUDA:
		return "cuda"
	}
	return "DeviceType(" + strconv.Itoa(int(t)) + ")"
}

// Ptr is a device address. Zero is never a valid allocation.
type Ptr uintptr

// Elem is the element type of a Buffer.
type Elem uint8

// Element types.
const (
	Bytes Elem = iota
	Float64
	Float32
	Int64
	Int32
)

// Size is the width of one element in bytes.
func (e Elem) Size() int {
	switch e {
	case Float64, Int64:
		return 8
	case Float32, Int32:
		return 4
	}
	return 1
}

func (e Elem) String() string {
	switch e {
	case Bytes:
		return "byte"
	case Float64:
		return "float64"
	case Float32:
		return "float32"
	case Int64:
		return "int64"
	case Int32:
		return "int32"
	}
	return "Elem(" + strconv.Itoa(int(e)) + ")"
}

// Buffer is device memory as a body sees a flow: an address, a length in
// elements and an element type. The zero Buffer is the NULL flow.
type Buffer struct {
	Ptr  Ptr
	Len  int
	Elem Elem
}

// Bytes is the buffer's size in bytes.
func (b Buffer) Bytes() int64 { return int64(b.Len) * int64(b.Elem.Size()) }

// Slice returns elements [from, to) of b. It panics like a Go slice
// expression when the bounds are out of range.
func (b Buffer) Slice(from, to int) Buffer {
	if from < 0 || to < from || to > b.Len {
		panic(fmt.Sprintf("gpu: Buffer.Slice[%d:%d] out of range with length %d", from, to, b.Len))
	}
	return Buffer{Ptr: b.Ptr + Ptr(from*b.Elem.Size()), Len: to - from, Elem: b.Elem}
}

func (b Buffer) String() string {
	return fmt.Sprintf("%s[%d]@%#x", b.Elem, b.Len, uintptr(b.Ptr))
}

// Transpose, Uplo, Side and Diag are the BLAS flags.
type (
	Transpose uint8
	Uplo      uint8
	Side      uint8
	Diag      uint8
)

// BLAS flags.
const (
	NoTrans Transpose = iota
	Trans
)

// Triangles.
const (
	Lower Uplo = iota
	Upper
)

// Sides.
const (
	Left Side = iota
	Right
)

// Diagonals.
const (
	NonUnit Diag = iota
	Unit
)

// Dim3 is a kernel launch geometry.
type Dim3 struct{ X, Y, Z int }

// Kernel is a resolved named kernel; its content is backend-specific.
type Kernel interface {
	Name() string
}
