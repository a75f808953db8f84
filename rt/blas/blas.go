package blas

import (
	"errors"
	"fmt"
	"os"
	"sync"
)

// Transpose says whether a matrix operand is used as is or transposed.
// The values are the BLAS characters, so they can be handed to Fortran
// entry points unchanged.
type Transpose byte

// Transpose values.
const (
	NoTrans Transpose = 'N'
	Trans   Transpose = 'T'
)

// Uplo names the triangle of a matrix a routine reads or writes.
type Uplo byte

// Uplo values. All is accepted by Dlacpy and Dlaset only.
const (
	Lower Uplo = 'L'
	Upper Uplo = 'U'
	All   Uplo = 'A'
)

// Side says on which side of B the triangular matrix of Dtrsm stands.
type Side byte

// Side values.
const (
	Left  Side = 'L'
	Right Side = 'R'
)

// Diag says whether a triangular matrix has an implicit unit diagonal.
type Diag byte

// Diag values.
const (
	NonUnit Diag = 'N'
	Unit    Diag = 'U'
)

// Sentinel errors. Errors returned by this package wrap one of them.
var (
	// ErrBadArgument: a dimension, leading dimension, enum value or slice
	// length does not fit the call.
	ErrBadArgument = errors.New("blas: bad argument")
	// ErrNotPositiveDefinite: Dpotrf met a leading minor that is not
	// positive definite; the error text gives its order.
	ErrNotPositiveDefinite = errors.New("blas: matrix is not positive definite")
	// ErrSingular: an LU factorization met an exactly zero pivot; the error
	// text names its column. The factors are complete, as with LAPACK's
	// info > 0, but U is singular and cannot be used to solve.
	ErrSingular = errors.New("blas: matrix is singular")
	// ErrUnavailable: OpenBLAS was asked for but libopenblas.so.0 could not
	// be loaded.
	ErrUnavailable = errors.New("blas: OpenBLAS is not available")
	// ErrUnknownBackend: JDF2GO_BLAS (or Select) names no known backend.
	ErrUnknownBackend = errors.New("blas: unknown backend")
)

// EnvVar is the environment variable that picks the default backend.
const EnvVar = "JDF2GO_BLAS"

// kernels is what a backend implements. Arguments reach it checked, with
// m, n > 0 and (for gemm and syrk) k > 0 and alpha != 0, so a backend never
// deals with empty operands or quick returns.
type kernels interface {
	dgemm(tA, tB Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int)
	dtrsm(side Side, uplo Uplo, tA Transpose, diag Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int)
	dsyrk(uplo Uplo, t Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int)
	dtrmm(side Side, uplo Uplo, tA Transpose, diag Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int)
	// dtrtri inverts a triangle of order n > 0 in place; it does not check
	// the diagonal.
	dtrtri(uplo Uplo, diag Diag, n int, a []float64, lda int)
	// dpotrf returns 0 on success or the order of the first leading minor
	// that is not positive definite (LAPACK's info).
	dpotrf(uplo Uplo, n int, a []float64, lda int) int
	// The LAPACK kernels (lapack.go) reach a backend with ib already cut
	// to the number of reflectors, a work slice of the documented size
	// and no empty operand. Those returning an int return LAPACK's info.
	dgeqrt(m, n, ib int, a []float64, lda int, t []float64, ldt int, work []float64) int
	dtpqrt(m, n, l, ib int, a []float64, lda int, b []float64, ldb int, t []float64, ldt int, work []float64) int
	dgemqrt(side Side, trans Transpose, m, n, k, ib int, v []float64, ldv int, t []float64, ldt int, c []float64, ldc int, work []float64) int
	dtpmqrt(side Side, trans Transpose, m, n, k, l, ib int, v []float64, ldv int, t []float64, ldt int, a []float64, lda int, b []float64, ldb int, work []float64) int
	// dgetrf writes 0-based pivots into ipiv[:min(m,n)].
	dgetrf(m, n int, a []float64, lda int, ipiv []int) int
	dlaswp(n int, a []float64, lda int, k1, k2 int, ipiv []int, incx int)
	dlauum(uplo Uplo, n int, a []float64, lda int) int
	threads() int
	setThreads(n int) error
	config() string
}

