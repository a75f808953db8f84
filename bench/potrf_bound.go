package main

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"time"

	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/hugepage"
)

// The ceiling of the tiled Cholesky (potrf suite, variant ceiling): a rate that no schedule
// of examples/potrf.jdf's tasks on w workers can exceed with these tile kernels, whatever
// the runtime does.
//
// Each of the four kernels (POTRF, TRSM, SYRK, GEMM on NB×NB tiles, with the arguments of
// potrf.jdf) is called again and again by one locked thread, alone, on one set of tiles in
// huge-page memory that it reuses (so they stay in its caches as far as they fit), and the
// shortest call is kept, timed by the thread's CPU time (on Linux; elsewhere the wall clock).
// A call in the factorisation cannot be faster than that: its tiles are no hotter, the core
// shares the chip with busy neighbours rather than idle ones, and other processes only add
// time (the thread's CPU time does not count the time it waits for a core, and the minimum,
// unlike a mean, is not lowered by a disturbed call). Edge tiles are smaller; they are counted at the full tile's rate, which is
// faster than theirs. The factorisation then takes at least
//
//	max( Σ_tasks t_task / w , Σ_{task on the path} t_task )
//
// the work spread perfectly over w workers, and the dependency chain POTRF(k) → TRSM(k+1, k)
// → SYRK(k, k+1) → POTRF(k+1) that every schedule must run in order. The ceiling is the
// factorisation's flops over that time.
//
// Rejected: the mean rate of w threads running one kernel at once, which factorisations
// beat: a mean over a window is lowered by any interference during it, and w threads in
// lockstep on one kernel share caches, memory and turbo differently from a factorisation
// whose cores do different things.

// boundKernels are the tile kernels in the order of their classes in potrf.jdf.
var boundKernels = []string{"POTRF", "TRSM", "SYRK", "GEMM"}

// kernelFlops returns, for each kernel of boundKernels, the flops of the factorisation of an
// n×n matrix in nb×nb tiles that it does (edge tiles at their size), and the flops of each
// kernel along the chain POTRF(k) → TRSM(k+1, k) → SYRK(k, k+1) → POTRF(k+1).
func kernelFlops(n, nb int) (work, path []float64) {
	mt := (n + nb - 1) / nb
	rows := func(i int) int { return min(nb, n-i*nb) }
	work = make([]float64, len(boundKernels))
	path = make([]float64, len(boundKernels))
	for k := 0; k < mt; k++ {
		work[0] += blas.PotrfFlops(rows(k))
		path[0] += blas.PotrfFlops(rows(k))
		if k+1 < mt {
			path[1] += blas.TrsmFlops(blas.Right, rows(k+1), rows(k))
			path[2] += blas.SyrkFlops(rows(k+1), rows(k))
		}
		for m := k + 1; m < mt; m++ {
			work[1] += blas.TrsmFlops(blas.Right, rows(m), rows(k))
			work[2] += blas.SyrkFlops(rows(m), rows(k))
			for j := k + 1; j < m; j++ {
				work[3] += blas.GemmFlops(rows(m), rows(j), rows(k))
			}
		}
	}
	return work, path
}

// tileSet is the operands of one kernel call: A and B are read, C is updated; S keeps an SPD
// tile that POTRF factors a fresh copy of.
type tileSet struct{ a, b, c, s []float64 }

// boundCalls is the least number of calls of each kernel whose shortest is kept.
const boundCalls = 30

// kernelRates times each kernel of boundKernels on nb×nb tiles, on one locked thread, for at
// least d and boundCalls calls, and returns its rate in flop/s in its shortest call.
func kernelRates(impl *blas.Impl, nb int, d time.Duration) ([]float64, error) {
	pool := hugepage.NewPool(0)
	defer pool.Close()
	var ts tileSet
	r := rand.New(rand.NewPCG(1, uint64(nb)))
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
	flops := []float64{blas.PotrfFlops(nb), blas.TrsmFlops(blas.Right, nb, nb), blas.SyrkFlops(nb, nb), blas.GemmFlops(nb, nb, nb)}
	rates := make([]float64, len(boundKernels))
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for kind := range boundKernels {
			best, err := shortestCall(impl, &ts, kind, nb, d)
			if err != nil {
				errc <- fmt.Errorf("%s on %d×%d tiles: %w", boundKernels[kind], nb, nb, err)
				return
			}
			rates[kind] = flops[kind] / best.Seconds()
		}
		errc <- nil
	}()
	return rates, <-errc
}

// shortestCall calls kernel kind on ts for at least d and boundCalls calls and returns the
// duration of the shortest call.
func shortestCall(impl *blas.Impl, ts *tileSet, kind, nb int, d time.Duration) (time.Duration, error) {
	best := time.Duration(1<<63 - 1)
	end := time.Now().Add(d)
	for i := 0; i < boundCalls || time.Now().Before(end); i++ {
		// Outside the timing: POTRF factors a fresh SPD tile; TRSM's right-hand side,
		// which grows slowly call after call, restarts every 64 calls.
		if kind == 0 || (kind == 1 && i%64 == 0) {
			copy(ts.c, ts.s)
		}
		t0 := threadTime()
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
		if dt := threadTime() - t0; dt < best {
			best = dt
		}
		if err != nil {
			return 0, err
		}
	}
	return best, nil
}

// potrfBound returns the ceiling of the factorisation of an n×n matrix in nb×nb tiles on w
// workers, in flop/s, and a note with the kernel rates and which bound binds. rates are
// kernelRates' for nb.
func potrfBound(rates []float64, n, nb, w int) (float64, string) {
	work, path := kernelFlops(n, nb)
	var tWork, tPath float64
	parts := make([]string, len(rates))
	for i, r := range rates {
		tWork += work[i] / r
		tPath += path[i] / r
		parts[i] = fmt.Sprintf("%s %.1f", boundKernels[i], r/1e9)
	}
	tWork /= float64(w)
	binds := "work/w"
	if tPath > tWork {
		binds = "critical path"
	}
	t := max(tWork, tPath)
	return blas.PotrfFlops(n) / t, fmt.Sprintf("bound by %s (work/w %.3fs, path %.3fs); best-call GFLOP/s per thread: %s",
		binds, tWork, tPath, strings.Join(parts, ", "))
}
