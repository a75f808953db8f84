package main

import (
	"testing"

	"github.com/jdf2go/jdf2go/rt"
)

func TestStencil(t *testing.T) {
	for _, c := range []struct{ n, bs, steps int }{{8, 8, 0}, {16, 4, 1}, {96, 8, 25}, {64, 1, 3}} {
		x := initial(c.n)
		got, err := stencil(x, c.bs, c.steps, 2)
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
	if a == nil || a.Bytes() != 4*8 {
		t.Fatalf("arena DEFAULT: %v", a)
	}
	if n := len(a.Get().Float64s()); n != 4 {
		t.Fatalf("buffers of %d elements, want 4", n)
	}
}
