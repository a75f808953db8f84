package main

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"time"

	"github.com/jdf2go/jdf2go/examples/potrf/cholesky"
	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
)

// The dense linear algebra suite (docs/runtime.md, "Benchmarks"): the tiled Cholesky
// factorisation of examples/potrf.jdf (package cholesky) on a random SPD matrix (blas.FillSPD,
// seed 1).
//
//	potrf-openblas: N=8192 (-quick: 4096), NB 128, 192, 256 and 320, and on the largest
//	    worker count also 384 and 512, with OpenBLAS tile kernels (single-threaded inside
//	    tasks), on the lfq scheduler (variant jdf2go) and, on the largest worker count, on
//	    the strict-priority ap scheduler (jdf2go-ap),
//	    against OpenBLAS's own LAPACK dpotrf_ on the same number of threads (variant lapack,
//	    openblas_set_num_threads(w), checked), measured once per worker count and shown in
//	    every NB row. Goal: ≥ 95 GFLOP/s on 2 workers and ratio ≤ 1.0 to lapack. Tiles and
//	    lapack's matrix are in the Go heap (huge pages made no measurable difference to
//	    either). ceiling (every worker count) is the rate that no schedule of these tasks
//	    on w workers can exceed with these kernels (potrf_bound.go: each kernel's shortest
//	    call on one thread, the work spread perfectly and the critical path); jdf2go's
//	    ratio to it is its distance from that bound.
//	potrf-gonum: N=4096 (-quick: 2048), NB 128 to 320 with gonum tile kernels, against
//	    gonum's mat.Cholesky (variant mat.Cholesky, Dgemm spread over GOMAXPROCS
//	    goroutines). Goal: ratio ≤ 1/1.5.
//
// Every variant runs with GOMAXPROCS = workers; the scheduler is lfq unless the variant
// says otherwise, and tracing is off. The rows' unit is ns per kflop, so the rate/s column
// reads in G flop/s (M kflop/s); each row's note (in results.json) gives GFLOP/s. The factor
// of the first jdf2go run of each backend is checked (‖A − L·Lᵀ‖/‖A‖ < 1e-12).
func init() {
	register(Suite{Name: "potrf", Applicable: func() (bool, string) { return true, "" }, Run: runPotrf})
}

var (
	potrfNBs      = []int{128, 192, 256, 320}
	potrfExtraNBs = []int{384, 512} // OpenBLAS, largest worker count only
)

// potrfSpec is one backend's part of the suite.
type potrfSpec struct {
	name     string
	n        int
	nbs      []int // every worker count
	extraNBs []int // the largest worker count only
	impl     *blas.Impl
	openblas bool // ap and ceiling variants
	baseName string
	// baseline factors a copy of p.Dense in a, a buffer of the same size.
	baseline func(p *cholesky.Problem, w int, a []float64) (time.Duration, error)
}

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
		rs, err := potrfWorkloads(cfg, potrfSpec{name: "potrf-openblas", n: nOpen, nbs: potrfNBs, extraNBs: potrfExtraNBs, impl: ob,
			openblas: true, baseName: "lapack",
			baseline: func(p *cholesky.Problem, w int, a []float64) (time.Duration, error) {
				return lapackPotrf(ob, p, w, a)
			}})
		rows = append(rows, rs...)
		if err != nil {
			return rows, err
		}
	}
	rs, err := potrfWorkloads(cfg, potrfSpec{name: "potrf-gonum", n: nGonum, nbs: potrfNBs, impl: blas.Gonum(),
		baseName: "mat.Cholesky", baseline: matCholesky})
	return append(rows, rs...), err
}

