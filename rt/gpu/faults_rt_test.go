package gpu_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/sim"
)

// gpuFault is N independent tasks G(i) with a GPU incarnation only, whose
// submit hook is Hook:
//
//	G(i)  i = 0 .. N-1
//	BODY [type=GPU]  Hook  END
type gpuFault struct {
	N    int
	Hook func(i int, d *gpu.Device, t *gpu.Task, s *gpu.Stream) gpu.Result
}

var gpuFaultT rt.TaskClass

func init() {
	body := &gpu.Incarnation{Name: "G/gpu", Submit: func(d *gpu.Device, t *gpu.Task, s *gpu.Stream) gpu.Result {
		task := t.EC().(*rt.Task)
		return task.Taskpool().Globals().(*gpuFault).Hook(task.Locals()[0], d, t, s)
	}}
	gpuFaultT = rt.TaskClass{
		Name: "G", Locals: []string{"i"}, Params: []int{0},
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			for i := range tp.Globals().(*gpuFault).N {
				l[0] = i
				if !yield(l) {
					return
				}
			}
		},
		Complete:     func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < tp.Globals().(*gpuFault).N },
		Incarnations: []rt.Incarnation{{Kind: rt.GPU, Device: body}},
	}
}

// kernelOK enqueues one simulated kernel.
func kernelOK(_ int, _ *gpu.Device, _ *gpu.Task, s *gpu.Stream) gpu.Result {
	if err := s.Backend().(*sim.Stream).Enqueue("kernel", func() error { return nil }); err != nil {
		return gpu.Error
	}
	return gpu.Done
}

// simRT is a Context of 2 workers and one simulated device; Close closes
// both and fails the test when the device leaked wrappers.
type simRT struct {
	c   *rt.Context
	dev *gpu.RTDevice
}

func newSimRT(t *testing.T, opts ...gpu.Option) *simRT {
	t.Helper()
	dev, err := gpu.NewRTDevice(sim.New(), append([]gpu.Option{gpu.WithIndex(0), gpu.WithLogger(quiet)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	c, err := rt.New(rt.Workers(2), rt.Devices(dev))
	if err != nil {
		t.Fatal(err)
	}
	r := &simRT{c: c, dev: dev}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
		if err := dev.Close(); err != nil {
			t.Errorf("device: %v", err)
		}
	})
	return r
}

// wait runs tp and returns Wait's error; the test fails when Wait does not
// return within limit (its context ends after d).
func (r *simRT) wait(t *testing.T, tp *rt.Taskpool, d, limit time.Duration) error {
	t.Helper()
	if err := r.c.Add(tp); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- tp.Wait(ctx) }()
	select {
	case err := <-errc:
		return err
	case <-time.After(limit):
		t.Fatalf("Wait did not return within %v (its context ends after %v)", limit, d)
		return nil
	}
}

// A panic in a GPU body keeps its value and a stack that goes through the
// body's source line (here a .jdf line, as generated code has).
func TestGPUBodyPanicKeepsValueAndStack(t *testing.T) {
	r := newSimRT(t)
	err := r.wait(t, rt.NewTaskpool("panic", &gpuFault{N: 4, Hook: panickyHook}, &gpuFaultT), 10*time.Second, 11*time.Second)
	if !errors.Is(err, rt.ErrTaskpoolFailed) || !errors.Is(err, gpu.ErrTaskFailed) {
		t.Fatalf("Wait = %v, want a task failure on the device", err)
	}
	for _, want := range []string{"G(2)", "boom in G(2)", "gpufault.jdf:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not mention %q:\n%v", want, err)
		}
	}
}

