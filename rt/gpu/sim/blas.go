package sim

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	blasimpl "gonum.org/v1/gonum/blas/gonum"
	lapackimpl "gonum.org/v1/gonum/lapack/gonum"

	"github.com/jdf2go/jdf2go/rt/gpu"
)

// The BLAS subset runs on gonum, which is row-major. A column-major matrix
// with leading dimension ld is, byte for byte, the row-major transpose with
// the same stride, so each call becomes the transposed identity:
//   gemm:  C^T = op(B)^T op(A)^T        -> swap A and B, m and n
//   trsm:  op(A) X = B  <=>  X^T op(A)^T = B^T -> other side, other triangle
//   syrk:  the same triangle seen from the other side, op flipped
//   potrf: the lower factor of A is the upper factor of A^T

var (
	bl blasimpl.Implementation
	la lapackimpl.Implementation
)

func tr(t gpu.Transpose) blas.Transpose {
	if t == gpu.Trans {
		return blas.Trans
	}
	return blas.NoTrans
}

func flipTrans(t gpu.Transpose) blas.Transpose {
	if t == gpu.Trans {
		return blas.NoTrans
	}
	return blas.Trans
}

// flipUplo gives the row-major triangle holding a column-major uplo triangle.
func flipUplo(u gpu.Uplo) blas.Uplo {
	if u == gpu.Lower {
		return blas.Upper
	}
	return blas.Lower
}

func flipSide(s gpu.Side) blas.Side {
	if s == gpu.Left {
		return blas.Right
	}
	return blas.Left
}

func diag(d gpu.Diag) blas.Diag {
	if d == gpu.Unit {
		return blas.Unit
	}
	return blas.NonUnit
}

// span is the number of elements a rows x cols column-major matrix covers.
func span(rows, cols, ld int) int {
	if rows == 0 || cols == 0 {
		return 0
	}
	return ld*(cols-1) + rows
}

