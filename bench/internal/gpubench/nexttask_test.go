package gpubench_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/bench/internal/gpubench"
	"github.com/jdf2go/jdf2go/rt/gpu"
)

// TestNextTaskRuns runs small next_task graphs on 2 workers and one
// simulated device and checks that the analysis accounts for every
// successor (who ran it, when) consistently with the graph's shape.
func TestNextTaskRuns(t *testing.T) {
	b, err := gpubench.NewNextTask(gpubench.NextTaskConfig{Workers: 2, Latency: 2 * time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	}()
	for _, g := range []gpubench.NextTaskGraph{
		{GPUTasks: 200, Successors: 4},
		{GPUTasks: 200, Successors: 4, CPUParent: true},
		{GPUTasks: 200, Successors: 3, Window: 4, Spin: time.Microsecond},
		{GPUTasks: 200, Successors: 3, Window: 4, Spin: time.Microsecond, CPUParent: true},
		{GPUTasks: 5, Successors: 1, Window: 1},
	} {
		t.Run(fmt.Sprintf("%+v", g), func(t *testing.T) {
			r, err := b.Run(g)
			if err != nil {
				t.Fatal(err)
			}
			t.Log(r.Summary())
			if r.Successors != g.GPUTasks*g.Successors || r.ByOthers+r.ByParent != r.Successors {
				t.Fatalf("%d successors, %d by others and %d by the parent's worker", r.Successors, r.ByOthers, r.ByParent)
			}
			if r.ByOthersDuring > r.ByOthers || r.Elapsed <= 0 || r.Workers != 2 {
				t.Fatalf("%+v", r)
			}
			if !(0 < r.LatencyMedian && r.LatencyMedian <= r.LatencyP99 && r.LatencyP99 <= r.LatencyMax) {
				t.Fatalf("latencies %v %v %v", r.LatencyMedian, r.LatencyP99, r.LatencyMax)
			}
			if g.CPUParent != (r.Episodes == 0) || r.Managers > r.Episodes || (r.Episodes > 0 && r.Managers == 0) {
				t.Fatalf("%d episodes by %d workers", r.Episodes, r.Managers)
			}
			if g.CPUParent && r.ByOthersDuring != 0 {
				t.Fatalf("%d successors of CPU parents counted during an episode", r.ByOthersDuring)
			}
		})
	}
}

func TestNextTaskBadInput(t *testing.T) {
	if _, err := gpubench.NewNextTask(gpubench.NextTaskConfig{Devices: []*gpu.RTDevice{}}); !errors.Is(err, gpu.ErrBadArgument) {
		t.Fatalf("no devices: %v, want ErrBadArgument", err)
	}
	b, err := gpubench.NewNextTask(gpubench.NextTaskConfig{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, g := range []gpubench.NextTaskGraph{{}, {GPUTasks: 1}, {GPUTasks: 1, Successors: 1, Window: -1}} {
		if _, err := b.Run(g); !errors.Is(err, gpu.ErrBadArgument) {
			t.Errorf("%+v: %v, want ErrBadArgument", g, err)
		}
	}
	// A GPU task whose body fails fails the run with its cause.
	boom := errors.New("boom")
	f, err := gpubench.NewNextTask(gpubench.NextTaskConfig{Workers: 1, GPUBody: func(_ *gpu.Device, t *gpu.Task, _ *gpu.Stream, _ int) gpu.Result {
		return t.Fail(boom)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Run(gpubench.NextTaskGraph{GPUTasks: 2, Successors: 1}); !errors.Is(err, boom) {
		t.Errorf("failing launch: %v, want %v", err, boom)
	}
	if err := f.Close(); err != nil {
		t.Error(err)
	}
}

// BenchmarkNextTask reports successor throughput for GPU parents (one
// simulated device, 5µs kernels) and its ratio to CPU parents, on 2 workers.
func BenchmarkNextTask(b *testing.B) {
	nt, err := gpubench.NewNextTask(gpubench.NextTaskConfig{Workers: 2, Latency: 5 * time.Microsecond})
	if err != nil {
		b.Fatal(err)
	}
	defer nt.Close()
	for _, window := range []int{0, 8} {
		b.Run(fmt.Sprintf("window=%d", window), func(b *testing.B) {
			var gpuRate, cpuRate, others float64
			for range b.N {
				g := gpubench.NextTaskGraph{GPUTasks: 2000, Successors: 8, Window: window, Spin: time.Microsecond}
				r, err := nt.Run(g)
				if err != nil {
					b.Fatal(err)
				}
				g.CPUParent = true
				base, err := nt.Run(g)
				if err != nil {
					b.Fatal(err)
				}
				gpuRate += r.PerSecond()
				cpuRate += base.PerSecond()
				others += float64(r.ByOthers) / float64(r.Successors)
			}
			n := float64(b.N)
			b.ReportMetric(gpuRate/n, "successors/s")
			b.ReportMetric(gpuRate/cpuRate, "x_cpu_parent")
			b.ReportMetric(others/n, "by_others")
		})
	}
}
