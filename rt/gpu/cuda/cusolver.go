package cuda

import (
	"sync"
	"unsafe"
)

type cusolverAPI struct {
	create, destroy, setStream uintptr
	dpotrfBufferSize, dpotrf   uintptr
}

var cusolverSymbols = sync.OnceValues(func() (*cusolverAPI, error) {
	c := &cusolverAPI{}
	err := libCusolver.resolve([]symbol{
		sym(&c.create, "cusolverDnCreate"),
		sym(&c.destroy, "cusolverDnDestroy"),
		sym(&c.setStream, "cusolverDnSetStream"),
		sym(&c.dpotrfBufferSize, "cusolverDnDpotrf_bufferSize"),
		sym(&c.dpotrf, "cusolverDnDpotrf"),
	})
	if err != nil {
		return nil, err
	}
	return c, nil
})

// cudaR64F is cudaDataType's CUDA_R_64F, the element type of the generic
// (64-bit) routines.
const cudaR64F = 1

// trtriAPI is cuSOLVER's triangular inverse, which the generic API gained
// after the rest of what is bound here: it is resolved on its own, so that
// an older cuSOLVER still serves the other routines.
type trtriAPI struct{ bufferSize, trtri uintptr }

var trtriSymbols = sync.OnceValues(func() (*trtriAPI, error) {
	t := &trtriAPI{}
	err := libCusolver.resolve([]symbol{
		sym(&t.bufferSize, "cusolverDnXtrtri_bufferSize"),
		sym(&t.trtri, "cusolverDnXtrtri"),
	})
	if err != nil {
		return nil, err
	}
	return t, nil
})

// Solver is a cuSOLVER dense handle bound to one stream, with the
// workspace and the device status word its factorizations need: a stream's
// potrf calls run one after the other, so they can share one workspace. A
// Solver is used by one goroutine at a time.
type Solver struct {
	h      uintptr
	stream Stream
	work   DevicePtr // workBytes of scratch for the routines
	// workBytes is the size of work; it only grows.
	workBytes int
	info      DevicePtr // one int32: LAPACK's info of the last routine
}

// NewSolver loads cuSOLVER (on first use) and creates a handle in the
// current context, bound to s.
func NewSolver(s Stream) (*Solver, error) {
	c, err := cusolverSymbols()
	if err != nil {
		return nil, err
	}
	h, st := outCall(c.create)
	if err := cusolverError("cusolverDnCreate", st); err != nil {
		return nil, err
	}
	sv := &Solver{h: uintptr(h), stream: s}
	if err := cusolverError("cusolverDnSetStream", status(ccall(c.setStream, sv.h, uintptr(s)))); err != nil {
		_ = sv.Destroy()
		return nil, err
	}
	if sv.info, err = MemAlloc(4); err != nil {
		_ = sv.Destroy()
		return nil, err
	}
	return sv, nil
}

// Stream is the stream the solver runs on.
func (sv *Solver) Stream() Stream { return sv.stream }

// Destroy waits for the solver's stream, frees its memory and releases the
// handle.
func (sv *Solver) Destroy() error {
	c, err := cusolverSymbols()
	if err != nil {
		return err
	}
	first := sv.stream.Synchronize()
	for _, p := range []DevicePtr{sv.work, sv.info} {
		if p != 0 {
			if err := MemFree(p); err != nil && first == nil {
				first = err
			}
		}
	}
	sv.work, sv.workBytes, sv.info = 0, 0, 0
	if err := cusolverError("cusolverDnDestroy", status(ccall(c.destroy, sv.h))); err != nil && first == nil {
		first = err
	}
	sv.h = 0
	return first
}

// DpotrfBufferSize is the workspace, in float64 elements, that Dpotrf needs
// for an n×n matrix at a.
func (sv *Solver) DpotrfBufferSize(uplo Fill, n int, a DevicePtr, lda int) (int, error) {
	c, err := cusolverSymbols()
	if err != nil {
		return 0, err
	}
	f := newFrame()
	defer f.release()
	r := f.call(c.dpotrfBufferSize, sv.h, uintptr(uplo), uintptr(n), uintptr(a), uintptr(lda), f.out(0))
	if err := cusolverError("cusolverDnDpotrf_bufferSize", status(r)); err != nil {
		return 0, err
	}
	return int(int32(f.outs[0])), nil
}

