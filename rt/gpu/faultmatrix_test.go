package gpu_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/sim"
)

// The fault matrix: every fault kind in every placement ends the same way.
//   - Wait returns a named error within a second;
//   - the error names the task and the cause;
//   - the goroutines return to their count before the run.
//
// rt/ce has the engine-level kinds (TestFaultMatrixCE) and rt/remote the column of 2 in-process
// ranks (TestFaultMatrixRanks), where the engine's buffer counters must balance too.

// fmAt is the task that faults.
const fmN, fmAt = 16, 5

// fmRun is the taskpool struct of the matrix's class:
//
//	F(i)  i = 0 .. N-1
//	BODY [type=GPU]  GPU(i) (not evaluated for F(At) when the fault is in the CPU body)
//	BODY             CPU(i)
type fmRun struct {
	kind *faultKind
	dev  *sim.Device // nil without a device
}

func fmOf(t *rt.Task) *fmRun { return t.Taskpool().Globals().(*fmRun) }

var fmT, fmGPUOnlyT, fmCPUOnlyT rt.TaskClass

func init() {
	gpuBody := &gpu.Incarnation{Name: "F/gpu", Submit: func(d *gpu.Device, w *gpu.Task, s *gpu.Stream) gpu.Result {
		task := w.EC().(*rt.Task)
		r := fmOf(task)
		if i := task.Locals()[0]; i == fmAt && r.kind.gpu != nil {
			return r.kind.gpu(r, w, s)
		}
		return kernelOK(0, d, w, s)
	}}
	gpuInc := rt.Incarnation{Kind: rt.GPU, Device: gpuBody, Evaluate: rt.EvaluateOf(func(t *rt.Task) bool {
		return t.Locals()[0] != fmAt || fmOf(t).kind.cpu == nil
	})}
	cpuInc := rt.Incarnation{Kind: rt.CPU, Hook: func(t *rt.Task) error {
		if r := fmOf(t); t.Locals()[0] == fmAt && r.kind.cpu != nil {
			return r.kind.cpu()
		}
		return nil
	}}
	base := rt.TaskClass{
		Name: "F", Locals: []string{"i"}, Params: []int{0},
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			for i := range fmN {
				l[0] = i
				if !yield(l) {
					return
				}
			}
		},
		Complete: func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < fmN },
	}
	fmT, fmGPUOnlyT, fmCPUOnlyT = base, base, base
	fmT.Incarnations = []rt.Incarnation{gpuInc, cpuInc}
	fmGPUOnlyT.Incarnations = []rt.Incarnation{gpuInc}
	fmCPUOnlyT.Incarnations = []rt.Incarnation{cpuInc}
}

// faultKind is one row of the matrix: a fault in the CPU body (cpu) or in the GPU body (gpu,
// needs a device).
type faultKind struct {
	name  string
	cpu   func() error
	gpu   func(r *fmRun, w *gpu.Task, s *gpu.Stream) gpu.Result
	want  []error // what the error must match with errors.Is
	cause string  // what its text must contain
}

var errFMBoom = errors.New("injected body error")

var faultKinds = []*faultKind{
	{name: "cpu-error", cpu: func() error { return errFMBoom }, want: []error{errFMBoom}, cause: "injected body error"},
	{name: "cpu-panic", cpu: func() error { panic("injected cpu panic") }, cause: "injected cpu panic"},
	{name: "cpu-goexit", cpu: func() error { runtime.Goexit(); return nil }, want: []error{rt.ErrGoexit}, cause: "Goexit"},
	{name: "gpu-error", gpu: func(*fmRun, *gpu.Task, *gpu.Stream) gpu.Result { return gpu.Error },
		want: []error{gpu.ErrTaskFailed}, cause: "returned ERROR"},
	{name: "gpu-fail", gpu: func(_ *fmRun, w *gpu.Task, _ *gpu.Stream) gpu.Result { return w.Fail(errFMBoom) },
		want: []error{gpu.ErrTaskFailed, errFMBoom}, cause: "injected body error"},
	{name: "gpu-disable", gpu: func(*fmRun, *gpu.Task, *gpu.Stream) gpu.Result { return gpu.Disable },
		want: []error{gpu.ErrDeviceDisabled}, cause: "DISABLE"},
	{name: "gpu-out-of-range", gpu: func(*fmRun, *gpu.Task, *gpu.Stream) gpu.Result { return gpu.Result(-42) },
		want: []error{gpu.ErrTaskFailed}, cause: "Result(-42)"},
	{name: "gpu-next-forever", gpu: func(*fmRun, *gpu.Task, *gpu.Stream) gpu.Result { return gpu.Next },
		want: []error{gpu.ErrNoProgress}, cause: "NEXT"},
	{name: "gpu-again-forever", gpu: func(*fmRun, *gpu.Task, *gpu.Stream) gpu.Result { return gpu.Again },
		want: []error{gpu.ErrNoProgress}, cause: "AGAIN"},
	{name: "gpu-panic", gpu: func(*fmRun, *gpu.Task, *gpu.Stream) gpu.Result { panic("injected gpu panic") },
		want: []error{gpu.ErrTaskFailed}, cause: "injected gpu panic"},
	{name: "gpu-goexit", gpu: func(*fmRun, *gpu.Task, *gpu.Stream) gpu.Result { runtime.Goexit(); return gpu.Done },
		want: []error{gpu.ErrGoexit}, cause: "Goexit"},
	{name: "device-lost", gpu: func(r *fmRun, w *gpu.Task, s *gpu.Stream) gpu.Result {
		r.dev.Lose(errFMBoom)
		return kernelOK(0, nil, w, s)
	}, want: []error{gpu.ErrTaskFailed, sim.ErrLost}, cause: "device lost"},
}

