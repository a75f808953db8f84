package cudabench

import (
	"errors"
	"slices"
	"time"

	"github.com/jdf2go/jdf2go/rt/gpu/cuda"
)

// TileCost is what one tile kernel of a tiled Cholesky costs, measured with
// the binding alone: the host time of one call on an idle stream, the host
// time per call when calls are issued back to back, and the device time per
// call when they run one after another on one stream.
type TileCost struct {
	Op                    string
	Host, Pipelined, Kern time.Duration
	Flops                 float64 // per call
}

// TileCosts measures the library calls of a tiled Cholesky's updates (GEMM
// C -= A·Bᵀ, TRSM, SYRK, and the TRSM's replacement: the diagonal tile's
// inverse once (cuSOLVER's TRTRI) and a triangular product in place per tile)
// on nb×nb tiles, iters calls each. It shows whether a tile task is bound by
// the host (Host or Pipelined above Kern) or by the device.
func TileCosts(ordinal, nb, iters int) (out []TileCost, err error) {
	err = withOperands(ordinal, nb*nb, func(r *rawDevice, h cuda.Blas, a, b, c cuda.DevicePtr) (err error) {
		n := float64(nb)
		sv, err := cuda.NewSolver(r.s)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, sv.Destroy()) }()
		devWork, hostWork, err := sv.DtrtriBufferSize(cuda.FillLower, cuda.DiagNonUnit, nb, b, nb)
		if err != nil {
			return err
		}
		var work cuda.DevicePtr
		free, err := alloc(max(devWork, 8), &work)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, free()) }()
		host := make([]byte, hostWork)
		ops := []struct {
			name  string
			flops float64
			call  func() error
		}{
			{"gemm", 2 * n * n * n, func() error {
				return h.Dgemm(cuda.OpN, cuda.OpT, nb, nb, nb, -1, a, nb, b, nb, 1, c, nb)
			}},
			// a is random, not triangular: the solve's values do not matter here, only its cost.
			{"trsm", n * n * n, func() error {
				return h.Dtrsm(cuda.SideRight, cuda.FillLower, cuda.OpT, cuda.DiagNonUnit, nb, nb, 1, a, nb, c, nb)
			}},
			{"trmm", n * n * n, func() error {
				return h.Dtrmm(cuda.SideRight, cuda.FillLower, cuda.OpT, cuda.DiagNonUnit, nb, nb, 1, a, nb, c, nb, c, nb)
			}},
			// b, inverted again and again, holds whatever that gives: only the cost matters.
			{"trtri", n * n * n / 3, func() error {
				return sv.DtrtriWorkspace(cuda.FillLower, cuda.DiagNonUnit, nb, b, nb, work, max(devWork, 8), host, sv.InfoPtr())
			}},
			{"syrk", n * n * n, func() error {
				return h.Dsyrk(cuda.FillLower, cuda.OpN, nb, nb, -1, a, nb, 1, c, nb)
			}},
		}
		for _, op := range ops {
			tc := TileCost{Op: op.name, Flops: op.flops}
			host := make([]time.Duration, 0, iters)
			for range iters {
				t0 := time.Now()
				if err := op.call(); err != nil {
					return err
				}
				host = append(host, time.Since(t0))
				if err := r.s.Synchronize(); err != nil {
					return err
				}
			}
			slices.Sort(host)
			tc.Host = host[len(host)/2]
			t0 := time.Now()
			for range iters {
				if err := op.call(); err != nil {
					return err
				}
			}
			tc.Pipelined = time.Since(t0) / time.Duration(iters)
			ds, err := r.timed(1, 3, func() error {
				for range iters {
					if err := op.call(); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			slices.Sort(ds)
			tc.Kern = ds[1] / time.Duration(iters)
			out = append(out, tc)
		}
		return nil
	})
	return out, err
}
