package blas

import (
	"math"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	lapack "gonum.org/v1/gonum/lapack/gonum"
)

// gonum's native BLAS is row-major. A column-major matrix with leading
// dimension ld is, on the same array, the row-major storage of its
// transpose, so every column-major call becomes a row-major call on the
// transposed problem: operands swap places (gemm), the triangle flips
// (lower ↔ upper) and so does the side (trsm), while a transpose flag keeps
// its meaning for trsm and flips for syrk, whose operand is transposed.

var (
	gn gonum.Implementation
	la lapack.Implementation
)

type gonumKernels struct{}

func rowMajorTrans(t Transpose) gblas.Transpose {
	if t == NoTrans {
		return gblas.NoTrans
	}
	return gblas.Trans
}

func flippedTrans(t Transpose) gblas.Transpose {
	if t == NoTrans {
		return gblas.Trans
	}
	return gblas.NoTrans
}

func flippedUplo(u Uplo) gblas.Uplo {
	if u == Lower {
		return gblas.Upper
	}
	return gblas.Lower
}

func flippedSide(s Side) gblas.Side {
	if s == Left {
		return gblas.Right
	}
	return gblas.Left
}

func rowMajorDiag(d Diag) gblas.Diag {
	if d == Unit {
		return gblas.Unit
	}
	return gblas.NonUnit
}

// gonum's Dgemm fans out to goroutines once C spans four or more 64×64
// blocks. Pieces of at most gemmRows×gemmCols (1×3 blocks) stay on the
// calling goroutine, which is what a task body wants.
const (
	gemmRows = 64
	gemmCols = 192
)

func (gonumKernels) dgemm(tA, tB Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	// Column-major C = op(A)·op(B) is row-major Cᵀ = op(B)ᵀ·op(A)ᵀ.
	rowMajorGemm(rowMajorTrans(tB), rowMajorTrans(tA), n, m, k, alpha, b, ldb, a, lda, beta, c, ldc)
}

// rowMajorGemm is gonum's row-major Dgemm (C is m×n), cut into serial pieces.
func rowMajorGemm(tA, tB gblas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	for i := 0; i < m; i += gemmRows {
		mi := min(gemmRows, m-i)
		// Only the offset of each operand's own layout is taken: the other may lie past
		// the end of the slice when the operand is not square.
		var ai []float64
		if tA == gblas.NoTrans {
			ai = a[i*lda:]
		} else {
			ai = a[i:] // rows i.. of op(A) are columns i.. of A
		}
		for j := 0; j < n; j += gemmCols {
			nj := min(gemmCols, n-j)
			var bj []float64
			if tB == gblas.NoTrans {
				bj = b[j:]
			} else {
				bj = b[j*ldb:] // columns j.. of op(B) are rows j.. of B
			}
			gn.Dgemm(tA, tB, mi, nj, k, alpha, ai, lda, bj, ldb, beta, c[i*ldc+j:], ldc)
		}
	}
}

func (gonumKernels) dtrsm(side Side, uplo Uplo, tA Transpose, diag Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	gn.Dtrsm(flippedSide(side), flippedUplo(uplo), rowMajorTrans(tA), rowMajorDiag(diag), n, m, alpha, a, lda, b, ldb)
}

func (gonumKernels) dsyrk(uplo Uplo, t Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	gn.Dsyrk(flippedUplo(uplo), flippedTrans(t), n, k, alpha, a, lda, beta, c, ldc)
}

func (gonumKernels) dtrmm(side Side, uplo Uplo, tA Transpose, diag Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	gn.Dtrmm(flippedSide(side), flippedUplo(uplo), rowMajorTrans(tA), rowMajorDiag(diag), n, m, alpha, a, lda, b, ldb)
}

// dtrtri: the inverse of the transpose is the transpose of the inverse, so
// the row-major view inverts the other triangle.
func (gonumKernels) dtrtri(uplo Uplo, diag Diag, n int, a []float64, lda int) {
	la.Dtrtri(flippedUplo(uplo), rowMajorDiag(diag), n, a, lda)
}

func (g gonumKernels) dpotrf(uplo Uplo, n int, a []float64, lda int) int {
	return blockedPotrf(g, uplo, n, a, lda)
}

func (gonumKernels) threads() int { return 1 }

func (gonumKernels) setThreads(n int) error {
	if n != 1 {
		return badf("SetThreads", "gonum kernels run on the calling goroutine only (use MatCholesky for gonum's parallel baseline)")
	}
	return nil
}

func (gonumKernels) config() string { return "gonum (pure Go, single-threaded kernels)" }

// potrfBlock is the panel width of blockedPotrf: wide enough that most of the
// work goes through gemm, narrow enough that the unblocked panel is cheap.
const potrfBlock = 64

