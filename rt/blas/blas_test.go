package blas

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The reference kernels below are the textbook loops on column-major data,
// independent of both backends; the gonum backend is checked against them
// and OpenBLAS against gonum.

func randMatrix(rng *rand.Rand, rows, cols, ld int) []float64 {
	a := make([]float64, span(rows, cols, ld))
	for i := range a {
		a[i] = rng.Float64()*2 - 1
	}
	return a
}

// opAt is element (i, j) of op(A).
func opAt(t Transpose, a []float64, lda, i, j int) float64 {
	if t == NoTrans {
		return a[i+j*lda]
	}
	return a[j+i*lda]
}

func refGemm(tA, tB Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	for j := 0; j < n; j++ {
		for i := 0; i < m; i++ {
			var s float64
			for l := 0; l < k; l++ {
				s += opAt(tA, a, lda, i, l) * opAt(tB, b, ldb, l, j)
			}
			if beta == 0 {
				c[i+j*ldc] = alpha * s
			} else {
				c[i+j*ldc] = alpha*s + beta*c[i+j*ldc]
			}
		}
	}
}

func refSyrk(uplo Uplo, t Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	for j := 0; j < n; j++ {
		lo, hi := rowRange(uplo, j, n)
		for i := lo; i < hi; i++ {
			var s float64
			for l := 0; l < k; l++ {
				if t == NoTrans {
					s += a[i+l*lda] * a[j+l*lda]
				} else {
					s += a[l+i*lda] * a[l+j*lda]
				}
			}
			c[i+j*ldc] = alpha*s + beta*c[i+j*ldc]
		}
	}
}

// triangular returns the explicit n×n triangle that Dtrsm uses (zeros
// elsewhere, ones on the diagonal for Unit), with leading dimension n.
func triangular(uplo Uplo, diag Diag, n int, a []float64, lda int) []float64 {
	t := make([]float64, n*n)
	for j := 0; j < n; j++ {
		lo, hi := rowRange(uplo, j, n)
		for i := lo; i < hi; i++ {
			t[i+j*n] = a[i+j*lda]
		}
		if diag == Unit {
			t[j+j*n] = 1
		}
	}
	return t
}

// wellConditionedTriangle fills a matrix whose triangles are both usable
// as a well-conditioned triangular factor.
func wellConditionedTriangle(rng *rand.Rand, n, lda int) []float64 {
	a := randMatrix(rng, n, n, lda)
	for j := 0; j < n; j++ {
		for i := 0; i < n; i++ {
			a[i+j*lda] /= float64(n)
		}
		a[j+j*lda] = 1.5 + rng.Float64()
	}
	return a
}

// maxDiff is max |x−y| over the m×n matrices, relative to max(1, max|y|).
func maxDiff(m, n int, x []float64, ldx int, y []float64, ldy int) float64 {
	var d, s float64
	for j := 0; j < n; j++ {
		for i := 0; i < m; i++ {
			d = math.Max(d, math.Abs(x[i+j*ldx]-y[i+j*ldy]))
			s = math.Max(s, math.Abs(y[i+j*ldy]))
		}
	}
	if math.IsNaN(d) {
		return math.Inf(1)
	}
	return d / math.Max(1, s)
}

type gemmShape struct{ m, n, k int }

// gemmShapes includes sizes above the gonum piece size (64×192) so that
// the piecewise path is exercised, and odd sizes everywhere. {200, 150, 100}
// has m above 192 with a short k: a piece offset computed for the other
// layout then lies past the end of A.
var gemmShapes = []gemmShape{{1, 1, 1}, {3, 5, 7}, {17, 9, 33}, {64, 64, 64}, {65, 130, 70}, {200, 70, 257}, {200, 150, 100}}

var transposes = []Transpose{NoTrans, Trans}

func TestGonumGemmMatchesReference(t *testing.T) {
	checkGemmAgainst(t, Gonum(), refGemm, 1e-13)
}

// trsmCase is one Dtrsm problem: a triangle A (na×na, well conditioned in
// both triangles) and a right-hand side B (m×n), with padded leading
// dimensions.
type trsmCase struct {
	name               string
	side               Side
	uplo               Uplo
	tA                 Transpose
	diag               Diag
	m, n, na, lda, ldb int
	a, b               []float64
}

