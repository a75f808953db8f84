package main

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
)

// The kernel ceiling of the tiled Cholesky (potrf suite, variants kernels-hot and
// kernels-cold): how fast the factorisation would run if its w workers did nothing but tile
// kernels, never waited for a dependency and paid nothing for the runtime.
//
// Each of the four kernels (POTRF, TRSM, SYRK, GEMM on NB×NB tiles, with the arguments of
// examples/potrf.jdf) is timed with w locked threads running it at once, each on its own
// tiles in huge-page memory (rt.HugePagePool, as the jdf2go variants use): hot, each thread
// reuses one set of tiles, so they stay in its caches as far as they fit (no schedule can do
// better: an upper bound); cold, each thread cycles through 64 MiB of tiles, so every call
// reads them from memory. The ceiling is w divided by the flop-weighted mean time per flop:
// w / Σ_c share_c / rate_c, with share_c the fraction of the factorisation's flops in class c
// (ragged edge tiles counted at their size) and rate_c the per-thread rate of c's kernel.

// boundKernels are the tile kernels in the order of their classes in potrf.jdf.
var boundKernels = []string{"POTRF", "TRSM", "SYRK", "GEMM"}

// kernelShares returns the fraction of the flops of the tiled factorisation of an n×n matrix
// in nb×nb tiles that each kernel of boundKernels does.
func kernelShares(n, nb int) []float64 {
	mt := (n + nb - 1) / nb
	rows := func(i int) int { return min(nb, n-i*nb) }
	f := make([]float64, len(boundKernels))
	for k := 0; k < mt; k++ {
		f[0] += blas.PotrfFlops(rows(k))
		for m := k + 1; m < mt; m++ {
			f[1] += blas.TrsmFlops(blas.Right, rows(m), rows(k))
			f[2] += blas.SyrkFlops(rows(m), rows(k))
			for j := k + 1; j < m; j++ {
				f[3] += blas.GemmFlops(rows(m), rows(j), rows(k))
			}
		}
	}
	var total float64
	for _, x := range f {
		total += x
	}
	for i := range f {
		f[i] /= total
	}
	return f
}

// tileSet is the operands of one kernel call: A and B are read, C is updated; S keeps an SPD
// tile that POTRF factors a fresh copy of.
type tileSet struct{ a, b, c, s []float64 }

// boundCold is the memory each thread cycles through in the cold measurement: more than the
// last-level cache of the machines we measure on.
const boundCold = 64 << 20

// kernelRates times each kernel of boundKernels with w threads at once on nb×nb tiles, in
// windows of about d, and returns the mean per-thread rate of each, in flop/s.
func kernelRates(impl *blas.Impl, nb, w int, hot bool, d time.Duration) ([]float64, error) {
	pool := rt.NewHugePagePool(0)
	defer pool.Close()
	sets := 1
	if !hot {
		sets = max(1, boundCold/(4*nb*nb*8))
	}
	tiles := make([][]tileSet, w)
	for p := range tiles {
		r := rand.New(rand.NewPCG(uint64(p), uint64(nb)))
		for range sets {
			var ts tileSet
			for _, x := range []*[]float64{&ts.a, &ts.b, &ts.c, &ts.s} {
				f, err := pool.Float64s(nb * nb)
				if err != nil {
					return nil, err
				}
				for i := range f {
					f[i] = r.Float64() - 0.5
				}
				*x = f
			}
			for i := 0; i < nb; i++ {
				// A: unit-like lower triangle (TRSM keeps C bounded call after call);
				// S: diagonally dominant, so SPD.
				for j := 0; j < nb; j++ {
					ts.a[i+j*nb] /= float64(nb)
				}
				ts.a[i+i*nb] = 1
				ts.s[i+i*nb] += float64(nb)
			}
			tiles[p] = append(tiles[p], ts)
		}
	}
	flops := []float64{blas.PotrfFlops(nb), blas.TrsmFlops(blas.Right, nb, nb), blas.SyrkFlops(nb, nb), blas.GemmFlops(nb, nb, nb)}
	rates := make([]float64, len(boundKernels))
	for kind := range boundKernels {
		// The best of boundWindows windows: a ceiling, so interference from other
		// processes should not lower it.
		for range boundWindows {
			r, err := kernelWindow(impl, tiles, kind, nb, flops[kind], d)
			if err != nil {
				return nil, err
			}
			rates[kind] = max(rates[kind], r)
		}
	}
	return rates, nil
}

// boundWindows is the number of timing windows per kernel.
const boundWindows = 3

// kernelWindow runs kernel kind on every thread's tiles at once for about d and returns the
// mean per-thread rate.
func kernelWindow(impl *blas.Impl, tiles [][]tileSet, kind, nb int, flops float64, d time.Duration) (float64, error) {
	w := len(tiles)
	var stop atomic.Bool
	var wg sync.WaitGroup
	start := make(chan struct{})
	perThread := make([]float64, w)
	errs := make([]error, w)
	for p := 0; p < w; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			<-start
			sets := len(tiles[p])
			var busy time.Duration
			calls := 0
			for i := 0; !stop.Load() || calls < 2; i++ {
				ts := tiles[p][i%sets]
				// Outside the timing: POTRF factors a fresh SPD tile; TRSM's right-hand side,
				// which grows slowly call after call, restarts every 64 calls on a set.
				if kind == 0 || (kind == 1 && (i/sets)%64 == 0) {
					copy(ts.c, ts.s)
				}
				t0 := time.Now()
				var err error
				switch kind {
				case 0:
					err = impl.Dpotrf(blas.Lower, nb, ts.c, nb)
				case 1:
					err = impl.Dtrsm(blas.Right, blas.Lower, blas.Trans, blas.NonUnit, nb, nb, 1, ts.a, nb, ts.c, nb)
				case 2:
					err = impl.Dsyrk(blas.Lower, blas.NoTrans, nb, nb, -1, ts.a, nb, 1, ts.c, nb)
				case 3:
					err = impl.Dgemm(blas.NoTrans, blas.Trans, nb, nb, nb, -1, ts.a, nb, ts.b, nb, 1, ts.c, nb)
				}
				busy += time.Since(t0)
				if err != nil {
					errs[p] = err
					return
				}
				calls++
			}
			perThread[p] = flops * float64(calls) / busy.Seconds()
		}()
	}
	close(start)
	time.Sleep(d)
	stop.Store(true)
	wg.Wait()
	var mean float64
	for p := 0; p < w; p++ {
		if errs[p] != nil {
			return 0, fmt.Errorf("%s on %d×%d tiles: %w", boundKernels[kind], nb, nb, errs[p])
		}
		mean += perThread[p] / float64(w)
	}
	return mean, nil
}

// potrfBound returns the kernel ceiling of the factorisation of an n×n matrix on w workers,
// in flop/s, and a note with the per-thread kernel rates.
func potrfBound(impl *blas.Impl, n, nb, w int, hot bool) (float64, string, error) {
	rates, err := kernelRates(impl, nb, w, hot, 150*time.Millisecond)
	if err != nil {
		return 0, "", err
	}
	shares := kernelShares(n, nb)
	var perFlop float64
	parts := make([]string, len(rates))
	for i, r := range rates {
		perFlop += shares[i] / r
		parts[i] = fmt.Sprintf("%s %.1f (%.1f%% of flops)", boundKernels[i], r/1e9, 100*shares[i])
	}
	return float64(w) / perFlop, "per-thread GFLOP/s: " + strings.Join(parts, ", "), nil
}
