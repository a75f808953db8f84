package gpu_test

import (
	"context"
	"testing"

	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/sim"
)

func TestSmokeDgemmFreeRunning(t *testing.T) {
	be := sim.New()
	j := &journal{}
	h := &host{j: j}
	d, err := gpu.NewDevice(be, gpu.WithCompleter(h), gpu.WithScheduler(h))
	if err != nil {
		t.Fatal(err)
	}
	// C = A*B with A = [1 2; 3 4] (column-major 1 3 2 4), B = identity*2.
	a := newHostData(1, 3, 2, 4)
	b := newHostData(2, 0, 0, 2)
	c := newHostData(0, 0, 0, 0)
	inc := &gpu.Incarnation{Name: "GEMM/0", Submit: func(dev *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		if err := s.Dgemm(blas.NoTrans, blas.NoTrans, 2, 2, 2, 1, task.Buffer(0), 2, task.Buffer(1), 2, 0, task.Buffer(2), 2); err != nil {
			t.Error(err)
			return gpu.Error
		}
		return gpu.Done
	}}
	e := newEC("GEMM(0)", 0)
	task := d.NewTask(e, inc,
		gpu.Flow{Data: a, Access: gpu.Read, Elem: gpu.Float64},
		gpu.Flow{Data: b, Access: gpu.Read, Elem: gpu.Float64},
		gpu.Flow{Data: c, Access: gpu.ReadWrite, Elem: gpu.Float64})
	if err := d.Submit(context.Background(), nil, task); err != nil {
		t.Fatal(err)
	}
	if e.completed.Load() != 1 {
		t.Fatalf("completed %d times", e.completed.Load())
	}
	want := []float64{2, 6, 4, 8}
	for i := range want {
		if c.buf[i] != want[i] {
			t.Fatalf("C = %v, want %v", c.buf, want)
		}
	}
	if c.HostVersion() != 2 {
		t.Fatalf("C host version %d, want 2", c.HostVersion())
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}