// forTrsmCases calls do for every side, triangle, transpose and diagonal
// on each m×n shape.
func forTrsmCases(seed uint64, shapes [][2]int, do func(c trsmCase)) {
	rng := rand.New(rand.NewPCG(seed, seed))
	for _, sh := range shapes {
		for _, side := range []Side{Left, Right} {
			for _, uplo := range []Uplo{Lower, Upper} {
				for _, tA := range transposes {
					for _, diag := range []Diag{NonUnit, Unit} {
						c := trsmCase{side: side, uplo: uplo, tA: tA, diag: diag, m: sh[0], n: sh[1], na: sh[0]}
						c.name = fmt.Sprintf("%dx%d/%c%c%c%c", c.m, c.n, side, uplo, tA, diag)
						if side == Right {
							c.na = c.n
						}
						c.lda, c.ldb = c.na+2, c.m+1
						c.a = wellConditionedTriangle(rng, c.na, c.lda)
						c.b = randMatrix(rng, c.m, c.n, c.ldb)
						do(c)
					}
				}
			}
		}
	}
}

func TestGonumTrsmSolves(t *testing.T) {
	const alpha = 0.75
	forTrsmCases(2, [][2]int{{1, 1}, {7, 3}, {33, 65}, {130, 70}}, func(c trsmCase) {
		x := slices.Clone(c.b)
		if err := Gonum().Dtrsm(c.side, c.uplo, c.tA, c.diag, c.m, c.n, alpha, c.a, c.lda, x, c.ldb); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		// op(A)·X (or X·op(A)) must give back alpha·B.
		tri := triangular(c.uplo, c.diag, c.na, c.a, c.lda)
		got := make([]float64, c.m*c.n)
		if c.side == Left {
			refGemm(c.tA, NoTrans, c.m, c.n, c.m, 1, tri, c.na, x, c.ldb, 0, got, c.m)
		} else {
			refGemm(NoTrans, c.tA, c.m, c.n, c.n, 1, x, c.ldb, tri, c.na, 0, got, c.m)
		}
		want := make([]float64, c.m*c.n)
		for j := 0; j < c.n; j++ {
			for i := 0; i < c.m; i++ {
				want[i+j*c.m] = alpha * c.b[i+j*c.ldb]
			}
		}
		if d := maxDiff(c.m, c.n, got, c.m, want, c.m); d > 1e-12 {
			t.Errorf("%s: residual %.3g", c.name, d)
		}
	})
}

func TestGonumSyrkMatchesReference(t *testing.T) {
	checkSyrkAgainst(t, Gonum(), refSyrk, 1e-13)
}

type gemmFunc func(tA, tB Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int)

type syrkFunc func(uplo Uplo, t Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int)

func checkGemmAgainst(t *testing.T, impl *Impl, ref gemmFunc, tol float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 1))
	for _, sh := range gemmShapes {
		for _, tA := range transposes {
			for _, tB := range transposes {
				for _, beta := range []float64{0, 1, -0.5} {
					name := fmt.Sprintf("%dx%dx%d/%c%c/beta=%g", sh.m, sh.n, sh.k, tA, tB, beta)
					ar, ac := opShape(tA, sh.m, sh.k)
					br, bc := opShape(tB, sh.k, sh.n)
					lda, ldb, ldc := ar+1, br+3, sh.m+2
					a := randMatrix(rng, ar, ac, lda)
					b := randMatrix(rng, br, bc, ldb)
					c := randMatrix(rng, sh.m, sh.n, ldc)
					if beta == 0 {
						for i := range c {
							c[i] = math.NaN() // beta == 0 must not read C
						}
					}
					want := slices.Clone(c)
					ref(tA, tB, sh.m, sh.n, sh.k, 1.25, a, lda, b, ldb, beta, want, ldc)
					if err := impl.Dgemm(tA, tB, sh.m, sh.n, sh.k, 1.25, a, lda, b, ldb, beta, c, ldc); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if d := maxDiff(sh.m, sh.n, c, ldc, want, ldc); d > tol*float64(sh.k) {
						t.Errorf("%s %s: max relative difference %.3g", impl.Name(), name, d)
					}
					checkPadding(t, name, sh.m, sh.n, c, want, ldc)
				}
			}
		}
	}
}

// checkPadding checks that the rows between m and ld were left alone.
func checkPadding(t *testing.T, name string, m, n int, got, want []float64, ld int) {
	t.Helper()
	for j := 0; j < n; j++ {
		for i := m; i < ld && i+j*ld < len(got); i++ {
			g, w := got[i+j*ld], want[i+j*ld]
			if g != w && !(math.IsNaN(g) && math.IsNaN(w)) {
				t.Fatalf("%s: padding element (%d,%d) changed from %g to %g", name, i, j, w, g)
			}
		}
	}
}

