package gpu_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/sim"
)

// quiet discards the device's diagnostics in tests that provoke them.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func init() {
	// test.fill sets every element of a float64 buffer to a value.
	err := gpu.RegisterKernel(gpu.KernelSpec{Name: "test.fill", Host: func(mem gpu.HostMemory, _, _ gpu.Dim3, args []any) error {
		f, err := gpu.Float64s(mem, args[0].(gpu.Buffer))
		if err != nil {
			return err
		}
		for i := range f {
			f[i] = args[1].(float64)
		}
		return nil
	}})
	if err != nil {
		panic(err)
	}
}

// fillHook is a body that fills its first flow with value(task).
func fillHook(value func(*gpu.Task) float64) gpu.SubmitHook {
	return func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		if err := s.Launch("test.fill", gpu.Dim3{X: 1}, gpu.Dim3{X: 1}, task.Buffer(0), value(task)); err != nil {
			return gpu.Error
		}
		return gpu.Done
	}
}

// freeDevice is a free-running simulated device with the fake runtime.
func freeDevice(t *testing.T, h *host, simOpts []sim.Option, opts ...gpu.Option) (*gpu.Device, *sim.Device) {
	t.Helper()
	be := sim.New(simOpts...)
	d, err := gpu.NewDevice(be, append([]gpu.Option{gpu.WithCompleter(h), gpu.WithScheduler(h), gpu.WithLogger(quiet)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return d, be
}
