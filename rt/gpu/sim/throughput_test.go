package sim_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt/gpu/sim"
)

func TestThroughputRuns(t *testing.T) {
	for _, bm := range []int{1, 8} {
		r, err := sim.Throughput(sim.ThroughputConfig{Tasks: 2000, BatchMax: bm})
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
// simulated device with a 5µs virtual launch cost, for singletons and for
// batches of up to 8, 32 and 128; each batched case also reports its
// speed-up over singletons measured right before it ("x_singleton").
func BenchmarkManagerThroughput(b *testing.B) {
	const tasks = 20000
	const latency = 5 * time.Microsecond
	single := func() float64 {
		r, err := sim.Throughput(sim.ThroughputConfig{Tasks: tasks, BatchMax: 1, Latency: latency})
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
		b.Run(name, func(b *testing.B) {
			var perSec, batch, base float64
			for range b.N {
				r, err := sim.Throughput(sim.ThroughputConfig{Tasks: tasks, BatchMax: bm, Latency: latency})
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
