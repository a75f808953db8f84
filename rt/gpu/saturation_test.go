package gpu_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/gpu"
)

// A startup walk of a class with a GPU body stops feeding a saturated device: with a queue
// limit of 64 the device never holds more than the limit plus what the walkers had already
// made ready, although its 10 000 tasks become ready at once. Without the limit it holds
// thousands (the second case), which is what the first one guards against.
func TestSaturatedDevicePausesTheWalk(t *testing.T) {
	const n = 10000
	for _, c := range []struct {
		name            string
		limit           int
		atMost, atLeast int64
	}{
		// Two walkers: since its last look at the device, each may have submitted what it
		// drained (its queue above four ready batches of 64, down to one) and what the other
		// worker stole from it, at most 6 batches in all: 64 + 2*6*64 = 832.
		{"limit 64", 64, 832, 0},
		{"no limit", 0, n, 1000},
	} {
		t.Run(c.name, func(t *testing.T) {
			devs, err := gpu.Open("sim:1", gpu.WithLogger(quiet), gpu.WithQueueLimit(c.limit))
			if err != nil {
				t.Fatal(err)
			}
			d := devs[0]
			var most atomic.Int64
			var ran atomic.Int64
			body := &gpu.Incarnation{Name: "W/gpu", Submit: func(dev *gpu.Device, task *gpu.Task, _ *gpu.Stream) gpu.Result {
				if o := int64(dev.Outstanding()); o > most.Load() {
					most.Store(o)
				}
				ran.Add(1)
				// A slow device: the walkers outrun it by far unless they pause.
				for start := time.Now(); time.Since(start) < 5*time.Microsecond; {
				}
				return gpu.Done
			}}
			tc := &rt.TaskClass{Name: "W", Locals: []string{"i"}, Params: []int{0},
				Space: func(_ *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
					for i := range n {
						if l[0] = i; !yield(l) {
							return
						}
					}
				},
				Complete: func(_ *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < n },
				Incarnations: []rt.Incarnation{
					{Kind: rt.GPU, Device: body, Select: func(*rt.Task) int { return 0 }},
					{Kind: rt.CPU, Hook: func(*rt.Task) error { return nil }},
				},
			}
			rc, err := rt.New(rt.Workers(2), rt.Devices(gpu.RTDevices(devs)...))
			if err != nil {
				t.Fatal(err)
			}
			tp := rt.NewTaskpool("saturate", nil, tc)
			if err := rc.Add(tp); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := tp.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			if err := rc.Close(); err != nil {
				t.Fatal(err)
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			if ran.Load() != n {
				t.Fatalf("the device ran %d tasks, want %d", ran.Load(), n)
			}
			m := most.Load()
			if m > c.atMost || m < c.atLeast {
				t.Fatalf("the device held up to %d tasks, want %d to %d", m, c.atLeast, c.atMost)
			}
			t.Logf("the device held up to %d tasks", m)
		})
	}
}
