package gpu_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/sim"
)

// shareWork is N independent tasks with a GPU body (one kernel of the
// simulated device's latency) and a CPU body that sleeps for CPU:
//
//	W(i)  i = 0 .. N-1
//	BODY [type=GPU]  one kernel  END
//	BODY             sleep CPU   END
type shareWork struct {
	N   int
	CPU time.Duration
}

var shareT rt.TaskClass

func init() {
	body := &gpu.Incarnation{Name: "W/gpu", Submit: func(_ *gpu.Device, _ *gpu.Task, s *gpu.Stream) gpu.Result {
		if err := s.Backend().(*sim.Stream).Enqueue("kernel", func() error { return nil }); err != nil {
			return gpu.Error
		}
		return gpu.Done
	}}
	shareT = rt.TaskClass{
		Name: "W", Locals: []string{"i"}, Params: []int{0},
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			for i := range tp.Globals().(*shareWork).N {
				l[0] = i
				if !yield(l) {
					return
				}
			}
		},
		Complete: func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < tp.Globals().(*shareWork).N },
		Incarnations: []rt.Incarnation{
			{Kind: rt.GPU, Device: body},
			{Kind: rt.CPU, Hook: func(t *rt.Task) error {
				// Sleeping, not spinning, stands for a CPU body: with GOMAXPROCS 1 a
				// spinning worker would starve the device's manager and streams, so
				// the device would measure as slow as the CPU that starves it.
				time.Sleep(t.Taskpool().Globals().(*shareWork).CPU)
				return nil
			}},
		},
	}
}

// runShare runs N tasks on 2 workers and sim devices whose kernels take
// latency each, and returns the fraction of the tasks the devices ran.
func runShare(t *testing.T, n, devices int, cpu time.Duration, latency ...time.Duration) (float64, []uint64) {
	t.Helper()
	var devs []*gpu.RTDevice
	for i := range devices {
		d, err := gpu.NewRTDevice(sim.New(sim.WithLatency(latency[i%len(latency)]), sim.WithName(fmt.Sprint("sim", i))),
			gpu.WithIndex(i), gpu.WithLogger(quiet))
		if err != nil {
			t.Fatal(err)
		}
		devs = append(devs, d)
	}
	c, err := rt.New(rt.Workers(2), rt.Devices(gpu.RTDevices(devs)...))
	if err != nil {
		t.Fatal(err)
	}
	tp := rt.NewTaskpool("share", &shareWork{N: n, CPU: cpu}, &shareT)
	if err := c.Add(tp); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := tp.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	var total uint64
	per := make([]uint64, len(devs))
	for i, d := range devs {
		per[i] = d.Device().Stats().Executed
		total += per[i]
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return float64(total) / float64(n), per
}

// Without device = expr, CPU workers and devices share a class's tasks by
// estimated finish time: a device much faster than a CPU worker takes most of
// them, a much slower one few.
func TestLoadSharingFollowsDeviceSpeed(t *testing.T) {
	const n = 300
	fast, _ := runShare(t, n, 1, 300*time.Microsecond, 5*time.Microsecond)
	slow, _ := runShare(t, n, 1, 50*time.Microsecond, 20*time.Millisecond)
	t.Logf("device share: fast device %.2f, slow device %.2f", fast, slow)
	if fast < 0.7 || slow > 0.3 {
		t.Fatalf("device share %.2f with a fast device (want > 0.7), %.2f with a slow one (want < 0.3)", fast, slow)
	}
}

// Across two devices the one that finishes sooner gets the task: a device
// 400 times faster than the other takes most of what the devices run (an idle
// device always takes a task, so the slow one gets a few whatever their speeds).
func TestLoadSharingAcrossDevices(t *testing.T) {
	const n = 300
	share, per := runShare(t, n, 2, time.Millisecond, 5*time.Microsecond, 2*time.Millisecond)
	t.Logf("devices ran %.2f of the tasks: fast %d, slow %d", share, per[0], per[1])
	if per[0] < 3*per[1] {
		t.Fatalf("fast device ran %d tasks, slow device %d: want at least 3 times as many", per[0], per[1])
	}
}
