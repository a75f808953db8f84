package main

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/jdf2go/jdf2go/bench/internal/gpubench"
)

// The gpu-nexttask suite (docs/gpu.md, "next_task"): CPU successors of
// GPU tasks picked up by other workers while a manager runs, on one
// simulated device (bench/internal/gpubench's NextTask, whose file comment gives the
// graph and the method). NG = 2000 parent tasks (-quick: 300), each
// releasing NS CPU successors that spin for 1µs; a parent on the device is
// one operation of 5µs of virtual time; successors outrank parents. Workers:
// each -workers count of at least 2 (2 when none is), lfq scheduler.
// Workloads:
//
//	nexttask-fanout:      NS = 8, every parent ready at start;
//	nexttask-window8:     NS = 8, parent g also waits for successor (g-8, 0),
//	                      so at most 8 parents are ready or running at once and
//	                      the critical path goes through successors;
//	nexttask-window8-ns1: the same with one successor per parent, which rt
//	                      always puts in the completing worker's next_task slot:
//	                      without the manager's flush it would stay hidden there.
//
// Variants: "gpu parent" (the parents run on the device) against
// "cpu parent" (the same graph with empty CPU parents, the baseline); time
// per successor from Context.Add to the end of Taskpool.Wait. The note of a
// gpu row, from the run with the median time, gives the share of successors
// run by workers other than the manager (and how many while its episode
// still ran), the share the manager ran after its episodes, the latency
// from a parent's release to its successors' start (median, p99, max) and
// the number of management episodes; the cpu row's note gives the share run
// by the parent's own worker (its next_task slot, its queue).
func init() {
	register(Suite{Name: "gpu-nexttask", Applicable: func() (bool, string) { return true, "" }, Run: runGPUNextTask})
}

func runGPUNextTask(cfg *Config) ([]Row, error) {
	parents := 2000
	if cfg.Quick {
		parents = 300
	}
	workloads := []struct {
		name         string
		window, succ int
	}{
		{"nexttask-fanout", 0, 8},
		{"nexttask-window8", 8, 8},
		{"nexttask-window8-ns1", 8, 1},
	}
	var workers []int
	for _, w := range cfg.Workers {
		if w >= 2 {
			workers = append(workers, w)
		}
	}
	if len(workers) == 0 {
		workers = []int{2}
	}
	var rows []Row
	for _, w := range workers {
		nt, err := gpubench.NewNextTask(gpubench.NextTaskConfig{Workers: w, Latency: 5 * time.Microsecond})
		if err != nil {
			return rows, err
		}
		for _, wl := range workloads {
			for _, cpu := range []bool{false, true} {
				g := gpubench.NextTaskGraph{GPUTasks: parents, Successors: wl.succ, Window: wl.window, Spin: time.Microsecond, CPUParent: cpu}
				var runs []gpubench.NextTaskRun
				s, err := cfg.Measure(func() (time.Duration, error) {
					r, err := nt.Run(g)
					runs = append(runs, r)
					return r.Elapsed, err
				})
				variant := "gpu parent"
				if cpu {
					variant = "cpu parent"
				}
				if err != nil {
					return rows, fmt.Errorf("%s %s, %d workers: %w", wl.name, variant, w, err)
				}
				r := Row{Suite: "gpu-nexttask", Workload: wl.name, Workers: w, Variant: variant,
					Per: float64(parents * wl.succ), Unit: "ns/successor", Stats: s}
				for _, run := range runs[1:] { // runs[0] is the warm-up
					if run.Elapsed == s.Median {
						r.Note = run.Summary()
					}
				}
				if !cpu {
					r.Baselines = []string{"cpu parent"}
				}
				// The table has no column for the figures of the note.
				slog.Info("gpu-nexttask", "workload", wl.name, "workers", w, "variant", variant, "median run", r.Note)
				rows = append(rows, r)
			}
		}
		if err := nt.Close(); err != nil {
			return rows, err
		}
	}
	return rows, nil
}
