package main

import (
	"fmt"
	"time"

	"github.com/jdf2go/jdf2go/bench/internal/gpubench"
	"github.com/jdf2go/jdf2go/rt/gpu"
)

// The gpu-sim suite (docs/runtime.md, "Benchmarks", simulated device): tasks/s through
// the GPU manager for singleton tasks and for batched tasks with batch_max
// 8, 32 and 128, in two regimes:
//
//   - device-bound (workload "manager"): each kernel takes 5µs of virtual
//     device time and nothing on the host, so streams fill and tasks wait in
//     their FIFOs;
//   - launch-bound (workload "manager-launch"): each launch costs 20µs of host
//     time on the manager (a cuBLAS call on a tiny matrix) and the device
//     nothing, the situation where batching used to form rings of one.
//
// Each regime runs with the default manager loop (variant names alone),
// which takes up to 64 waiting submissions per iteration, and with PaRSEC's
// one submission per iteration ("drain=1" variants). Each batched row
// carries its time ratio to the singleton row of its loop (below 1: batching
// is faster; the tasks/s speed-up is its inverse), and each default row its
// ratio to the drain=1 row. The tasks are queued on the device before the
// timed part starts (gpubench.Throughput), so the figure is the manager's, not
// the submitters'. Real-GPU figures come with the CUDA suite.

func init() {
	register(Suite{Name: "gpu-sim", Applicable: func() (bool, string) { return true, "" }, Run: runGPUSim})
}

func runGPUSim(cfg *Config) ([]Row, error) {
	const workers = 2
	regimes := []struct {
		workload        string
		tasks           int
		latency, launch time.Duration
	}{
		{"manager", 200_000, 5 * time.Microsecond, 0},
		{"manager-launch", 20_000, 0, 20 * time.Microsecond},
	}
	var rows []Row
	for _, rg := range regimes {
		tasks := rg.tasks
		if cfg.Quick {
			tasks /= 10
		}
		for _, drain := range []int{gpu.DefaultPendingDrain, 1} {
			suffix := ""
			if drain == 1 {
				suffix = " drain=1"
			}
			for _, bm := range []int{1, 8, 32, 128} {
				variant := "singleton"
				if bm > 1 {
					variant = fmt.Sprintf("batch_max=%d", bm)
				}
				var batch float64
				s, err := cfg.Measure(func() (time.Duration, error) {
					r, err := gpubench.Throughput(gpubench.ThroughputConfig{Tasks: tasks, BatchMax: bm, Workers: workers,
						Latency: rg.latency, HostCost: rg.launch, PendingDrain: drain})
					batch = r.MeanBatch()
					return r.Elapsed, err
				})
				if err != nil {
					return rows, fmt.Errorf("%s %s%s: %w", rg.workload, variant, suffix, err)
				}
				r := Row{Suite: "gpu-sim", Workload: rg.workload, Workers: workers, Variant: variant + suffix,
					Per: float64(tasks), Unit: "ns/task", Stats: s,
					Note: fmt.Sprintf("%.0f tasks/s, %.1f tasks/ring", float64(tasks)/s.Median.Seconds(), batch)}
				if bm > 1 {
					r.Baselines = []string{"singleton" + suffix}
				}
				if drain == 1 {
					// The drain=1 rows come second; point the default rows at them.
					for i := range rows {
						if rows[i].Workload == rg.workload && rows[i].Variant == variant {
							rows[i].Baselines = append(rows[i].Baselines, variant+suffix)
						}
					}
				}
				rows = append(rows, r)
			}
		}
	}
	return rows, nil
}
