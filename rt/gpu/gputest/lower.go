package gputest

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/jdf2go/jdf2go/rt"
)

// ForLowerTiles calls fn for every local tile (i, j), j <= i, of a, spread
// over GOMAXPROCS goroutines; w numbers the goroutine (0 <= w < GOMAXPROCS),
// so that fn can keep per-goroutine results without locking.
func ForLowerTiles(a *rt.TiledMatrix, fn func(w, i, j int)) {
	var tiles [][2]int
	for j := range a.NT {
		for i := j; i < a.MT; i++ {
			if a.Tile(i, j) != nil {
				tiles = append(tiles, [2]int{i, j})
			}
		}
	}
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := w; k < len(tiles); k += workers {
				fn(w, tiles[k][0], tiles[k][1])
			}
		}()
	}
	wg.Wait()
}

// FactorDiff compares the lower triangle of the tiled matrix a (a Cholesky
// factor) with the lower triangle of the dense column-major l (leading
// dimension ldl): it returns the largest absolute difference relative to the
// largest entry of l (at least 1), or +Inf when a difference is NaN.
func FactorDiff(a *rt.TiledMatrix, l []float64, ldl int) float64 {
	workers := runtime.GOMAXPROCS(0)
	diffs, scales := make([]float64, workers), make([]float64, workers)
	ForLowerTiles(a, func(w, ti, tj int) {
		t := a.Tile(ti, tj)
		for c := range a.TileCols(tj) {
			for r := range a.TileRows(ti) {
				i, j := ti*a.MB+r, tj*a.NB+c
				if i < j {
					continue
				}
				want := l[i+j*ldl]
				if d := math.Abs(t[r+c*a.MB] - want); !(d <= diffs[w]) {
					diffs[w] = d
				}
				scales[w] = math.Max(scales[w], math.Abs(want))
			}
		}
	})
	var d, s float64
	for w := range workers {
		if !(diffs[w] <= d) {
			d = diffs[w]
		}
		s = math.Max(s, scales[w])
	}
	if math.IsNaN(d) {
		return math.Inf(1)
	}
	return d / math.Max(s, 1)
}

// InverseError checks that the column-major x (leading dimension ldx) is the
// inverse of the lower triangle of the n x n column-major l (leading
// dimension ldl), as gpu.Stream.InvertLower computes it: it returns the
// largest |(L·X - I)(i, j)| over the lower triangle, and an error naming the
// first entry of x above the diagonal that is not zero. A NaN gives +Inf.
func InverseError(n int, l []float64, ldl int, x []float64, ldx int) (float64, error) {
	worst := 0.0
	for j := range n {
		for i := range j {
			if v := x[i+j*ldx]; v != 0 {
				return 0, fmt.Errorf("X(%d, %d) = %v above the diagonal", i, j, v)
			}
		}
		for i := j; i < n; i++ {
			sum := 0.0
			for k := j; k <= i; k++ {
				sum += l[i+k*ldl] * x[k+j*ldx]
			}
			if i == j {
				sum--
			}
			if math.IsNaN(sum) {
				return math.Inf(1), nil
			}
			worst = max(worst, math.Abs(sum))
		}
	}
	return worst, nil
}
