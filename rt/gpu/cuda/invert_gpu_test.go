package cuda

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/driver"
	"github.com/jdf2go/jdf2go/rt/gpu/gputest"
)

// TestCUDAInvertLower checks gpu.Stream.InvertLower on the device (the
// runtime's kernel for the diagonal blocks, compiled by NVRTC in the
// background when the device opens, then batched products) against the
// identity, and logs how long the kernel took to load and each call's
// device time next to that of the solve it replaces:
//
//	.gpu/cuda.test -test.v -test.run CUDAInvertLower
func TestCUDAInvertLower(t *testing.T) {
	requireGPU(t)
	b, err := OpenDevice(0)
	must(t, err)
	t0 := time.Now()
	d := openBackends(t, []gpu.Option{gpu.WithLogger(quiet)}, b)[0].Device()
	open := time.Since(t0)
	defer func() { must(t, d.Close()) }()
	must(t, d.Ready(context.Background()))
	t.Logf("INVERT device opened in %v, kernel loaded %v later", open.Round(time.Millisecond), (time.Since(t0) - open).Round(time.Millisecond))
	for _, n := range []int{100, 1024} {
		invertCase(t, b, d, n, true)
	}
}

// TestFakeInvertLowerSolves: on a device that could not load the runtime's
// kernel (the fake compiles nothing), InvertLower solves against the
// identity, with the same result.
func TestFakeInvertLowerSolves(t *testing.T) {
	b, _ := newFakeBackend(t, 1<<30)
	d := openBackends(t, []gpu.Option{gpu.WithLogger(quiet)}, b)[0].Device()
	must(t, d.Ready(context.Background()))
	for _, n := range []int{1, 40} {
		invertCase(t, b, d, n, false)
	}
	must(t, d.Close())
}

// invertCase inverts a random lower triangle of order n on d's first compute
// stream and checks L·X = I, zeros above the diagonal included; timed logs
// the device time per call.
func invertCase(t *testing.T, b *Backend, d *gpu.Device, n int, timed bool) {
	t.Helper()
	gs := d.Compute(0)
	s := gs.Backend().(*DeviceStream)
	must(t, b.bind())
	defer b.unbind()
	rng := rand.New(rand.NewPCG(3, uint64(n)))
	l, id := make([]float64, n*n), make([]float64, n*n)
	for j := range n {
		id[j+j*n] = 1
		l[j+j*n] = 1 + rng.Float64()
		for i := j + 1; i < n; i++ {
			l[i+j*n] = (rng.Float64() - 0.5) / math.Sqrt(float64(n))
		}
	}
	buf := func(v []float64) gpu.Buffer {
		p, err := b.Alloc(int64(8 * len(v)))
		must(t, err)
		must(t, s.CopyHtoD(p, driver.Float64sAsBytes(v)))
		return gpu.Buffer{Ptr: p, Len: len(v), Elem: gpu.Float64}
	}
	a, x, e := buf(l), buf(id), buf(id)
	defer func() {
		for _, m := range []gpu.Buffer{a, x, e} {
			must(t, b.Free(m.Ptr))
		}
	}()
	must(t, gs.InvertLower(n, a, n, x, n))
	got := make([]float64, n*n)
	must(t, s.CopyDtoH(driver.Float64sAsBytes(got), x.Ptr))
	must(t, s.syncAll())
	worst, err := gputest.InverseError(n, l, n, got, n)
	if err != nil || !(worst < 1e-12) {
		t.Fatalf("n=%d: |L·X - I| reaches %g (%v)", n, worst, err)
	}
	if !timed {
		return
	}
	const calls = 20
	per := func(op func() error) time.Duration {
		must(t, s.syncAll())
		t0 := time.Now()
		for range calls {
			must(t, gs.Memcpy(x, e))
			must(t, op())
		}
		must(t, s.syncAll())
		return time.Since(t0) / calls
	}
	inv := per(func() error { return gs.InvertLower(n, a, n, x, n) })
	solve := per(func() error { return gs.Dtrsm(blas.Left, blas.Lower, blas.NoTrans, blas.NonUnit, n, n, 1, a, n, x, n) })
	copyOnly := per(func() error { return nil })
	t.Logf("INVERT n=%d: |L·X - I| %.2g; per call, less the copy of the identity (%v): InvertLower %v, Dtrsm %v",
		n, worst, copyOnly.Round(time.Microsecond), (inv - copyOnly).Round(time.Microsecond), (solve - copyOnly).Round(time.Microsecond))
}
