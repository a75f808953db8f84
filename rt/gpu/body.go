package gpu

import (
	"fmt"

	"github.com/jdf2go/jdf2go/rt/blas"
)

// The device-neutral body API (docs/architecture.md decision 6): what a GPU body
// calls on the stream it was given. Every call checks its arguments against
// the buffers (ErrBadArgument), then enqueues the operation on the stream
// and returns; the work runs in enqueue order, after the stage-in copies of
// the task and before its stage-out copies. Matrices are column-major with
// leading dimensions in elements, as in cuBLAS.

// Memcpy enqueues a device-to-device copy of src into dst; the buffers must
// have the same element type, and dst must hold src.
func (s *Stream) Memcpy(dst, src Buffer) error {
	if dst.Elem != src.Elem || dst.Len < src.Len || src.Ptr == 0 || dst.Ptr == 0 {
		return fmt.Errorf("%w: Memcpy %v <- %v", ErrBadArgument, dst, src)
	}
	if src.Len == 0 {
		return nil
	}
	return s.be.CopyDtoD(dst.Ptr, src.Ptr, src.Bytes())
}

// matrix checks that b holds a rows x cols column-major float64 matrix with
// leading dimension ld, starting count*stride elements apart.
func matrix(op, name string, b Buffer, rows, cols, ld int, stride int64, count int) error {
	if b.Elem != Float64 {
		return fmt.Errorf("%w: %s: %s is %v, want float64", ErrBadArgument, op, name, b)
	}
	if rows < 0 || cols < 0 || ld < max(1, rows) {
		return fmt.Errorf("%w: %s: %s is %dx%d with leading dimension %d", ErrBadArgument, op, name, rows, cols, ld)
	}
	if rows == 0 || cols == 0 || count == 0 {
		return nil
	}
	need := int64(ld)*int64(cols-1) + int64(rows) + stride*int64(count-1)
	if b.Ptr == 0 || int64(b.Len) < need {
		return fmt.Errorf("%w: %s: %s needs %d elements, has %d", ErrBadArgument, op, name, need, b.Len)
	}
	return nil
}

func dims(t blas.Transpose, rows, cols int) (int, int) {
	if t == blas.NoTrans {
		return rows, cols
	}
	return cols, rows
}

// Dgemm enqueues C = alpha*op(A)*op(B) + beta*C with op(A) m x k, op(B)
// k x n and C m x n.
func (s *Stream) Dgemm(ta, tb blas.Transpose, m, n, k int, alpha float64, a Buffer, lda int, b Buffer, ldb int, beta float64, c Buffer, ldc int) error {
	ar, ac := dims(ta, m, k)
	br, bc := dims(tb, k, n)
	if err := firstErr(
		matrix("Dgemm", "A", a, ar, ac, lda, 0, 1),
		matrix("Dgemm", "B", b, br, bc, ldb, 0, 1),
		matrix("Dgemm", "C", c, m, n, ldc, 0, 1)); err != nil {
		return err
	}
	return s.be.Dgemm(ta, tb, m, n, k, alpha, a.Ptr, lda, b.Ptr, ldb, beta, c.Ptr, ldc)
}

// Dtrsm enqueues the solve op(A)*X = alpha*B (side Left) or X*op(A) =
// alpha*B (side blas.Right) with A triangular; X overwrites B (m x n).
func (s *Stream) Dtrsm(side blas.Side, uplo blas.Uplo, ta blas.Transpose, diag blas.Diag, m, n int, alpha float64, a Buffer, lda int, b Buffer, ldb int) error {
	if err := triangular("Dtrsm", side, m, n, a, lda, b, ldb); err != nil {
		return err
	}
	return s.be.Dtrsm(side, uplo, ta, diag, m, n, alpha, a.Ptr, lda, b.Ptr, ldb)
}

// triangular checks the operands of Dtrsm and Dtrmm: A is the triangle of
// the side of the m x n matrix B.
func triangular(op string, side blas.Side, m, n int, a Buffer, lda int, b Buffer, ldb int) error {
	na := m
	if side == blas.Right {
		na = n
	}
	return firstErr(
		matrix(op, "A", a, na, na, lda, 0, 1),
		matrix(op, "B", b, m, n, ldb, 0, 1))
}

// Dtrmm enqueues the product B = alpha*op(A)*B (side Left) or B =
// alpha*B*op(A) (side blas.Right) with A triangular, in place on B (m x n).
// With the inverse of a triangle from Dtrtri it stands in for Dtrsm: on
// CUDA a triangular solve issues many small kernels, a product few.
func (s *Stream) Dtrmm(side blas.Side, uplo blas.Uplo, ta blas.Transpose, diag blas.Diag, m, n int, alpha float64, a Buffer, lda int, b Buffer, ldb int) error {
	if err := triangular("Dtrmm", side, m, n, a, lda, b, ldb); err != nil {
		return err
	}
	return s.be.Dtrmm(side, uplo, ta, diag, m, n, alpha, a.Ptr, lda, b.Ptr, ldb)
}

