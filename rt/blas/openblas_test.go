package blas

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// openblasOrSkip returns the OpenBLAS backend, or skips the test with the
// reason when libopenblas.so.0 is not installed.
func openblasOrSkip(t testing.TB) *Impl {
	t.Helper()
	ob, err := OpenBLAS()
	if err != nil {
		t.Skipf("skipped: %v (install Debian's libopenblas0 to run it)", err)
	}
	return ob
}

func gonumGemm(tA, tB Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if err := Gonum().Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); err != nil {
		panic(err) // the arguments were built valid by the test
	}
}

func gonumSyrk(uplo Uplo, t Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	if err := Gonum().Dsyrk(uplo, t, n, k, alpha, a, lda, beta, c, ldc); err != nil {
		panic(err)
	}
}

func TestOpenBLASGemmMatchesGonum(t *testing.T) {
	checkGemmAgainst(t, openblasOrSkip(t), gonumGemm, 1e-13)
}

func TestOpenBLASSyrkMatchesGonum(t *testing.T) {
	checkSyrkAgainst(t, openblasOrSkip(t), gonumSyrk, 1e-13)
}

func TestOpenBLASTrsmMatchesGonum(t *testing.T) {
	ob := openblasOrSkip(t)
	// {64, 65} and {40, 130}: the blocked right-side solve (blocked.go), ragged last block.
	forTrsmCases(7, [][2]int{{1, 1}, {9, 4}, {64, 65}, {150, 33}, {40, 130}}, func(c trsmCase) {
		want, got := slices.Clone(c.b), slices.Clone(c.b)
		if err := Gonum().Dtrsm(c.side, c.uplo, c.tA, c.diag, c.m, c.n, -2, c.a, c.lda, want, c.ldb); err != nil {
			t.Fatal(err)
		}
		if err := ob.Dtrsm(c.side, c.uplo, c.tA, c.diag, c.m, c.n, -2, c.a, c.lda, got, c.ldb); err != nil {
			t.Fatal(err)
		}
		if d := maxDiff(c.m, c.n, got, c.ldb, want, c.ldb); d > 1e-12 {
			t.Errorf("%s: max relative difference %.3g", c.name, d)
		}
		checkPadding(t, c.name, c.m, c.n, got, want, c.ldb)
	})
}

func TestOpenBLASPotrfMatchesGonum(t *testing.T) {
	ob := openblasOrSkip(t)
	testPotrf(t, ob)
	for _, n := range []int{5, 64, 257} {
		for _, uplo := range []Uplo{Lower, Upper} {
			a := make([]float64, n*n)
			if err := FillSPD(n, a, n, 11); err != nil {
				t.Fatal(err)
			}
			want, got := slices.Clone(a), slices.Clone(a)
			if err := Gonum().Dpotrf(uplo, n, want, n); err != nil {
				t.Fatal(err)
			}
			if err := ob.Dpotrf(uplo, n, got, n); err != nil {
				t.Fatal(err)
			}
			if d := maxDiff(n, n, got, n, want, n); d > 1e-13 {
				t.Errorf("n=%d %c: factors differ by %.3g", n, uplo, d)
			}
		}
	}
}

func TestOpenBLASCallsDoNotAllocate(t *testing.T) {
	checkNoAllocs(t, openblasOrSkip(t))
}

// Task bodies call BLAS from every worker at once: the single-threaded
// library must give each caller its own correct result.
func TestOpenBLASConcurrentCallers(t *testing.T) {
	ob := openblasOrSkip(t)
	const n, callers, rounds = 80, 4, 20
	rng := rand.New(rand.NewPCG(8, 8))
	a, b := randMatrix(rng, n, n, n), randMatrix(rng, n, n, n)
	want := make([]float64, n*n)
	gonumGemm(NoTrans, NoTrans, n, n, n, 1, a, n, b, n, 0, want, n)
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for range callers {
		wg.Go(func() {
			c := make([]float64, n*n)
			for range rounds {
				if err := ob.Dgemm(NoTrans, NoTrans, n, n, n, 1, a, n, b, n, 0, c, n); err != nil {
					errs <- err
					return
				}
				if d := maxDiff(n, n, c, n, want, n); d > 1e-12 {
					errs <- fmt.Errorf("concurrent dgemm off by %.3g", d)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestOpenBLASThreads(t *testing.T) {
	ob := openblasOrSkip(t)
	if got := ob.Threads(); got != 1 {
		t.Errorf("OpenBLAS runs on %d threads after loading, want 1", got)
	}
	prev, err := ob.SetThreads(2)
	if err != nil || prev != 1 {
		t.Fatalf("SetThreads(2) = %d, %v", prev, err)
	}
	got := ob.Threads()
	if _, err := ob.SetThreads(1); err != nil {
		t.Fatal(err)
	}
	// OpenBLAS caps the count at the number of cores it was started with.
	if got < 1 || got > 2 {
		t.Errorf("Threads() = %d after SetThreads(2)", got)
	}
	if ob.Threads() != 1 {
		t.Errorf("Threads() = %d after SetThreads(1)", ob.Threads())
	}
	t.Logf("%s", ob.Config())
}
