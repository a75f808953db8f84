package blas

import "fmt"

// The LAPACK tile kernels of a tile QR (Dgeqrt, Dtpqrt and their applies
// Dgemqrt, Dtpmqrt), a tile LU (Dgetrf, DgetrfNoPiv, Dlaswp) and triangular
// inverses (Dlauum, with Dtrtri). Their arguments are LAPACK's, column-major,
// with two differences that suit tiles: an inner block size ib larger than
// the number of reflectors is taken as that number (so ragged edge tiles need
// no special case, as long as the factorization and the apply get the same
// ib), and pivots are 0-based Go ints.
//
// The QR routines take a work slice so that a task body can hand them
// per-worker scratch memory: with work given, a call allocates nothing.
// A nil work makes the routine allocate its own.

// GeqrtWork is the length of work that Dgeqrt and Dtpqrt need for an
// n-column tile with inner block size ib: ib·n.
func GeqrtWork(n, ib int) int { return ib * n }

// GemqrtWork is the length of work that Dgemqrt and Dtpmqrt need to apply a
// Q with inner block size ib to an m×n tile: ib·n from the Left, ib·m from
// the Right.
func GemqrtWork(side Side, m, n, ib int) int {
	if side == Right {
		return ib * m
	}
	return ib * n
}

// Dgeqrt computes the QR factorization of the m×n tile A with inner block
// size ib (LAPACK's dgeqrt with NB = ib): R in the upper triangle, the
// Householder vectors below it (unit diagonal implied), and in T (ib ×
// min(m,n), ldt >= ib) the upper triangular factors of the block reflectors,
// one ib×ib block per ib columns. work has at least GeqrtWork(n, ib)
// elements, or is nil.
func (i *Impl) Dgeqrt(m, n, ib int, a []float64, lda int, t []float64, ldt int, work []float64) error {
	const r = "Dgeqrt"
	if err := checkDims(r, "mn", m, n); err != nil {
		return err
	}
	k := min(m, n)
	ib, err := innerBlock(r, ib, k)
	if err != nil {
		return err
	}
	if err := checkMatrix(r, "a", m, n, a, lda); err != nil {
		return err
	}
	if err := checkMatrix(r, "t", ib, k, t, ldt); err != nil {
		return err
	}
	if work, err = workSlice(r, work, ib*n); err != nil || k == 0 {
		return err
	}
	return lapackInfo(r, i.name, i.k.dgeqrt(m, n, ib, a, lda, t, ldt, work))
}

// Dtpqrt computes the QR factorization of the triangle-pentagon [A; B]
// (LAPACK's dtpqrt): A is n×n upper triangular, B is m×n with its last l
// rows upper trapezoidal (l = 0: B is rectangular, DPLASMA's tsqrt; l = n =
// m: B is upper triangular, its ttqrt). R overwrites A's upper triangle,
// the Householder vectors overwrite B's pentagon, and T (ib×n, ldt >= ib)
// receives the block reflectors' factors. work has at least GeqrtWork(n,
// ib) elements, or is nil. As in LAPACK, m = 0 returns at once without
// writing T.
func (i *Impl) Dtpqrt(m, n, l, ib int, a []float64, lda int, b []float64, ldb int, t []float64, ldt int, work []float64) error {
	const r = "Dtpqrt"
	if err := checkDims(r, "mnl", m, n, l); err != nil {
		return err
	}
	if l > min(m, n) {
		return badf(r, "l=%d, want at most min(m,n)=%d", l, min(m, n))
	}
	ib, err := innerBlock(r, ib, n)
	if err != nil {
		return err
	}
	if err := checkMatrix(r, "a", n, n, a, lda); err != nil {
		return err
	}
	if err := checkMatrix(r, "b", m, n, b, ldb); err != nil {
		return err
	}
	if err := checkMatrix(r, "t", ib, n, t, ldt); err != nil {
		return err
	}
	if work, err = workSlice(r, work, ib*n); err != nil || m == 0 || n == 0 {
		return err
	}
	return lapackInfo(r, i.name, i.k.dtpqrt(m, n, l, ib, a, lda, b, ldb, t, ldt, work))
}