// potrfWorkloads measures jdf2go at every NB and the baseline once, for each worker count.
func potrfWorkloads(cfg *Config, spec potrfSpec) ([]Row, error) {
	var rows []Row
	checker := spec.impl
	if ob, err := blas.OpenBLAS(); err == nil {
		checker = ob // the residual of a gonum factor is checked faster with OpenBLAS
	}
	n := spec.n
	flops := blas.PotrfFlops(n)
	row := func(nb, w int, variant string, s Stats, base ...string) Row {
		return Row{Suite: "potrf", Workload: fmt.Sprintf("%s N=%d NB=%d", spec.name, n, nb), Workers: w,
			Variant: variant, Per: flops / 1e3, Unit: "ns/kflop", Stats: s, Baselines: base,
			Note: fmt.Sprintf("%.1f GFLOP/s (median)", flops/s.Median.Seconds()/1e9)}
	}
	maxW := slices.Max(cfg.Workers)
	// One dense matrix for every NB: only the tiles are cut again.
	dense := make([]float64, n*n)
	if err := blas.FillSPD(n, dense, n, 1); err != nil {
		return rows, err
	}
	checked := false
	kernelRateCache := map[int][]float64{} // by NB: they do not depend on the workers
	for _, w := range cfg.Workers {
		runtime.GOMAXPROCS(w)
		scheds := []string{"lfq"}
		if spec.openblas && w == maxW {
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
			c, err := rt.New(rt.Workers(w), rt.Scheduler(s), rt.Progress(nil))
			if err != nil {
				closeAll()
				return rows, err
			}
			ctxs[s] = c
		}
		var base Stats
		var baseErr error
		nbs := spec.nbs
		if w == maxW {
			nbs = append(slices.Clip(nbs), spec.extraNBs...)
		}
		for i, nb := range nbs {
			rs, err := func() ([]Row, error) {
				var rs []Row
				a, err := rt.NewTiledMatrix(n, n, nb, nb, 1, 1, 0)
				if err != nil {
					return rs, err
				}
				p := &cholesky.Problem{N: n, NB: nb, Dense: dense, A: a}
				if i == 0 {
					a := make([]float64, len(p.Dense))
					base, baseErr = cfg.Measure(func() (time.Duration, error) { return spec.baseline(p, w, a) })
					if baseErr != nil {
						slog.Error("potrf baseline failed", "baseline", spec.baseName, "err", baseErr)
					}
				}
				type variant struct{ name, sched string }
				vs := []variant{{"jdf2go", "lfq"}}
				if ctxs["ap"] != nil {
					vs = append(vs, variant{"jdf2go-ap", "ap"})
				}
				var bases []string
				if baseErr == nil {
					bases = append(bases, spec.baseName)
				}
				var ceiling time.Duration
				if spec.openblas {
					rates := kernelRateCache[nb]
					if rates == nil {
						if rates, err = kernelRates(spec.impl, nb, 300*time.Millisecond); err != nil {
							return rs, err
						}
						kernelRateCache[nb] = rates
					}
					rate, note := potrfBound(rates, n, nb, w)
					ceiling = time.Duration(flops / rate * 1e9)
					r := row(nb, w, "ceiling", Stats{Median: ceiling, Min: ceiling, Max: ceiling})
					r.Note = fmt.Sprintf("%.1f GFLOP/s ceiling; %s", rate/1e9, note)
					rs = append(rs, r)
					bases = append(bases, "ceiling")
				}
				for _, v := range vs {
					s, err := cfg.Measure(func() (time.Duration, error) {
						p.Reset()
						t0 := time.Now()
						if err := cholesky.Factor(context.Background(), ctxs[v.sched], p.A, spec.impl); err != nil {
							return 0, err
						}
						return time.Since(t0), nil
					})
					if err != nil {
						return rs, fmt.Errorf("%s NB=%d %s: %w", spec.name, nb, v.name, err)
					}
					if !checked {
						res, err := p.Residual(checker)
						if err != nil || !(res < 1e-12) {
							return rs, fmt.Errorf("%s NB=%d: residual %g (%v)", spec.name, nb, res, err)
						}
						checked = true
					}
					r := row(nb, w, v.name, s, bases...)
					if s.Min < ceiling {
						// The ceiling's kernel timings were slowed down more than this run.
						slog.Warn("potrf: a run beat the ceiling; the machine was busier while the kernels were timed",
							"workload", r.Workload, "workers", w, "variant", v.name, "min", s.Min, "ceiling", ceiling)
						r.Note += "; faster than the ceiling (kernel timings disturbed)"
					}
					rs = append(rs, r)
					slog.Info("potrf", "workload", r.Workload, "workers", w, "variant", v.name, "rate", r.Note)
				}
				if baseErr == nil {
					rs = append(rs, row(nb, w, spec.baseName, base))
				}
				return rs, nil
			}()
			rows = append(rows, rs...)
			if err != nil {
				closeAll()
				return rows, err
			}
		}
		if err := closeAll(); err != nil {
			return rows, err
		}
	}
	return rows, nil
}

// lapackPotrf times OpenBLAS's dpotrf_ with w threads (then back to one, as the tile
// kernels need) on the whole dense matrix, copied into a (len(p.Dense) elements).
func lapackPotrf(ob *blas.Impl, p *cholesky.Problem, w int, a []float64) (time.Duration, error) {
	copy(a, p.Dense)
	prev, err := ob.SetThreads(w)
	if err != nil {
		return 0, err
	}
	defer ob.SetThreads(prev)
	if got := ob.Threads(); got != w {
		return 0, fmt.Errorf("OpenBLAS runs %d threads, not %d", got, w)
	}
	t0 := time.Now()
	if err := ob.Dpotrf(blas.Lower, p.N, a, p.N); err != nil {
		return 0, err
	}
	return time.Since(t0), nil
}

// matCholesky times gonum's mat.Cholesky on the whole dense matrix (GOMAXPROCS is w).
func matCholesky(p *cholesky.Problem, w int, a []float64) (time.Duration, error) {
	copy(a, p.Dense)
	t0 := time.Now()
	if err := blas.MatCholesky(p.N, a, p.N); err != nil {
		return 0, err
	}
	return time.Since(t0), nil
}
