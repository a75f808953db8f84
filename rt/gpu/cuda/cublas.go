package cuda

import (
	"math"
	"sync"
)

// Op is cublasOperation_t: whether an operand is transposed.
type Op int32

// Op values.
const (
	OpN Op = 0
	OpT Op = 1
)

// Fill is cublasFillMode_t: the triangle that a routine reads or writes.
type Fill int32

// Fill values.
const (
	FillLower Fill = 0
	FillUpper Fill = 1
)

// SideMode is cublasSideMode_t: the side of B that the triangular matrix of
// Dtrsm stands on.
type SideMode int32

// SideMode values.
const (
	SideLeft  SideMode = 0
	SideRight SideMode = 1
)

// DiagType is cublasDiagType_t: whether a triangular matrix has an implicit
// unit diagonal.
type DiagType int32

// DiagType values.
const (
	DiagNonUnit DiagType = 0
	DiagUnit    DiagType = 1
)

type cublasAPI struct {
	create, destroy, setStream, getVersion uintptr
	dgemm, dtrsm, dtrmm, dsyrk             uintptr
	dgemmStridedBatched, dgemmBatched      uintptr
}

var cublasSymbols = sync.OnceValues(func() (*cublasAPI, error) {
	b := &cublasAPI{}
	err := libCublas.resolve([]symbol{
		sym(&b.create, "cublasCreate_v2"),
		sym(&b.destroy, "cublasDestroy_v2"),
		sym(&b.setStream, "cublasSetStream_v2"),
		sym(&b.getVersion, "cublasGetVersion_v2"),
		sym(&b.dgemm, "cublasDgemm_v2"),
		sym(&b.dtrsm, "cublasDtrsm_v2"),
		sym(&b.dtrmm, "cublasDtrmm_v2"),
		sym(&b.dsyrk, "cublasDsyrk_v2"),
		sym(&b.dgemmStridedBatched, "cublasDgemmStridedBatched"),
		sym(&b.dgemmBatched, "cublasDgemmBatched"),
	})
	if err != nil {
		return nil, err
	}
	return b, nil
})

// Blas is a cuBLAS handle. It is created in the current context, computes
// on the stream set with SetStream (the legacy default stream until then)
// and reads alpha and beta from host memory when a routine is called (the
// default pointer mode). Use one handle per goroutine or stream; matrices
// are column-major device memory.
type Blas struct{ h uintptr }

// NewBlas loads cuBLAS (on first use) and creates a handle in the current
// context.
func NewBlas() (Blas, error) {
	b, err := cublasSymbols()
	if err != nil {
		return Blas{}, err
	}
	v, st := outCall(b.create)
	if err := cublasError("cublasCreate_v2", st); err != nil {
		return Blas{}, err
	}
	return Blas{h: uintptr(v)}, nil
}

func (h Blas) api() (*cublasAPI, error) {
	if h.h == 0 {
		return nil, badArgf("cuBLAS handle not created (use NewBlas)")
	}
	return cublasSymbols()
}

// Destroy releases the handle.
func (h Blas) Destroy() error {
	b, err := h.api()
	if err != nil {
		return err
	}
	return cublasError("cublasDestroy_v2", status(ccall(b.destroy, h.h)))
}

// SetStream makes the handle's routines run on s.
func (h Blas) SetStream(s Stream) error {
	b, err := h.api()
	if err != nil {
		return err
	}
	return cublasError("cublasSetStream_v2", status(ccall(b.setStream, h.h, uintptr(s))))
}

// Version is cuBLAS's version number (e.g. 130000 for 13.0.0).
func (h Blas) Version() (int, error) {
	b, err := h.api()
	if err != nil {
		return 0, err
	}
	f := newFrame()
	defer f.release()
	if err := cublasError("cublasGetVersion_v2", status(f.call(b.getVersion, h.h, f.out(0)))); err != nil {
		return 0, err
	}
	return int(int32(f.outs[0])), nil
}

// scalars stores alpha and beta in the frame's out-parameter slots (the
// Go heap) and returns their addresses: cuBLAS reads them during the call.
func scalars(f *frame, alpha, beta float64) (pa, pb uintptr) {
	pa, pb = f.out(0), f.out(1)
	f.outs[0], f.outs[1] = math.Float64bits(alpha), math.Float64bits(beta)
	return pa, pb
}

// Dgemm enqueues C = alpha·op(A)·op(B) + beta·C (op(A) m×k, op(B) k×n).
func (h Blas) Dgemm(tA, tB Op, m, n, k int, alpha float64, a DevicePtr, lda int, b DevicePtr, ldb int, beta float64, c DevicePtr, ldc int) error {
	api, err := h.api()
	if err != nil {
		return err
	}
	f := newFrame()
	defer f.release()
	pa, pb := scalars(f, alpha, beta)
	r := f.call(api.dgemm, h.h, uintptr(tA), uintptr(tB), uintptr(m), uintptr(n), uintptr(k),
		pa, uintptr(a), uintptr(lda), uintptr(b), uintptr(ldb), pb, uintptr(c), uintptr(ldc))
	return cublasError("cublasDgemm_v2", status(r))
}

