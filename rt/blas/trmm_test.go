package blas

import (
	"errors"
	"slices"
	"testing"
)

// testTrmm compares impl's Dtrmm with the reference product of the
// expanded triangle.
func testTrmm(t *testing.T, impl *Impl) {
	const alpha = -1.5
	forTrsmCases(3, [][2]int{{1, 1}, {7, 3}, {33, 65}, {130, 70}}, func(c trsmCase) {
		got := slices.Clone(c.b)
		if err := impl.Dtrmm(c.side, c.uplo, c.tA, c.diag, c.m, c.n, alpha, c.a, c.lda, got, c.ldb); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		tri := triangular(c.uplo, c.diag, c.na, c.a, c.lda)
		want := make([]float64, c.m*c.n)
		if c.side == Left {
			refGemm(c.tA, NoTrans, c.m, c.n, c.m, alpha, tri, c.na, c.b, c.ldb, 0, want, c.m)
		} else {
			refGemm(NoTrans, c.tA, c.m, c.n, c.n, alpha, c.b, c.ldb, tri, c.na, 0, want, c.m)
		}
		if d := maxDiff(c.m, c.n, got, c.ldb, want, c.m); d > 1e-12 {
			t.Errorf("%s: max relative difference %.3g", c.name, d)
		}
	})
}

// testTrtri checks that impl's Dtrtri gives the inverse of the triangle
// and leaves the other triangle alone.
func testTrtri(t *testing.T, impl *Impl) {
	forTrsmCases(4, [][2]int{{1, 1}, {9, 9}, {70, 70}}, func(c trsmCase) {
		if c.side != Left || c.tA != NoTrans {
			return // Dtrtri has neither
		}
		inv := slices.Clone(c.a)
		if err := impl.Dtrtri(c.uplo, c.diag, c.na, inv, c.lda); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for j := 0; j < c.na; j++ {
			for i := 0; i < c.na; i++ {
				if (c.uplo == Lower && i < j) || (c.uplo == Upper && i > j) {
					if inv[i+j*c.lda] != c.a[i+j*c.lda] {
						t.Fatalf("%s: the other triangle changed at (%d,%d)", c.name, i, j)
					}
				}
			}
		}
		prod := make([]float64, c.na*c.na)
		refGemm(NoTrans, NoTrans, c.na, c.na, c.na, 1,
			triangular(c.uplo, c.diag, c.na, c.a, c.lda), c.na,
			triangular(c.uplo, c.diag, c.na, inv, c.lda), c.na, 0, prod, c.na)
		id := make([]float64, c.na*c.na)
		for i := 0; i < c.na; i++ {
			id[i+i*c.na] = 1
		}
		if d := maxDiff(c.na, c.na, prod, c.na, id, c.na); d > 1e-10 {
			t.Errorf("%s: A·inv(A) differs from I by %.3g", c.name, d)
		}
	})
}

func TestGonumTrmmMatchesReference(t *testing.T) { testTrmm(t, Gonum()) }

func TestGonumTrtriInverts(t *testing.T) { testTrtri(t, Gonum()) }

func TestOpenBLASTrmmMatchesReference(t *testing.T) { testTrmm(t, openblasOrSkip(t)) }

func TestOpenBLASTrtriInverts(t *testing.T) { testTrtri(t, openblasOrSkip(t)) }

func TestTrmmTrtriBadArguments(t *testing.T) {
	a := make([]float64, 4)
	for name, err := range map[string]error{
		"trmm side":  Gonum().Dtrmm('X', Lower, NoTrans, NonUnit, 2, 2, 1, a, 2, a, 2),
		"trmm short": Gonum().Dtrmm(Left, Lower, NoTrans, NonUnit, 3, 3, 1, a, 3, a, 3),
		"trtri diag": Gonum().Dtrtri(Lower, 'X', 2, a, 2),
		"trtri lda":  Gonum().Dtrtri(Upper, Unit, 2, a, 1),
	} {
		if !errors.Is(err, ErrBadArgument) {
			t.Errorf("%s: %v, want ErrBadArgument", name, err)
		}
	}
}
