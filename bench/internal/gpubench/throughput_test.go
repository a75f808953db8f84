package gpubench_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/bench/internal/gpubench"
	"github.com/jdf2go/jdf2go/rt/gpu"
)

func TestThroughputRuns(t *testing.T) {
	for _, bm := range []int{1, 8} {
		r, err := gpubench.Throughput(gpubench.ThroughputConfig{Tasks: 2000, BatchMax: bm})
		if err != nil {
			t.Fatal(err)
		}
		if r.Tasks != 2000 || r.Rings == 0 || r.Rings > 2000 {
			t.Fatalf("batch_max %d: %+v", bm, r)
		}
		if bm == 1 && r.Rings != 2000 {
			t.Fatalf("singletons: %d rings for 2000 tasks", r.Rings)
		}
	}
}

// BenchmarkManagerThroughput measures tasks/s through the manager on the
// simulated device, for singletons and for batches of up to 8, 32 and 128;
// each batched case also reports its speed-up over singletons measured right
// before it ("x_singleton"). Two regimes: device-bound (a 5µs virtual
// duration per kernel, no host cost), where streams fill and tasks wait in
// their FIFOs anyway; and launch-bound (20µs of host time per launch, as a
// cuBLAS call on tiny matrices), where nothing waits unless the manager
// takes several submissions per iteration. drain=1 is PaRSEC's loop (one
// submission per iteration), drain=64 the default.
func BenchmarkManagerThroughput(b *testing.B) {
	regimes := []struct {
		name            string
		tasks           int
		latency, launch time.Duration
	}{
		{"device-bound", 20000, 5 * time.Microsecond, 0},
		{"launch-bound", 5000, 0, 20 * time.Microsecond},
	}
	for _, rg := range regimes {
		for _, drain := range []int{1, gpu.DefaultPendingDrain} {
			cfg := func(bm int) gpubench.ThroughputConfig {
				return gpubench.ThroughputConfig{Tasks: rg.tasks, BatchMax: bm, Latency: rg.latency, HostCost: rg.launch, PendingDrain: drain}
			}
			single := func() float64 {
				r, err := gpubench.Throughput(cfg(1))
				if err != nil {
					b.Fatal(err)
				}
				return r.TasksPerSecond()
			}
			for _, bm := range []int{1, 8, 32, 128} {
				name := "singleton"
				if bm > 1 {
					name = fmt.Sprintf("batch_max=%d", bm)
				}
				b.Run(fmt.Sprintf("%s/drain=%d/%s", rg.name, drain, name), func(b *testing.B) {
					var perSec, batch, base float64
					for range b.N {
						r, err := gpubench.Throughput(cfg(bm))
						if err != nil {
							b.Fatal(err)
						}
						perSec += r.TasksPerSecond()
						batch += r.MeanBatch()
						if bm > 1 {
							base += single()
						}
					}
					n := float64(b.N)
					b.ReportMetric(perSec/n, "tasks/s")
					b.ReportMetric(batch/n, "tasks/ring")
					if bm > 1 {
						b.ReportMetric(perSec/base, "x_singleton")
					}
				})
			}
		}
	}
}
