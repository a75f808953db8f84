package main

import (
	"math"
	"testing"

	"github.com/jdf2go/jdf2go/rt/blas"
)

// The tile kernels' flops add up to the factorisation's, ragged edge tiles included, and the
// critical path is a part of the work: the ceiling counts every flop once.
func TestKernelFlops(t *testing.T) {
	for _, c := range [][2]int{{8192, 320}, {8192, 512}, {1000, 128}, {300, 300}, {64, 100}} {
		n, nb := c[0], c[1]
		work, path := kernelFlops(n, nb)
		var sum float64
		for i := range work {
			sum += work[i]
			if path[i] > work[i] || path[i] < 0 {
				t.Errorf("n=%d nb=%d %s: path %g, work %g", n, nb, boundKernels[i], path[i], work[i])
			}
		}
		// Tiled sums count each SYRK at k·n·(n+1): a few n² more than PotrfFlops.
		if rel := math.Abs(sum-blas.PotrfFlops(n)) / blas.PotrfFlops(n); rel > 0.02 {
			t.Errorf("n=%d nb=%d: kernels sum to %g flops, the factorisation has %g", n, nb, sum, blas.PotrfFlops(n))
		}
	}
}

// The ceiling is the larger of the two bounds: with one worker and equal rates it is the
// rate itself; with very many workers the critical path binds.
func TestPotrfBound(t *testing.T) {
	rates := []float64{1e10, 1e10, 1e10, 1e10}
	r, note := potrfBound(rates, 4096, 256, 1)
	if rel := math.Abs(r-1e10) / 1e10; rel > 0.02 {
		t.Errorf("one worker: ceiling %g, want about 1e10 (%s)", r, note)
	}
	r, note = potrfBound(rates, 4096, 256, 1<<20)
	_, path := kernelFlops(4096, 256)
	var p float64
	for _, x := range path {
		p += x / 1e10
	}
	if want := blas.PotrfFlops(4096) / p; math.Abs(r-want)/want > 1e-9 {
		t.Errorf("many workers: ceiling %g, want the critical path's %g (%s)", r, want, note)
	}
}
