package blas

import (
	"math"
	"math/rand/v2"
)

// These helpers are plain Go on column-major matrices: copies, fills, norms
// and the checks the Cholesky examples and benchmarks share. None of them
// is on a task's critical path, so they do not go through a backend (except
// PotrfResidual, whose n³ product does).

// Norm selects the matrix norm that Dlange computes.
type Norm byte

// Norm values, with LAPACK's letters.
const (
	MaxAbs    Norm = 'M' // max |a_ij|
	OneNorm   Norm = 'O' // max column sum of |a_ij|
	InfNorm   Norm = 'I' // max row sum of |a_ij|
	Frobenius Norm = 'F' // sqrt of the sum of a_ij²
)

// checkPart checks the arguments naming the uplo part (Lower, Upper or
// All) of an m×n matrix A.
func checkPart(routine string, uplo Uplo, m, n int, a []float64, lda int) error {
	if err := checkUplo(routine, uplo, true); err != nil {
		return err
	}
	if err := checkDims(routine, "mn", m, n); err != nil {
		return err
	}
	return checkMatrix(routine, "a", m, n, a, lda)
}

// Dlacpy copies the uplo part (Lower, Upper or All) of the m×n matrix A
// into B.
func Dlacpy(uplo Uplo, m, n int, a []float64, lda int, b []float64, ldb int) error {
	if err := checkPart("Dlacpy", uplo, m, n, a, lda); err != nil {
		return err
	}
	if err := checkMatrix("Dlacpy", "b", m, n, b, ldb); err != nil {
		return err
	}
	for j := 0; j < n; j++ {
		lo, hi := rowRange(uplo, j, m)
		copy(b[j*ldb+lo:j*ldb+hi], a[j*lda+lo:j*lda+hi])
	}
	return nil
}

// Dlaset sets the off-diagonal elements of the uplo part (Lower, Upper or
// All) of the m×n matrix A to alpha and its diagonal to beta.
func Dlaset(uplo Uplo, m, n int, alpha, beta float64, a []float64, lda int) error {
	if err := checkPart("Dlaset", uplo, m, n, a, lda); err != nil {
		return err
	}
	for j := 0; j < n; j++ {
		lo, hi := rowRange(uplo, j, m)
		col := a[j*lda : j*lda+m]
		for i := lo; i < hi; i++ {
			col[i] = alpha
		}
		if j < m {
			col[j] = beta
		}
	}
	return nil
}

// Dlange returns the norm of the m×n matrix A.
func Dlange(norm Norm, m, n int, a []float64, lda int) (float64, error) {
	const r = "Dlange"
	if err := checkDims(r, "mn", m, n); err != nil {
		return 0, err
	}
	if err := checkMatrix(r, "a", m, n, a, lda); err != nil {
		return 0, err
	}
	var v float64
	switch norm {
	case MaxAbs:
		for j := 0; j < n; j++ {
			for _, x := range a[j*lda : j*lda+m] {
				v = math.Max(v, math.Abs(x))
			}
		}
	case OneNorm:
		for j := 0; j < n; j++ {
			var s float64
			for _, x := range a[j*lda : j*lda+m] {
				s += math.Abs(x)
			}
			v = math.Max(v, s)
		}
	case InfNorm:
		rows := make([]float64, m)
		for j := 0; j < n; j++ {
			for i, x := range a[j*lda : j*lda+m] {
				rows[i] += math.Abs(x)
			}
		}
		for _, s := range rows {
			v = math.Max(v, s)
		}
	case Frobenius:
		for j := 0; j < n; j++ {
			for _, x := range a[j*lda : j*lda+m] {
				v += x * x
			}
		}
		v = math.Sqrt(v)
	default:
		return 0, badf(r, "norm=%q, want 'M', 'O', 'I' or 'F'", rune(norm))
	}
	return v, nil
}

// FillSPD fills both triangles of the n×n matrix A with a symmetric matrix
// whose off-diagonal entries are uniform in [-0.5, 0.5) and whose diagonal
// is n: it is diagonally dominant, hence positive definite, and well
// conditioned. The same seed gives the same matrix.
func FillSPD(n int, a []float64, lda int, seed uint64) error {
	const r = "FillSPD"
	if err := checkDims(r, "n", n); err != nil {
		return err
	}
	if err := checkMatrix(r, "a", n, n, a, lda); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for j := 0; j < n; j++ {
		a[j+j*lda] = float64(n)
		for i := j + 1; i < n; i++ {
			v := rng.Float64() - 0.5
			a[i+j*lda] = v
			a[j+i*lda] = v
		}
	}
	return nil
}

// symFrobenius is the Frobenius norm of the symmetric matrix stored in the
// uplo triangle of A.
func symFrobenius(uplo Uplo, n int, a []float64, lda int) float64 {
	var s float64
	for j := 0; j < n; j++ {
		lo, hi := rowRange(uplo, j, n)
		for i := lo; i < hi; i++ {
			x := a[i+j*lda]
			if i == j {
				s += x * x
			} else {
				s += 2 * x * x
			}
		}
	}
	return math.Sqrt(s)
}

// PotrfResidual returns ‖A − L·Lᵀ‖_F / ‖A‖_F (uplo Lower) or
// ‖A − Uᵀ·U‖_F / ‖A‖_F (uplo Upper), where A is the symmetric matrix stored
// in the uplo triangle of a and the factor is the uplo triangle of f (what
// Dpotrf left there). It uses the backend's Dsyrk and allocates two n×n
// matrices.
func (i *Impl) PotrfResidual(uplo Uplo, n int, a []float64, lda int, f []float64, ldf int) (float64, error) {
	const r = "PotrfResidual"
	if err := checkUplo(r, uplo, false); err != nil {
		return 0, err
	}
	if err := checkDims(r, "n", n); err != nil {
		return 0, err
	}
	if err := checkMatrix(r, "a", n, n, a, lda); err != nil {
		return 0, err
	}
	if err := checkMatrix(r, "f", n, n, f, ldf); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, nil
	}
	w := make([]float64, n*n) // the factor alone, zeros elsewhere
	res := make([]float64, n*n)
	if err := Dlacpy(uplo, n, n, f, ldf, w, n); err != nil {
		return 0, err
	}
	if err := Dlacpy(uplo, n, n, a, lda, res, n); err != nil {
		return 0, err
	}
	t := NoTrans // A − L·Lᵀ
	if uplo == Upper {
		t = Trans // A − Uᵀ·U
	}
	if err := i.Dsyrk(uplo, t, n, n, -1, w, n, 1, res, n); err != nil {
		return 0, err
	}
	na := symFrobenius(uplo, n, a, lda)
	if na == 0 {
		return symFrobenius(uplo, n, res, n), nil
	}
	return symFrobenius(uplo, n, res, n) / na, nil
}
