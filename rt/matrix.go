package rt

import (
	"fmt"
)

// TiledMatrix is a dense M×N float64 matrix cut into MB×NB tiles, distributed 2-D
// block-cyclically over a P×Q grid of ranks, in supertiles of KP×KQ tiles (DPLASMA's
// repetition): tile (i, j) lives on rank ((i/KP) mod P)·Q + (j/KQ) mod Q.
// Each tile is column-major with leading dimension MB, full size even at the ragged edges
// (TileRows/TileCols give the used part). Only the tiles of this rank are stored. Indices are
// tile coordinates (i, j). A TiledMatrix is safe for concurrent use by tasks that respect the
// dependencies; its methods allocate nothing.
type TiledMatrix struct {
	M, N   int // matrix size
	MB, NB int // tile size
	MT, NT int // tiles per column and per row
	P, Q   int // process grid
	KP, KQ int // supertile: consecutive tiles per rank along rows and columns (1: plain cyclic)
	Rank   int // this rank

	tiles []*Data // MT*NT, column-major by tile; nil for remote tiles
}

// NewTiledMatrix returns a zero matrix with the tiles of rank allocated on the Go heap.
func NewTiledMatrix(m, n, mb, nb, p, q, rank int) (*TiledMatrix, error) {
	return NewTiledMatrixAlloc(m, n, mb, nb, p, q, rank, nil)
}

// Alloc returns zeroed storage of elems float64 for a tile or a block. Collections take one
// so that their storage can live where devices transfer it without a copy (page-locked host
// memory: cuda.PinnedAlloc); nil means the Go heap. The storage must stay valid as long as
// the collection is used.
type Alloc func(elems int) ([]float64, error)

// allocOrMake calls alloc, or makes Go memory when alloc is nil, and checks the length.
func allocOrMake(alloc Alloc, elems int) ([]float64, error) {
	if alloc == nil {
		return make([]float64, elems), nil
	}
	f, err := alloc(elems)
	if err != nil {
		return nil, err
	}
	if len(f) != elems {
		return nil, fmt.Errorf("%w: allocator returned %d elements, want %d", ErrBadOption, len(f), elems)
	}
	return f, nil
}

// NewTiledMatrixAlloc is NewTiledMatrix with the tiles' storage from alloc (nil: the Go
// heap), one call per local tile of MB·NB elements. It fails with alloc's error, naming
// the tile.
func NewTiledMatrixAlloc(m, n, mb, nb, p, q, rank int, alloc Alloc) (*TiledMatrix, error) {
	return NewTiledMatrixGrid(m, n, mb, nb, Grid{P: p, Q: q, KP: 1, KQ: 1}, rank, alloc)
}

// Grid is a 2-D block-cyclic distribution: a P×Q grid of ranks (rank r at row r/Q, column
// r mod Q) dealt supertiles of KP×KQ tiles. P·Q may be below the number of ranks of a job
// (the ranks above own nothing).
type Grid struct{ P, Q, KP, KQ int }

// NewTiledMatrixGrid is NewTiledMatrixAlloc with a supertiled grid g (KP, KQ of 0 mean 1).
func NewTiledMatrixGrid(m, n, mb, nb int, g Grid, rank int, alloc Alloc) (*TiledMatrix, error) {
	g.KP, g.KQ = max(g.KP, 1), max(g.KQ, 1)
	p, q := g.P, g.Q
	if m < 0 || n < 0 || mb < 1 || nb < 1 || p < 1 || q < 1 || rank < 0 {
		return nil, fmt.Errorf("%w: NewTiledMatrix(m=%d, n=%d, mb=%d, nb=%d, p=%d, q=%d, rank=%d)",
			ErrBadOption, m, n, mb, nb, p, q, rank)
	}
	a := &TiledMatrix{M: m, N: n, MB: mb, NB: nb, MT: (m + mb - 1) / mb, NT: (n + nb - 1) / nb,
		P: p, Q: q, KP: g.KP, KQ: g.KQ, Rank: rank}
	a.tiles = make([]*Data, a.MT*a.NT)
	for j := 0; j < a.NT; j++ {
		for i := 0; i < a.MT; i++ {
			if a.rankOf(i, j) == rank {
				k := i + j*a.MT
				f, err := allocOrMake(alloc, mb*nb)
				if err != nil {
					return nil, fmt.Errorf("rt: tile (%d, %d) of a %dx%d matrix: %w", i, j, m, n, err)
				}
				a.tiles[k] = NewData(uint64(k), f)
			}
		}
	}
	return a, nil
}

func (a *TiledMatrix) rankOf(i, j int) int { return ((i/a.KP)%a.P)*a.Q + (j/a.KQ)%a.Q }

// RankOf returns the rank owning tile (ix.I[0], ix.I[1]).
func (a *TiledMatrix) RankOf(ix Index) int { return a.rankOf(ix.I[0], ix.I[1]) }

