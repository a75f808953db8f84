package gpu_test

import (
	"errors"
	"testing"

	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/gpu"
)

func TestBodyAPIChecksArguments(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	s := h.d.Compute(0)
	ptr, err := h.be.Alloc(8 * 16)
	if err != nil {
		t.Fatal(err)
	}
	m := gpu.Buffer{Ptr: ptr, Len: 16, Elem: gpu.Float64}    // room for 4x4
	small := gpu.Buffer{Ptr: ptr, Len: 8, Elem: gpu.Float64} // 4x2 at most
	bytes := gpu.Buffer{Ptr: ptr, Len: 128, Elem: gpu.Bytes}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"gemm C too small", s.Dgemm(blas.NoTrans, blas.NoTrans, 4, 4, 4, 1, m, 4, m, 4, 0, small, 4)},
		{"gemm lda", s.Dgemm(blas.NoTrans, blas.NoTrans, 4, 4, 4, 1, m, 3, m, 4, 0, m, 4)},
		{"gemm bytes", s.Dgemm(blas.NoTrans, blas.NoTrans, 2, 2, 2, 1, bytes, 2, m, 2, 0, m, 2)},
		{"gemm trans A", s.Dgemm(blas.Trans, blas.NoTrans, 4, 4, 5, 1, m, 5, m, 5, 0, m, 4)},
		{"trsm right", s.Dtrsm(blas.Right, blas.Lower, blas.NoTrans, blas.NonUnit, 2, 5, 1, m, 5, m, 2)},
		{"trmm right", s.Dtrmm(blas.Right, blas.Lower, blas.Trans, blas.NonUnit, 2, 5, 1, m, 5, m, 2)},
		{"trmm B too small", s.Dtrmm(blas.Left, blas.Lower, blas.NoTrans, blas.NonUnit, 4, 4, 1, m, 4, small, 4)},
		{"trtri", s.Dtrtri(blas.Lower, blas.NonUnit, 5, m, 5)},
		{"trtri lda", s.Dtrtri(blas.Lower, blas.NonUnit, 3, m, 2)},
		{"syrk", s.Dsyrk(blas.Lower, blas.NoTrans, 5, 1, 1, m, 5, 0, m, 5)},
		{"potrf", s.Dpotrf(blas.Lower, 5, m, 5)},
		{"strided", s.DgemmStridedBatched(blas.NoTrans, blas.NoTrans, 2, 2, 2, 1, m, 2, 4, m, 2, 4, 0, m, 2, 4, 5)},
		{"batched lengths", s.DgemmBatched(blas.NoTrans, blas.NoTrans, 2, 2, 2, 1, []gpu.Buffer{m}, 2, nil, 2, 0, []gpu.Buffer{m}, 2)},
		{"memcpy types", s.Memcpy(m, bytes)},
		{"memcpy short", s.Memcpy(small, m)},
		{"null", s.Dpotrf(blas.Lower, 2, gpu.Buffer{}, 2)},
	} {
		if !errors.Is(tc.err, gpu.ErrBadArgument) {
			t.Errorf("%s: %v, want ErrBadArgument", tc.name, tc.err)
		}
	}
	if err := s.Launch("no.such.kernel", gpu.Dim3{X: 1}, gpu.Dim3{X: 1}); !errors.Is(err, gpu.ErrUnknownKernel) {
		t.Errorf("unknown kernel: %v", err)
	}
	if err := gpu.RegisterKernel(gpu.KernelSpec{Name: "test.fill", Host: func(gpu.HostMemory, gpu.Dim3, gpu.Dim3, []any) error { return nil }}); !errors.Is(err, gpu.ErrDuplicateKernel) {
		t.Errorf("duplicate kernel: %v", err)
	}
	if err := gpu.RegisterKernel(gpu.KernelSpec{Name: "empty"}); !errors.Is(err, gpu.ErrBadArgument) {
		t.Errorf("kernel without code: %v", err)
	}
	// Valid calls enqueue and nothing more.
	if err := s.Dgemm(blas.NoTrans, blas.NoTrans, 4, 4, 4, 1, m, 4, m, 4, 0, m, 4); err != nil {
		t.Fatal(err)
	}
	if got := h.stream("exec0").Queued(); len(got) != 1 || got[0] != "dgemm" {
		t.Fatalf("queued %v", got)
	}
	if got := m.Slice(4, 8); got.Len != 4 || got.Ptr != ptr+32 {
		t.Fatalf("Slice: %v", got)
	}
}

// A stream's scratch memory is the same for every body until a larger request
// replaces it, and it comes out of the device's limit.
func TestStreamScratch(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	s := h.d.Compute(0)
	limit := h.d.Stats().MemLimit
	a, err := s.Scratch(100)
	if err != nil || a.Len != 100 || a.Elem != gpu.Float64 || a.Ptr == 0 {
		t.Fatalf("Scratch(100) = %v, %v", a, err)
	}
	if b, err := s.Scratch(10); err != nil || b.Ptr != a.Ptr || b.Len != 10 {
		t.Fatalf("Scratch(10) = %v, %v; want the memory of %v", b, err, a)
	}
	c, err := s.Scratch(1000)
	if err != nil || c.Ptr == a.Ptr || c.Len != 1000 {
		t.Fatalf("Scratch(1000) = %v, %v", c, err)
	}
	if got := h.d.Stats().MemLimit; got != limit-8*1100 {
		t.Errorf("limit %d after scratch of 100 and 1000 float64s, want %d", got, limit-8*1100)
	}
	if _, err := s.Scratch(-1); !errors.Is(err, gpu.ErrBadArgument) {
		t.Errorf("Scratch(-1): %v", err)
	}
	if _, err := s.Scratch(int(limit)); !errors.Is(err, gpu.ErrOutOfMemory) {
		t.Errorf("Scratch beyond the device: %v", err)
	}
}
