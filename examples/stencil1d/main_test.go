package main

import (
	"testing"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/ce"
	"github.com/jdf2go/jdf2go/rt/remote"
)

func TestStencil(t *testing.T) {
	for _, c := range []struct{ n, bs, steps int }{{8, 8, 0}, {16, 4, 1}, {96, 8, 25}, {64, 1, 3}} {
		x := initial(c.n)
		got, err := stencil(x, c.bs, c.steps, remote.Config{Workers: 2})
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if d := maxDiff(got, reference(x, c.steps)); d > 1e-12 {
			t.Errorf("%+v: differs from the sequential result by %g", c, d)
		}
	}
}

// TestStencilMakesItsArena: the JDF gives the length of N's buffers (count = data.NB), so
// NewStencil1D registers the DEFAULT arena itself and stencil (TestStencil) needs no SetArena.
func TestStencilMakesItsArena(t *testing.T) {
	data, err := rt.NewVector(16, 4, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	tp, err := NewStencil1D(1, data)
	if err != nil {
		t.Fatal(err)
	}
	a := tp.Arena("DEFAULT")
	if a == nil {
		t.Fatalf("arena DEFAULT: %v", a)
	}
	if n := len(a.Get().Float64s()); n != 4 {
		t.Fatalf("buffers of %d elements, want 4", n)
	}
}

// TestDistStencil: on 1 to 4 in-process ranks (fewer blocks than ranks included), halos
// crossing ranks at every iteration, the result equals the 1-rank run bit for bit.
func TestDistStencil(t *testing.T) {
	for _, c := range []struct{ n, bs, steps int }{{96, 8, 7}, {16, 8, 3}} {
		x := initial(c.n)
		want, err := stencil(x, c.bs, c.steps, remote.Config{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		for ranks := 1; ranks <= 4; ranks++ {
			for _, eager := range []int{0, 1 << 10} {
				cfg := remote.Config{Ranks: ranks, Workers: ranks, Remote: []remote.Option{remote.Eager(eager)}, CE: []ce.Option{ce.Debug(true)}}
				got, err := stencil(x, c.bs, c.steps, cfg)
				if err != nil {
					t.Fatalf("%+v on %d ranks: %v", c, ranks, err)
				}
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("%+v on %d ranks, eager %d: x[%d] = %g, 1 rank gives %g", c, ranks, eager, i, got[i], want[i])
					}
				}
			}
		}
	}
}
