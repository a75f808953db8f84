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

// The dynamic Cholesky suite: the tiled Cholesky written as a dynamic task graph
// (cholesky.FactorDynamic, examples/dpotrf) against potrf.jdf's taskpool (cholesky.Factor), on
// one Context, N=8192 (-quick: 2048), NB 320 and 512, with OpenBLAS tile kernels
// (single-threaded inside tasks), the lfq scheduler, on each worker count of -workers except
// 1 (the goal is stated for 2). The two variants alternate run by run (after one warm-up
// each), so that a shared machine's drift falls on both; each row is the median of -runs runs.
// Variant dynamic carries its ratio to variant ptg (time / time); the goal is a throughput of
// at least 0.97× the PTG's, i.e. a ratio of at most 1/0.97. The factor of each variant's
// first run is checked (‖A − L·Lᵀ‖/‖A‖ < 1e-12). Without OpenBLAS the suite is skipped.
func init() {
	register(Suite{Name: "dpotrf", Applicable: func() (bool, string) {
		if _, err := blas.OpenBLAS(); err != nil {
			return false, "no OpenBLAS: " + err.Error()
		}
		return true, ""
	}, Run: runDpotrf})
}

var dpotrfNBs = []int{320, 512}

func runDpotrf(cfg *Config) ([]Row, error) {
	ob, err := blas.OpenBLAS()
	if err != nil {
		return nil, err
	}
	n := 8192
	if cfg.Quick {
		n = 2048
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	dense := make([]float64, n*n)
	if err := blas.FillSPD(n, dense, n, 1); err != nil {
		return nil, err
	}
	flops := blas.PotrfFlops(n)
	var rows []Row
	for _, w := range cfg.Workers {
		if w < 2 && len(cfg.Workers) > 1 {
			continue
		}
		runtime.GOMAXPROCS(w)
		c, err := rt.New(rt.Workers(w), rt.Scheduler("lfq"), rt.Progress(nil))
		if err != nil {
			return rows, err
		}
		for _, nb := range dpotrfNBs {
			a, err := rt.NewTiledMatrix(n, n, nb, nb, 1, 1, 0)
			if err != nil {
				c.Close()
				return rows, err
			}
			p := &cholesky.Problem{N: n, NB: nb, Dense: dense, A: a}
			variants := []struct {
				name   string
				factor func() error
			}{
				{"ptg", func() error { return cholesky.Factor(context.Background(), c, p.A, ob) }},
				{"dynamic", func() error { return cholesky.FactorDynamic(context.Background(), c, p.A, ob) }},
			}
			stats, err := interleaved(cfg.Runs, len(variants), func(v, run int) (time.Duration, error) {
				p.Reset()
				runtime.GC()
				t0 := time.Now()
				if err := variants[v].factor(); err != nil {
					return 0, fmt.Errorf("%s NB=%d: %w", variants[v].name, nb, err)
				}
				d := time.Since(t0)
				if run == 0 {
					if res, err := p.Residual(ob); err != nil || !(res < 1e-12) {
						return 0, fmt.Errorf("%s NB=%d: residual %g (%v)", variants[v].name, nb, res, err)
					}
				}
				return d, nil
			})
			if err != nil {
				c.Close()
				return rows, err
			}
			for v, s := range stats {
				r := Row{Suite: "dpotrf", Workload: fmt.Sprintf("cholesky-openblas N=%d NB=%d", n, nb), Workers: w,
					Variant: variants[v].name, Per: flops / 1e3, Unit: "ns/kflop", Stats: s,
					Note: fmt.Sprintf("%.1f GFLOP/s (median)", flops/s.Median.Seconds()/1e9)}
				if variants[v].name == "dynamic" {
					r.Baselines = []string{"ptg"}
					r.Note += fmt.Sprintf("; %.3f× the PTG's GFLOP/s (goal ≥ 0.97)", float64(stats[0].Median)/float64(s.Median))
				}
				rows = append(rows, r)
				slog.Info("dpotrf", "workload", r.Workload, "workers", w, "variant", r.Variant, "rate", r.Note)
			}
		}
		if err := c.Close(); err != nil {
			return rows, err
		}
	}
	return rows, nil
}

// interleaved measures nv variants in turns: one warm-up run of each, then runs rounds in
// which each variant runs once, so that the machine's drift falls on all of them alike. f(v,
// run) runs variant v (run 0 is its warm-up) and returns the time of its measured part.
func interleaved(runs, nv int, f func(v, run int) (time.Duration, error)) ([]Stats, error) {
	ds := make([][]time.Duration, nv)
	for run := 0; run <= runs; run++ {
		for v := range nv {
			d, err := f(v, run)
			if err != nil {
				return nil, err
			}
			if run > 0 {
				ds[v] = append(ds[v], d)
			}
		}
	}
	stats := make([]Stats, nv)
	for v, d := range ds {
		slices.Sort(d)
		stats[v] = Stats{Median: d[len(d)/2], Min: d[0], Max: d[len(d)-1]}
	}
	return stats, nil
}