// Impl is one BLAS backend. Its methods are safe for concurrent use on
// disjoint output data. The zero value is not usable: get one from Gonum,
// OpenBLAS, Select or Default.
type Impl struct {
	name string
	k    kernels
}

// Name is "gonum" or "openblas".
func (i *Impl) Name() string { return i.name }

// Config describes the backend build, for benchmark reports (for OpenBLAS:
// openblas_get_config and the core type it picked).
func (i *Impl) Config() string { return i.k.config() }

// Threads is the number of threads one call may use.
func (i *Impl) Threads() int { return i.k.threads() }

// SetThreads sets the number of threads one call may use and returns the
// previous value. Only OpenBLAS accepts n > 1; the setting is process-wide,
// so change it only while no task runs BLAS (benchmark baselines do, then
// set it back to 1).
func (i *Impl) SetThreads(n int) (prev int, err error) {
	if n < 1 {
		return i.k.threads(), fmt.Errorf("%w: SetThreads(%d): need at least 1", ErrBadArgument, n)
	}
	prev = i.k.threads()
	return prev, i.k.setThreads(n)
}

// Dgemm computes C = alpha·op(A)·op(B) + beta·C, with op(A) m×k, op(B) k×n
// and C m×n, all column-major. With beta == 0, C is not read.
func (i *Impl) Dgemm(tA, tB Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) error {
	if err := checkGemm(tA, tB, m, n, k, a, lda, b, ldb, c, ldc); err != nil {
		return err
	}
	if m == 0 || n == 0 {
		return nil
	}
	if k == 0 || alpha == 0 {
		scale(All, m, n, beta, c, ldc)
		return nil
	}
	i.k.dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	return nil
}

// Dtrsm solves op(A)·X = alpha·B (side Left) or X·op(A) = alpha·B (side
// Right) for X, overwriting the m×n matrix B; A is triangular (uplo),
// m×m for Left and n×n for Right.
func (i *Impl) Dtrsm(side Side, uplo Uplo, tA Transpose, diag Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) error {
	if err := checkTrsm(side, uplo, tA, diag, m, n, a, lda, b, ldb); err != nil {
		return err
	}
	if m == 0 || n == 0 {
		return nil
	}
	if alpha == 0 {
		scale(All, m, n, 0, b, ldb)
		return nil
	}
	if i.blockedTrsm(side, uplo, tA, n) {
		i.dtrsmRLT(diag, m, n, alpha, a, lda, b, ldb)
		return nil
	}
	i.k.dtrsm(side, uplo, tA, diag, m, n, alpha, a, lda, b, ldb)
	return nil
}

// Dtrmm multiplies in place by a triangular matrix: B = alpha·op(A)·B
// (side Left) or B = alpha·B·op(A) (side Right), B m×n, A triangular
// (uplo), m×m for Left and n×n for Right.
func (i *Impl) Dtrmm(side Side, uplo Uplo, tA Transpose, diag Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) error {
	if err := checkTriangular("Dtrmm", side, uplo, tA, diag, m, n, a, lda, b, ldb); err != nil {
		return err
	}
	if m == 0 || n == 0 {
		return nil
	}
	if alpha == 0 {
		scale(All, m, n, 0, b, ldb)
		return nil
	}
	i.k.dtrmm(side, uplo, tA, diag, m, n, alpha, a, lda, b, ldb)
	return nil
}

// Dtrtri inverts the uplo triangle of the n×n matrix A in place (LAPACK's
// dtrtri); the other triangle is not touched. Like Dtrsm it does not check
// the diagonal: a zero there leaves infinities, not an error.
func (i *Impl) Dtrtri(uplo Uplo, diag Diag, n int, a []float64, lda int) error {
	if err := checkTrtri(uplo, diag, n, a, lda); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	i.k.dtrtri(uplo, diag, n, a, lda)
	return nil
}