// Dgemqrt overwrites the m×n matrix C with op(Q)·C (side Left) or C·op(Q)
// (side Right), where Q is the product of the k reflectors that Dgeqrt left
// in V (m×k for Left, n×k for Right) and T, with the same ib (LAPACK's
// dgemqrt). work has at least GemqrtWork(side, m, n, ib) elements, or is
// nil.
func (i *Impl) Dgemqrt(side Side, trans Transpose, m, n, k, ib int, v []float64, ldv int, t []float64, ldt int, c []float64, ldc int, work []float64) error {
	const r = "Dgemqrt"
	q, err := checkSideTrans(r, side, trans, m, n)
	if err != nil {
		return err
	}
	if err := checkDims(r, "mnk", m, n, k); err != nil {
		return err
	}
	if k > q {
		return badf(r, "k=%d reflectors, but Q has order %d", k, q)
	}
	if ib, err = innerBlock(r, ib, k); err != nil {
		return err
	}
	if err := checkMatrix(r, "v", q, k, v, ldv); err != nil {
		return err
	}
	if err := checkMatrix(r, "t", ib, k, t, ldt); err != nil {
		return err
	}
	if err := checkMatrix(r, "c", m, n, c, ldc); err != nil {
		return err
	}
	if work, err = workSlice(r, work, GemqrtWork(side, m, n, ib)); err != nil || m == 0 || n == 0 || k == 0 {
		return err
	}
	return lapackInfo(r, i.name, i.k.dgemqrt(side, trans, m, n, k, ib, v, ldv, t, ldt, c, ldc, work))
}

// Dtpmqrt applies op(Q), where Q is the product of the k reflectors that
// Dtpqrt left in V and T (same ib and l), to the pair A, B (LAPACK's
// dtpmqrt; DPLASMA's tsmqr is l = 0). Side Left overwrites [A; B] with
// op(Q)·[A; B], A k×n and B m×n, V m×k; side Right overwrites [A B] with
// [A B]·op(Q), A m×k and B m×n, V n×k. The last l rows of V are upper
// trapezoidal. work has at least GemqrtWork(side, m, n, ib) elements, or is
// nil.
func (i *Impl) Dtpmqrt(side Side, trans Transpose, m, n, k, l, ib int, v []float64, ldv int, t []float64, ldt int, a []float64, lda int, b []float64, ldb int, work []float64) error {
	const r = "Dtpmqrt"
	q, err := checkSideTrans(r, side, trans, m, n)
	if err != nil {
		return err
	}
	if err := checkDims(r, "mnkl", m, n, k, l); err != nil {
		return err
	}
	if l > min(k, q) {
		return badf(r, "l=%d, want at most min(k,%d)=%d", l, q, min(k, q))
	}
	if ib, err = innerBlock(r, ib, k); err != nil {
		return err
	}
	if err := checkMatrix(r, "v", q, k, v, ldv); err != nil {
		return err
	}
	if err := checkMatrix(r, "t", ib, k, t, ldt); err != nil {
		return err
	}
	ar, ac := k, n
	if side == Right {
		ar, ac = m, k
	}
	if err := checkMatrix(r, "a", ar, ac, a, lda); err != nil {
		return err
	}
	if err := checkMatrix(r, "b", m, n, b, ldb); err != nil {
		return err
	}
	if work, err = workSlice(r, work, GemqrtWork(side, m, n, ib)); err != nil || m == 0 || n == 0 || k == 0 {
		return err
	}
	return lapackInfo(r, i.name, i.k.dtpmqrt(side, trans, m, n, k, l, ib, v, ldv, t, ldt, a, lda, b, ldb, work))
}

// Dgetrf computes the LU factorization with partial pivoting of the m×n
// matrix A in place: A = P·L·U, L unit lower trapezoidal below the
// diagonal, U upper trapezoidal. ipiv (at least min(m,n) elements) receives
// 0-based pivots, as gonum's: row i was interchanged with row ipiv[i]. An
// exactly zero pivot gives an error wrapping ErrSingular that names its
// column; the factorization is still complete, as with LAPACK's info > 0.
func (i *Impl) Dgetrf(m, n int, a []float64, lda int, ipiv []int) error {
	const r = "Dgetrf"
	if err := checkDims(r, "mn", m, n); err != nil {
		return err
	}
	if err := checkMatrix(r, "a", m, n, a, lda); err != nil {
		return err
	}
	mn := min(m, n)
	if len(ipiv) < mn {
		return badf(r, "ipiv has %d elements, want at least min(m,n)=%d", len(ipiv), mn)
	}
	if mn == 0 {
		return nil
	}
	return luInfo(r, i.name, i.k.dgetrf(m, n, a, lda, ipiv[:mn]))
}

