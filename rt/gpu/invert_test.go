package gpu_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/driver"
	"github.com/jdf2go/jdf2go/rt/gpu/gputest"
)

// InvertLower, on the simulated device: the kernel for the diagonal blocks,
// then the products that merge them, for orders around the block size and
// its powers of two, with ragged last blocks. The upper triangle of A holds
// NaNs, which must not reach the result.
func TestInvertLower(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	if err := h.d.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := h.d.Compute(0)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 5, 31, 32, 33, 64, 65, 100, 128, 200, 256} {
		ld := n + 3*(n%2)
		a, x := h.matrix(t, ld*n), h.matrix(t, ld*n)
		av, xv := h.float64s(t, a), h.float64s(t, x)
		for j := range n {
			for i := range ld {
				switch {
				case i >= n:
					av[i+j*ld], xv[i+j*ld] = 7, 7 // padding, left as it is
				case i < j:
					av[i+j*ld] = math.NaN()
				case i == j:
					av[i+j*ld], xv[i+j*ld] = 1+rng.Float64(), 1
				default:
					av[i+j*ld] = (rng.Float64() - 0.5) / math.Sqrt(float64(n))
				}
			}
		}
		if err := s.InvertLower(n, a, ld, x, ld); err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if q := h.stream("exec0").Queued(); q[0] != "kernel:jdf2go.invert_lower_blocks" {
			t.Fatalf("n=%d: InvertLower queued %v", n, q)
		}
		h.stream("exec0").Drain()
		for j := range n {
			for i := n; i < ld; i++ {
				if xv[i+j*ld] != 7 {
					t.Fatalf("n=%d: padding X(%d, %d) = %v", n, i, j, xv[i+j*ld])
				}
			}
		}
		worst, err := gputest.InverseError(n, av, ld, xv, ld)
		if err != nil || !(worst < 1e-12) {
			t.Fatalf("n=%d: |L·X - I| reaches %g (%v)", n, worst, err)
		}
	}
	if err := s.InvertLower(5, gpu.Buffer{}, 5, gpu.Buffer{}, 5); err == nil {
		t.Fatal("InvertLower accepted null buffers")
	}
}

// matrix allocates n float64s on h's device.
func (h *harness) matrix(t *testing.T, n int) gpu.Buffer {
	t.Helper()
	p, err := h.be.Alloc(int64(8 * n))
	if err != nil {
		t.Fatal(err)
	}
	return gpu.Buffer{Ptr: p, Len: n, Elem: gpu.Float64}
}

// float64s returns the simulated device's memory behind b.
func (h *harness) float64s(t *testing.T, b gpu.Buffer) []float64 {
	t.Helper()
	raw, err := h.be.Bytes(b)
	if err != nil {
		t.Fatal(err)
	}
	f, err := driver.BytesAsFloat64s(raw)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
