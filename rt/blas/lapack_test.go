package blas

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The QR kernels are checked by what they promise: Q, formed explicitly by
// applying it to the identity, is orthogonal and Q·R gives A back; every
// other apply (Qᵀ, from the right, on ragged operands) agrees with a
// product by that Q. The backends are also compared with each other.

type qrShape struct{ m, n, ib int }

// geqrtShapes: square, m > n, m < n, ib not dividing n, ib = 1, ib = n and
// ib above min(m,n).
var geqrtShapes = []qrShape{
	{1, 1, 1}, {7, 7, 3}, {7, 3, 2}, {3, 7, 2}, {32, 32, 32}, {50, 50, 7}, {64, 64, 16},
	{70, 50, 32}, {50, 70, 32}, {65, 65, 1}, {33, 20, 20}, {20, 5, 40}, {130, 100, 32},
}

type tpShape struct{ m, n, l, ib int }

// tpqrtShapes: l = 0 (tsqrt), l = m = n (ttqrt) and pentagons in between,
// with the same raggedness as geqrtShapes.
var tpqrtShapes = []tpShape{
	{1, 1, 0, 1}, {1, 1, 1, 1}, {7, 7, 0, 3}, {50, 32, 0, 8}, {5, 20, 0, 4}, {64, 64, 0, 64},
	{70, 64, 0, 32}, {7, 7, 7, 3}, {32, 32, 32, 8}, {50, 50, 50, 1}, {20, 20, 20, 32},
	{40, 30, 10, 7}, {30, 40, 20, 16},
}

func identity(n int) []float64 {
	id := make([]float64, n*n)
	for i := 0; i < n; i++ {
		id[i+i*n] = 1
	}
	return id
}

// upperPart is the m×n upper trapezoid of A with zeros below, ld m.
func upperPart(m, n int, a []float64, lda int) []float64 {
	r := make([]float64, m*n)
	for j := 0; j < n; j++ {
		for i := 0; i <= j && i < m; i++ {
			r[i+j*m] = a[i+j*lda]
		}
	}
	return r
}

// relResidual is ‖X − Y‖_F / ‖Y‖_F (‖X − Y‖_F when Y is zero).
func relResidual(m, n int, x []float64, ldx int, y []float64, ldy int) float64 {
	d := make([]float64, m*n)
	for j := 0; j < n; j++ {
		for i := 0; i < m; i++ {
			d[i+j*m] = x[i+j*ldx] - y[i+j*ldy]
		}
	}
	nd, _ := Dlange(Frobenius, m, n, d, m)
	ny, _ := Dlange(Frobenius, m, n, y, ldy)
	if math.IsNaN(nd) {
		return math.Inf(1)
	}
	if ny == 0 {
		return nd
	}
	return nd / ny
}

// checkOrthogonal checks ‖I − QᵀQ‖_F for the n×n matrix Q.
func checkOrthogonal(t *testing.T, name string, n int, q []float64, tol float64) {
	t.Helper()
	qtq := identity(n)
	refGemm(Trans, NoTrans, n, n, n, -1, q, n, q, n, 1, qtq, n)
	if d, _ := Dlange(Frobenius, n, n, qtq, n); !(d <= tol) {
		t.Errorf("%s: ‖I − QᵀQ‖ = %.3g", name, d)
	}
}

func qrTol(dims ...int) float64 { return 1e-14 * float64(slices.Max(dims)+1) }

