package blas

import (
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// lapackEntries are the LAPACK entry points of libopenblas.so.0: dgetrf_,
// dlaswp_ and dlauum_ are OpenBLAS's own, the dgeqrt family is the
// reference LAPACK it bundles. A library built without LAPACK lacks them;
// each missing one is then 0 and its kernel runs the Go code of
// householder.go and lu.go on OpenBLAS's BLAS instead.
type lapackEntries struct {
	dgeqrt_, dtpqrt_, dgemqrt_, dtpmqrt_ uintptr
	dgetrf_, dlaswp_, dlauum_            uintptr
}

func loadLapackEntries(lib uintptr) lapackEntries {
	var e lapackEntries
	for _, s := range []struct {
		name string
		fn   *uintptr
	}{
		{"dgeqrt_", &e.dgeqrt_},
		{"dtpqrt_", &e.dtpqrt_},
		{"dgemqrt_", &e.dgemqrt_},
		{"dtpmqrt_", &e.dtpmqrt_},
		{"dgetrf_", &e.dgetrf_},
		{"dlaswp_", &e.dlaswp_},
		{"dlauum_", &e.dlauum_},
	} {
		if sym, err := purego.Dlsym(lib, s.name); err == nil {
			*s.fn = sym
		}
	}
	return e
}

// lapackCall is the argument block of one LAPACK call, pooled like
// fortranCall (see there for why the slices are stored in it); dtpmqrt_
// takes 17 arguments and two hidden lengths. piv is the 1-based int32
// pivot vector LAPACK reads or writes; it grows to the largest call and is
// reused, so steady-state calls allocate nothing.
type lapackCall struct {
	argv                                       [19]uintptr
	a, b, t, v, work                           []float64
	piv                                        []int32
	side, trans, uplo                          byte
	m, n, k, l, nb, lda, ldb, ldt, ldv, k1, k2 int32
	incx, info                                 int32
}

var lapackPool = sync.Pool{New: func() any { return new(lapackCall) }}

// intArg stores v in the block's integer slot p and returns p's address.
func intArg(p *int32, v int) uintptr {
	*p = int32(v)
	return uintptr(unsafe.Pointer(p))
}

// matArg records s in the block's slot and returns its address.
func matArg(slot *[]float64, s []float64) uintptr {
	*slot = s
	return uintptr(unsafe.Pointer(unsafe.SliceData(s)))
}

// pivots returns the block's pivot buffer, at least n long.
func (f *lapackCall) pivots(n int) []int32 {
	if cap(f.piv) < n {
		f.piv = make([]int32, n)
	}
	return f.piv[:n]
}

// call calls fn with the first n entries of argv and returns info.
func (f *lapackCall) call(fn uintptr, n int) int {
	purego.SyscallN(fn, f.argv[:n]...)
	return int(f.info)
}

// release drops the block's references to the caller's slices and
// recycles it.
func (f *lapackCall) release() {
	f.a, f.b, f.t, f.v, f.work = nil, nil, nil, nil, nil
	lapackPool.Put(f)
}

func (o *openblasKernels) dgeqrt(m, n, ib int, a []float64, lda int, t []float64, ldt int, work []float64) int {
	if o.dgeqrt_ == 0 {
		geqrt(o, m, n, ib, a, lda, t, ldt, work)
		return 0
	}
	f := lapackPool.Get().(*lapackCall)
	defer f.release()
	f.argv = [19]uintptr{
		intArg(&f.m, m), intArg(&f.n, n), intArg(&f.nb, ib),
		matArg(&f.a, a), intArg(&f.lda, lda),
		matArg(&f.t, t), intArg(&f.ldt, ldt),
		matArg(&f.work, work), intArg(&f.info, 0),
	}
	return f.call(o.dgeqrt_, 9)
}

func (o *openblasKernels) dtpqrt(m, n, l, ib int, a []float64, lda int, b []float64, ldb int, t []float64, ldt int, work []float64) int {
	if o.dtpqrt_ == 0 {
		tpqrt(o, m, n, l, ib, a, lda, b, ldb, t, ldt, work)
		return 0
	}
	f := lapackPool.Get().(*lapackCall)
	defer f.release()
	f.argv = [19]uintptr{
		intArg(&f.m, m), intArg(&f.n, n), intArg(&f.l, l), intArg(&f.nb, ib),
		matArg(&f.a, a), intArg(&f.lda, lda),
		matArg(&f.b, b), intArg(&f.ldb, ldb),
		matArg(&f.t, t), intArg(&f.ldt, ldt),
		matArg(&f.work, work), intArg(&f.info, 0),
	}
	return f.call(o.dtpqrt_, 12)
}

func (o *openblasKernels) dgemqrt(side Side, trans Transpose, m, n, k, ib int, v []float64, ldv int, t []float64, ldt int, c []float64, ldc int, work []float64) int {
	if o.dgemqrt_ == 0 {
		gemqrt(o, side, trans, m, n, k, ib, v, ldv, t, ldt, c, ldc, work)
		return 0
	}
	f := lapackPool.Get().(*lapackCall)
	defer f.release()
	f.side, f.trans = byte(side), byte(trans)
	f.argv = [19]uintptr{
		uintptr(unsafe.Pointer(&f.side)), uintptr(unsafe.Pointer(&f.trans)),
		intArg(&f.m, m), intArg(&f.n, n), intArg(&f.k, k), intArg(&f.nb, ib),
		matArg(&f.v, v), intArg(&f.ldv, ldv),
		matArg(&f.t, t), intArg(&f.ldt, ldt),
		matArg(&f.a, c), intArg(&f.lda, ldc),
		matArg(&f.work, work), intArg(&f.info, 0),
		hidden, hidden,
	}
	return f.call(o.dgemqrt_, 16)
}

func (o *openblasKernels) dtpmqrt(side Side, trans Transpose, m, n, k, l, ib int, v []float64, ldv int, t []float64, ldt int, a []float64, lda int, b []float64, ldb int, work []float64) int {
	if o.dtpmqrt_ == 0 {
		tpmqrt(o, side, trans, m, n, k, l, ib, v, ldv, t, ldt, a, lda, b, ldb, work)
		return 0
	}
	f := lapackPool.Get().(*lapackCall)
	defer f.release()
	f.side, f.trans = byte(side), byte(trans)
	f.argv = [19]uintptr{
		uintptr(unsafe.Pointer(&f.side)), uintptr(unsafe.Pointer(&f.trans)),
		intArg(&f.m, m), intArg(&f.n, n), intArg(&f.k, k), intArg(&f.l, l), intArg(&f.nb, ib),
		matArg(&f.v, v), intArg(&f.ldv, ldv),
		matArg(&f.t, t), intArg(&f.ldt, ldt),
		matArg(&f.a, a), intArg(&f.lda, lda),
		matArg(&f.b, b), intArg(&f.ldb, ldb),
		matArg(&f.work, work), intArg(&f.info, 0),
		hidden, hidden,
	}
	return f.call(o.dtpmqrt_, 19)
}

// dgetrf calls OpenBLAS's own dgetrf_ and turns its 1-based int32 pivots
// into ipiv's 0-based ints.
func (o *openblasKernels) dgetrf(m, n int, a []float64, lda int, ipiv []int) int {
	if o.dgetrf_ == 0 {
		return blockedGetrf(o, m, n, a, lda, ipiv)
	}
	f := lapackPool.Get().(*lapackCall)
	defer f.release()
	piv := f.pivots(len(ipiv))
	f.argv = [19]uintptr{
		intArg(&f.m, m), intArg(&f.n, n),
		matArg(&f.a, a), intArg(&f.lda, lda),
		uintptr(unsafe.Pointer(unsafe.SliceData(piv))), intArg(&f.info, 0),
	}
	info := f.call(o.dgetrf_, 6)
	for i, p := range piv {
		ipiv[i] = int(p) - 1
	}
	return info
}

func (o *openblasKernels) dlaswp(n int, a []float64, lda int, k1, k2 int, ipiv []int, incx int) {
	if o.dlaswp_ == 0 {
		laswp(n, a, lda, k1, k2, ipiv, incx)
		return
	}
	f := lapackPool.Get().(*lapackCall)
	defer f.release()
	// LAPACK reads ipiv(k1..k2), 1-based; the entries below k1 are unused.
	piv := f.pivots(k2 + 1)
	for i := k1; i <= k2; i++ {
		piv[i] = int32(ipiv[i] + 1)
	}
	f.argv = [19]uintptr{
		intArg(&f.n, n), matArg(&f.a, a), intArg(&f.lda, lda),
		intArg(&f.k1, k1+1), intArg(&f.k2, k2+1),
		uintptr(unsafe.Pointer(unsafe.SliceData(piv))), intArg(&f.incx, incx),
	}
	f.call(o.dlaswp_, 7)
}

func (o *openblasKernels) dlauum(uplo Uplo, n int, a []float64, lda int) int {
	if o.dlauum_ == 0 {
		lauum(o, uplo, n, a, lda)
		return 0
	}
	f := lapackPool.Get().(*lapackCall)
	defer f.release()
	f.uplo = byte(uplo)
	f.argv = [19]uintptr{
		uintptr(unsafe.Pointer(&f.uplo)), intArg(&f.n, n),
		matArg(&f.a, a), intArg(&f.lda, lda),
		intArg(&f.info, 0), hidden,
	}
	return f.call(o.dlauum_, 6)
}