// mats resolves device pointers to float64 slices at enqueue time, so that
// a bad pointer fails the call rather than the stream.
func (s *Stream) mats(ps ...gpu.Ptr) ([][]float64, error) {
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

// Dgemm implements gpu.BLAS.
func (s *Stream) Dgemm(ta, tb gpu.Transpose, m, n, k int, alpha float64, a gpu.Ptr, lda int, b gpu.Ptr, ldb int, beta float64, c gpu.Ptr, ldc int) error {
	ms, err := s.mats(a, b, c)
	if err != nil {
		return err
	}
	return s.enqueue("dgemm", func() error {
		gemm(ta, tb, m, n, k, alpha, ms[0], lda, ms[1], ldb, beta, ms[2], ldc)
		return nil
	})
}

func gemm(ta, tb gpu.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	ar, ac := m, k
	if ta == gpu.Trans {
		ar, ac = k, m
	}
	br, bc := k, n
	if tb == gpu.Trans {
		br, bc = n, k
	}
	bl.Dgemm(tr(tb), tr(ta), n, m, k, alpha,
		b[:span(br, bc, ldb)], ldb, a[:span(ar, ac, lda)], lda, beta, c[:span(m, n, ldc)], ldc)
}

// Dtrsm implements gpu.BLAS.
func (s *Stream) Dtrsm(side gpu.Side, uplo gpu.Uplo, ta gpu.Transpose, d gpu.Diag, m, n int, alpha float64, a gpu.Ptr, lda int, b gpu.Ptr, ldb int) error {
	return s.triangular("dtrsm", bl.Dtrsm, side, uplo, ta, d, m, n, alpha, a, lda, b, ldb)
}

// triangular enqueues gonum's Dtrsm or Dtrmm (same arguments) on the
// row-major view of the column-major operands.
func (s *Stream) triangular(name string, op func(blas.Side, blas.Uplo, blas.Transpose, blas.Diag, int, int, float64, []float64, int, []float64, int),
	side gpu.Side, uplo gpu.Uplo, ta gpu.Transpose, d gpu.Diag, m, n int, alpha float64, a gpu.Ptr, lda int, b gpu.Ptr, ldb int) error {
	ms, err := s.mats(a, b)
	if err != nil {
		return err
	}
	na := m
	if side == gpu.Right {
		na = n
	}
	return s.enqueue(name, func() error {
		op(flipSide(side), flipUplo(uplo), tr(ta), diag(d), n, m, alpha,
			ms[0][:span(na, na, lda)], lda, ms[1][:span(m, n, ldb)], ldb)
		return nil
	})
}

// Dtrmm implements gpu.BLAS.
func (s *Stream) Dtrmm(side gpu.Side, uplo gpu.Uplo, ta gpu.Transpose, d gpu.Diag, m, n int, alpha float64, a gpu.Ptr, lda int, b gpu.Ptr, ldb int) error {
	return s.triangular("dtrmm", bl.Dtrmm, side, uplo, ta, d, m, n, alpha, a, lda, b, ldb)
}

// Dsyrk implements gpu.BLAS.
func (s *Stream) Dsyrk(uplo gpu.Uplo, t gpu.Transpose, n, k int, alpha float64, a gpu.Ptr, lda int, beta float64, c gpu.Ptr, ldc int) error {
	ms, err := s.mats(a, c)
	if err != nil {
		return err
	}
	ar, ac := n, k
	if t == gpu.Trans {
		ar, ac = k, n
	}
	return s.enqueue("dsyrk", func() error {
		bl.Dsyrk(flipUplo(uplo), flipTrans(t), n, k, alpha,
			ms[0][:span(ar, ac, lda)], lda, beta, ms[1][:span(n, n, ldc)], ldc)
		return nil
	})
}

// Dpotrf implements gpu.BLAS.
func (s *Stream) Dpotrf(uplo gpu.Uplo, n int, a gpu.Ptr, lda int) error {
	ms, err := s.mats(a)
	if err != nil {
		return err
	}
	return s.enqueue("dpotrf", func() error {
		if n == 0 {
			return nil
		}
		if !la.Dpotrf(flipUplo(uplo), n, ms[0][:span(n, n, lda)], lda) {
			return fmt.Errorf("%w: order %d", gpu.ErrNotPositiveDefinite, n)
		}
		return nil
	})
}

// Dtrtri implements gpu.BLAS. The inverse of the transpose is the
// transpose of the inverse, so the row-major view inverts the other
// triangle. Like cuSOLVER's, it does not report a zero on the diagonal.
func (s *Stream) Dtrtri(uplo gpu.Uplo, d gpu.Diag, n int, a gpu.Ptr, lda int) error {
	ms, err := s.mats(a)
	if err != nil {
		return err
	}
	return s.enqueue("dtrtri", func() error {
		if n > 0 {
			la.Dtrtri(flipUplo(uplo), diag(d), n, ms[0][:span(n, n, lda)], lda)
		}
		return nil
	})
}

// DgemmStridedBatched implements gpu.BLAS.
func (s *Stream) DgemmStridedBatched(ta, tb gpu.Transpose, m, n, k int, alpha float64, a gpu.Ptr, lda int, strideA int64, b gpu.Ptr, ldb int, strideB int64, beta float64, c gpu.Ptr, ldc int, strideC int64, count int) error {
	ms, err := s.mats(a, b, c)
	if err != nil {
		return err
	}
	return s.enqueue("dgemm_strided_batched", func() error {
		for i := range int64(count) {
			gemm(ta, tb, m, n, k, alpha, ms[0][i*strideA:], lda, ms[1][i*strideB:], ldb, beta, ms[2][i*strideC:], ldc)
		}
		return nil
	})
}

// DgemmBatched implements gpu.BLAS.
func (s *Stream) DgemmBatched(ta, tb gpu.Transpose, m, n, k int, alpha float64, a []gpu.Ptr, lda int, b []gpu.Ptr, ldb int, beta float64, c []gpu.Ptr, ldc int) error {
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
			gemm(ta, tb, m, n, k, alpha, as[i], lda, bs[i], ldb, beta, cs[i], ldc)
		}
		return nil
	})
}
