package sim

import (
	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/gpu/driver"
)

// The BLAS subset runs on rt/blas's gonum backend, which takes the same
// column-major operands and flags: a stream resolves the device pointers
// to host slices when the call is enqueued (so that a bad pointer fails the
// call, not the stream) and runs the routine when the stream reaches it.
var cpu = blas.Gonum()

// mats resolves device pointers to float64 slices, each running to the end
// of its allocation.
func (s *Stream) mats(ps ...driver.Ptr) ([][]float64, error) {
	out := make([][]float64, len(ps))
	for i, p := range ps {
		f, err := s.dev.float64s(p)
		if err != nil {
			return nil, err
		}
		out[i] = f
	}
	return out, nil
}

// Dgemm implements driver.BLAS.
func (s *Stream) Dgemm(ta, tb blas.Transpose, m, n, k int, alpha float64, a driver.Ptr, lda int, b driver.Ptr, ldb int, beta float64, c driver.Ptr, ldc int) error {
	ms, err := s.mats(a, b, c)
	if err != nil {
		return err
	}
	return s.enqueue("dgemm", func() error {
		return cpu.Dgemm(ta, tb, m, n, k, alpha, ms[0], lda, ms[1], ldb, beta, ms[2], ldc)
	})
}

// Dtrsm implements driver.BLAS.
func (s *Stream) Dtrsm(side blas.Side, uplo blas.Uplo, ta blas.Transpose, d blas.Diag, m, n int, alpha float64, a driver.Ptr, lda int, b driver.Ptr, ldb int) error {
	ms, err := s.mats(a, b)
	if err != nil {
		return err
	}
	return s.enqueue("dtrsm", func() error {
		return cpu.Dtrsm(side, uplo, ta, d, m, n, alpha, ms[0], lda, ms[1], ldb)
	})
}

// Dtrmm implements driver.BLAS.
func (s *Stream) Dtrmm(side blas.Side, uplo blas.Uplo, ta blas.Transpose, d blas.Diag, m, n int, alpha float64, a driver.Ptr, lda int, b driver.Ptr, ldb int) error {
	ms, err := s.mats(a, b)
	if err != nil {
		return err
	}
	return s.enqueue("dtrmm", func() error {
		return cpu.Dtrmm(side, uplo, ta, d, m, n, alpha, ms[0], lda, ms[1], ldb)
	})
}

// Dsyrk implements driver.BLAS.
func (s *Stream) Dsyrk(uplo blas.Uplo, t blas.Transpose, n, k int, alpha float64, a driver.Ptr, lda int, beta float64, c driver.Ptr, ldc int) error {
	ms, err := s.mats(a, c)
	if err != nil {
		return err
	}
	return s.enqueue("dsyrk", func() error {
		return cpu.Dsyrk(uplo, t, n, k, alpha, ms[0], lda, beta, ms[1], ldc)
	})
}

// Dpotrf implements driver.BLAS: a matrix that is not positive definite
// fails the stream with an error wrapping driver.ErrNotPositiveDefinite.
func (s *Stream) Dpotrf(uplo blas.Uplo, n int, a driver.Ptr, lda int) error {
	ms, err := s.mats(a)
	if err != nil {
		return err
	}
	return s.enqueue("dpotrf", func() error {
		return cpu.Dpotrf(uplo, n, ms[0], lda)
	})
}

// Dtrtri implements driver.BLAS. Like cuSOLVER's, it does not report a zero
// on the diagonal.
func (s *Stream) Dtrtri(uplo blas.Uplo, d blas.Diag, n int, a driver.Ptr, lda int) error {
	ms, err := s.mats(a)
	if err != nil {
		return err
	}
	return s.enqueue("dtrtri", func() error {
		return cpu.Dtrtri(uplo, d, n, ms[0], lda)
	})
}

// DgemmStridedBatched implements driver.BLAS.
func (s *Stream) DgemmStridedBatched(ta, tb blas.Transpose, m, n, k int, alpha float64, a driver.Ptr, lda int, strideA int64, b driver.Ptr, ldb int, strideB int64, beta float64, c driver.Ptr, ldc int, strideC int64, count int) error {
	ms, err := s.mats(a, b, c)
	if err != nil {
		return err
	}
	return s.enqueue("dgemm_strided_batched", func() error {
		for i := range int64(count) {
			if err := cpu.Dgemm(ta, tb, m, n, k, alpha, ms[0][i*strideA:], lda, ms[1][i*strideB:], ldb, beta, ms[2][i*strideC:], ldc); err != nil {
				return err
			}
		}
		return nil
	})
}

// DgemmBatched implements driver.BLAS.
func (s *Stream) DgemmBatched(ta, tb blas.Transpose, m, n, k int, alpha float64, a []driver.Ptr, lda int, b []driver.Ptr, ldb int, beta float64, c []driver.Ptr, ldc int) error {
	as, err := s.mats(a...)
	if err != nil {
		return err
	}
	bs, err := s.mats(b...)
	if err != nil {
		return err
	}
	cs, err := s.mats(c...)
	if err != nil {
		return err
	}
	return s.enqueue("dgemm_batched", func() error {
		for i := range cs {
			if err := cpu.Dgemm(ta, tb, m, n, k, alpha, as[i], lda, bs[i], ldb, beta, cs[i], ldc); err != nil {
				return err
			}
		}
		return nil
	})
}
