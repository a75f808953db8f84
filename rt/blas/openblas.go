package blas

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// openblasLibrary is the Debian (libopenblas0) soname; the pthread and
// OpenMP variants both provide it.
const openblasLibrary = "libopenblas.so.0"

type openblasKernels struct {
	dgemm_, dtrsm_, dtrmm_, dsyrk_ uintptr
	dpotrf_, dtrtri_               uintptr
	setNumThreads, getNumThreads   uintptr
	cfg                            string
	lapackEntries
}

var loadOpenBLAS = sync.OnceValues(func() (*Impl, error) {
	lib, err := purego.Dlopen(openblasLibrary, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	k := &openblasKernels{}
	for _, s := range []struct {
		name string
		fn   *uintptr
	}{
		{"dgemm_", &k.dgemm_},
		{"dtrsm_", &k.dtrsm_},
		{"dtrmm_", &k.dtrmm_},
		{"dtrtri_", &k.dtrtri_},
		{"dsyrk_", &k.dsyrk_},
		{"dpotrf_", &k.dpotrf_},
		{"openblas_set_num_threads", &k.setNumThreads},
		{"openblas_get_num_threads", &k.getNumThreads},
	} {
		if *s.fn, err = purego.Dlsym(lib, s.name); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrUnavailable, openblasLibrary, err)
		}
	}
	k.lapackEntries = loadLapackEntries(lib)
	k.cfg = openblasConfig(lib)
	// Task bodies call BLAS from every worker at once; each call must stay
	// on its caller's thread.
	k.setThreads(1)
	return &Impl{name: "openblas", k: k}, nil
})

// openblasConfig reads the build description; these calls are made once, so
// purego's reflective (allocating) calling path is fine here.
func openblasConfig(lib uintptr) string {
	var getConfig, getCorename func() string
	parts := []string{}
	if sym, err := purego.Dlsym(lib, "openblas_get_config"); err == nil {
		purego.RegisterFunc(&getConfig, sym)
		parts = append(parts, strings.TrimSpace(getConfig()))
	}
	if sym, err := purego.Dlsym(lib, "openblas_get_corename"); err == nil {
		purego.RegisterFunc(&getCorename, sym)
		parts = append(parts, "core="+getCorename())
	}
	return strings.Join(parts, " ")
}

// OpenBLAS is the libopenblas.so.0 backend, loaded on first use. It returns
// an error wrapping ErrUnavailable when the library (or one of its entry
// points) is missing.
func OpenBLAS() (*Impl, error) { return loadOpenBLAS() }

// fortranCall is the argument block of one call. Fortran entry points take
// every argument by address, so the scalars live here, on the Go heap, which
// never moves; blocks are pooled so that a call allocates nothing.
//
// purego.SyscallN is handed argv as a slice of this heap block: passing the
// arguments inline would allocate the variadic array on every call. The
// slices the call reads or writes are stored in the block while it runs:
// that makes the compiler keep them on the heap (a stack could move under a
// saved address) and keeps them alive until C returns. Nothing is retained
// by OpenBLAS after that.
type fortranCall struct {
	argv                     [15]uintptr
	a, b, c                  []float64
	tA, tB, side, uplo, diag byte
	m, n, k, lda, ldb, ldc   int32
	info                     int32
	alpha, beta              float64
}

var fortranPool = sync.Pool{New: func() any { return new(fortranCall) }}

// matrix records s in the block and returns its address.
func (f *fortranCall) matrix(slot *[]float64, s []float64) uintptr {
	*slot = s
	return uintptr(unsafe.Pointer(unsafe.SliceData(s)))
}

// run calls fn with the first n entries of argv and recycles the block.
func (f *fortranCall) run(fn uintptr, n int) {
	purego.SyscallN(fn, f.argv[:n]...)
	f.a, f.b, f.c = nil, nil, nil
	fortranPool.Put(f)
}

// hidden is the length of a character argument, which gfortran-compiled
// entry points expect after the visible arguments; OpenBLAS's C entry points
// ignore it.
const hidden = 1

func (o *openblasKernels) dgemm(tA, tB Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	f := fortranPool.Get().(*fortranCall)
	f.tA, f.tB = byte(tA), byte(tB)
	f.m, f.n, f.k = int32(m), int32(n), int32(k)
	f.lda, f.ldb, f.ldc = int32(lda), int32(ldb), int32(ldc)
	f.alpha, f.beta = alpha, beta
	f.argv = [15]uintptr{
		uintptr(unsafe.Pointer(&f.tA)), uintptr(unsafe.Pointer(&f.tB)),
		uintptr(unsafe.Pointer(&f.m)), uintptr(unsafe.Pointer(&f.n)), uintptr(unsafe.Pointer(&f.k)),
		uintptr(unsafe.Pointer(&f.alpha)),
		f.matrix(&f.a, a), uintptr(unsafe.Pointer(&f.lda)),
		f.matrix(&f.b, b), uintptr(unsafe.Pointer(&f.ldb)),
		uintptr(unsafe.Pointer(&f.beta)),
		f.matrix(&f.c, c), uintptr(unsafe.Pointer(&f.ldc)),
		hidden, hidden,
	}
	f.run(o.dgemm_, 15)
}

