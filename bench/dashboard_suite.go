package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"time"

	"github.com/jdf2go/jdf2go/examples/potrf/cholesky"
	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
)

// The dashboard's cost: the tiled Cholesky of examples/potrf.jdf, N=8192 (-quick: 2048),
// NB=256, OpenBLAS tile kernels (gonum without OpenBLAS), on the largest worker count, with
// the dashboard off (variant off) and on with a page connected to its stream (variant on),
// in two Contexts. The runs alternate between the two so that both see the same drift of a
// shared machine; the on row's note also gives the median of the ratios of each on run to the
// off run just before it, and the same for the process's CPU time (user and system; workers
// park when idle), both of which a loaded machine skews less. Goal: on/off ≤ 1.02.
func init() {
	register(Suite{Name: "dashboard", Applicable: func() (bool, string) { return true, "" }, Run: runDashboard})
}

func runDashboard(cfg *Config) ([]Row, error) {
	n, nb := 8192, 256
	if cfg.Quick {
		n = 2048
	}
	impl, err := blas.OpenBLAS()
	if err != nil {
		impl = blas.Gonum()
	}
	w := slices.Max(cfg.Workers)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(w))
	p, err := cholesky.NewProblem(n, nb, 1)
	if err != nil {
		return nil, err
	}
	off, err := rt.New(rt.Workers(w))
	if err != nil {
		return nil, err
	}
	defer off.Close()
	on, err := rt.New(rt.Workers(w), rt.Dashboard("localhost:0"))
	if err != nil {
		return nil, err
	}
	defer on.Close()
	// A page reading the stream, as a browser would.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", on.DashboardURL()+"api/stream", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("dashboard stream: %w", err)
	}
	defer resp.Body.Close()
	go io.Copy(io.Discard, resp.Body) // ends when cancel closes the stream

	cpu := map[string][]time.Duration{}
	factor := func(c *rt.Context, v string) (time.Duration, error) {
		p.Reset()
		runtime.GC()
		t0, c0 := time.Now(), processCPU()
		err := cholesky.Factor(context.Background(), c, p.A, impl)
		d := time.Since(t0)
		cpu[v] = append(cpu[v], processCPU()-c0)
		return d, err
	}
	times := map[string][]time.Duration{}
	for i := -1; i < cfg.Runs; i++ { // run -1 warms both up
		for _, v := range []struct {
			name string
			c    *rt.Context
		}{{"off", off}, {"on", on}} {
			d, err := factor(v.c, v.name)
			if err != nil {
				return nil, fmt.Errorf("dashboard %s: %w", v.name, err)
			}
			if i >= 0 {
				times[v.name] = append(times[v.name], d)
			}
		}
	}
	flops := blas.PotrfFlops(n)
	var paired, pairedCPU []float64
	for i, d := range times["on"] {
		paired = append(paired, d.Seconds()/times["off"][i].Seconds())
		// cpu also holds the warm-up runs: index i+1.
		if off := cpu["off"][i+1]; off > 0 {
			pairedCPU = append(pairedCPU, cpu["on"][i+1].Seconds()/off.Seconds())
		}
	}
	slices.Sort(paired)
	slices.Sort(pairedCPU)
	var rows []Row
	for _, v := range []string{"off", "on"} {
		ds := times[v]
		slices.Sort(ds)
		s := Stats{Median: ds[len(ds)/2], Min: ds[0], Max: ds[len(ds)-1]}
		r := Row{Suite: "dashboard", Workload: fmt.Sprintf("potrf-%s N=%d NB=%d", impl.Name(), n, nb), Workers: w,
			Variant: v, Per: flops / 1e3, Unit: "ns/kflop", Stats: s,
			Note: fmt.Sprintf("%.1f GFLOP/s (median)", flops/s.Median.Seconds()/1e9)}
		if v == "on" {
			r.Baselines = []string{"off"}
			r.Note += fmt.Sprintf("; median of paired on/off ratios %.3f", paired[len(paired)/2])
			if len(pairedCPU) > 0 {
				r.Note += fmt.Sprintf(", of CPU time %.3f", pairedCPU[len(pairedCPU)/2])
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}
