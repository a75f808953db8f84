package blas

import (
	"fmt"
	"math"
)

// The checks below are what keeps a backend from reading or writing outside
// the caller's slices: OpenBLAS trusts its arguments completely.

// span is how many elements a column-major rows×cols matrix with leading
// dimension ld occupies from its first element.
func span(rows, cols, ld int) int {
	if rows == 0 || cols == 0 {
		return 0
	}
	return ld*(cols-1) + rows
}

func badf(routine, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrBadArgument, routine, fmt.Sprintf(format, args...))
}

// checkDims rejects negative dimensions and those the 32-bit BLAS integer
// cannot hold.
func checkDims(routine string, names string, dims ...int) error {
	for i, d := range dims {
		if d < 0 || d > math.MaxInt32 {
			return badf(routine, "%c=%d out of range [0, %d]", names[i], d, math.MaxInt32)
		}
	}
	return nil
}

// checkMatrix checks one column-major operand: its leading dimension and
// that the slice covers rows×cols.
func checkMatrix(routine, name string, rows, cols int, s []float64, ld int) error {
	if ld < max(1, rows) || ld > math.MaxInt32 {
		return badf(routine, "ld%s=%d, want at least max(1,%d)", name, ld, rows)
	}
	if need := span(rows, cols, ld); len(s) < need {
		return badf(routine, "%s has %d elements, a %d×%d matrix with ld%s=%d needs %d", name, len(s), rows, cols, name, ld, need)
	}
	return nil
}

func checkTrans(routine, name string, t Transpose) error {
	if t != NoTrans && t != Trans {
		return badf(routine, "%s=%q, want 'N' or 'T'", name, rune(t))
	}
	return nil
}

func checkUplo(routine string, u Uplo, allowAll bool) error {
	if u == Lower || u == Upper || (allowAll && u == All) {
		return nil
	}
	if allowAll {
		return badf(routine, "uplo=%q, want 'L', 'U' or 'A'", rune(u))
	}
	return badf(routine, "uplo=%q, want 'L' or 'U'", rune(u))
}

// opShape is the stored shape of a matrix whose op() is rows×cols.
func opShape(t Transpose, rows, cols int) (int, int) {
	if t == NoTrans {
		return rows, cols
	}
	return cols, rows
}

func checkGemm(tA, tB Transpose, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) error {
	const r = "Dgemm"
	if err := checkTrans(r, "tA", tA); err != nil {
		return err
	}
	if err := checkTrans(r, "tB", tB); err != nil {
		return err
	}
	if err := checkDims(r, "mnk", m, n, k); err != nil {
		return err
	}
	ar, ac := opShape(tA, m, k)
	if err := checkMatrix(r, "a", ar, ac, a, lda); err != nil {
		return err
	}
	br, bc := opShape(tB, k, n)
	if err := checkMatrix(r, "b", br, bc, b, ldb); err != nil {
		return err
	}
	return checkMatrix(r, "c", m, n, c, ldc)
}

func checkTrsm(side Side, uplo Uplo, tA Transpose, diag Diag, m, n int, a []float64, lda int, b []float64, ldb int) error {
	return checkTriangular("Dtrsm", side, uplo, tA, diag, m, n, a, lda, b, ldb)
}

// checkTriangular checks the arguments of Dtrsm and Dtrmm, which are the same.
func checkTriangular(r string, side Side, uplo Uplo, tA Transpose, diag Diag, m, n int, a []float64, lda int, b []float64, ldb int) error {
	if side != Left && side != Right {
		return badf(r, "side=%q, want 'L' or 'R'", rune(side))
	}
	if err := checkUplo(r, uplo, false); err != nil {
		return err
	}
	if err := checkTrans(r, "tA", tA); err != nil {
		return err
	}
	if diag != NonUnit && diag != Unit {
		return badf(r, "diag=%q, want 'N' or 'U'", rune(diag))
	}
	if err := checkDims(r, "mn", m, n); err != nil {
		return err
	}
	na := m
	if side == Right {
		na = n
	}
	if err := checkMatrix(r, "a", na, na, a, lda); err != nil {
		return err
	}
	return checkMatrix(r, "b", m, n, b, ldb)
}

func checkTrtri(uplo Uplo, diag Diag, n int, a []float64, lda int) error {
	const r = "Dtrtri"
	if err := checkUplo(r, uplo, false); err != nil {
		return err
	}
	if diag != NonUnit && diag != Unit {
		return badf(r, "diag=%q, want 'N' or 'U'", rune(diag))
	}
	if err := checkDims(r, "n", n); err != nil {
		return err
	}
	return checkMatrix(r, "a", n, n, a, lda)
}

func checkSyrk(uplo Uplo, t Transpose, n, k int, a []float64, lda int, c []float64, ldc int) error {
	const r = "Dsyrk"
	if err := checkUplo(r, uplo, false); err != nil {
		return err
	}
	if err := checkTrans(r, "t", t); err != nil {
		return err
	}
	if err := checkDims(r, "nk", n, k); err != nil {
		return err
	}
	ar, ac := opShape(t, n, k)
	if err := checkMatrix(r, "a", ar, ac, a, lda); err != nil {
		return err
	}
	return checkMatrix(r, "c", n, n, c, ldc)
}

func checkPotrf(uplo Uplo, n int, a []float64, lda int) error {
	const r = "Dpotrf"
	if err := checkUplo(r, uplo, false); err != nil {
		return err
	}
	if err := checkDims(r, "n", n); err != nil {
		return err
	}
	return checkMatrix(r, "a", n, n, a, lda)
}

// scale multiplies the uplo part of the m×n matrix A by beta, writing zeros
// (without reading A) when beta is 0, as BLAS does for C when alpha·op(A)·op(B)
// vanishes.
func scale(uplo Uplo, m, n int, beta float64, a []float64, lda int) {
	if beta == 1 {
		return
	}
	for j := 0; j < n; j++ {
		lo, hi := rowRange(uplo, j, m)
		col := a[j*lda+lo : j*lda+hi]
		if beta == 0 {
			clear(col)
			continue
		}
		for i := range col {
			col[i] *= beta
		}
	}
}

// rowRange is the half-open range of rows of column j that belong to the
// uplo part of an m-row matrix.
func rowRange(uplo Uplo, j, m int) (lo, hi int) {
	switch uplo {
	case Lower:
		return min(j, m), m
	case Upper:
		return 0, min(j+1, m)
	default:
		return 0, m
	}
}
