package dynamic_test

import (
	"errors"
	"testing"

	"github.com/jdf2go/jdf2go/rt/dynamic"
	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/cuda"
)

// The tests in this file need a CUDA device and skip without one. On the GPU machine (no
// Go there) run the binary built here:
//
//	CGO_ENABLED=0 go test -c -o .gpu/dynamic.test ./rt/dynamic
//	.gpu/dynamic.test -test.v -test.run CUDA

// noCUDA says whether err (from gpu.Open) means that this machine has no CUDA.
func noCUDA(err error) bool { return errors.Is(err, cuda.ErrUnavailable) }

// TestCUDABodiesMatchCPU is TestGPUBodiesMatchCPU on a CUDA device (cuBLAS products, copies
// through device memory), with batched products (one ring per hook call on a compute
// stream).
func TestCUDABodiesMatchCPU(t *testing.T) {
	const nt, nb = 4, 64
	want := newGemmProgram(nt, nb, 11)
	_, cg := newGraph(t)
	want.run(t, cg, false)

	got := newGemmProgram(nt, nb, 11)
	g, dev := openGPUGraph(t, "cuda:1", noCUDA, nil)
	n := got.run(t, g, true, dynamic.CUDAOnly(), dynamic.Batch(8, nil))
	if n < nt*nt*nt {
		t.Fatalf("%d tasks ran a GPU body, want at least the %d products", n, nt*nt*nt)
	}
	sameTiles(t, "A", got.a, want.a)
	sameTiles(t, "C", got.c, want.c)
	sameTiles(t, "D", got.d, want.d)
	st := dev.Device().Stats()
	t.Logf("%s: %d tasks, %d hook calls, %d stage-ins, %d stage-outs", dev.Name(), st.Executed, st.Batches, st.StageIns, st.StageOuts)
}

// TestCUDABodiesWithoutCUDA: where CUDA is absent, opening it fails with the reason that
// the CUDA test skips on, not with another error.
func TestCUDABodiesWithoutCUDA(t *testing.T) {
	if cuda.Init() == nil {
		t.Skip("CUDA is available here: TestCUDABodiesMatchCPU covers it")
	}
	if _, err := gpu.Open("cuda:1"); !noCUDA(err) {
		t.Fatalf("gpu.Open(cuda:1) = %v, want an error wrapping cuda.ErrUnavailable", err)
	}
}
