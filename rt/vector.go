package rt

import "fmt"

// Vector is a float64 vector of length N cut into blocks of NB elements, distributed
// 1-D cyclically over nranks ranks (block k lives on rank k mod nranks). Index: (k). Only the
// blocks of this rank are stored; every block has NB elements, the last one possibly padded.
type Vector struct {
	N, NB, NT int
	Ranks     int
	Rank      int

	blocks []*Data
}

// NewVector returns a zero vector with the blocks of rank allocated on the Go heap.
func NewVector(n, nb, nranks, rank int) (*Vector, error) {
	return NewVectorAlloc(n, nb, nranks, rank, nil)
}

// NewVectorAlloc is NewVector with the blocks' storage from alloc (nil: the Go heap), one
// call per local block of NB elements (see Alloc).
func NewVectorAlloc(n, nb, nranks, rank int, alloc Alloc) (*Vector, error) {
	if n < 0 || nb < 1 || nranks < 1 || rank < 0 || rank >= nranks {
		return nil, fmt.Errorf("%w: NewVector(n=%d, nb=%d, nranks=%d, rank=%d)",
			ErrBadOption, n, nb, nranks, rank)
	}
	v := &Vector{N: n, NB: nb, NT: (n + nb - 1) / nb, Ranks: nranks, Rank: rank}
	v.blocks = make([]*Data, v.NT)
	for k := range v.blocks {
		if k%nranks == rank {
			f, err := allocOrMake(alloc, nb)
			if err != nil {
				return nil, fmt.Errorf("rt: block %d of a vector of %d: %w", k, n, err)
			}
			v.blocks[k] = NewData(uint64(k), f)
		}
	}
	return v, nil
}

// RankOf returns the rank owning block ix.I[0].
func (v *Vector) RankOf(ix Index) int { return ix.I[0] % v.Ranks }

// DataOf returns block ix.I[0], or nil when it is remote or out of range.
func (v *Vector) DataOf(ix Index) *Data {
	if k := ix.I[0]; k >= 0 && k < v.NT {
		return v.blocks[k]
	}
	return nil
}

// KeyOf returns the block number.
func (v *Vector) KeyOf(ix Index) uint64 { return uint64(ix.I[0]) }

// Block returns the storage of local block k, or nil.
func (v *Vector) Block(k int) []float64 {
	if d := v.DataOf(Index{N: 1, I: [MaxIndex]int{k}}); d != nil {
		return d.Host().Float64s()
	}
	return nil
}