// placement is a column of the matrix: where the taskpool runs.
type placement struct {
	name    string
	devices int
}

var placements = []placement{
	{name: "cpu", devices: 0},
	{name: "sim1", devices: 1},
}

func TestFaultMatrix(t *testing.T) {
	for _, p := range placements {
		for _, k := range faultKinds {
			if k.gpu != nil && p.devices == 0 {
				continue // a GPU body needs a device
			}
			t.Run(p.name+"/"+k.name, func(t *testing.T) { runFaultCell(t, p, k) })
		}
	}
}

// runFaultCell runs one cell and checks the four outcomes.
func runFaultCell(t *testing.T, p placement, k *faultKind) {
	before := runtime.NumGoroutine()
	run := &fmRun{kind: k}
	var devs []rt.Device
	var rdev *gpu.RTDevice
	class := &fmCPUOnlyT
	if p.devices > 0 {
		run.dev = sim.New()
		var err error
		// A tenth of the default retry limit: an AGAIN costs an event round trip
		// on the simulated device, up to 200 µs under the race detector on a
		// loaded machine, and the matrix wants the error within a second.
		// TestGPUHookRetryingForeverFails checks the default.
		rdev, err = gpu.NewRTDevice(run.dev, gpu.WithIndex(0), gpu.WithLogger(quiet), gpu.WithRetryLimit(gpu.DefaultRetryLimit/10))
		if err != nil {
			t.Fatal(err)
		}
		devs = append(devs, rdev)
		class = &fmT
		if k.cpu == nil {
			class = &fmGPUOnlyT
		}
	}
	c, err := rt.New(rt.Workers(2), rt.Devices(devs...), rt.Logger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	tp := rt.NewTaskpool("matrix", run, class)
	start := time.Now()
	if err := c.Add(tp); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	err = tp.Wait(ctx)
	elapsed := time.Since(start)
	timedOut := ctx.Err() != nil
	cancel()

	// 1. A named error, within a second.
	if err == nil || timedOut {
		t.Errorf("Wait = %v after %v, want the fault", err, elapsed)
	} else if elapsed > time.Second {
		t.Errorf("Wait returned after %v, want within 1s", elapsed)
	}
	for _, want := range append([]error{rt.ErrTaskpoolFailed}, k.want...) {
		if !errors.Is(err, want) {
			t.Errorf("error does not match %v: %v", want, err)
		}
	}
	// 2. The task and the cause.
	if err != nil {
		msg := err.Error()
		if task := fmt.Sprintf("F(%d)", fmAt); !strings.Contains(msg, task) {
			t.Errorf("error does not name %s: %v", task, err)
		}
		if !strings.Contains(msg, k.cause) {
			t.Errorf("error does not give the cause %q: %v", k.cause, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if rdev != nil {
		if err := rdev.Close(); err != nil && !errors.Is(err, sim.ErrLost) {
			t.Errorf("device Close: %v", err)
		}
	}
	// 3. Goroutines back to their count (no engine here, so nothing to balance).
	for deadline := time.Now().Add(2 * time.Second); runtime.NumGoroutine() > before; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines after the run, %d before:\n%s", runtime.NumGoroutine(), before,
				buf[:runtime.Stack(buf, true)])
		}
	}
}
