package rt

import "strconv"

// MaxIndex is the number of dimensions of an Index.
const MaxIndex = 4

// Index names an element of a Collection: N coordinates in I[:N]. It is a value so that
// passing it through the Collection interface allocates nothing (a variadic ...int would).
type Index struct {
	N int
	I [MaxIndex]int
}

// Ix builds an Index from up to MaxIndex coordinates; extra coordinates are an invariant
// violation (codegen rejects them) and panic.
func Ix(i ...int) Index {
	if len(i) > MaxIndex {
		panic("rt: Ix: more than MaxIndex coordinates")
	}
	var ix Index
	ix.N = copy(ix.I[:], i)
	return ix
}

func (ix Index) String() string {
	b := []byte{'('}
	for k := 0; k < ix.N; k++ {
		if k > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, int64(ix.I[k]), 10)
	}
	return string(append(b, ')'))
}

// Collection is a distributed data collection: the global of a JDF program that affinities
// and collection endpoints (descA(m, n)) name. Implementations must be safe for concurrent use
// and must not allocate per call.
type Collection interface {
	// RankOf returns the rank that owns element ix.
	RankOf(ix Index) int
	// DataOf returns the datum of element ix, or nil when it is not stored on this rank.
	DataOf(ix Index) *Data
	// KeyOf returns a key of element ix, unique within the collection.
	KeyOf(ix Index) uint64
}