// DgetrfNoPiv computes the LU factorization of the m×n matrix A without
// pivoting, A = L·U, for diagonally dominant or already pivoted tiles. It
// is blocked, right-looking, with its updates in the backend's Dtrsm and
// Dgemm. An exactly zero pivot gives an error wrapping ErrSingular that
// names its column; the later columns are then computed from the unscaled
// one, as Dgetrf does, and are not meaningful.
func (i *Impl) DgetrfNoPiv(m, n int, a []float64, lda int) error {
	const r = "DgetrfNoPiv"
	if err := checkDims(r, "mn", m, n); err != nil {
		return err
	}
	if err := checkMatrix(r, "a", m, n, a, lda); err != nil {
		return err
	}
	if min(m, n) == 0 {
		return nil
	}
	return luInfo(r, i.name, blockedGetrf(i.k, m, n, a, lda, nil))
}

// Dlaswp applies the row interchanges ipiv[k1..k2] (0-based, inclusive) to
// the n columns of A, as gonum's Dlaswp and LAPACK's dlaswp: row i is
// swapped with row ipiv[i], for i from k1 up to k2 (incx 1) or from k2 down
// to k1 (incx -1, which undoes the interchanges). A must have at least
// max(k2, ipiv[k1..k2]) + 1 rows.
func (i *Impl) Dlaswp(n int, a []float64, lda int, k1, k2 int, ipiv []int, incx int) error {
	const r = "Dlaswp"
	if err := checkDims(r, "n", n); err != nil {
		return err
	}
	if incx != 1 && incx != -1 {
		return badf(r, "incx=%d, want 1 or -1", incx)
	}
	if k1 < 0 || k2 < k1 || k2 >= len(ipiv) {
		return badf(r, "k1=%d, k2=%d with %d pivots, want 0 <= k1 <= k2 < len(ipiv)", k1, k2, len(ipiv))
	}
	rows := k2 + 1
	for j, p := range ipiv[k1 : k2+1] {
		if p < 0 || p >= maxBLASInt {
			return badf(r, "ipiv[%d]=%d is not a row index", k1+j, p)
		}
		rows = max(rows, p+1)
	}
	if err := checkMatrix(r, "a", rows, n, a, lda); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	i.k.dlaswp(n, a, lda, k1, k2, ipiv, incx)
	return nil
}

// Dlauum overwrites the uplo triangle of the n×n matrix A with U·Uᵀ (uplo
// Upper, U the upper triangle of A) or Lᵀ·L (uplo Lower), LAPACK's dlauum;
// the other triangle is not touched. With Dtrtri it inverts a Cholesky
// factorization: inv(A) = inv(L)ᵀ·inv(L).
func (i *Impl) Dlauum(uplo Uplo, n int, a []float64, lda int) error {
	const r = "Dlauum"
	if err := checkUplo(r, uplo, false); err != nil {
		return err
	}
	if err := checkDims(r, "n", n); err != nil {
		return err
	}
	if err := checkMatrix(r, "a", n, n, a, lda); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	return lapackInfo(r, i.name, i.k.dlauum(uplo, n, a, lda))
}

// maxBLASInt bounds every index handed to the 32-bit BLAS integer.
const maxBLASInt = 1<<31 - 1

// innerBlock checks ib >= 1 and cuts it to the number of reflectors k, so
// that LAPACK's 1 <= ib <= k holds whenever k > 0.
func innerBlock(routine string, ib, k int) (int, error) {
	if ib < 1 {
		return 0, badf(routine, "ib=%d, want at least 1", ib)
	}
	return min(ib, k), nil
}