func (o *openblasKernels) dtrsm(side Side, uplo Uplo, tA Transpose, diag Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	o.triangular(o.dtrsm_, side, uplo, tA, diag, m, n, alpha, a, lda, b, ldb)
}

func (o *openblasKernels) dtrmm(side Side, uplo Uplo, tA Transpose, diag Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	o.triangular(o.dtrmm_, side, uplo, tA, diag, m, n, alpha, a, lda, b, ldb)
}

// triangular calls dtrsm_ or dtrmm_, which take the same arguments.
func (o *openblasKernels) triangular(fn uintptr, side Side, uplo Uplo, tA Transpose, diag Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	f := fortranPool.Get().(*fortranCall)
	f.side, f.uplo, f.tA, f.diag = byte(side), byte(uplo), byte(tA), byte(diag)
	f.m, f.n = int32(m), int32(n)
	f.lda, f.ldb = int32(lda), int32(ldb)
	f.alpha = alpha
	f.argv = [15]uintptr{
		uintptr(unsafe.Pointer(&f.side)), uintptr(unsafe.Pointer(&f.uplo)),
		uintptr(unsafe.Pointer(&f.tA)), uintptr(unsafe.Pointer(&f.diag)),
		uintptr(unsafe.Pointer(&f.m)), uintptr(unsafe.Pointer(&f.n)),
		uintptr(unsafe.Pointer(&f.alpha)),
		f.matrix(&f.a, a), uintptr(unsafe.Pointer(&f.lda)),
		f.matrix(&f.b, b), uintptr(unsafe.Pointer(&f.ldb)),
		hidden, hidden, hidden, hidden,
	}
	f.run(fn, 15)
}

func (o *openblasKernels) dsyrk(uplo Uplo, t Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	f := fortranPool.Get().(*fortranCall)
	f.uplo, f.tA = byte(uplo), byte(t)
	f.n, f.k = int32(n), int32(k)
	f.lda, f.ldc = int32(lda), int32(ldc)
	f.alpha, f.beta = alpha, beta
	f.argv = [15]uintptr{
		uintptr(unsafe.Pointer(&f.uplo)), uintptr(unsafe.Pointer(&f.tA)),
		uintptr(unsafe.Pointer(&f.n)), uintptr(unsafe.Pointer(&f.k)),
		uintptr(unsafe.Pointer(&f.alpha)),
		f.matrix(&f.a, a), uintptr(unsafe.Pointer(&f.lda)),
		uintptr(unsafe.Pointer(&f.beta)),
		f.matrix(&f.c, c), uintptr(unsafe.Pointer(&f.ldc)),
		hidden, hidden,
	}
	f.run(o.dsyrk_, 12)
}

// dpotrf calls OpenBLAS's own dpotrf_ (not reference LAPACK's): it is the
// routine LAPACKE_dpotrf forwards to for column-major data, and it runs on
// as many threads as SetThreads allows.
func (o *openblasKernels) dpotrf(uplo Uplo, n int, a []float64, lda int) int {
	f := fortranPool.Get().(*fortranCall)
	f.uplo = byte(uplo)
	f.n, f.lda, f.info = int32(n), int32(lda), 0
	f.argv = [15]uintptr{
		uintptr(unsafe.Pointer(&f.uplo)), uintptr(unsafe.Pointer(&f.n)),
		f.matrix(&f.a, a), uintptr(unsafe.Pointer(&f.lda)),
		uintptr(unsafe.Pointer(&f.info)),
		hidden,
	}
	purego.SyscallN(o.dpotrf_, f.argv[:6]...)
	info := int(f.info)
	f.a = nil
	fortranPool.Put(f)
	return info
}

func (o *openblasKernels) dtrtri(uplo Uplo, diag Diag, n int, a []float64, lda int) {
	f := fortranPool.Get().(*fortranCall)
	f.uplo, f.diag = byte(uplo), byte(diag)
	f.n, f.lda, f.info = int32(n), int32(lda), 0
	f.argv = [15]uintptr{
		uintptr(unsafe.Pointer(&f.uplo)), uintptr(unsafe.Pointer(&f.diag)),
		uintptr(unsafe.Pointer(&f.n)),
		f.matrix(&f.a, a), uintptr(unsafe.Pointer(&f.lda)),
		uintptr(unsafe.Pointer(&f.info)),
		hidden, hidden,
	}
	// info > 0 reports a zero on the diagonal, which Dtrtri does not check.
	f.run(o.dtrtri_, 8)
}

func (o *openblasKernels) threads() int {
	r, _, _ := purego.SyscallN(o.getNumThreads)
	return int(int32(r))
}

func (o *openblasKernels) setThreads(n int) error {
	purego.SyscallN(o.setNumThreads, uintptr(n))
	return nil
}

func (o *openblasKernels) config() string { return o.cfg }