// Dsyrk enqueues C = alpha*op(A)*op(A)^T + beta*C on the uplo triangle of the
// n x n matrix C, with op(A) n x k.
func (s *Stream) Dsyrk(uplo blas.Uplo, t blas.Transpose, n, k int, alpha float64, a Buffer, lda int, beta float64, c Buffer, ldc int) error {
	ar, ac := dims(t, n, k)
	if err := firstErr(
		matrix("Dsyrk", "A", a, ar, ac, lda, 0, 1),
		matrix("Dsyrk", "C", c, n, n, ldc, 0, 1)); err != nil {
		return err
	}
	return s.be.Dsyrk(uplo, t, n, k, alpha, a.Ptr, lda, beta, c.Ptr, ldc)
}

// Dpotrf enqueues the Cholesky factorization of the n x n matrix A in place
// (A = L*L^T for Lower). A matrix that is not positive definite fails the
// task at its next event (ErrNotPositiveDefinite).
func (s *Stream) Dpotrf(uplo blas.Uplo, n int, a Buffer, lda int) error {
	if err := matrix("Dpotrf", "A", a, n, n, lda, 0, 1); err != nil {
		return err
	}
	return s.be.Dpotrf(uplo, n, a.Ptr, lda)
}

// Dtrtri enqueues the inversion of the uplo triangle of the n x n matrix A
// in place; the other triangle is left as it is. The diagonal is not
// checked (as with Dtrsm, a zero there leaves infinities): a triangle from
// a successful Dpotrf has a positive one.
func (s *Stream) Dtrtri(uplo blas.Uplo, diag blas.Diag, n int, a Buffer, lda int) error {
	if err := matrix("Dtrtri", "A", a, n, n, lda, 0, 1); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	return s.be.Dtrtri(uplo, diag, n, a.Ptr, lda)
}

// DgemmStridedBatched enqueues count products C_i = alpha*op(A_i)*op(B_i) +
// beta*C_i where X_i starts strideX elements after X_{i-1}.
func (s *Stream) DgemmStridedBatched(ta, tb blas.Transpose, m, n, k int, alpha float64, a Buffer, lda int, strideA int64, b Buffer, ldb int, strideB int64, beta float64, c Buffer, ldc int, strideC int64, count int) error {
	if count < 0 || strideA < 0 || strideB < 0 || strideC < 0 {
		return fmt.Errorf("%w: DgemmStridedBatched: count %d, strides %d %d %d", ErrBadArgument, count, strideA, strideB, strideC)
	}
	ar, ac := dims(ta, m, k)
	br, bc := dims(tb, k, n)
	if err := firstErr(
		matrix("DgemmStridedBatched", "A", a, ar, ac, lda, strideA, count),
		matrix("DgemmStridedBatched", "B", b, br, bc, ldb, strideB, count),
		matrix("DgemmStridedBatched", "C", c, m, n, ldc, strideC, count)); err != nil {
		return err
	}
	if count == 0 {
		return nil
	}
	return s.be.DgemmStridedBatched(ta, tb, m, n, k, alpha, a.Ptr, lda, strideA, b.Ptr, ldb, strideB, beta, c.Ptr, ldc, strideC, count)
}

// DgemmBatched enqueues len(c) independent products C_i = alpha*op(A_i)*
// op(B_i) + beta*C_i over separate buffers: the natural call of a batched
// body, one matrix triple per ring member.
func (s *Stream) DgemmBatched(ta, tb blas.Transpose, m, n, k int, alpha float64, a []Buffer, lda int, b []Buffer, ldb int, beta float64, c []Buffer, ldc int) error {
	if len(a) != len(c) || len(b) != len(c) {
		return fmt.Errorf("%w: DgemmBatched: %d A, %d B and %d C matrices", ErrBadArgument, len(a), len(b), len(c))
	}
	ar, ac := dims(ta, m, k)
	br, bc := dims(tb, k, n)
	pa, pb, pc := make([]Ptr, len(c)), make([]Ptr, len(c)), make([]Ptr, len(c))
	for i := range c {
		if err := firstErr(
			matrix("DgemmBatched", "A", a[i], ar, ac, lda, 0, 1),
			matrix("DgemmBatched", "B", b[i], br, bc, ldb, 0, 1),
			matrix("DgemmBatched", "C", c[i], m, n, ldc, 0, 1)); err != nil {
			return err
		}
		pa[i], pb[i], pc[i] = a[i].Ptr, b[i].Ptr, c[i].Ptr
	}
	if len(c) == 0 {
		return nil
	}
	return s.be.DgemmBatched(ta, tb, m, n, k, alpha, pa, lda, pb, ldb, beta, pc, ldc)
}

// Launch enqueues the named kernel (RegisterKernel) with the given geometry
// and arguments.
func (s *Stream) Launch(name string, grid, block Dim3, args ...any) error {
	k, err := s.dev.kernel(name)
	if err != nil {
		return err
	}
	return s.be.Launch(k, grid, block, 0, args)
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