func testGeqrt(t *testing.T, impl *Impl) {
	rng := rand.New(rand.NewPCG(21, 21))
	for _, s := range geqrtShapes {
		m, n, ib := s.m, s.n, s.ib
		k := min(m, n)
		name := fmt.Sprintf("%s/%dx%d/ib=%d", impl.Name(), m, n, ib)
		tol := qrTol(m, n)
		lda, ldt := m+3, ib+1
		a := randMatrix(rng, m, n, lda)
		f := slices.Clone(a)
		tt := make([]float64, span(ib, k, ldt))
		if err := impl.Dgeqrt(m, n, ib, f, lda, tt, ldt, make([]float64, GeqrtWork(n, ib))); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkPadding(t, name, m, n, f, a, lda)
		q := identity(m)
		if err := impl.Dgemqrt(Left, NoTrans, m, m, k, ib, f, lda, tt, ldt, q, m, make([]float64, GemqrtWork(Left, m, m, ib))); err != nil {
			t.Fatalf("%s: forming Q: %v", name, err)
		}
		checkOrthogonal(t, name, m, q, tol)
		r := upperPart(m, n, f, lda)
		qr := make([]float64, m*n)
		refGemm(NoTrans, NoTrans, m, n, m, 1, q, m, r, m, 0, qr, m)
		if res := relResidual(m, n, qr, m, a, lda); !(res <= tol) {
			t.Errorf("%s: ‖A − QR‖/‖A‖ = %.3g", name, res)
		}
		// Qᵀ·A = R, the update geqrt's own trailing columns get.
		qta := slices.Clone(a)
		if err := impl.Dgemqrt(Left, Trans, m, n, k, ib, f, lda, tt, ldt, qta, lda, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res := relResidual(m, n, qta, lda, r, m); !(res <= tol) {
			t.Errorf("%s: ‖QᵀA − R‖/‖R‖ = %.3g", name, res)
		}
		checkApplies(t, name, impl, rng, m, tol, q, func(side Side, trans Transpose, rows, cols int, c []float64, ldc int, work []float64) error {
			return impl.Dgemqrt(side, trans, rows, cols, k, ib, f, lda, tt, ldt, c, ldc, work)
		})
	}
}

// applyFunc applies op(Q) to the rows×cols matrix C from the given side.
type applyFunc func(side Side, trans Transpose, rows, cols int, c []float64, ldc int, work []float64) error

// checkApplies checks all four applies of an order-q Q to ragged operands
// against products by the explicit Q: op(Q)·C with C q×4 and C·op(Q) with
// C 5×q.
func checkApplies(t *testing.T, name string, impl *Impl, rng *rand.Rand, q int, tol float64, qm []float64, apply applyFunc) {
	t.Helper()
	for _, side := range []Side{Left, Right} {
		for _, trans := range transposes {
			rows, cols := q, 4
			if side == Right {
				rows, cols = 5, q
			}
			ldc := rows + 1
			c := randMatrix(rng, rows, cols, ldc)
			got := slices.Clone(c)
			if err := apply(side, trans, rows, cols, got, ldc, make([]float64, GemqrtWork(side, rows, cols, 64))); err != nil {
				t.Fatalf("%s %c%c: %v", name, side, trans, err)
			}
			want := make([]float64, rows*cols)
			if side == Left {
				refGemm(trans, NoTrans, rows, cols, q, 1, qm, q, c, ldc, 0, want, rows)
			} else {
				refGemm(NoTrans, trans, rows, cols, q, 1, c, ldc, qm, q, 0, want, rows)
			}
			if res := relResidual(rows, cols, got, ldc, want, rows); !(res <= tol) {
				t.Errorf("%s %c%c: apply differs from the explicit product by %.3g", name, side, trans, res)
			}
			checkPadding(t, name, rows, cols, got, c, ldc)
		}
	}
}

// pentagon returns A (n×n upper triangular) and B (m×n, last l rows upper
// trapezoidal) with NaN in every element the routines must not read, and
// the explicit (n+m)×n matrix [A; B] with zeros there.
func pentagon(rng *rand.Rand, m, n, l, lda, ldb int) (a, b, full []float64) {
	a, b = randMatrix(rng, n, n, lda), randMatrix(rng, m, n, ldb)
	nm := n + m
	full = make([]float64, nm*n)
	for j := 0; j < n; j++ {
		for i := 0; i < n; i++ {
			if i > j {
				a[i+j*lda] = math.NaN()
			} else {
				full[i+j*nm] = a[i+j*lda]
			}
		}
		for i := 0; i < m; i++ {
			if r := i - (m - l); r > j { // below the trapezoid
				b[i+j*ldb] = math.NaN()
			} else {
				full[n+i+j*nm] = b[i+j*ldb]
			}
		}
	}
	return a, b, full
}

func testTpqrt(t *testing.T, impl *Impl) {
	rng := rand.New(rand.NewPCG(22, 22))
	for _, s := range tpqrtShapes {
		m, n, l, ib := s.m, s.n, s.l, s.ib
		nm := n + m
		name := fmt.Sprintf("%s/%dx%d/l=%d/ib=%d", impl.Name(), m, n, l, ib)
		tol := qrTol(nm)
		lda, ldb, ldt := n+2, m+1, ib+2
		a, b, full := pentagon(rng, m, n, l, lda, ldb)
		fa, fb := slices.Clone(a), slices.Clone(b)
		tt := make([]float64, span(min(ib, n), n, ldt))
		if err := impl.Dtpqrt(m, n, l, ib, fa, lda, fb, ldb, tt, ldt, make([]float64, GeqrtWork(n, ib))); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkPadding(t, name, n, n, fa, a, lda)
		checkPadding(t, name, m, n, fb, b, ldb)
		for j := 0; j < n; j++ {
			for i := j + 1; i < n; i++ {
				if !math.IsNaN(fa[i+j*lda]) {
					t.Fatalf("%s: A(%d,%d) below the triangle was written", name, i, j)
				}
			}
			for i := 0; i < m; i++ {
				if math.IsNaN(b[i+j*ldb]) != math.IsNaN(fb[i+j*ldb]) {
					t.Fatalf("%s: B(%d,%d) is NaN before %v, after %v: outside the pentagon written or NaN read", name, i, j, b[i+j*ldb], fb[i+j*ldb])
				}
			}
		}
		// Q explicitly: Q·I, with I split as [rows 0..n−1; rows n..n+m−1].
		qa, qb := make([]float64, n*nm), make([]float64, m*nm)
		for i := 0; i < nm; i++ {
			if i < n {
				qa[i+i*n] = 1
			} else {
				qb[i-n+i*m] = 1
			}
		}
		if err := impl.Dtpmqrt(Left, NoTrans, m, nm, n, l, ib, fb, ldb, tt, ldt, qa, n, qb, m, make([]float64, GemqrtWork(Left, m, nm, ib))); err != nil {
			t.Fatalf("%s: forming Q: %v", name, err)
		}
		q := make([]float64, nm*nm)
		for j := 0; j < nm; j++ {
			copy(q[j*nm:j*nm+n], qa[j*n:j*n+n])
			copy(q[j*nm+n:j*nm+nm], qb[j*m:j*m+m])
		}
		checkOrthogonal(t, name, nm, q, tol)
		r := upperPart(n, n, fa, lda)
		qr := make([]float64, nm*n)
		refGemm(NoTrans, NoTrans, nm, n, n, 1, q, nm, r, n, 0, qr, nm)
		if res := relResidual(nm, n, qr, nm, full, nm); !(res <= tol) {
			t.Errorf("%s: ‖[A;B] − QR‖/‖[A;B]‖ = %.3g", name, res)
		}
		// Qᵀ·[A; B] = [R; 0], the update tpqrt's own trailing columns get.
		ma, mb := make([]float64, n*n), make([]float64, m*n)
		if err := Dlacpy(All, n, n, full, nm, ma, n); err != nil {
			t.Fatal(err)
		}
		if err := Dlacpy(All, m, n, full[n:], nm, mb, m); err != nil {
			t.Fatal(err)
		}
		if err := impl.Dtpmqrt(Left, Trans, m, n, n, l, ib, fb, ldb, tt, ldt, ma, n, mb, m, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		nr, _ := Dlange(Frobenius, n, n, r, n)
		if res := relResidual(n, n, ma, n, r, n); !(res <= tol) {
			t.Errorf("%s: Qᵀ[A;B] top differs from R by %.3g", name, res)
		}
		if nb, _ := Dlange(Frobenius, m, n, mb, m); !(nb <= tol*nr) {
			t.Errorf("%s: Qᵀ[A;B] bottom has norm %.3g, want 0", name, nb)
		}
		checkApplies(t, name, impl, rng, nm, tol, q, func(side Side, trans Transpose, rows, cols int, c []float64, ldc int, work []float64) error {
			// C is [A; B] (Left, A n rows) or [A B] (Right, A n columns);
			// both views share C's storage.
			if side == Left {
				return impl.Dtpmqrt(side, trans, rows-n, cols, n, l, ib, fb, ldb, tt, ldt, c, ldc, c[n:], ldc, work)
			}
			return impl.Dtpmqrt(side, trans, rows, cols-n, n, l, ib, fb, ldb, tt, ldt, c, ldc, c[n*ldc:], ldc, work)
		})
	}
}

func TestGonumGeqrt(t *testing.T)    { testGeqrt(t, Gonum()) }
func TestGonumTpqrt(t *testing.T)    { testTpqrt(t, Gonum()) }
func TestOpenBLASGeqrt(t *testing.T) { testGeqrt(t, openblasOrSkip(t)) }
func TestOpenBLASTpqrt(t *testing.T) { testTpqrt(t, openblasOrSkip(t)) }

// openblasGoLapack is OpenBLAS with its LAPACK entry points dropped, as a
// library built without LAPACK loads: the kernels then run the Go code on
// OpenBLAS's BLAS.
func openblasGoLapack(t *testing.T) *Impl {
	ob := openblasOrSkip(t)
	k := *ob.k.(*openblasKernels)
	k.lapackEntries = lapackEntries{}
	return &Impl{name: "openblas-go-lapack", k: &k}
}

func TestOpenBLASWithoutLapack(t *testing.T) {
	impl := openblasGoLapack(t)
	testGeqrt(t, impl)
	testTpqrt(t, impl)
	testGetrf(t, impl)
	testLaswp(t, impl)
	testLauum(t, impl)
}

// checkTriangles compares the upper triangles of T's diagonal blocks (the
// only part the routines define).
func checkTriangles(t *testing.T, name string, ib, k int, got, want []float64, ldt int) {
	t.Helper()
	var d, s float64
	for i := 0; i < k; i += ib {
		for c := i; c < min(i+ib, k); c++ {
			for r := 0; r <= c-i; r++ {
				d = math.Max(d, math.Abs(got[r+c*ldt]-want[r+c*ldt]))
				s = math.Max(s, math.Abs(want[r+c*ldt]))
			}
		}
	}
	if !(d <= 1e-12*math.Max(1, s)) {
		t.Errorf("%s: T differs by %.3g", name, d)
	}
}

// Both backends follow LAPACK's sign conventions (dlarfg's β = −sign(α)·‖x‖),
// so their factors agree up to rounding.
func TestOpenBLASQRMatchesGonum(t *testing.T) {
	ob := openblasOrSkip(t)
	rng := rand.New(rand.NewPCG(23, 23))
	for _, s := range geqrtShapes {
		m, n, ib := s.m, s.n, s.ib
		k, lda, ldt := min(m, n), m+1, ib
		name := fmt.Sprintf("geqrt/%dx%d/ib=%d", m, n, ib)
		a := randMatrix(rng, m, n, lda)
		fg, fo := slices.Clone(a), slices.Clone(a)
		tg, to := make([]float64, span(ib, k, ldt)), make([]float64, span(ib, k, ldt))
		if err := Gonum().Dgeqrt(m, n, ib, fg, lda, tg, ldt, nil); err != nil {
			t.Fatal(err)
		}
		if err := ob.Dgeqrt(m, n, ib, fo, lda, to, ldt, nil); err != nil {
			t.Fatal(err)
		}
		if d := maxDiff(m, n, fo, lda, fg, lda); d > 1e-12 {
			t.Errorf("%s: factors differ by %.3g", name, d)
		}
		checkTriangles(t, name, min(ib, k), k, to, tg, ldt)
	}
	for _, s := range tpqrtShapes {
		m, n, l, ib := s.m, s.n, s.l, s.ib
		lda, ldb, ldt := n, m, ib
		name := fmt.Sprintf("tpqrt/%dx%d/l=%d/ib=%d", m, n, l, ib)
		a, b, _ := pentagon(rng, m, n, l, lda, ldb)
		ag, bg, ao, bo := slices.Clone(a), slices.Clone(b), slices.Clone(a), slices.Clone(b)
		tg, to := make([]float64, span(ib, n, ldt)), make([]float64, span(ib, n, ldt))
		if err := Gonum().Dtpqrt(m, n, l, ib, ag, lda, bg, ldb, tg, ldt, nil); err != nil {
			t.Fatal(err)
		}
		if err := ob.Dtpqrt(m, n, l, ib, ao, lda, bo, ldb, to, ldt, nil); err != nil {
			t.Fatal(err)
		}
		if d := maxDiff(n, n, upperPart(n, n, ao, lda), n, upperPart(n, n, ag, lda), n); d > 1e-12 {
			t.Errorf("%s: R differs by %.3g", name, d)
		}
		for i := range bo {
			if !math.IsNaN(b[i]) && math.Abs(bo[i]-bg[i]) > 1e-12*math.Max(1, math.Abs(bg[i])) {
				t.Errorf("%s: V differs at %d: %g against %g", name, i, bo[i], bg[i])
				break
			}
		}
		checkTriangles(t, name, min(ib, n), n, to, tg, ldt)
	}
}

func testGetrf(t *testing.T, impl *Impl) {
	rng := rand.New(rand.NewPCG(24, 24))
	for _, sh := range [][2]int{{1, 1}, {7, 7}, {7, 3}, {3, 7}, {64, 64}, {65, 65}, {130, 70}, {70, 130}, {200, 200}} {
		m, n := sh[0], sh[1]
		mn := min(m, n)
		lda := m + 2
		tol := 1e-14 * float64(max(m, n))
		name := fmt.Sprintf("%s/%dx%d", impl.Name(), m, n)
		a := randMatrix(rng, m, n, lda)
		f := slices.Clone(a)
		ipiv := make([]int, mn+1)
		ipiv[mn] = -7 // past min(m,n): not written
		if err := impl.Dgetrf(m, n, f, lda, ipiv); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkPadding(t, name, m, n, f, a, lda)
		if ipiv[mn] != -7 {
			t.Errorf("%s: ipiv[%d] written", name, mn)
		}
		// P·A by explicit row swaps, in order.
		pa := slices.Clone(a)
		for i, p := range ipiv[:mn] {
			if p < i || p >= m {
				t.Fatalf("%s: ipiv[%d] = %d out of [%d, %d)", name, i, p, i, m)
			}
			for j := 0; j < n; j++ {
				pa[i+j*lda], pa[p+j*lda] = pa[p+j*lda], pa[i+j*lda]
			}
		}
		if res := luResidual(m, n, pa, lda, f, lda); !(res <= tol) {
			t.Errorf("%s: ‖PA − LU‖/‖A‖ = %.3g", name, res)
		}
		for j := 0; j < mn; j++ {
			for i := j + 1; i < m; i++ {
				if math.Abs(f[i+j*lda]) > 1 {
					t.Fatalf("%s: |L(%d,%d)| = %g > 1 with partial pivoting", name, i, j, f[i+j*lda])
				}
			}
		}
		// Without pivoting, on a diagonally dominant matrix.
		dd := slices.Clone(a)
		for i := 0; i < mn; i++ {
			dd[i+i*lda] += float64(max(m, n))
		}
		f = slices.Clone(dd)
		if err := impl.DgetrfNoPiv(m, n, f, lda); err != nil {
			t.Fatalf("%s: no pivoting: %v", name, err)
		}
		if res := luResidual(m, n, dd, lda, f, lda); !(res <= tol) {
			t.Errorf("%s: no pivoting: ‖A − LU‖/‖A‖ = %.3g", name, res)
		}
	}
}

// luResidual is ‖A − L·U‖_F/‖A‖_F for the factors that Dgetrf left in f.
func luResidual(m, n int, a []float64, lda int, f []float64, ldf int) float64 {
	mn := min(m, n)
	l := make([]float64, m*mn)
	for j := 0; j < mn; j++ {
		l[j+j*m] = 1
		for i := j + 1; i < m; i++ {
			l[i+j*m] = f[i+j*ldf]
		}
	}
	u := upperPart(mn, n, f, ldf)
	lu := make([]float64, m*n)
	refGemm(NoTrans, NoTrans, m, n, mn, 1, l, m, u, mn, 0, lu, m)
	return relResidual(m, n, lu, m, a, lda)
}

func TestGonumGetrf(t *testing.T)    { testGetrf(t, Gonum()) }
func TestOpenBLASGetrf(t *testing.T) { testGetrf(t, openblasOrSkip(t)) }

func TestGetrfSingular(t *testing.T) {
	for _, impl := range backends(t) {
		for _, zero := range []int{0, 3, 69, 99} {
			const n = 100
			a := randMatrix(rand.New(rand.NewPCG(25, uint64(zero))), n, n, n)
			clear(a[zero*n : zero*n+n]) // a zero column stays zero through elimination
			ipiv := make([]int, n)
			err := impl.Dgetrf(n, n, a, n, ipiv)
			if !errors.Is(err, ErrSingular) {
				t.Fatalf("%s zero column %d: err = %v, want ErrSingular", impl.Name(), zero, err)
			}
			if want := fmt.Sprintf("U(%d,%d)", zero, zero); !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %q does not name %s", impl.Name(), err, want)
			}
		}
		// Without pivoting: the leading 2×2 minor [1 2; 2 4] is singular.
		a := []float64{1, 2, 5, 2, 4, 1, 3, 3, 7}
		err := impl.DgetrfNoPiv(3, 3, a, 3)
		if !errors.Is(err, ErrSingular) || !strings.Contains(err.Error(), "U(1,1)") {
			t.Errorf("%s no pivoting: err = %v, want ErrSingular naming U(1,1)", impl.Name(), err)
		}
	}
}

func testLaswp(t *testing.T, impl *Impl) {
	rng := rand.New(rand.NewPCG(26, 26))
	const m, n, lda = 10, 7, 12
	a := randMatrix(rng, m, n, lda)
	ipiv := make([]int, 9)
	for i := range ipiv {
		ipiv[i] = rng.IntN(m) // any row, above or below i
	}
	for _, c := range []struct{ k1, k2, incx int }{{0, 8, 1}, {2, 6, 1}, {3, 3, 1}, {0, 8, -1}, {2, 6, -1}} {
		name := fmt.Sprintf("%s/k=%d..%d/incx=%d", impl.Name(), c.k1, c.k2, c.incx)
		want := slices.Clone(a)
		swap := func(i int) {
			for j := 0; j < n; j++ {
				p := ipiv[i]
				want[i+j*lda], want[p+j*lda] = want[p+j*lda], want[i+j*lda]
			}
		}
		if c.incx > 0 {
			for i := c.k1; i <= c.k2; i++ {
				swap(i)
			}
		} else {
			for i := c.k2; i >= c.k1; i-- {
				swap(i)
			}
		}
		got := slices.Clone(a)
		if err := impl.Dlaswp(n, got, lda, c.k1, c.k2, ipiv, c.incx); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: rows differ from the explicit swaps", name)
		}
		// The other direction undoes it.
		if err := impl.Dlaswp(n, got, lda, c.k1, c.k2, ipiv, -c.incx); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, a) {
			t.Errorf("%s: incx=%d does not undo it", name, -c.incx)
		}
	}
}

