package main

import "testing"

func TestEP(t *testing.T) {
	for _, c := range []struct {
		nt, depth int
		sched     string
	}{{1, 1, "lfq"}, {64, 100, "lfq"}, {16, 50, "ap"}, {16, 50, "gd"}} {
		n, _, err := ep(c.nt, c.depth, 2, c.sched)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if want := int64(c.nt * c.depth); n != want {
			t.Errorf("%+v: %d tasks ran, want %d", c, n, want)
		}
	}
}