// reserve makes the workspace at least bytes long. Growing it waits for the
// stream first: work already queued may still use the old workspace.
func (sv *Solver) reserve(bytes int) error {
	if bytes <= sv.workBytes {
		return nil
	}
	if sv.work != 0 {
		if err := sv.stream.Synchronize(); err != nil {
			return err
		}
		if err := MemFree(sv.work); err != nil {
			return err
		}
		sv.work, sv.workBytes = 0, 0
	}
	p, err := MemAlloc(bytes)
	if err != nil {
		return err
	}
	sv.work, sv.workBytes = p, bytes
	return nil
}

// Dpotrf enqueues the Cholesky factorization of the n×n matrix at a on the
// solver's stream (A = L·Lᵀ for FillLower, Uᵀ·U for FillUpper, in place). The
// workspace grows as needed. Whether A was positive definite is known only
// when the stream reaches this point: read it with Info, or copy InfoPtr
// asynchronously.
func (sv *Solver) Dpotrf(uplo Fill, n int, a DevicePtr, lda int) error {
	lwork, err := sv.DpotrfBufferSize(uplo, n, a, lda)
	if err != nil {
		return err
	}
	if err := sv.reserve(max(lwork, 1) * 8); err != nil {
		return err
	}
	return sv.DpotrfWorkspace(uplo, n, a, lda, sv.work, lwork, sv.info)
}

// DpotrfWorkspace is cusolverDnDpotrf with a caller-provided workspace of
// lwork float64 elements and status word devInfo (device memory).
func (sv *Solver) DpotrfWorkspace(uplo Fill, n int, a DevicePtr, lda int, work DevicePtr, lwork int, devInfo DevicePtr) error {
	c, err := cusolverSymbols()
	if err != nil {
		return err
	}
	r := ccall(c.dpotrf, sv.h, uintptr(uplo), uintptr(n), uintptr(a), uintptr(lda), uintptr(work), uintptr(lwork), uintptr(devInfo))
	return cusolverError("cusolverDnDpotrf", status(r))
}

// DtrtriBufferSize is the device and host workspace, in bytes, that Dtrtri
// needs for an n×n triangle at a.
func (sv *Solver) DtrtriBufferSize(uplo Fill, diag DiagType, n int, a DevicePtr, lda int) (dev, host int, err error) {
	t, err := trtriSymbols()
	if err != nil {
		return 0, 0, err
	}
	f := newFrame()
	defer f.release()
	r := f.call(t.bufferSize, sv.h, uintptr(uplo), uintptr(diag), uintptr(n), cudaR64F, uintptr(a), uintptr(lda), f.out(0), f.out(1))
	if err := cusolverError("cusolverDnXtrtri_bufferSize", status(r)); err != nil {
		return 0, 0, err
	}
	return int(f.outs[0]), int(f.outs[1]), nil
}

// DtrtriWorkspace enqueues the in-place inversion of the uplo triangle of
// the n×n matrix at a (cusolverDnXtrtri), with caller-provided workspaces
// of the sizes DtrtriBufferSize gives; devInfo (device memory) receives
// LAPACK's info.
func (sv *Solver) DtrtriWorkspace(uplo Fill, diag DiagType, n int, a DevicePtr, lda int, work DevicePtr, workBytes int, host []byte, devInfo DevicePtr) error {
	t, err := trtriSymbols()
	if err != nil {
		return err
	}
	f := newFrame()
	defer f.release()
	var hp uintptr
	if len(host) > 0 {
		hp = f.pin(unsafe.Pointer(&host[0]))
	}
	r := f.call(t.trtri, sv.h, uintptr(uplo), uintptr(diag), uintptr(n), cudaR64F, uintptr(a), uintptr(lda),
		uintptr(work), uintptr(workBytes), hp, uintptr(len(host)), uintptr(devInfo))
	return cusolverError("cusolverDnXtrtri", status(r))
}

// InfoPtr is the device int32 where the last routine leaves LAPACK's info.
func (sv *Solver) InfoPtr() DevicePtr { return sv.info }

// Info waits for the solver's stream and returns LAPACK's info of the last
// routine: 0 for success, k > 0 when the leading minor of order k is not
// positive definite.
func (sv *Solver) Info() (int, error) {
	if err := sv.stream.Synchronize(); err != nil {
		return 0, err
	}
	var info [1]int32
	if err := CopyFromDevice(info[:], sv.info); err != nil {
		return 0, err
	}
	return int(info[0]), nil
}
