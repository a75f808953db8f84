package blas

import (
	"errors"
	"testing"
)

// TestWarmUp runs the warm-up on every backend, with more goroutines than cores and a tile
// size that is not a multiple of any kernel's blocking, and checks that bad sizes are named.
func TestWarmUp(t *testing.T) {
	for _, impl := range backends(t) {
		if err := impl.WarmUp(3, 37); err != nil {
			t.Errorf("%s: WarmUp(3, 37): %v", impl.Name(), err)
		}
		for _, c := range [][2]int{{0, 32}, {2, 0}, {-1, -1}} {
			if err := impl.WarmUp(c[0], c[1]); !errors.Is(err, ErrBadArgument) {
				t.Errorf("%s: WarmUp(%d, %d) = %v, want ErrBadArgument", impl.Name(), c[0], c[1], err)
			}
		}
	}
}
