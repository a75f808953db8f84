package main

import (
	"fmt"
	"time"

	"github.com/jdf2go/jdf2go/rt/gpu/sim"
)

// The gpu-sim suite (benchmarks.md §3, simulated device): tasks/s through
// the GPU manager for singleton tasks and for batched tasks with batch_max
// 8, 32 and 128, with a 5µs virtual launch cost per kernel. Each batched row
// carries its time ratio to the singleton row (below 1: batching is faster;
// the tasks/s speed-up is its inverse). The tasks are queued on the device
// before the timed part starts (sim.Throughput), so the figure is the
// manager's, not the submitters'. Real-GPU figures come with the CUDA suite.

func init() {
	register(Suite{Name: "gpu-sim", Applicable: func() (bool, string) { return true, "" }, Run: runGPUSim})
}

func runGPUSim(cfg *Config) ([]Row, error) {
	tasks := 200_000
	if cfg.Quick {
		tasks = 20_000
	}
	const workers = 2
	var rows []Row
	for _, bm := range []int{1, 8, 32, 128} {
		variant := "singleton"
		if bm > 1 {
			variant = fmt.Sprintf("batch_max=%d", bm)
		}
		var batch float64
		s, err := cfg.Measure(func() (time.Duration, error) {
			r, err := sim.Throughput(sim.ThroughputConfig{Tasks: tasks, BatchMax: bm, Workers: workers, Latency: 5 * time.Microsecond})
			batch = r.MeanBatch()
			return r.Elapsed, err
		})
		if err != nil {
			return rows, fmt.Errorf("%s: %w", variant, err)
		}
		r := Row{Suite: "gpu-sim", Workload: "manager", Workers: workers, Variant: variant,
			Per: float64(tasks), Unit: "ns/task", Stats: s,
			Note: fmt.Sprintf("%.0f tasks/s, %.1f tasks/ring", float64(tasks)/s.Median.Seconds(), batch)}
		if bm > 1 {
			r.Baselines = []string{"singleton"}
		}
		rows = append(rows, r)
	}
	return rows, nil
}