// Dsyrk computes the uplo triangle of C = alpha·A·Aᵀ + beta·C (t NoTrans, A
// n×k) or C = alpha·Aᵀ·A + beta·C (t Trans, A k×n); C is n×n and its other
// triangle is not touched.
func (i *Impl) Dsyrk(uplo Uplo, t Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) error {
	if err := checkSyrk(uplo, t, n, k, a, lda, c, ldc); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	if k == 0 || alpha == 0 {
		scale(uplo, n, n, beta, c, ldc)
		return nil
	}
	i.k.dsyrk(uplo, t, n, k, alpha, a, lda, beta, c, ldc)
	return nil
}

// Dpotrf computes the Cholesky factorization of the symmetric positive
// definite n×n matrix A in place: A = L·Lᵀ (uplo Lower, L in the lower
// triangle) or A = Uᵀ·U (uplo Upper). The other triangle is not touched.
// A matrix that is not positive definite gives an error wrapping
// ErrNotPositiveDefinite; A is then partly overwritten.
func (i *Impl) Dpotrf(uplo Uplo, n int, a []float64, lda int) error {
	if err := checkPotrf(uplo, n, a, lda); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	switch info := i.k.dpotrf(uplo, n, a, lda); {
	case info > 0:
		return fmt.Errorf("%w: the leading minor of order %d is not positive definite (n=%d)", ErrNotPositiveDefinite, info, n)
	case info < 0:
		return badf("Dpotrf", "%s rejected argument %d", i.name, -info)
	}
	return nil
}

var gonumImpl = &Impl{name: "gonum", k: gonumKernels{}}

// Gonum is the pure-Go backend; it is always available.
func Gonum() *Impl { return gonumImpl }

// Select returns the backend named by name: "auto" or "" (OpenBLAS when it
// loads, gonum otherwise), "gonum" or "openblas" (an error wrapping
// ErrUnavailable when it does not load).
func Select(name string) (*Impl, error) {
	switch name {
	case "", "auto":
		if ob, err := OpenBLAS(); err == nil {
			return ob, nil
		}
		return Gonum(), nil
	case "gonum":
		return Gonum(), nil
	case "openblas":
		return OpenBLAS()
	default:
		return nil, fmt.Errorf("%w %q (want auto, gonum or openblas)", ErrUnknownBackend, name)
	}
}

var defaultImpl = sync.OnceValues(func() (*Impl, error) {
	v := os.Getenv(EnvVar)
	impl, err := Select(v)
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %w", EnvVar, v, err)
	}
	return impl, nil
})

// Default is the backend that JDF2GO_BLAS selects, decided once per
// process. An unknown value, or "openblas" without the library, is an
// error (and every package-level routine returns it).
func Default() (*Impl, error) { return defaultImpl() }

// Dgemm is Impl.Dgemm on the Default backend.
func Dgemm(tA, tB Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) error {
	impl, err := Default()
	if err != nil {
		return err
	}
	return impl.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Dtrsm is Impl.Dtrsm on the Default backend.
func Dtrsm(side Side, uplo Uplo, tA Transpose, diag Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) error {
	impl, err := Default()
	if err != nil {
		return err
	}
	return impl.Dtrsm(side, uplo, tA, diag, m, n, alpha, a, lda, b, ldb)
}

// Dsyrk is Impl.Dsyrk on the Default backend.
func Dsyrk(uplo Uplo, t Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) error {
	impl, err := Default()
	if err != nil {
		return err
	}
	return impl.Dsyrk(uplo, t, n, k, alpha, a, lda, beta, c, ldc)
}

// Dpotrf is Impl.Dpotrf on the Default backend.
func Dpotrf(uplo Uplo, n int, a []float64, lda int) error {
	impl, err := Default()
	if err != nil {
		return err
	}
	return impl.Dpotrf(uplo, n, a, lda)
}
