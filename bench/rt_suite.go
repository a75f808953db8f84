package main

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/rttest"
)

func init() {
	register(Suite{Name: "rt", Applicable: func() (bool, string) { return true, "" }, Run: runRT})
}

// workload pairs an rt taskpool with the same graph for the baselines.
type workload struct {
	name  string
	n     int
	tp    func() *rt.Taskpool
	graph graph
}

func rtWorkloads(quick bool) []workload {
	m, side, fan := 1<<20, 1024, 100000
	if quick {
		m, side, fan = 1<<14, 128, 10000
	}
	return []workload{
		{"independent", m, func() *rt.Taskpool { return rttest.Independent(m, nil) }, independentGraph(m)},
		{"chain", m, func() *rt.Taskpool { return rttest.Chains(1, m, nil) }, chainsGraph(1, m)},
		{"2chains", m, func() *rt.Taskpool { return rttest.Chains(2, m/2, nil) }, chainsGraph(2, m/2)},
		{"grid", side * side, func() *rt.Taskpool { return rttest.Grid(side, side, nil) }, gridGraph(side, side)},
		{"fanout", fan + 2, func() *rt.Taskpool { return rttest.FanOutIn(fan, nil) }, fanGraph(fan)},
	}
}

func runRT(cfg *Config) ([]Row, error) {
	var rows []Row
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, w := range cfg.Workers {
		runtime.GOMAXPROCS(w)
		c, err := rt.New(rt.Workers(w), rt.Scheduler("lfq"), rt.Progress(nil))
		if err != nil {
			return rows, err
		}
		for _, wl := range rtWorkloads(cfg.Quick) {
			row := func(variant string, s Stats) Row {
				return Row{Suite: "rt", Workload: wl.name, Workers: w, Variant: variant,
					Per: float64(wl.n), Unit: "ns/task", Stats: s}
			}
			s, err := cfg.Measure(func() (time.Duration, error) {
				tp := wl.tp()
				t0 := time.Now()
				if err := c.Add(tp); err != nil {
					return 0, err
				}
				if err := tp.Wait(context.Background()); err != nil {
					return 0, err
				}
				return time.Since(t0), nil
			})
			if err != nil {
				c.Close()
				return rows, fmt.Errorf("%s: %w", wl.name, err)
			}
			r := row("jdf2go", s)
			r.Baselines = []string{"goroutines", "pool"}
			rows = append(rows, r)
			s, _ = cfg.Measure(func() (time.Duration, error) {
				t0 := time.Now()
				runGoroutines(wl.graph)
				return time.Since(t0), nil
			})
			rows = append(rows, row("goroutines", s))
			s, _ = cfg.Measure(func() (time.Duration, error) {
				t0 := time.Now()
				runPool(wl.graph, w)
				return time.Since(t0), nil
			})
			rows = append(rows, row("pool", s))
		}
		if err := c.Close(); err != nil {
			return rows, err
		}
	}
	return rows, nil
}