// blockedPotrf is the left-looking blocked Cholesky (LAPACK's dpotrf
// schedule) on top of a backend's gemm, syrk and trsm: each diagonal block
// is first updated with the panels left of (or above) it, factored
// unblocked, and then the block column below (row to the right) is updated
// and solved. It returns LAPACK's info.
func blockedPotrf(k kernels, uplo Uplo, n int, a []float64, lda int) int {
	at := func(i, j int) []float64 { return a[i+j*lda:] }
	for j := 0; j < n; j += potrfBlock {
		jb := min(potrfBlock, n-j)
		rest := n - j - jb
		if uplo == Lower {
			if j > 0 {
				k.dsyrk(Lower, NoTrans, jb, j, -1, at(j, 0), lda, 1, at(j, j), lda)
			}
			if info := potf2Lower(jb, at(j, j), lda); info != 0 {
				return j + info
			}
			if rest > 0 {
				if j > 0 {
					k.dgemm(NoTrans, Trans, rest, jb, j, -1, at(j+jb, 0), lda, at(j, 0), lda, 1, at(j+jb, j), lda)
				}
				k.dtrsm(Right, Lower, Trans, NonUnit, rest, jb, 1, at(j, j), lda, at(j+jb, j), lda)
			}
			continue
		}
		if j > 0 {
			k.dsyrk(Upper, Trans, jb, j, -1, at(0, j), lda, 1, at(j, j), lda)
		}
		if info := potf2Upper(jb, at(j, j), lda); info != 0 {
			return j + info
		}
		if rest > 0 {
			if j > 0 {
				k.dgemm(Trans, NoTrans, jb, rest, j, -1, at(0, j), lda, at(0, j+jb), lda, 1, at(j, j+jb), lda)
			}
			k.dtrsm(Left, Upper, Trans, NonUnit, jb, rest, 1, at(j, j), lda, at(j, j+jb), lda)
		}
	}
	return 0
}

// potf2Lower factors a small column-major block as L·Lᵀ, right-looking, so
// that the inner loops run down contiguous columns.
func potf2Lower(n int, a []float64, lda int) int {
	for j := 0; j < n; j++ {
		d := a[j+j*lda]
		if !(d > 0) { // also catches NaN
			return j + 1
		}
		d = math.Sqrt(d)
		a[j+j*lda] = d
		col := a[j+1+j*lda : n+j*lda]
		gn.Dscal(len(col), 1/d, col, 1)
		for c := j + 1; c < n; c++ {
			if f := a[c+j*lda]; f != 0 {
				gn.Daxpy(n-c, -f, a[c+j*lda:n+j*lda], 1, a[c+c*lda:n+c*lda], 1)
			}
		}
	}
	return 0
}

// potf2Upper factors a small column-major block as Uᵀ·U, left-looking, so
// that the dot products run down contiguous columns of U.
func potf2Upper(n int, a []float64, lda int) int {
	for j := 0; j < n; j++ {
		uj := a[j*lda : j*lda+j]
		d := a[j+j*lda] - gn.Ddot(j, uj, 1, uj, 1)
		if !(d > 0) {
			a[j+j*lda] = d
			return j + 1
		}
		d = math.Sqrt(d)
		a[j+j*lda] = d
		for c := j + 1; c < n; c++ {
			a[j+c*lda] = (a[j+c*lda] - gn.Ddot(j, a[c*lda:c*lda+j], 1, uj, 1)) / d
		}
	}
	return 0
}

// The LAPACK tile kernels are the column-major Go code of householder.go
// and lu.go on top of the kernels above, so they stay on the calling
// goroutine too.

func (g gonumKernels) dgeqrt(m, n, ib int, a []float64, lda int, t []float64, ldt int, work []float64) int {
	geqrt(g, m, n, ib, a, lda, t, ldt, work)
	return 0
}

func (g gonumKernels) dtpqrt(m, n, l, ib int, a []float64, lda int, b []float64, ldb int, t []float64, ldt int, work []float64) int {
	tpqrt(g, m, n, l, ib, a, lda, b, ldb, t, ldt, work)
	return 0
}

func (g gonumKernels) dgemqrt(side Side, trans Transpose, m, n, k, ib int, v []float64, ldv int, t []float64, ldt int, c []float64, ldc int, work []float64) int {
	gemqrt(g, side, trans, m, n, k, ib, v, ldv, t, ldt, c, ldc, work)
	return 0
}

func (g gonumKernels) dtpmqrt(side Side, trans Transpose, m, n, k, l, ib int, v []float64, ldv int, t []float64, ldt int, a []float64, lda int, b []float64, ldb int, work []float64) int {
	tpmqrt(g, side, trans, m, n, k, l, ib, v, ldv, t, ldt, a, lda, b, ldb, work)
	return 0
}

func (g gonumKernels) dgetrf(m, n int, a []float64, lda int, ipiv []int) int {
	return blockedGetrf(g, m, n, a, lda, ipiv)
}

func (gonumKernels) dlaswp(n int, a []float64, lda int, k1, k2 int, ipiv []int, incx int) {
	laswp(n, a, lda, k1, k2, ipiv, incx)
}

func (g gonumKernels) dlauum(uplo Uplo, n int, a []float64, lda int) int {
	lauum(g, uplo, n, a, lda)
	return 0
}