// A hook that returns NEXT or AGAIN forever fails with ErrNoProgress after
// the retry limit. The count restarts while the device has other work, so the
// test counts the calls made while G(1) is the device's only task: how long
// the other tasks' kernels take to run depends on the machine's load.
func TestGPUHookRetryingForeverFails(t *testing.T) {
	for _, tc := range []struct {
		r     gpu.Result
		limit int
	}{{gpu.Next, 0}, {gpu.Again, 0}, {gpu.Next, 50}, {gpu.Again, 50}} {
		t.Run(tc.r.String(), func(t *testing.T) {
			var opts []gpu.Option
			if tc.limit > 0 {
				opts = append(opts, gpu.WithRetryLimit(tc.limit))
			}
			r := newSimRT(t, opts...)
			var calls atomic.Int64
			hook := func(i int, d *gpu.Device, w *gpu.Task, s *gpu.Stream) gpu.Result {
				if i == 1 {
					if d.Stats().Outstanding == 1 {
						calls.Add(1)
					}
					return tc.r
				}
				return kernelOK(i, d, w, s)
			}
			err := r.wait(t, rt.NewTaskpool("retry", &gpuFault{N: 3, Hook: hook}, &gpuFaultT), 10*time.Second, 11*time.Second)
			if !errors.Is(err, gpu.ErrNoProgress) || !strings.Contains(err.Error(), "G(1)") {
				t.Fatalf("Wait = %v, want ErrNoProgress naming G(1)", err)
			}
			want := int64(gpu.DefaultRetryLimit)
			if tc.limit > 0 {
				want = int64(tc.limit)
			}
			if n := calls.Load(); n <= want || n > 2*want+10 {
				t.Errorf("the hook ran %d times; want just over the limit %d", n, want)
			}
		})
	}
}

// Rings that all return AGAIN forever fail with ErrNoProgress: one parked
// ring is no progress for another, so they cannot keep restarting each
// other's count. Each ring records an event for every AGAIN, so a count that
// restarted while another ring is parked would never reach the limit.
func TestGPUHooksAgainForeverOnSeveralRingsFail(t *testing.T) {
	for _, n := range []int{2, 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			r := newSimRT(t, gpu.WithRetryLimit(50))
			again := func(int, *gpu.Device, *gpu.Task, *gpu.Stream) gpu.Result { return gpu.Again }
			err := r.wait(t, rt.NewTaskpool("again", &gpuFault{N: n, Hook: again}, &gpuFaultT), 10*time.Second, 11*time.Second)
			if !errors.Is(err, gpu.ErrNoProgress) {
				t.Fatalf("Wait = %v, want ErrNoProgress", err)
			}
		})
	}
}

// Without a retry limit, Wait still returns when its context ends, and the
// manager drops the cancelled taskpool's task at its next pass: the device
// goes idle and closes without a leak.
func TestWaitHonoursContextWhileGPUHookSpins(t *testing.T) {
	r := newSimRT(t, gpu.WithRetryLimit(0))
	spin := func(int, *gpu.Device, *gpu.Task, *gpu.Stream) gpu.Result { return gpu.Next }
	err := r.wait(t, rt.NewTaskpool("spin", &gpuFault{N: 1, Hook: spin}, &gpuFaultT), 100*time.Millisecond, 2*time.Second)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait = %v, want the context's deadline", err)
	}
	for deadline := time.Now().Add(2 * time.Second); r.dev.Device().Stats().Outstanding != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the device still holds %d wrappers of the cancelled taskpool", r.dev.Device().Stats().Outstanding)
		}
	}
	// The Context goes on with other taskpools.
	if err := r.wait(t, rt.NewTaskpool("after", &gpuFault{N: 8, Hook: kernelOK}, &gpuFaultT), 10*time.Second, 11*time.Second); err != nil {
		t.Fatal(err)
	}
}

// panickyHook panics for G(2). The line directive stands for the //line
// directives of generated code: the stack must point at the .jdf line.
//
//line gpufault.jdf:40
func panickyHook(i int, d *gpu.Device, t *gpu.Task, s *gpu.Stream) gpu.Result {
	if i == 2 {
		panic("boom in G(2)")
	}
	return kernelOK(i, d, t, s)
}
