package main

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/examples/geqrf/qr"
	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/remote"
)

// shapes are small problems with ragged last tiles: tall, wide, square, one tile row or
// column, and an inner block that does not divide the tile.
var shapes = []struct{ m, n, nb, ib int }{
	{1, 1, 1, 1},
	{50, 50, 16, 4},
	{130, 70, 32, 8}, // M > N: 5x3 tiles, both ragged
	{70, 130, 32, 8}, // M < N: 3x5 tiles
	{100, 37, 24, 5}, // tall and thin, ib does not divide nb
	{23, 90, 24, 24}, // one tile row
	{90, 23, 24, 7},  // one tile column
	{96, 96, 32, 32}, // no ragged tile, ib = nb
	{200, 150, 40, 10},
}

// TestGeqrf runs the command on every shape on 1 and 2 workers, and on 2 in-process ranks
// with both grids: each run checks ‖A − QR‖/‖A‖ and ‖I − QᵀQ‖, which any wrong or missing
// dependency (a tile updated before or after the step it belongs to) spoils.
func TestGeqrf(t *testing.T) {
	for _, c := range shapes {
		for _, extra := range [][]string{
			{"-workers", "1"},
			{"-workers", "2"},
			{"-workers", "2", "-ranks", "2", "-P", "1"},
			{"-workers", "2", "-ranks", "2", "-P", "2"},
		} {
			args := append([]string{"-m", strconv.Itoa(c.m), "-n", strconv.Itoa(c.n), "-nb", strconv.Itoa(c.nb),
				"-ib", strconv.Itoa(c.ib), "-blas", "gonum", "-trace", ""}, extra...)
			var out bytes.Buffer
			if err := run(args, &out); err != nil {
				t.Fatalf("%v: %v\n%s", args, err, out.String())
			}
			for _, want := range []string{"GFLOP/s", "‖A − QR‖/‖A‖", "‖I − QᵀQ‖"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("%v: output lacks %q:\n%s", args, want, out.String())
				}
			}
		}
	}
}

// TestGeqrfRanksMatch: the factors on 2 and 3 ranks equal the factors on one rank bit for
// bit, since every tile sees the same kernel calls in the same order wherever it runs.
func TestGeqrfRanksMatch(t *testing.T) {
	const m, n, nb, ib = 150, 110, 32, 8
	factor := func(ranks, p int) (f, tf []float64) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := remote.Run(ctx, remote.Config{Ranks: ranks, Workers: 2}, func(ctx context.Context, j *remote.Job) error {
			g := rt.Grid{P: p, Q: max(j.Size/p, 1)}
			pr, err := qr.NewProblemGrid(m, n, nb, ib, 3, g, j.Rank)
			if err != nil {
				return err
			}
			if err := qr.FactorOn(ctx, j.Add, pr, blas.Gonum()); err != nil {
				return err
			}
			ldt := pr.A.MT * ib
			var da, dt []float64
			if j.Rank == 0 {
				da, dt = make([]float64, m*n), make([]float64, ldt*n)
				f, tf = da, dt
			}
			if err := j.Node.GatherDense(ctx, pr.A, 0, da, m); err != nil {
				return err
			}
			return j.Node.GatherDense(ctx, pr.T, 0, dt, ldt)
		})
		if err != nil {
			t.Fatalf("%d ranks: %v", ranks, err)
		}
		return f, tf
	}
	wantA, wantT := factor(1, 1)
	for _, c := range []struct{ ranks, p int }{{2, 1}, {2, 2}, {3, 3}} {
		gotA, gotT := factor(c.ranks, c.p)
		if d := firstDiff(wantA, gotA); d != "" {
			t.Errorf("%d ranks, P=%d: factored A differs from one rank's: %s", c.ranks, c.p, d)
		}
		if d := firstDiff(wantT, gotT); d != "" {
			t.Errorf("%d ranks, P=%d: T differs from one rank's: %s", c.ranks, c.p, d)
		}
	}
}

func firstDiff(a, b []float64) string {
	if len(a) != len(b) {
		return fmt.Sprintf("lengths %d and %d", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			return fmt.Sprintf("element %d: %v, want %v", i, b[i], a[i])
		}
	}
	return ""
}

// TestCheckCatchesCorruption: Check is not blind: a factor with one reflector element or one
// T element changed fails both measures' tolerance.
func TestCheckCatchesCorruption(t *testing.T) {
	const m, n, nb, ib = 90, 60, 32, 8
	p, err := qr.NewProblem(m, n, nb, ib, 5)
	if err != nil {
		t.Fatal(err)
	}
	c, err := rt.New(rt.Workers(2))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := qr.FactorOn(context.Background(), c.Add, p, blas.Gonum()); err != nil {
		t.Fatal(err)
	}
	ldt := p.A.MT * ib
	f, tf := make([]float64, m*n), make([]float64, ldt*n)
	p.A.GatherToDense(f, m)
	p.T.GatherToDense(tf, ldt)
	tol := qr.Tolerance(m, n)
	if r, o, err := p.Check(blas.Gonum(), f, tf); err != nil || !(r < tol) || !(o < tol) {
		t.Fatalf("the factorisation itself: ‖A − QR‖/‖A‖ = %g, ‖I − QᵀQ‖ = %g, %v (tolerance %g)", r, o, err, tol)
	}
	for _, c := range []struct {
		what string
		a    []float64
		i    int
	}{
		{"a reflector of TSQRT(0, 2)", f, 2*nb + 3 + 1*m},
		{"a T factor of GEQRT(1)", tf, 1*ib + 0 + (nb+2)*ldt},
	} {
		saved := c.a[c.i]
		c.a[c.i] += 0.5
		r, o, err := p.Check(blas.Gonum(), f, tf)
		c.a[c.i] = saved
		if err != nil || r < tol || o < tol {
			t.Errorf("%s changed: ‖A − QR‖/‖A‖ = %g, ‖I − QᵀQ‖ = %g, %v: the check should fail both", c.what, r, o, err)
		}
	}
}

// TestBadArguments: bad sizes are errors, not panics.
func TestBadArguments(t *testing.T) {
	for _, args := range [][]string{
		{"-m", "0"}, {"-nb", "0"}, {"-ib", "0"}, {"-nb", "16", "-ib", "17"}, {"-ranks", "2", "-P", "3"},
	} {
		var out bytes.Buffer
		if err := run(append([]string{"-m", "40", "-n", "40", "-trace", ""}, args...), &out); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