// workSlice returns work, or a new slice of need elements when work is nil.
func workSlice(routine string, work []float64, need int) ([]float64, error) {
	if work == nil {
		return make([]float64, need), nil
	}
	if len(work) < need {
		return nil, badf(routine, "work has %d elements, want at least %d", len(work), need)
	}
	return work, nil
}

// checkSideTrans checks side and trans and returns the order of Q.
func checkSideTrans(routine string, side Side, trans Transpose, m, n int) (int, error) {
	if err := checkTrans(routine, "trans", trans); err != nil {
		return 0, err
	}
	switch side {
	case Left:
		return m, nil
	case Right:
		return n, nil
	}
	return 0, badf(routine, "side=%q, want 'L' or 'R'", rune(side))
}

// lapackInfo turns a LAPACK info into an error. After the checks above a
// backend has no reason to reject an argument; if one does, the call did
// nothing and the caller must know.
func lapackInfo(routine, backend string, info int) error {
	if info < 0 {
		return badf(routine, "%s rejected argument %d", backend, -info)
	}
	return nil
}

// luInfo is lapackInfo for an LU, whose info > 0 is the 1-based column of
// the first zero pivot.
func luInfo(routine, backend string, info int) error {
	if info > 0 {
		return fmt.Errorf("%w: %s: the pivot U(%d,%d) (0-based) is exactly zero", ErrSingular, routine, info-1, info-1)
	}
	return lapackInfo(routine, backend, info)
}

// Dgeqrt is Impl.Dgeqrt on the Default backend.
func Dgeqrt(m, n, ib int, a []float64, lda int, t []float64, ldt int, work []float64) error {
	impl, err := Default()
	if err != nil {
		return err
	}
	return impl.Dgeqrt(m, n, ib, a, lda, t, ldt, work)
}

// Dtpqrt is Impl.Dtpqrt on the Default backend.
func Dtpqrt(m, n, l, ib int, a []float64, lda int, b []float64, ldb int, t []float64, ldt int, work []float64) error {
	impl, err := Default()
	if err != nil {
		return err
	}
	return impl.Dtpqrt(m, n, l, ib, a, lda, b, ldb, t, ldt, work)
}

// Dgemqrt is Impl.Dgemqrt on the Default backend.
func Dgemqrt(side Side, trans Transpose, m, n, k, ib int, v []float64, ldv int, t []float64, ldt int, c []float64, ldc int, work []float64) error {
	impl, err := Default()
	if err != nil {
		return err
	}
	return impl.Dgemqrt(side, trans, m, n, k, ib, v, ldv, t, ldt, c, ldc, work)
}

// Dtpmqrt is Impl.Dtpmqrt on the Default backend.
func Dtpmqrt(side Side, trans Transpose, m, n, k, l, ib int, v []float64, ldv int, t []float64, ldt int, a []float64, lda int, b []float64, ldb int, work []float64) error {
	impl, err := Default()
	if err != nil {
		return err
	}
	return impl.Dtpmqrt(side, trans, m, n, k, l, ib, v, ldv, t, ldt, a, lda, b, ldb, work)
}

// Dgetrf is Impl.Dgetrf on the Default backend.
func Dgetrf(m, n int, a []float64, lda int, ipiv []int) error {
	impl, err := Default()
	if err != nil {
		return err
	}
	return impl.Dgetrf(m, n, a, lda, ipiv)
}

// DgetrfNoPiv is Impl.DgetrfNoPiv on the Default backend.
func DgetrfNoPiv(m, n int, a []float64, lda int) error {
	impl, err := Default()
	if err != nil {
		return err
	}
	return impl.DgetrfNoPiv(m, n, a, lda)
}

// Dlaswp is Impl.Dlaswp on the Default backend.
func Dlaswp(n int, a []float64, lda int, k1, k2 int, ipiv []int, incx int) error {
	impl, err := Default()
	if err != nil {
		return err
	}
	return impl.Dlaswp(n, a, lda, k1, k2, ipiv, incx)
}

// Dlauum is Impl.Dlauum on the Default backend.
func Dlauum(uplo Uplo, n int, a []float64, lda int) error {
	impl, err := Default()
	if err != nil {
		return err
	}
	return impl.Dlauum(uplo, n, a, lda)
}