func TestGonumLaswp(t *testing.T)    { testLaswp(t, Gonum()) }
func TestOpenBLASLaswp(t *testing.T) { testLaswp(t, openblasOrSkip(t)) }

func testLauum(t *testing.T, impl *Impl) {
	rng := rand.New(rand.NewPCG(27, 27))
	for _, n := range []int{1, 7, 64, 65, 150} {
		for _, uplo := range []Uplo{Upper, Lower} {
			name := fmt.Sprintf("%s/n=%d/%c", impl.Name(), n, uplo)
			lda := n + 2
			a := randMatrix(rng, n, n, lda)
			got := slices.Clone(a)
			if err := impl.Dlauum(uplo, n, got, lda); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			tri := triangular(uplo, NonUnit, n, a, lda)
			want := slices.Clone(a)
			prod := make([]float64, n*n)
			if uplo == Upper {
				refGemm(NoTrans, Trans, n, n, n, 1, tri, n, tri, n, 0, prod, n)
			} else {
				refGemm(Trans, NoTrans, n, n, n, 1, tri, n, tri, n, 0, prod, n)
			}
			if err := Dlacpy(uplo, n, n, prod, n, want, lda); err != nil {
				t.Fatal(err)
			}
			// One comparison covers both triangles: the product in uplo,
			// the untouched input elsewhere, and the padding.
			if d := maxDiff(n, n, got, lda, want, lda); d > 1e-14*float64(n) {
				t.Errorf("%s: differs from the product by %.3g", name, d)
			}
			checkPadding(t, name, n, n, got, want, lda)
		}
	}
}

