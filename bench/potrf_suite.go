package main

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/jdf2go/jdf2go/examples/potrf/cholesky"
	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
)

// The dense linear algebra suite (benchmarks.md §2): the tiled Cholesky factorisation of
// examples/potrf.jdf (package cholesky) on a random SPD matrix (blas.FillSPD, seed 1).
//
//	potrf-openblas: N=8192 (-quick: 4096), NB 128, 192, 256 and 320, with OpenBLAS tile
//	    kernels (single-threaded inside tasks), on the lfq scheduler (variant jdf2go) and on
//	    the strict-priority ap scheduler (jdf2go-ap), against OpenBLAS's own LAPACK dpotrf on
//	    the same number of threads (variant lapack), measured once per worker count and
//	    shown in every NB row. Goal: ≥ 95 GFLOP/s on 2 workers and ratio ≤ 1.0 to lapack.
//	potrf-gonum: N=4096 (-quick: 2048), the same NBs with gonum tile kernels, against
//	    gonum's mat.Cholesky (variant mat.Cholesky, Dgemm spread over GOMAXPROCS
//	    goroutines). Goal: ratio ≤ 1/1.5.
//
// Every variant runs with GOMAXPROCS = workers; the scheduler is lfq unless the variant
// says otherwise, and tracing is off. The
// rows' unit is ns per kflop, so the rate/s column reads in G flop/s (M kflop/s); each row's
// note (in results.json) gives GFLOP/s. The factor of the first jdf2go run of each backend
// is checked (‖A − L·Lᵀ‖/‖A‖ < 1e-12).
func init() {
	register(Suite{Name: "potrf", Applicable: func() (bool, string) { return true, "" }, Run: runPotrf})
}

var potrfNBs = []int{128, 192, 256, 320}

func runPotrf(cfg *Config) ([]Row, error) {
	nOpen, nGonum := 8192, 4096
	if cfg.Quick {
		nOpen, nGonum = 4096, 2048
	}
	var rows []Row
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	if ob, err := blas.OpenBLAS(); err != nil {
		slog.Info("potrf-openblas skipped", "err", err)
	} else {
		rs, err := potrfWorkloads(cfg, "potrf-openblas", nOpen, ob, true, "lapack", func(p *cholesky.Problem, w int) (time.Duration, error) {
			return lapackPotrf(ob, p, w)
		})
		rows = append(rows, rs...)
		if err != nil {
			return rows, err
		}
	}
	rs, err := potrfWorkloads(cfg, "potrf-gonum", nGonum, blas.Gonum(), false, "mat.Cholesky", matCholesky)
	return append(rows, rs...), err
}

// potrfWorkloads measures jdf2go at every NB (also on the ap scheduler when withAP) and the
// baseline once, for each worker count.
func potrfWorkloads(cfg *Config, name string, n int, impl *blas.Impl, withAP bool, baseName string,
	baseline func(*cholesky.Problem, int) (time.Duration, error)) ([]Row, error) {
	var rows []Row
	checker := impl
	if ob, err := blas.OpenBLAS(); err == nil {
		checker = ob // the residual of a gonum factor is checked faster with OpenBLAS
	}
	flops := blas.PotrfFlops(n)
	row := func(nb, w int, variant string, s Stats, base ...string) Row {
		return Row{Suite: "potrf", Workload: fmt.Sprintf("%s N=%d NB=%d", name, n, nb), Workers: w,
			Variant: variant, Per: flops / 1e3, Unit: "ns/kflop", Stats: s, Baselines: base,
			Note: fmt.Sprintf("%.1f GFLOP/s (median)", flops/s.Median.Seconds()/1e9)}
	}
	checked := false
	for _, w := range cfg.Workers {
		runtime.GOMAXPROCS(w)
		scheds := []string{"lfq"}
		if withAP {
			scheds = append(scheds, "ap")
		}
		ctxs := map[string]*rt.Context{}
		closeAll := func() error {
			var first error
			for _, c := range ctxs {
				if err := c.Close(); err != nil && first == nil {
					first = err
				}
			}
			return first
		}
		for _, s := range scheds {
			c, err := rt.New(rt.Workers(w), rt.Scheduler(s))
			if err != nil {
				closeAll()
				return rows, err
			}
			ctxs[s] = c
		}
		var base Stats
		var baseErr error
		for i, nb := range potrfNBs {
			p, err := cholesky.NewProblem(n, nb, 1)
			if err != nil {
				closeAll()
				return rows, err
			}
			if i == 0 {
				base, baseErr = cfg.Measure(func() (time.Duration, error) { return baseline(p, w) })
				if baseErr != nil {
					slog.Error("potrf baseline failed", "baseline", baseName, "err", baseErr)
				}
			}
			for _, sched := range scheds {
				s, err := cfg.Measure(func() (time.Duration, error) {
					p.Reset()
					t0 := time.Now()
					if err := cholesky.Factor(context.Background(), ctxs[sched], p.A, impl); err != nil {
						return 0, err
					}
					return time.Since(t0), nil
				})
				if err != nil {
					closeAll()
					return rows, fmt.Errorf("%s NB=%d %s: %w", name, nb, sched, err)
				}
				if !checked {
					res, err := p.Residual(checker)
					if err != nil || !(res < 1e-12) {
						closeAll()
						return rows, fmt.Errorf("%s NB=%d: residual %g (%v)", name, nb, res, err)
					}
					checked = true
				}
				variant := "jdf2go"
				if sched != "lfq" {
					variant += "-" + sched
				}
				r := row(nb, w, variant, s)
				if baseErr == nil {
					r.Baselines = []string{baseName}
				}
				rows = append(rows, r)
				slog.Info("potrf", "workload", r.Workload, "workers", w, "variant", variant, "rate", r.Note)
			}
			if baseErr == nil {
				rows = append(rows, row(nb, w, baseName, base))
			}
		}
		if err := closeAll(); err != nil {
			return rows, err
		}
	}
	return rows, nil
}

// lapackPotrf times OpenBLAS's dpotrf on the whole dense matrix with w threads (then back
// to one, as the tile kernels need).
func lapackPotrf(ob *blas.Impl, p *cholesky.Problem, w int) (time.Duration, error) {
	a := append([]float64(nil), p.Dense...)
	prev, err := ob.SetThreads(w)
	if err != nil {
		return 0, err
	}
	defer ob.SetThreads(prev)
	t0 := time.Now()
	if err := ob.Dpotrf(blas.Lower, p.N, a, p.N); err != nil {
		return 0, err
	}
	return time.Since(t0), nil
}

// matCholesky times gonum's mat.Cholesky on the whole dense matrix (GOMAXPROCS is w).
func matCholesky(p *cholesky.Problem, w int) (time.Duration, error) {
	a := append([]float64(nil), p.Dense...)
	t0 := time.Now()
	if err := blas.MatCholesky(p.N, a, p.N); err != nil {
		return 0, err
	}
	return time.Since(t0), nil
}
