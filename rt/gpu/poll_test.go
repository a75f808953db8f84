package gpu_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/driver"
	"github.com/jdf2go/jdf2go/rt/gpu/sim"
)

// threadBound is a simulated device that says it is ThreadBound, as CUDA does.
type threadBound struct{ *sim.Device }

func (b threadBound) Info() gpu.DeviceInfo {
	info := b.Device.Info()
	info.ThreadBound = true
	return info
}

// TestBoundManagerPollsWithoutYielding: while a slow operation keeps an event
// in flight, the manager of a thread-bound device polls without yielding its
// thread, but for one yield every 64 polls; the manager of an unbound device
// yields at every poll, so that the goroutines that run the simulated streams
// get a processor. Either way the polls do not count as busy (Stats.Busy).
func TestBoundManagerPollsWithoutYielding(t *testing.T) {
	const slow = 200 * time.Millisecond
	for _, bound := range []bool{false, true} {
		var queries, yields atomic.Int64
		be := sim.New(sim.WithFaults(&sim.Faults{
			Delay: func(_, label string) time.Duration {
				if label == "long" {
					return slow
				}
				return 0
			},
			Query: func(string, int) error { queries.Add(1); return nil },
		}))
		var backend driver.Backend = be
		if bound {
			backend = threadBound{be}
		}
		h := &host{j: &journal{}}
		d, err := gpu.NewDevice(backend, gpu.WithComputeStreams(1), gpu.WithCompleter(h), gpu.WithScheduler(h), gpu.WithLogger(quiet),
			gpu.WithBackoff(func(idle int) {
				if idle == 0 {
					yields.Add(1)
				}
				gpu.DefaultBackoff(idle)
			}))
		if err != nil {
			t.Fatal(err)
		}
		inc := &gpu.Incarnation{Name: "slow", Submit: func(_ *gpu.Device, _ *gpu.Task, s *gpu.Stream) gpu.Result {
			s.Backend().(*sim.Stream).Enqueue("long", func() error { return nil })
			return gpu.Done
		}}
		e := newEC("slow", 0)
		if err := d.Submit(t.Context(), nil, d.NewTask(e, inc)); err != nil {
			t.Fatal(err)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		q, y := queries.Load(), yields.Load()
		if e.completed.Load() != 1 || q < 64 {
			t.Fatalf("bound %v: completed %d, %d queries", bound, e.completed.Load(), q)
		}
		if bound && y*32 > q || !bound && y*2 < q {
			t.Errorf("bound %v: %d yields for %d queries of events in flight", bound, y, q)
		}
		if busy := d.Stats().Busy; busy <= 0 || busy >= slow/8 {
			t.Errorf("bound %v: the manager was busy for %v of a run that waited %v for its device", bound, busy, slow)
		}
	}
}
