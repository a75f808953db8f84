// Package cholesky is the tiled Cholesky factorisation of examples/potrf.jdf,
// generated into potrf_jdf.go, with what a program needs around it: a random
// symmetric positive definite problem, the factorisation on an rt.Context, and
// the residual check; and the same factorisation written as a dynamic task graph
// (FactorDynamic, dynamic.go). Commands potrf and dpotrf and the benchmark driver (bench) use
// it.
package cholesky

//go:generate go run github.com/jdf2go/jdf2go/cmd/jdf2go gen -o potrf_jdf.go ../../potrf.jdf

import (
	"context"
	"fmt"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
)

// Problem is an n×n symmetric positive definite matrix, kept dense (column-major,
// lda = n) for the check and tiled in NB×NB tiles for the factorisation.
type Problem struct {
	N, NB int
	Dense []float64
	A     *rt.TiledMatrix
}

// NewProblem returns a reproducible random problem (blas.FillSPD) with its tiles filled.
func NewProblem(n, nb int, seed uint64) (*Problem, error) { return NewProblemAlloc(n, nb, seed, nil) }

// NewProblemAlloc is NewProblem with the tiles' storage from alloc (nil: the Go heap), for
// tiles in page-locked memory that a GPU transfers without staging (cuda.PinnedPool).
func NewProblemAlloc(n, nb int, seed uint64, alloc rt.Alloc) (*Problem, error) {
	if n < 1 || nb < 1 {
		return nil, fmt.Errorf("cholesky: N=%d and NB=%d must be positive", n, nb)
	}
	p := &Problem{N: n, NB: nb, Dense: make([]float64, n*n)}
	if err := blas.FillSPD(n, p.Dense, n, seed); err != nil {
		return nil, err
	}
	return NewProblemGrid(n, nb, seed, rt.Grid{P: 1, Q: 1}, 0, alloc)
}

// NewProblemGrid is NewProblemAlloc for rank of a job whose tiles are dealt over grid g
// (2-D block-cyclic); every rank keeps the whole dense matrix, for the check.
func NewProblemGrid(n, nb int, seed uint64, g rt.Grid, rank int, alloc rt.Alloc) (*Problem, error) {
	if n < 1 || nb < 1 {
		return nil, fmt.Errorf("cholesky: N=%d and NB=%d must be positive", n, nb)
	}
	p := &Problem{N: n, NB: nb, Dense: make([]float64, n*n)}
	if err := blas.FillSPD(n, p.Dense, n, seed); err != nil {
		return nil, err
	}
	a, err := rt.NewTiledMatrixGrid(n, n, nb, nb, g, rank, alloc)
	if err != nil {
		return nil, err
	}
	p.A = a
	p.Reset()
	return p, nil
}

// Reset copies the dense matrix into the tiles again, undoing a factorisation (FillFromDense
// makes the tiles that a device still holds from the last one stale).
func (p *Problem) Reset() { p.A.FillFromDense(p.Dense, p.N) }

// Residual returns ‖A − L·Lᵀ‖_F / ‖A‖_F for the factor L now in the tiles, computed with impl.
func (p *Problem) Residual(impl *blas.Impl) (float64, error) {
	f := make([]float64, p.N*p.N)
	p.A.GatherToDense(f, p.N)
	return impl.PotrfResidual(blas.Lower, p.N, p.Dense, p.N, f, p.N)
}

// Flops is the flop count of the factorisation (LAPACK's).
func (p *Problem) Flops() float64 { return blas.PotrfFlops(p.N) }

// Tasks is the number of tasks of the factorisation of a matrix of mt×mt tiles: mt POTRF,
// mt(mt-1)/2 TRSM and as many SYRK, and (mt-2)(mt-1)mt/6 GEMM, with or without inverses
// (POTRF computes those).
func Tasks(mt int) int64 {
	m := int64(mt)
	return m + m*(m-1) + (m-2)*(m-1)*m/6
}

// Factor factors a in place on c with the tile kernels of impl: L overwrites the lower
// triangle of tiles. It returns when the factorisation is done, failed (a tile that is
// not positive definite) or ctx ends. When c has devices and the tiles have at most
// MaxInverseTile rows, the TRSMs that run there multiply by the inverses of the diagonal
// tiles (potrf.jdf's TRSM_INV).
func Factor(ctx context.Context, c *rt.Context, a *rt.TiledMatrix, impl *blas.Impl) error {
	return FactorOn(ctx, c.Add, a, impl, len(c.Devices()) > 0)
}

// MaxInverseTile is the largest tile order for which Factor has the TRSMs on devices
// multiply by inverses. The inverse of a diagonal tile lies on the critical path, and on
// larger tiles it costs more there than the solves it replaces save
// (docs/performance.md, "GPU on H200").
const MaxInverseTile = 1024

// UsesInverses reports whether FactorOn has the TRSMs multiply by inverses for tiles of mb
// rows: with devices, and tiles of up to MaxInverseTile rows.
func UsesInverses(mb int, onDevices bool) bool { return onDevices && mb <= MaxInverseTile }

// FactorOn is Factor with the taskpool added by add: Context.Add, or a distributed job's
// Add (dist.Job.Add) on every rank, each with its part of a. onDevices says whether the
// contexts have devices: the taskpool then uses inverses (Potrf.UseInverses) on tiles of
// up to MaxInverseTile rows.
func FactorOn(ctx context.Context, add func(*rt.Taskpool) error, a *rt.TiledMatrix, impl *blas.Impl, onDevices bool) error {
	tp, err := NewPotrf(a, impl)
	if err != nil {
		return err
	}
	if UsesInverses(a.MB, onDevices) {
		if err := tp.UseInverses(); err != nil {
			return err
		}
	}
	if err := add(tp.Taskpool); err != nil {
		return err
	}
	return tp.Wait(ctx)
}

// Verify checks the task graph of the factorisation of a (see Potrf.Verify).
func Verify(a *rt.TiledMatrix, impl *blas.Impl) error {
	tp, err := NewPotrf(a, impl)
	if err != nil {
		return err
	}
	return tp.Verify()
}
