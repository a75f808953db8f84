package blas

import (
	"fmt"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Flop counts of the routines, as LAPACK's working notes count them, so that
// every benchmark and example reports GFLOP/s the same way.

// GemmFlops is the flop count of an m×n×k Dgemm.
func GemmFlops(m, n, k int) float64 { return 2 * float64(m) * float64(n) * float64(k) }

// TrsmFlops is the flop count of a Dtrsm on an m×n right-hand side.
func TrsmFlops(side Side, m, n int) float64 {
	if side == Left {
		return float64(m) * float64(m) * float64(n)
	}
	return float64(m) * float64(n) * float64(n)
}

// SyrkFlops is the flop count of an n×n rank-k Dsyrk.
func SyrkFlops(n, k int) float64 { return float64(k) * float64(n) * float64(n+1) }

// PotrfFlops is the flop count of an n×n Cholesky factorization.
func PotrfFlops(n int) float64 {
	f := float64(n)
	return f*f*f/3 + f*f/2 + f/6
}

// MatCholesky is gonum's one-call Cholesky, the baseline a gonum user would
// write: mat.Cholesky.Factorize on the symmetric matrix stored in the lower
// triangle of the column-major n×n matrix A (gonum's own Dgemm runs on
// GOMAXPROCS goroutines there). On success the factor L is written back
// into A's lower triangle, so PotrfResidual can check it.
func MatCholesky(n int, a []float64, lda int) error {
	const r = "MatCholesky"
	if err := checkDims(r, "n", n); err != nil {
		return err
	}
	if err := checkMatrix(r, "a", n, n, a, lda); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	// The column-major lower triangle is, on the same array, the row-major
	// upper triangle that SymDense stores.
	var sym mat.SymDense
	sym.SetRawSymmetric(blas64.Symmetric{N: n, Stride: lda, Data: a, Uplo: gblas.Upper})
	var ch mat.Cholesky
	if !ch.Factorize(&sym) {
		return fmt.Errorf("%w (%s, n=%d)", ErrNotPositiveDefinite, r, n)
	}
	// Cholesky keeps U with A = UᵀU in row-major order, which is L = Uᵀ in
	// column-major order: copy its upper triangle back.
	var u mat.TriDense
	ch.UTo(&u)
	raw := u.RawTriangular()
	for i := 0; i < n; i++ {
		copy(a[i*lda+i:i*lda+n], raw.Data[i*raw.Stride+i:i*raw.Stride+n])
	}
	return nil
}
