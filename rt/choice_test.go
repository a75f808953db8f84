package rt_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
)

// estDevice completes what it is given at once and reports a fixed load and, when est > 0,
// a fixed per-task estimate.
type estDevice struct {
	name      string
	load, est int64
	ran       atomic.Int64
}

func (d *estDevice) Name() string                 { return d.name }
func (d *estDevice) Accepts(k rt.DeviceKind) bool { return k == rt.GPU }
func (d *estDevice) Load() int64                  { return d.load }
func (d *estDevice) Submit(w rt.Worker, t *rt.Task, _ *rt.Incarnation) error {
	d.ran.Add(1)
	w.Complete(t)
	return nil
}
func (d *estDevice) Estimate(*rt.Task, *rt.Incarnation) int64 { return d.est }

// independent returns n independent tasks whose incarnations are incs plus a CPU body
// that counts its runs in cpu.
func independent(n int, cpu *atomic.Int64, te func(*rt.Task, rt.Device) int64, incs ...rt.Incarnation) *rt.TaskClass {
	return &rt.TaskClass{Name: "W", Locals: []string{"i"}, Params: []int{0},
		Space: func(_ *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			for i := range n {
				l[0] = i
				if !yield(l) {
					return
				}
			}
		},
		Complete:     func(_ *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < n },
		TimeEstimate: te,
		Incarnations: append(incs, rt.Incarnation{Kind: rt.CPU, Hook: func(*rt.Task) error { cpu.Add(1); return nil }}),
	}
}

// A device incarnation followed by a CPU one: the task goes wherever it is expected to
// finish first, from TimeEstimate (dev nil: the CPU) or the device's Estimator; Select
// pins the device; without any estimate the CPU time is learnt while the device is busy.
func TestIncarnationChoice(t *testing.T) {
	const n = 50
	cpu100 := func(_ *rt.Task, d rt.Device) int64 {
		if d == nil {
			return 100
		}
		return 10
	}
	for _, c := range []struct {
		name      string
		load, est int64
		te        func(*rt.Task, rt.Device) int64
		sel       bool
		onDevice  int64
		workers   int
	}{
		{"idle device", 0, 0, cpu100, false, n, 2},
		{"device queue beyond a CPU task", 200, 0, cpu100, false, 0, 2},
		{"device queue within a CPU task", 50, 0, cpu100, false, n, 2},
		{"select pins the device", 1 << 40, 0, cpu100, true, n, 2},
		{"estimator, unknown CPU, idle device", 0, 10, nil, false, n, 2},
		// The first task measures the CPU time (far below the device's queue), then the
		// CPU keeps them all. One worker: with two, the other one's tasks would go to the
		// device while the first measures (TestOneCPUMeasurementAtATime).
		{"estimator, unknown CPU, busy device", 1 << 30, 10, nil, false, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			dev := &estDevice{name: "est", load: c.load, est: c.est}
			ctx := newCtx(t, rt.Workers(c.workers), rt.Devices(dev))
			inc := rt.Incarnation{Kind: rt.GPU}
			if c.sel {
				inc.Select = func(*rt.Task) int { return 0 }
			}
			var cpu atomic.Int64
			mustRun(t, ctx, rt.NewTaskpool("choice", nil, independent(n, &cpu, c.te, inc)))
			got := dev.ran.Load()
			if got+cpu.Load() != n {
				t.Fatalf("%d on the device and %d on the CPU, want %d in all", got, cpu.Load(), n)
			}
			if got != c.onDevice {
				t.Fatalf("%d tasks on the device, want %d", got, c.onDevice)
			}
		})
	}
}

