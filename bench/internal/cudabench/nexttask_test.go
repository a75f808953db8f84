package cudabench

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/bench/internal/gpubench"
	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/cuda"
	"github.com/jdf2go/jdf2go/rt/gpu/driver"
	"github.com/jdf2go/jdf2go/rt/gpu/sim"
)

// TestGPUNextTask measures the next_task benchmark (docs/gpu.md, "next_task";
// the graph and the method are in bench/internal/gpubench/nexttask.go) on every
// CUDA device of the machine (one manager per device; rt spreads the parents
// by load) with rt's default workers (GOMAXPROCS, or JDF2GO_WORKERS): NG
// parents (10 000; JDF2GO_BENCH_PARENTS) that each launch the empty kernel,
// each releasing CPU successors that spin for 1µs, against the same graph
// with empty CPU parents. It prints one FIGURE line per workload, from the
// median of JDF2GO_BENCH_RUNS runs (3) after a warm-up. It skips without a
// GPU. On the GPU machine (no Go there), with the binary of make gpu-pack:
//
//	./github_com_jdf2go_jdf2go_rt_gpu_cuda_cudabench.test -test.v -test.run GPUNextTask
func TestGPUNextTask(t *testing.T) {
	if n, _ := cuda.Count(); n == 0 {
		t.Skip("skipped: no CUDA device: ", cuda.Init())
	}
	runs, parents := envInt(t, "JDF2GO_BENCH_RUNS", 3), envInt(t, "JDF2GO_BENCH_PARENTS", 10_000)
	devs, err := gpu.Open("cuda")
	if err != nil {
		t.Fatal(err)
	}
	nextTaskFigures(t, devs, parents, runs)
}

// TestNextTaskFiguresOnSim runs the figures of TestGPUNextTask on two
// simulated devices with small sizes, so that CI exercises that code.
func TestNextTaskFiguresOnSim(t *testing.T) {
	var bes []driver.Backend
	for i := range 2 {
		bes = append(bes, sim.New(sim.WithName(fmt.Sprintf("sim%d", i)), sim.WithLatency(2*time.Microsecond)))
	}
	devs, err := gpubench.OpenBackends(nil, bes...)
	if err != nil {
		t.Fatal(err)
	}
	nextTaskFigures(t, devs, 200, 1)
}

// nextTaskFigures runs the next_task workloads on devs (which it closes)
// and logs their FIGURE lines.
func nextTaskFigures(t *testing.T, devs []*gpu.RTDevice, parents, runs int) {
	t.Helper()
	nt, err := gpubench.NewNextTask(gpubench.NextTaskConfig{Devices: devs, Kernel: EmptyKernel})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := nt.Close(); err != nil {
			t.Error(err)
		}
		for _, d := range devs {
			if err := d.Close(); err != nil {
				t.Error(err)
			}
		}
	}()
	median := func(g gpubench.NextTaskGraph) gpubench.NextTaskRun {
		t.Helper()
		var rs []gpubench.NextTaskRun
		for i := range runs + 1 {
			r, err := nt.Run(g)
			if err != nil {
				t.Fatalf("%+v: %v", g, err)
			}
			if i > 0 {
				rs = append(rs, r)
			}
		}
		slices.SortFunc(rs, func(a, b gpubench.NextTaskRun) int { return cmp.Compare(a.Elapsed, b.Elapsed) })
		return rs[len(rs)/2]
	}
	for _, wl := range []struct {
		name         string
		window, succ int
	}{
		{"fan-out", 0, 8},
		{"window 8", 8, 8},
		{"window 8, one successor", 8, 1},
	} {
		g := gpubench.NextTaskGraph{GPUTasks: parents, Successors: wl.succ, Window: wl.window, Spin: time.Microsecond}
		executed := make([]uint64, len(devs))
		for i, d := range devs {
			executed[i] = d.Device().Stats().Executed
		}
		r := median(g)
		var split []string
		for i, d := range devs {
			// Over the warm-up and the timed runs of the GPU graph.
			split = append(split, fmt.Sprintf("%s %d", d.Device().Name(), d.Device().Stats().Executed-executed[i]))
		}
		g.CPUParent = true
		base := median(g)
		t.Logf("FIGURE next_task %s: %d parents × %d successors (1µs), %d workers, devices %s (parents run: %s): GPU parents %s; CPU parents %s; successors/s GPU/CPU %.2f",
			wl.name, parents, wl.succ, r.Workers, gpu.Describe(devs), strings.Join(split, ", "),
			r.Summary(), base.Summary(), r.PerSecond()/base.PerSecond())
	}
}

// envInt reads a positive integer from the environment, or returns def.
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return v
}
