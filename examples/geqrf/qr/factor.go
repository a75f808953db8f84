// Package qr is the tiled QR factorisation of examples/geqrf.jdf, generated into
// geqrf_jdf.go, with what a program needs around it: a random M×N problem, the
// factorisation on an rt.Context or a distributed job, and the checks of ‖A − QR‖/‖A‖ and
// ‖I − QᵀQ‖, which form Q by applying the factorisation's reflectors to the identity.
// Command geqrf uses it.
package qr

//go:generate go run github.com/jdf2go/jdf2go/cmd/jdf2go gen -o geqrf_jdf.go ../../geqrf.jdf

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
)

// Problem is a QR factorisation to run: the M×N matrix, dense (column-major, lda = M) for
// the check and tiled in NB×NB tiles for the factorisation, and the tiles of the T factors
// (IB×NB, one per tile of A).
type Problem struct {
	M, N, NB, IB int
	Dense        []float64
	A, T         *rt.TiledMatrix
}

// NewProblem returns a reproducible random problem, on one rank.
func NewProblem(m, n, nb, ib int, seed uint64) (*Problem, error) {
	return NewProblemGrid(m, n, nb, ib, seed, rt.Grid{P: 1, Q: 1}, 0)
}

// NewProblemGrid is NewProblem for rank of a job whose tiles are dealt over grid g (2-D
// block-cyclic, the same for A and T); every rank keeps the whole dense matrix.
func NewProblemGrid(m, n, nb, ib int, seed uint64, g rt.Grid, rank int) (*Problem, error) {
	if m < 1 || n < 1 || nb < 1 || ib < 1 || ib > nb {
		return nil, fmt.Errorf("qr: M=%d, N=%d, NB=%d must be positive and IB=%d in 1 .. NB", m, n, nb, ib)
	}
	p := &Problem{M: m, N: n, NB: nb, IB: ib, Dense: make([]float64, m*n)}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := range p.Dense {
		p.Dense[i] = r.Float64() - 0.5
	}
	a, err := rt.NewTiledMatrixGrid(m, n, nb, nb, g, rank, nil)
	if err != nil {
		return nil, err
	}
	t, err := rt.NewTiledMatrixGrid(a.MT*ib, n, ib, nb, g, rank, nil)
	if err != nil {
		return nil, err
	}
	p.A, p.T = a, t
	p.A.FillFromDense(p.Dense, m)
	return p, nil
}

// Flops is the flop count of the factorisation (LAPACK's dgeqrf): 2mn² − 2n³/3 for m ≥ n,
// and 2nm² − 2m³/3 otherwise.
func (p *Problem) Flops() float64 {
	m, n := float64(max(p.M, p.N)), float64(min(p.M, p.N))
	return 2*m*n*n - 2*n*n*n/3
}

// Tasks is the number of tasks of the factorisation of an mt×nt tile matrix.
func Tasks(mt, nt int) int64 {
	var n int64
	for k := range min(mt, nt) {
		below, right := int64(mt-1-k), int64(nt-1-k)
		n += 1 + right + below + below*right // GEQRT, UNMQRs, TSQRTs, TSMQRs
	}
	return n
}

// FactorOn factors p's tiles in place with the tile kernels of impl, the taskpool added by
// add: Context.Add, or a distributed job's Add on every rank, each with its part of the
// tiles. It returns when the factorisation is done or failed, or ctx ends.
func FactorOn(ctx context.Context, add func(*rt.Taskpool) error, p *Problem, impl *blas.Impl) error {
	tp, err := NewGeqrf(p.A, p.T, impl)
	if err != nil {
		return err
	}
	if err := add(tp.Taskpool); err != nil {
		return err
	}
	return tp.Wait(ctx)
}

// Verify checks the task graph of the factorisation of p (see Geqrf.Verify).
func Verify(p *Problem, impl *blas.Impl) error {
	tp, err := NewGeqrf(p.A, p.T, impl)
	if err != nil {
		return err
	}
	return tp.Verify()
}

// Check returns ‖A − QR‖_F/‖A‖_F and ‖I − QᵀQ‖_F for the factorisation gathered into f (the
// M×N factored matrix, lda = M: R on and above the diagonal, the reflectors below) and t
// (the T factors, (MT·IB)×N, ldt = MT·IB). It forms the thin Q (M×K, K = min(M, N)) by
// applying the reflectors of every tile kernel, last step first, to the first K columns of
// the identity, with the same kernels as the factorisation, on the dense arrays.
func (p *Problem) Check(impl *blas.Impl, f, t []float64) (resid, orth float64, err error) {
	m, n, nb, ib := p.M, p.N, p.NB, p.IB
	mt, nt := p.A.MT, p.A.NT
	kk := min(m, n)
	ldt := mt * ib
	rows := func(i int) int { return min(nb, m-i*nb) }
	cols := func(j int) int { return min(nb, n-j*nb) }
	q := make([]float64, m*kk)
	for i := range kk {
		q[i+i*m] = 1
	}
	work := make([]float64, blas.GemqrtWork(blas.Left, m, kk, ib))
	for k := min(mt, nt) - 1; k >= 0; k-- {
		refl := cols(k)
		for i := mt - 1; i > k; i-- {
			err := impl.Dtpmqrt(blas.Left, blas.NoTrans, rows(i), kk, refl, 0, ib,
				f[i*nb+k*nb*m:], m, t[i*ib+k*nb*ldt:], ldt, q[k*nb:], m, q[i*nb:], m, work)
			if err != nil {
				return 0, 0, fmt.Errorf("qr: apply TSQRT(%d, %d): %w", k, i, err)
			}
		}
		refl = min(rows(k), cols(k))
		err := impl.Dgemqrt(blas.Left, blas.NoTrans, rows(k), kk, refl, ib,
			f[k*nb+k*nb*m:], m, t[k*ib+k*nb*ldt:], ldt, q[k*nb:], m, work)
		if err != nil {
			return 0, 0, fmt.Errorf("qr: apply GEQRT(%d): %w", k, err)
		}
	}
	// R: the upper trapezoid of f's first K rows.
	r := make([]float64, kk*n)
	for j := range n {
		for i := 0; i <= min(j, kk-1); i++ {
			r[i+j*kk] = f[i+j*m]
		}
	}
	qr := append([]float64(nil), p.Dense...)
	if err := impl.Dgemm(blas.NoTrans, blas.NoTrans, m, n, kk, -1, q, m, r, kk, 1, qr, m); err != nil {
		return 0, 0, err
	}
	diff, err := blas.Dlange(blas.Frobenius, m, n, qr, m)
	if err != nil {
		return 0, 0, err
	}
	norm, err := blas.Dlange(blas.Frobenius, m, n, p.Dense, m)
	if err != nil {
		return 0, 0, err
	}
	g := make([]float64, kk*kk)
	for i := range kk {
		g[i+i*kk] = 1
	}
	if err := impl.Dgemm(blas.Trans, blas.NoTrans, kk, kk, m, -1, q, m, q, m, 1, g, kk); err != nil {
		return 0, 0, err
	}
	orth, err = blas.Dlange(blas.Frobenius, kk, kk, g, kk)
	if err != nil {
		return 0, 0, err
	}
	if norm == 0 {
		return diff, orth, nil
	}
	return diff / norm, orth, nil
}

// Tolerance is the bound Check's two measures must stay below for a factorisation of an
// M×N matrix: a small multiple of the rounding error that Householder QR commits.
func Tolerance(m, n int) float64 { return 100 * float64(max(m, n)) * 0x1p-52 }