// Two devices: each task goes to the one expected to finish it first.
func TestIncarnationChoiceBetweenDevices(t *testing.T) {
	a := &estDevice{name: "a", load: 500, est: 10}
	b := &estDevice{name: "b", load: 0, est: 10}
	ctx := newCtx(t, rt.Workers(2), rt.Devices(a, b))
	var cpu atomic.Int64
	mustRun(t, ctx, rt.NewTaskpool("two", nil, independent(40, &cpu, nil, rt.Incarnation{Kind: rt.GPU})))
	if a.ran.Load() != 0 || b.ran.Load() != 40 || cpu.Load() != 0 {
		t.Fatalf("device a ran %d, b %d, the CPU %d; want 0, 40, 0", a.ran.Load(), b.ran.Load(), cpu.Load())
	}
}

// ShareWork(false): the device takes every task it accepts, however long its queue.
func TestShareWorkOff(t *testing.T) {
	dev := &estDevice{name: "busy", load: 1 << 40, est: 10}
	ctx := newCtx(t, rt.Workers(2), rt.Devices(dev), rt.ShareWork(false))
	var cpu atomic.Int64
	mustRun(t, ctx, rt.NewTaskpool("noshare", nil, independent(30, &cpu, nil, rt.Incarnation{Kind: rt.GPU})))
	if dev.ran.Load() != 30 || cpu.Load() != 0 {
		t.Fatalf("device ran %d, CPU %d; want 30, 0", dev.ran.Load(), cpu.Load())
	}
	t.Setenv("JDF2GO_SHARE", "maybe")
	if _, err := rt.New(); !errors.Is(err, rt.ErrBadOption) {
		t.Fatalf("JDF2GO_SHARE=maybe: %v", err)
	}
}

// prioDevice holds a long queue of work at priority 5: a task of a higher priority would
// not wait for it (LoadAbove).
type prioDevice struct{ estDevice }

func (d *prioDevice) LoadAbove(p int32) int64 {
	if p <= 5 {
		return d.load
	}
	return 0
}

// A device that runs its queue by priority: a task above the queued work's priority goes
// to the device although the device is busy, one below it to the CPU.
func TestIncarnationChoiceByPriority(t *testing.T) {
	const n = 40
	dev := &prioDevice{estDevice{name: "prio", load: 1 << 30}}
	ctx := newCtx(t, rt.Workers(2), rt.Devices(dev))
	cpu100 := func(_ *rt.Task, d rt.Device) int64 {
		if d == nil {
			return 100
		}
		return 10
	}
	var cpu atomic.Int64
	tc := independent(n, &cpu, cpu100, rt.Incarnation{Kind: rt.GPU})
	tc.Priority = func(_ *rt.Taskpool, l *rt.Locals) int32 { return int32(10 * (l[0] % 2)) } // 0 or 10
	mustRun(t, ctx, rt.NewTaskpool("prio", nil, tc))
	if dev.ran.Load() != n/2 || cpu.Load() != n/2 {
		t.Fatalf("device ran %d, CPU %d; want the %d tasks of priority 10 on the device and the others on the CPU",
			dev.ran.Load(), cpu.Load(), n/2)
	}
}

// While one task measures a class's CPU time, the other tasks of the class go to the busy
// device instead of waiting on CPU cores for a time nobody knows yet.
func TestOneCPUMeasurementAtATime(t *testing.T) {
	const n = 30
	dev := &estDevice{name: "busy", load: 1 << 30, est: 10}
	ctx := newCtx(t, rt.Workers(2), rt.Devices(dev))
	release := make(chan struct{})
	var cpu atomic.Int64
	tc := independent(n, &cpu, nil, rt.Incarnation{Kind: rt.GPU})
	body := tc.Incarnations[1].Hook
	tc.Incarnations[1].Hook = func(task *rt.Task) error {
		if cpu.Load() == 0 {
			<-release // the measurement lasts until every other task went elsewhere
		}
		return body(task)
	}
	tp := rt.NewTaskpool("measure", nil, tc)
	if err := ctx.Add(tp); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for dev.ran.Load() < n-1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	close(release)
	if err := tp.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if dev.ran.Load() != n-1 || cpu.Load() != 1 {
		t.Fatalf("device ran %d, CPU %d; want %d and the one measurement", dev.ran.Load(), cpu.Load(), n-1)
	}
}