func TestGonumLauum(t *testing.T)    { testLauum(t, Gonum()) }
func TestOpenBLASLauum(t *testing.T) { testLauum(t, openblasOrSkip(t)) }

func TestLapackBadArguments(t *testing.T) {
	s := make([]float64, 64)
	w := make([]float64, 64)
	ipiv := []int{0, 1, 2, 3}
	for _, impl := range backends(t) {
		for name, call := range map[string]func() error{
			"geqrt negative m":     func() error { return impl.Dgeqrt(-1, 2, 1, s, 1, s, 1, w) },
			"geqrt ib 0":           func() error { return impl.Dgeqrt(2, 2, 0, s, 2, s, 2, w) },
			"geqrt small lda":      func() error { return impl.Dgeqrt(4, 2, 2, s, 3, s, 2, w) },
			"geqrt short a":        func() error { return impl.Dgeqrt(8, 9, 2, s, 8, s, 2, w) },
			"geqrt small ldt":      func() error { return impl.Dgeqrt(4, 4, 2, s, 4, s, 1, w) },
			"geqrt short work":     func() error { return impl.Dgeqrt(4, 4, 2, s, 4, s, 2, w[:7]) },
			"tpqrt l > min(m,n)":   func() error { return impl.Dtpqrt(3, 2, 3, 1, s, 2, s, 3, s, 1, w) },
			"tpqrt short b":        func() error { return impl.Dtpqrt(9, 8, 0, 2, s, 8, s, 9, s, 2, w) },
			"tpqrt small lda":      func() error { return impl.Dtpqrt(2, 4, 0, 2, s, 3, s, 2, s, 2, w) },
			"tpqrt short work":     func() error { return impl.Dtpqrt(4, 4, 0, 2, s, 4, s, 4, s, 2, w[:7]) },
			"gemqrt bad side":      func() error { return impl.Dgemqrt('X', NoTrans, 2, 2, 2, 1, s, 2, s, 1, s, 2, w) },
			"gemqrt bad trans":     func() error { return impl.Dgemqrt(Left, 'C', 2, 2, 2, 1, s, 2, s, 1, s, 2, w) },
			"gemqrt k > m":         func() error { return impl.Dgemqrt(Left, NoTrans, 2, 5, 3, 1, s, 2, s, 1, s, 2, w) },
			"gemqrt right ldv":     func() error { return impl.Dgemqrt(Right, NoTrans, 2, 5, 2, 1, s, 2, s, 1, s, 2, w) },
			"gemqrt short work":    func() error { return impl.Dgemqrt(Right, Trans, 6, 2, 2, 2, s, 2, s, 2, s, 6, w[:11]) },
			"tpmqrt l > k":         func() error { return impl.Dtpmqrt(Left, Trans, 4, 2, 2, 3, 1, s, 4, s, 1, s, 2, s, 4, w) },
			"tpmqrt left a k×n":    func() error { return impl.Dtpmqrt(Left, Trans, 4, 2, 3, 0, 1, s, 4, s, 1, s, 2, s, 4, w) },
			"tpmqrt right a m×k":   func() error { return impl.Dtpmqrt(Right, Trans, 4, 2, 3, 0, 1, s, 2, s, 1, s, 3, s, 4, w) },
			"tpmqrt negative l":    func() error { return impl.Dtpmqrt(Left, Trans, 4, 2, 2, -1, 1, s, 4, s, 1, s, 2, s, 4, w) },
			"tpmqrt short work":    func() error { return impl.Dtpmqrt(Left, Trans, 4, 8, 2, 0, 2, s, 4, s, 2, s, 2, s, 4, w[:15]) },
			"getrf short ipiv":     func() error { return impl.Dgetrf(5, 5, s, 5, ipiv) },
			"getrf small lda":      func() error { return impl.Dgetrf(3, 3, s, 2, ipiv) },
			"getrfnopiv negative":  func() error { return impl.DgetrfNoPiv(3, -3, s, 3) },
			"getrfnopiv short a":   func() error { return impl.DgetrfNoPiv(9, 8, s, 9) },
			"laswp incx 2":         func() error { return impl.Dlaswp(2, s, 4, 0, 1, ipiv, 2) },
			"laswp k2 < k1":        func() error { return impl.Dlaswp(2, s, 4, 2, 1, ipiv, 1) },
			"laswp k2 past ipiv":   func() error { return impl.Dlaswp(2, s, 4, 0, 4, ipiv, 1) },
			"laswp pivot past lda": func() error { return impl.Dlaswp(2, s, 4, 0, 1, []int{0, 4}, 1) },
			"laswp negative pivot": func() error { return impl.Dlaswp(2, s, 4, 0, 1, []int{-1, 1}, 1) },
			"laswp short a":        func() error { return impl.Dlaswp(20, s, 4, 0, 1, ipiv, 1) },
			"lauum bad uplo":       func() error { return impl.Dlauum(All, 2, s, 2) },
			"lauum short a":        func() error { return impl.Dlauum(Upper, 9, s, 9) },
		} {
			if err := call(); !errors.Is(err, ErrBadArgument) {
				t.Errorf("%s %s: err = %v, want ErrBadArgument", impl.Name(), name, err)
			}
		}
	}
}

