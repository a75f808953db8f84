package cuda

import (
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/driver"
	"github.com/jdf2go/jdf2go/rt/rttest"
)

// TestCUDAColdStart measures what a program pays before its device runs at
// speed: opening the backend, creating the device (which prepares the
// compute streams: cuBLAS and cuSOLVER handles), then the first and the
// second call of each BLAS operation of a tiled Cholesky at NB 1024, each
// waited for. The first calls load the kernels they use (lazy
// module loading). Run it alone, in a fresh process, to see a program's
// first calls:
//
//	.gpu/cuda.test -test.v -test.run CUDAColdStart
func TestCUDAColdStart(t *testing.T) {
	requireGPU(t)
	const nb = 1024
	t0 := time.Now()
	b, err := OpenDevice(0)
	must(t, err)
	open := time.Since(t0)
	t0 = time.Now()
	d := openBackends(t, []gpu.Option{gpu.WithLogger(quiet)}, b)[0].Device()
	create := time.Since(t0)
	defer func() { must(t, d.Close()) }()
	s := d.Compute(0).Backend().(*DeviceStream)
	must(t, b.bind())
	defer b.unbind()
	bytes := int64(nb * nb * 8)
	var p [3]driver.Ptr
	for i := range p {
		p[i], err = b.Alloc(bytes)
		must(t, err)
		defer func() { must(t, b.Free(p[i])) }()
	}
	spd := rttest.RandomSPD(nb, 1)
	for i := range p {
		must(t, s.CopyHtoD(p[i], driver.Float64sAsBytes(spd)))
	}
	must(t, s.syncAll())
	ops := []struct {
		name string
		op   func() error
	}{
		{"dgemm", func() error {
			return s.Dgemm(blas.NoTrans, blas.Trans, nb, nb, nb, -1, p[0], nb, p[1], nb, 1, p[2], nb)
		}},
		{"dsyrk", func() error { return s.Dsyrk(blas.Lower, blas.NoTrans, nb, nb, -1, p[0], nb, 1, p[2], nb) }},
		{"dtrsm", func() error {
			return s.Dtrsm(blas.Right, blas.Lower, blas.Trans, blas.NonUnit, nb, nb, 1, p[0], nb, p[1], nb)
		}},
		{"dpotrf", func() error {
			if err := s.CopyHtoD(p[2], driver.Float64sAsBytes(spd)); err != nil {
				return err
			}
			return s.Dpotrf(blas.Lower, nb, p[2], nb)
		}},
	}
	msg := ""
	for _, o := range ops {
		var took [2]time.Duration
		for i := range took {
			t0 := time.Now()
			must(t, o.op())
			must(t, s.syncAll())
			took[i] = time.Since(t0)
		}
		msg += " " + o.name + " " + took[0].Round(time.Microsecond).String() + "/" + took[1].Round(time.Microsecond).String()
	}
	t.Logf("COLDSTART open %v, device with prepared compute streams %v; first/second call at nb=%d:%s",
		open.Round(time.Microsecond), create.Round(time.Microsecond), nb, msg)
}