func checkSyrkAgainst(t *testing.T, impl *Impl, ref syrkFunc, tol float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 3))
	for _, sh := range []gemmShape{{1, 0, 1}, {5, 0, 3}, {64, 0, 64}, {130, 0, 77}} {
		for _, uplo := range []Uplo{Lower, Upper} {
			for _, tr := range transposes {
				name := fmt.Sprintf("n=%d,k=%d/%c%c", sh.m, sh.k, uplo, tr)
				n, k := sh.m, sh.k
				ar, ac := opShape(tr, n, k)
				lda, ldc := ar+2, n+1
				a := randMatrix(rng, ar, ac, lda)
				c := randMatrix(rng, n, n, ldc)
				want := slices.Clone(c)
				ref(uplo, tr, n, k, -1, a, lda, 0.5, want, ldc)
				if err := impl.Dsyrk(uplo, tr, n, k, -1, a, lda, 0.5, c, ldc); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				// Both triangles must match: the computed one against the
				// reference, the other one untouched.
				if d := maxDiff(n, n, c, ldc, want, ldc); d > tol*float64(k) {
					t.Errorf("%s %s: max relative difference %.3g", impl.Name(), name, d)
				}
			}
		}
	}
}

func TestDpotrfGonum(t *testing.T) { testPotrf(t, Gonum()) }

func testPotrf(t *testing.T, impl *Impl) {
	t.Helper()
	for _, n := range []int{1, 2, 31, 64, 65, 200, 333} {
		for _, uplo := range []Uplo{Lower, Upper} {
			name := fmt.Sprintf("%s/n=%d/%c", impl.Name(), n, uplo)
			lda := n + 3
			a := make([]float64, span(n, n, lda))
			if err := FillSPD(n, a, lda, uint64(n)); err != nil {
				t.Fatal(err)
			}
			// Mark the triangle Dpotrf must not touch.
			other := Upper
			if uplo == Upper {
				other = Lower
			}
			for j := 0; j < n; j++ {
				lo, hi := rowRange(other, j, n)
				for i := lo; i < hi; i++ {
					if i != j {
						a[i+j*lda] = 1e300
					}
				}
			}
			f := slices.Clone(a)
			if err := impl.Dpotrf(uplo, n, f, lda); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			res, err := impl.PotrfResidual(uplo, n, a, lda, f, lda)
			if err != nil {
				t.Fatal(err)
			}
			if !(res < 1e-14) {
				t.Errorf("%s: ‖A − factor product‖/‖A‖ = %.3g", name, res)
			}
			for j := 0; j < n; j++ {
				lo, hi := rowRange(other, j, n)
				for i := lo; i < hi; i++ {
					if i != j && f[i+j*lda] != 1e300 {
						t.Fatalf("%s: element (%d,%d) outside the %c triangle changed", name, i, j, uplo)
					}
				}
			}
		}
	}
}