func TestLapackQuickReturns(t *testing.T) {
	for _, impl := range backends(t) {
		for name, call := range map[string]func() error{
			"geqrt m=0":  func() error { return impl.Dgeqrt(0, 3, 2, nil, 1, nil, 1, nil) },
			"tpqrt n=0":  func() error { return impl.Dtpqrt(3, 0, 0, 2, nil, 1, nil, 3, nil, 1, nil) },
			"gemqrt k=0": func() error { return impl.Dgemqrt(Left, Trans, 2, 2, 0, 4, nil, 2, nil, 1, make([]float64, 4), 2, nil) },
			"tpmqrt m=0": func() error {
				return impl.Dtpmqrt(Left, Trans, 0, 2, 2, 0, 1, nil, 1, make([]float64, 4), 1, make([]float64, 4), 2, nil, 1, nil)
			},
			"getrf n=0":   func() error { return impl.Dgetrf(3, 0, nil, 3, nil) },
			"nopiv m=0":   func() error { return impl.DgetrfNoPiv(0, 3, nil, 1) },
			"laswp n=0":   func() error { return impl.Dlaswp(0, nil, 2, 0, 1, []int{1, 0}, 1) },
			"lauum n=0":   func() error { return impl.Dlauum(Lower, 0, nil, 1) },
			"package-api": func() error { return Dlauum(Upper, 0, nil, 1) },
		} {
			if err := call(); err != nil {
				t.Errorf("%s %s: %v", impl.Name(), name, err)
			}
		}
	}
}

