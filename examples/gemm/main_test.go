package main

import "testing"

func TestGemm(t *testing.T) {
	for _, c := range []struct{ m, n, k, nb int }{{64, 64, 64, 64}, {100, 70, 130, 32}, {1, 1, 1, 8}} {
		res, err := gemm(c.m, c.n, c.k, c.nb, 2)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if res.relErr > 1e-12 {
			t.Errorf("%+v: relative error %g", c, res.relErr)
		}
	}
}