// DataOf returns tile (ix.I[0], ix.I[1]), or nil when it is remote or out of range.
func (a *TiledMatrix) DataOf(ix Index) *Data {
	i, j := ix.I[0], ix.I[1]
	if i < 0 || j < 0 || i >= a.MT || j >= a.NT {
		return nil
	}
	return a.tiles[i+j*a.MT]
}

// KeyOf returns i + j·MT.
func (a *TiledMatrix) KeyOf(ix Index) uint64 { return uint64(ix.I[0] + ix.I[1]*a.MT) }

// Tile returns the storage of local tile (i, j) (nil when remote): column-major, ld = MB.
func (a *TiledMatrix) Tile(i, j int) []float64 {
	if d := a.DataOf(Index{N: 2, I: [MaxIndex]int{i, j}}); d != nil {
		return d.Host().Float64s()
	}
	return nil
}

// TileRows returns the number of used rows of tile row i; TileCols the used columns of tile
// column j.
func (a *TiledMatrix) TileRows(i int) int { return min(a.MB, a.M-i*a.MB) }
func (a *TiledMatrix) TileCols(j int) int { return min(a.NB, a.N-j*a.NB) }

// FillFromDense copies the local tiles from the dense column-major matrix src (leading
// dimension lda >= M). It counts as a write of every local tile, as a task's is: a device
// copy left by an earlier run is stale afterwards, so the next run reads the new values.
func (a *TiledMatrix) FillFromDense(src []float64, lda int) {
	a.eachLocal(func(i, j int, t []float64) {
		for c := 0; c < a.TileCols(j); c++ {
			col := (j*a.NB + c) * lda
			copy(t[c*a.MB:c*a.MB+a.TileRows(i)], src[col+i*a.MB:col+i*a.MB+a.TileRows(i)])
		}
		if d := a.DataOf(Ix(i, j)); d != nil {
			if h := d.Host(); h != nil {
				h.bumpVersion()
			}
		}
	})
}

// GatherToDense copies the local tiles into the dense column-major matrix dst (leading
// dimension lda >= M); remote parts of dst are left untouched.
func (a *TiledMatrix) GatherToDense(dst []float64, lda int) {
	a.eachLocal(func(i, j int, t []float64) {
		for c := 0; c < a.TileCols(j); c++ {
			col := (j*a.NB + c) * lda
			copy(dst[col+i*a.MB:col+i*a.MB+a.TileRows(i)], t[c*a.MB:c*a.MB+a.TileRows(i)])
		}
	})
}

func (a *TiledMatrix) eachLocal(f func(i, j int, t []float64)) {
	for j := 0; j < a.NT; j++ {
		for i := 0; i < a.MT; i++ {
			if t := a.Tile(i, j); t != nil {
				f(i, j, t)
			}
		}
	}
}

// SubTiles returns the m×n column-major block in tile (leading dimension ld) as a TiledMatrix
// of mb×nb sub-tiles on one rank, for the collection of a nested taskpool (Task.RunNested):
// a body that factors one big tile can run a tiled algorithm over its sub-tiles. The
// sub-tiles hold a copy of the block; GatherToDense(tile, ld) copies the result back, and
// touches only the block's m×n elements.
//
// A copy, not sub-tiles that alias the block: a sub-tile of a column-major block is a
// strided window (its columns lie ld apart), while every path a tile takes through rt is
// written for a contiguous buffer of MB·NB elements with leading dimension MB: a device
// stages a tile in and writes it back as one range of bytes, a write-back and a transfer to
// another rank copy the whole slice, and tile kernels are called with ld = MB. An aliasing
// window would make each of those read or overwrite the rows of the sub-tiles below it. The
// copy costs two passes over the block, against the nested taskpool's work on it (a
// Cholesky of an n×n block does n³/3 multiply-adds), and the sub-tiles it gives are
// contiguous, as kernels prefer.
//
// The matrix's grid is 1×1 and its rank 0; a taskpool run by RunNested ignores ranks and
// runs every task where it was started, so the view serves any rank. SubTiles fails with
// ErrBadOption when a size is negative, mb or nb is below 1, ld < max(m, 1), or tile is
// shorter than the block.
func SubTiles(tile []float64, m, n, ld, mb, nb int) (*TiledMatrix, error) {
	if m < 0 || n < 0 || mb < 1 || nb < 1 || ld < max(m, 1) || (m > 0 && n > 0 && len(tile) < (n-1)*ld+m) {
		return nil, fmt.Errorf("%w: SubTiles of %d elements (m=%d, n=%d, ld=%d, mb=%d, nb=%d)",
			ErrBadOption, len(tile), m, n, ld, mb, nb)
	}
	a, err := NewTiledMatrix(m, n, mb, nb, 1, 1, 0)
	if err != nil {
		return nil, err
	}
	a.FillFromDense(tile, ld)
	return a, nil
}