func TestGonumLapackDoesNotAllocate(t *testing.T) { checkLapackNoAllocs(t, Gonum()) }

func TestOpenBLASLapackDoesNotAllocate(t *testing.T) { checkLapackNoAllocs(t, openblasOrSkip(t)) }

// checkLapackNoAllocs: with work given, the steady-state call of every
// LAPACK kernel allocates nothing, so task bodies can pass per-worker
// scratch memory.
func checkLapackNoAllocs(t *testing.T, impl *Impl) {
	t.Helper()
	if raceEnabled {
		t.Skip("skipped under the race detector: sync.Pool drops items on purpose")
	}
	const n, ib = 96, 32
	rng := rand.New(rand.NewPCG(28, 28))
	a, b := randMatrix(rng, n, n, n), randMatrix(rng, n, n, n)
	c, d := randMatrix(rng, n, n, n), randMatrix(rng, n, n, n)
	r := upperPart(n, n, a, n)
	f, v, tt := make([]float64, n*n), make([]float64, n*n), make([]float64, ib*n)
	work := make([]float64, GeqrtWork(n, ib))
	ipiv := make([]int, n)
	// In order: each apply uses the factors of the call before it. The
	// copies keep every measured call on the same, well-scaled input.
	calls := []struct {
		name string
		call func() error
	}{
		{"Dgeqrt", func() error {
			copy(f, a)
			return impl.Dgeqrt(n, n, ib, f, n, tt, ib, work)
		}},
		{"Dgemqrt", func() error { return impl.Dgemqrt(Left, Trans, n, n, n, ib, f, n, tt, ib, c, n, work) }},
		{"Dtpqrt", func() error {
			copy(f, r)
			copy(v, b)
			return impl.Dtpqrt(n, n, 0, ib, f, n, v, n, tt, ib, work)
		}},
		{"Dtpmqrt", func() error { return impl.Dtpmqrt(Right, NoTrans, n, n, n, 0, ib, v, n, tt, ib, c, n, d, n, work) }},
		{"Dgetrf", func() error {
			copy(f, a)
			return impl.Dgetrf(n, n, f, n, ipiv)
		}},
		{"Dlaswp", func() error { return impl.Dlaswp(n, c, n, 0, n-1, ipiv, 1) }},
		{"DgetrfNoPiv", func() error {
			copy(f, a)
			for i := 0; i < n; i++ {
				f[i+i*n] += n
			}
			return impl.DgetrfNoPiv(n, n, f, n)
		}},
		{"Dlauum", func() error {
			copy(f, a)
			return impl.Dlauum(Lower, n, f, n)
		}},
	}
	for _, c := range calls {
		if err := c.call(); err != nil {
			t.Fatalf("%s %s: %v", impl.Name(), c.name, err)
		}
		if allocs := testing.AllocsPerRun(20, func() { _ = c.call() }); allocs != 0 {
			t.Errorf("%s %s: %v allocations per call", impl.Name(), c.name, allocs)
		}
	}
}
