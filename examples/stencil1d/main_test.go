package main

import "testing"

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