// Dtrsm enqueues the solve op(A)·X = alpha·B (SideLeft, A m×m) or
// X·op(A) = alpha·B (SideRight, A n×n), X overwriting the m×n matrix B.
func (h Blas) Dtrsm(side SideMode, uplo Fill, tA Op, diag DiagType, m, n int, alpha float64, a DevicePtr, lda int, b DevicePtr, ldb int) error {
	api, err := h.api()
	if err != nil {
		return err
	}
	f := newFrame()
	defer f.release()
	pa, _ := scalars(f, alpha, 0)
	r := f.call(api.dtrsm, h.h, uintptr(side), uintptr(uplo), uintptr(tA), uintptr(diag), uintptr(m), uintptr(n),
		pa, uintptr(a), uintptr(lda), uintptr(b), uintptr(ldb))
	return cublasError("cublasDtrsm_v2", status(r))
}

// Dtrmm enqueues the product C = alpha·op(A)·B (SideLeft, A m×m) or
// C = alpha·B·op(A) (SideRight, A n×n) with A triangular and B, C m×n.
// cuBLAS computes it out of place; c == b gives BLAS's in-place product.
func (h Blas) Dtrmm(side SideMode, uplo Fill, tA Op, diag DiagType, m, n int, alpha float64, a DevicePtr, lda int, b DevicePtr, ldb int, c DevicePtr, ldc int) error {
	api, err := h.api()
	if err != nil {
		return err
	}
	f := newFrame()
	defer f.release()
	pa, _ := scalars(f, alpha, 0)
	r := f.call(api.dtrmm, h.h, uintptr(side), uintptr(uplo), uintptr(tA), uintptr(diag), uintptr(m), uintptr(n),
		pa, uintptr(a), uintptr(lda), uintptr(b), uintptr(ldb), uintptr(c), uintptr(ldc))
	return cublasError("cublasDtrmm_v2", status(r))
}

// Dsyrk enqueues the uplo triangle of C = alpha·op(A)·op(A)ᵀ + beta·C, with
// op(A) n×k (t OpN: A n×k; t OpT: A k×n).
func (h Blas) Dsyrk(uplo Fill, t Op, n, k int, alpha float64, a DevicePtr, lda int, beta float64, c DevicePtr, ldc int) error {
	api, err := h.api()
	if err != nil {
		return err
	}
	f := newFrame()
	defer f.release()
	pa, pb := scalars(f, alpha, beta)
	r := f.call(api.dsyrk, h.h, uintptr(uplo), uintptr(t), uintptr(n), uintptr(k),
		pa, uintptr(a), uintptr(lda), pb, uintptr(c), uintptr(ldc))
	return cublasError("cublasDsyrk_v2", status(r))
}

// DgemmStridedBatched enqueues count independent products
// C_i = alpha·op(A_i)·op(B_i) + beta·C_i, where X_i starts strideX elements
// after X_(i-1).
func (h Blas) DgemmStridedBatched(tA, tB Op, m, n, k int, alpha float64, a DevicePtr, lda int, strideA int64,
	b DevicePtr, ldb int, strideB int64, beta float64, c DevicePtr, ldc int, strideC int64, count int) error {
	api, err := h.api()
	if err != nil {
		return err
	}
	f := newFrame()
	defer f.release()
	pa, pb := scalars(f, alpha, beta)
	r := f.call(api.dgemmStridedBatched, h.h, uintptr(tA), uintptr(tB), uintptr(m), uintptr(n), uintptr(k),
		pa, uintptr(a), uintptr(lda), uintptr(strideA), uintptr(b), uintptr(ldb), uintptr(strideB),
		pb, uintptr(c), uintptr(ldc), uintptr(strideC), uintptr(count))
	return cublasError("cublasDgemmStridedBatched", status(r))
}

// DgemmBatched enqueues count independent products
// C_i = alpha·op(A_i)·op(B_i) + beta·C_i, where aArray, bArray and cArray
// are device arrays of count device pointers each.
func (h Blas) DgemmBatched(tA, tB Op, m, n, k int, alpha float64, aArray DevicePtr, lda int,
	bArray DevicePtr, ldb int, beta float64, cArray DevicePtr, ldc int, count int) error {
	api, err := h.api()
	if err != nil {
		return err
	}
	f := newFrame()
	defer f.release()
	pa, pb := scalars(f, alpha, beta)
	r := f.call(api.dgemmBatched, h.h, uintptr(tA), uintptr(tB), uintptr(m), uintptr(n), uintptr(k),
		pa, uintptr(aArray), uintptr(lda), uintptr(bArray), uintptr(ldb),
		pb, uintptr(cArray), uintptr(ldc), uintptr(count))
	return cublasError("cublasDgemmBatched", status(r))
}
