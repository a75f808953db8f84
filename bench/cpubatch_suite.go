package main

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/jdf2go/jdf2go/examples/histogram/hist"
	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/rttest"
)

// The cpu-batch suite (docs/runtime.md, "Benchmarks"): tasks/s of batched CPU bodies
// against the same bodies run one task at a time, on the largest worker count of -workers:
//
//   - histogram: examples/histogram.jdf (package hist), 200 000 tasks (-quick: 20 000) that
//     each count 32 samples into a shared histogram of 256 bins; a ring merges its counts
//     once, under the histogram's lock, instead of once per task. The result is checked.
//   - independent: 1 M tasks (-quick: 100 000) without dependencies whose batched body only
//     counts its rings (rttest.IndependentBatched): what a ring saves in the runtime itself.
//
// Variants: singleton (rt.Batching(false): every ring holds one task) and batch_max=8 and
// batch_max=64, each with its time ratio to singleton (below 1: batching is faster; the
// tasks/s speed-up is its inverse) and, in its note, tasks/s and tasks per ring.
func init() {
	register(Suite{Name: "cpu-batch", Applicable: func() (bool, string) { return true, "" }, Run: runCPUBatch})
}

func runCPUBatch(cfg *Config) ([]Row, error) {
	w := slices.Max(cfg.Workers)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(w))
	hn, in := 200_000, 1_000_000
	if cfg.Quick {
		hn, in = 20_000, 100_000
	}
	v, err := hist.Samples(hn, 32)
	if err != nil {
		return nil, err
	}
	var rings atomic.Int64
	workloads := []struct {
		name string
		n    int
		// run runs the workload once with batch_max max on c and returns its time and rings.
		run func(c *rt.Context, max int) (time.Duration, int64, error)
	}{
		{"histogram", hn, func(c *rt.Context, max int) (time.Duration, int64, error) {
			h, d, err := hist.Run(c, v, max)
			if err == nil {
				err = hist.Check(h, v)
			}
			if err != nil {
				return 0, 0, err
			}
			return d, h.Merges, nil
		}},
		{"independent", in, func(c *rt.Context, max int) (time.Duration, int64, error) {
			rings.Store(0)
			tp := rttest.IndependentBatched(in, max, func(*rt.Task) error { rings.Add(1); return nil })
			t0 := time.Now()
			if err := c.Add(tp); err != nil {
				return 0, 0, err
			}
			err := tp.Wait(context.Background())
			return time.Since(t0), rings.Load(), err
		}},
	}
	var rows []Row
	for _, wl := range workloads {
		for _, bm := range []int{1, 8, 64} {
			variant := "singleton"
			if bm > 1 {
				variant = fmt.Sprintf("batch_max=%d", bm)
			}
			c, err := rt.New(rt.Workers(w), rt.Progress(nil), rt.Batching(bm > 1))
			if err != nil {
				return rows, err
			}
			var ringsRun int64
			s, err := cfg.Measure(func() (time.Duration, error) {
				d, r, err := wl.run(c, bm)
				ringsRun = r
				return d, err
			})
			if cerr := c.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return rows, fmt.Errorf("%s %s: %w", wl.name, variant, err)
			}
			r := Row{Suite: "cpu-batch", Workload: wl.name, Workers: w, Variant: variant,
				Per: float64(wl.n), Unit: "ns/task", Stats: s,
				Note: fmt.Sprintf("%.0f tasks/s, %.1f tasks/ring", float64(wl.n)/s.Median.Seconds(), float64(wl.n)/float64(max(ringsRun, 1)))}
			if bm > 1 {
				r.Baselines = []string{"singleton"}
			}
			rows = append(rows, r)
		}
	}
	return rows, nil
}
