package gpu_test

import (
	"testing"
)

// LoadAbove counts the outstanding tasks of a priority or above, and nothing once they are
// released.
func TestLoadAboveCountsHigherPriorities(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	inc := plain(h.j)
	for i, p := range []int32{1, 5, 5, 9} {
		tk, _ := h.task(string(rune('a'+i)), p, inc)
		h.submit(nil, tk)
	}
	h.settle()
	if h.d.Load() == 0 {
		t.Fatal("no load with 4 tasks outstanding")
	}
	cost := h.d.Cost()
	// Cost only grows while nothing completes, so n tasks weigh at least n costs of now.
	for _, c := range []struct {
		p int32
		n int64
	}{{10, 0}, {9, 1}, {5, 3}, {2, 3}, {1, 4}} {
		got := h.d.LoadAbove(c.p)
		if got < c.n*cost || (c.n == 0) != (got == 0) {
			t.Errorf("LoadAbove(%d) = %d, want about %d tasks of %d ns", c.p, got, c.n, cost)
		}
	}
	h.finish()
	if got := h.d.LoadAbove(-1 << 31); got != 0 {
		t.Fatalf("LoadAbove after every release = %d, want 0", got)
	}
}
