package gpu

import (
	"fmt"

	"github.com/jdf2go/jdf2go/rt/blas"
)

// InvertLower: the inverse of a triangle through products.
//
// On CUDA a triangular solve of one n x n tile issues a long series of small
// kernels and leaves most of the device idle, so solving against the
// identity (Dtrsm) is a slow way to invert the triangle. InvertLower inverts
// the diagonal blocks of invertBlock rows with one small kernel, then merges
// pairs of inverted blocks, doubling their size, with two batched products
// per size: for a lower triangle [A 0; B C], the inverse is
// [A⁻¹ 0; -C⁻¹·B·A⁻¹ C⁻¹].

// invertBlock is the order of the diagonal blocks that the kernel inverts,
// one thread block each, one thread per column.
const invertBlock = 32

// invertKernel is the runtime's own kernel: a device starts loading it
// (loadInvert), so that no task waits for the compiler.
const invertKernel = "jdf2go.invert_lower_blocks"

const invertCUDA = `
extern "C" __global__ void jdf2go_invert_lower_blocks(int n, const double* a, int lda, double* x, int ldx)
{
	__shared__ double l[32][33];
	int r0 = blockIdx.x * 32;
	int m = min(32, n - r0);
	int j = threadIdx.x;
	const double* ab = a + r0 + (long long)r0 * lda;
	double* xb = x + r0 + (long long)r0 * ldx;
	for (int c = 0; c < m; c++) {
		if (j < m) l[j][c] = ab[j + (long long)c * lda];
	}
	__syncthreads();
	if (j >= m) return;
	double y[32];
	for (int i = j; i < m; i++) {
		double s = (i == j) ? 1.0 : 0.0;
		for (int k = j; k < i; k++) s -= l[i][k] * y[k];
		y[i] = s / l[i][i];
		xb[i + (long long)j * ldx] = y[i];
	}
}
`

func init() {
	if err := RegisterKernel(KernelSpec{Name: invertKernel, CUDA: invertCUDA, Entry: "jdf2go_invert_lower_blocks", Host: invertHost}); err != nil {
		panic(err) // cannot happen: the name is the runtime's own
	}
}

// invertHost is the kernel on the CPU, for the simulated device.
func invertHost(mem HostMemory, grid, block Dim3, args []any) error {
	if len(args) != 5 {
		return fmt.Errorf("%w: %s takes 5 arguments, got %d", ErrBadArgument, invertKernel, len(args))
	}
	n, ok1 := args[0].(int)
	lda, ok2 := args[2].(int)
	ldx, ok3 := args[4].(int)
	ab, ok4 := args[1].(Buffer)
	xb, ok5 := args[3].(Buffer)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
		return fmt.Errorf("%w: %s arguments %T %T %T %T %T", ErrBadArgument, invertKernel, args[0], args[1], args[2], args[3], args[4])
	}
	a, err := Float64s(mem, ab)
	if err != nil {
		return err
	}
	x, err := Float64s(mem, xb)
	if err != nil {
		return err
	}
	for r0 := 0; r0 < n; r0 += invertBlock {
		m := min(invertBlock, n-r0)
		at := func(i, k int) float64 { return a[r0+i+(r0+k)*lda] }
		for j := range m {
			col := x[r0+(r0+j)*ldx:]
			for i := j; i < m; i++ {
				s := 0.0
				if i == j {
					s = 1
				}
				for k := j; k < i; k++ {
					s -= at(i, k) * col[k]
				}
				col[i] = s / at(i, i)
			}
		}
	}
	return nil
}

// InvertLower enqueues X = L⁻¹ for the lower triangle L of the n x n matrix
// A. X must hold the identity on entry: the result is that of the solve
// Dtrsm(blas.Left, blas.Lower, blas.NoTrans, blas.NonUnit, n, n, 1, A, lda, X, ldx), zeros above
// the diagonal included. That solve is what InvertLower enqueues while the
// device has not loaded the runtime's kernel (on CUDA it is compiled when the
// device opens; Device.Ready waits for it), or if it could not. The diagonal
// is not checked (see Dtrtri). It uses the stream's Scratch memory for n*n/4
// float64s, so a body must not keep a Scratch buffer of its own across the
// call.
func (s *Stream) InvertLower(n int, a Buffer, lda int, x Buffer, ldx int) error {
	if err := firstErr(
		matrix("InvertLower", "A", a, n, n, lda, 0, 1),
		matrix("InvertLower", "X", x, n, n, ldx, 0, 1)); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	k := s.dev.invert.Load()
	if k == nil {
		return s.be.Dtrsm(blas.Left, blas.Lower, blas.NoTrans, blas.NonUnit, n, n, 1, a.Ptr, lda, x.Ptr, ldx)
	}
	blocks := (n + invertBlock - 1) / invertBlock
	if err := s.be.Launch(*k, Dim3{X: blocks}, Dim3{X: invertBlock}, 0, []any{n, a, lda, x, ldx}); err != nil {
		return err
	}
	if n <= invertBlock {
		return nil
	}
	// A level holds n/(2b) products of b x b, or one of (n-b) x b: n²/4 at most.
	w, err := s.Scratch(n * n / 4)
	if err != nil {
		return err
	}
	at := func(b Buffer, ld, i, j int) Buffer { return b.Slice(i+j*ld, b.Len) }
	// Level by level, the inverted blocks of order b merge by pairs: A⁻¹ at
	// (r, r), B at (r+b, r), C⁻¹ at (r+b, r+b), and W = B·A⁻¹ in the scratch.
	for b := invertBlock; b < n; b *= 2 {
		pairs := n / (2 * b)
		if pairs > 0 {
			step := int64(2 * b)
			sa, sx, sw := step*int64(lda+1), step*int64(ldx+1), int64(b*b)
			if err := s.DgemmStridedBatched(blas.NoTrans, blas.NoTrans, b, b, b, 1, at(a, lda, b, 0), lda, sa,
				x, ldx, sx, 0, w, b, sw, pairs); err != nil {
				return err
			}
			if err := s.DgemmStridedBatched(blas.NoTrans, blas.NoTrans, b, b, b, -1, at(x, ldx, b, b), ldx, sx,
				w, b, sw, 0, at(x, ldx, b, 0), ldx, sx, pairs); err != nil {
				return err
			}
		}
		// A last pair whose second block is shorter.
		r := 2 * b * pairs
		if c := n - r - b; c > 0 {
			if err := s.Dgemm(blas.NoTrans, blas.NoTrans, c, b, b, 1, at(a, lda, r+b, r), lda, at(x, ldx, r, r), ldx, 0, w, c); err != nil {
				return err
			}
			if err := s.Dgemm(blas.NoTrans, blas.NoTrans, c, b, c, -1, at(x, ldx, r+b, r+b), ldx, w, c, 0, at(x, ldx, r+b, r), ldx); err != nil {
				return err
			}
		}
	}
	return nil
}