func TestDpotrfReportsTheFailingMinor(t *testing.T) {
	impls := []*Impl{Gonum()}
	if ob, err := OpenBLAS(); err == nil {
		impls = append(impls, ob)
	}
	for _, impl := range impls {
		for _, uplo := range []Uplo{Lower, Upper} {
			for _, bad := range []int{0, 4, 70, 99} {
				const n = 100
				a := make([]float64, n*n)
				if err := FillSPD(n, a, n, 9); err != nil {
					t.Fatal(err)
				}
				// A diagonal entry far below the rest of its row makes the
				// leading minor of order bad+1 indefinite, and no earlier one.
				a[bad+bad*n] = -1
				err := impl.Dpotrf(uplo, n, a, n)
				if !errors.Is(err, ErrNotPositiveDefinite) {
					t.Fatalf("%s %c bad=%d: err = %v, want ErrNotPositiveDefinite", impl.Name(), uplo, bad, err)
				}
				want := fmt.Sprintf("order %d ", bad+1)
				if !contains(err.Error(), want) {
					t.Errorf("%s %c: %q does not name %q", impl.Name(), uplo, err, want)
				}
			}
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestBadArgumentsAreErrors(t *testing.T) {
	g := Gonum()
	a := make([]float64, 16)
	cases := []struct {
		name string
		call func() error
	}{
		{"gemm bad trans", func() error { return g.Dgemm('X', NoTrans, 2, 2, 2, 1, a, 2, a, 2, 0, a, 2) }},
		{"gemm negative m", func() error { return g.Dgemm(NoTrans, NoTrans, -1, 2, 2, 1, a, 2, a, 2, 0, a, 2) }},
		{"gemm small lda", func() error { return g.Dgemm(NoTrans, NoTrans, 3, 2, 2, 1, a, 2, a, 3, 0, a, 3) }},
		{"gemm short c", func() error { return g.Dgemm(NoTrans, NoTrans, 4, 4, 4, 1, a, 4, a, 4, 0, a[:15], 4) }},
		{"gemm short a transposed", func() error { return g.Dgemm(Trans, NoTrans, 4, 2, 5, 1, a, 5, a, 5, 0, a, 4) }},
		{"gemm huge k", func() error { return g.Dgemm(NoTrans, NoTrans, 1, 1, math.MaxInt32+1, 1, a, 1, a, 1, 0, a, 1) }},
		{"trsm bad side", func() error { return g.Dtrsm('X', Lower, NoTrans, NonUnit, 2, 2, 1, a, 2, a, 2) }},
		{"trsm bad diag", func() error { return g.Dtrsm(Left, Lower, NoTrans, 'X', 2, 2, 1, a, 2, a, 2) }},
		{"trsm bad uplo", func() error { return g.Dtrsm(Left, All, NoTrans, NonUnit, 2, 2, 1, a, 2, a, 2) }},
		{"trsm right needs n×n", func() error { return g.Dtrsm(Right, Lower, NoTrans, NonUnit, 1, 5, 1, a, 5, a, 1) }},
		{"syrk small ldc", func() error { return g.Dsyrk(Lower, NoTrans, 3, 1, 1, a, 3, 0, a, 2) }},
		{"potrf short a", func() error { return g.Dpotrf(Lower, 5, a, 5) }},
		{"potrf bad uplo", func() error { return g.Dpotrf('X', 2, a, 2) }},
		{"lacpy short b", func() error { return Dlacpy(All, 4, 4, a, 4, a[:3], 4) }},
		{"lange bad norm", func() error { _, err := Dlange('X', 2, 2, a, 2); return err }},
		{"threads zero", func() error { _, err := g.SetThreads(0); return err }},
		{"gonum threads two", func() error { _, err := g.SetThreads(2); return err }},
	}
	for _, c := range cases {
		if err := c.call(); !errors.Is(err, ErrBadArgument) {
			t.Errorf("%s: err = %v, want ErrBadArgument", c.name, err)
		}
	}
}

func TestQuickReturns(t *testing.T) {
	for _, impl := range backends(t) {
		c := []float64{1, 2, 3, 4}
		// k == 0: C = beta·C.
		if err := impl.Dgemm(NoTrans, NoTrans, 2, 2, 0, 1, nil, 2, nil, 1, 3, c, 2); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(c, []float64{3, 6, 9, 12}) {
			t.Errorf("%s: k=0 gemm gave %v", impl.Name(), c)
		}
		// alpha == 0 and beta == 0 clears C without reading it.
		c = []float64{math.NaN(), 1, 2, math.Inf(1)}
		if err := impl.Dgemm(NoTrans, NoTrans, 2, 2, 2, 0, c, 2, c, 2, 0, c, 2); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(c, []float64{0, 0, 0, 0}) {
			t.Errorf("%s: alpha=beta=0 gemm gave %v", impl.Name(), c)
		}
		// Empty operands.
		if err := impl.Dgemm(NoTrans, NoTrans, 0, 3, 3, 1, nil, 1, make([]float64, 9), 3, 0, nil, 1); err != nil {
			t.Errorf("%s: m=0 gemm: %v", impl.Name(), err)
		}
		if err := impl.Dpotrf(Lower, 0, nil, 1); err != nil {
			t.Errorf("%s: n=0 potrf: %v", impl.Name(), err)
		}
		// syrk with k == 0 scales only its triangle.
		c = []float64{1, 2, 3, 4}
		if err := impl.Dsyrk(Lower, NoTrans, 2, 0, 1, nil, 2, 2, c, 2); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(c, []float64{2, 4, 3, 8}) {
			t.Errorf("%s: k=0 syrk gave %v", impl.Name(), c)
		}
	}
}

// backends is gonum plus OpenBLAS where it loads.
func backends(t *testing.T) []*Impl {
	t.Helper()
	impls := []*Impl{Gonum()}
	if ob, err := OpenBLAS(); err == nil {
		impls = append(impls, ob)
	} else {
		t.Logf("only gonum: %v", err)
	}
	return impls
}

func TestSelect(t *testing.T) {
	if _, err := Select("mkl"); !errors.Is(err, ErrUnknownBackend) {
		t.Errorf("Select(mkl) err = %v, want ErrUnknownBackend", err)
	}
	g, err := Select("gonum")
	if err != nil || g != Gonum() {
		t.Errorf("Select(gonum) = %v, %v", g, err)
	}
	auto, err := Select("auto")
	if err != nil {
		t.Fatal(err)
	}
	ob, obErr := OpenBLAS()
	switch {
	case obErr == nil && auto != ob:
		t.Errorf("auto picked %s although OpenBLAS loads", auto.Name())
	case obErr != nil && auto != Gonum():
		t.Errorf("auto picked %s although OpenBLAS does not load", auto.Name())
	}
	if obErr != nil && !errors.Is(obErr, ErrUnavailable) {
		t.Errorf("OpenBLAS error %v does not wrap ErrUnavailable", obErr)
	}
}

func TestHelpers(t *testing.T) {
	a := []float64{1, -2, 3, 4, 5, -6} // 2×3, ld 2
	for _, c := range []struct {
		norm Norm
		want float64
	}{{MaxAbs, 6}, {OneNorm, 11}, {InfNorm, 12}, {Frobenius, math.Sqrt(91)}} {
		got, err := Dlange(c.norm, 2, 3, a, 2)
		if err != nil || math.Abs(got-c.want) > 1e-15 {
			t.Errorf("Dlange(%c) = %g, %v; want %g", c.norm, got, err, c.want)
		}
	}
	b := make([]float64, 9)
	if err := Dlaset(All, 3, 3, 7, 1, b, 3); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(b, []float64{1, 7, 7, 7, 1, 7, 7, 7, 1}) {
		t.Errorf("Dlaset(All) = %v", b)
	}
	c := make([]float64, 9)
	if err := Dlacpy(Lower, 3, 3, b, 3, c, 3); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c, []float64{1, 7, 7, 0, 1, 7, 0, 0, 1}) {
		t.Errorf("Dlacpy(Lower) = %v", c)
	}
	clear(c)
	if err := Dlacpy(Upper, 3, 3, b, 3, c, 3); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c, []float64{1, 0, 0, 7, 1, 0, 7, 7, 1}) {
		t.Errorf("Dlacpy(Upper) = %v", c)
	}
	if got := PotrfFlops(3); got != 9+4.5+0.5 {
		t.Errorf("PotrfFlops(3) = %g", got)
	}
}

func TestMatCholesky(t *testing.T) {
	const n, lda = 150, 153
	a := make([]float64, span(n, n, lda))
	if err := FillSPD(n, a, lda, 4); err != nil {
		t.Fatal(err)
	}
	f := slices.Clone(a)
	if err := MatCholesky(n, f, lda); err != nil {
		t.Fatal(err)
	}
	res, err := Gonum().PotrfResidual(Lower, n, a, lda, f, lda)
	if err != nil || !(res < 1e-14) {
		t.Errorf("residual %.3g, %v", res, err)
	}
	bad := make([]float64, 4) // [[-1 0] [0 1]]
	bad[0], bad[3] = -1, 1
	if err := MatCholesky(2, bad, 2); !errors.Is(err, ErrNotPositiveDefinite) {
		t.Errorf("indefinite matrix: err = %v", err)
	}
}

func TestGonumCallsDoNotAllocate(t *testing.T) {
	checkNoAllocs(t, Gonum())
}

func checkNoAllocs(t *testing.T, impl *Impl) {
	t.Helper()
	if raceEnabled {
		// The OpenBLAS calls take their argument block from a sync.Pool, which the race
		// detector empties at random; a blocked Dtrsm makes several calls.
		t.Skip("skipped under the race detector: sync.Pool drops items on purpose")
	}
	const n = 96
	rng := rand.New(rand.NewPCG(5, 5))
	a, b, c := randMatrix(rng, n, n, n), randMatrix(rng, n, n, n), randMatrix(rng, n, n, n)
	spd := make([]float64, n*n)
	if err := FillSPD(n, spd, n, 1); err != nil {
		t.Fatal(err)
	}
	tri := wellConditionedTriangle(rng, n, n)
	work := make([]float64, n*n)
	calls := map[string]func() error{
		"Dgemm": func() error { return impl.Dgemm(NoTrans, Trans, n, n, n, 1, a, n, b, n, 0, c, n) },
		"Dtrsm": func() error { return impl.Dtrsm(Right, Lower, Trans, NonUnit, n, n, 1, tri, n, c, n) },
		"Dsyrk": func() error { return impl.Dsyrk(Lower, NoTrans, n, n, -1, a, n, 1, c, n) },
		"Dpotrf": func() error {
			copy(work, spd)
			return impl.Dpotrf(Lower, n, work, n)
		},
	}
	for name, call := range calls {
		if err := call(); err != nil {
			t.Fatalf("%s %s: %v", impl.Name(), name, err)
		}
		if allocs := testing.AllocsPerRun(20, func() { _ = call() }); allocs != 0 {
			t.Errorf("%s %s: %v allocations per call", impl.Name(), name, allocs)
		}
	}
}
