package dynamic

import (
	"fmt"
	"hash/maphash"
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/jdf2go/jdf2go/rt"
)

// datum is the graph's view of one piece of data: what tasks depend on when they access it.
type datum struct {
	g    *Graph
	d    *rt.Data // the versions and device copies that rt and rt/gpu work with
	name string   // "A(1, 2)", or the name given to Register
	id   uint64   // registration order: the order in which commute tokens are taken
	ro   bool     // registered read-only
	// sum checksums the host value for the debug mode; nil when the value's type is not
	// checked (a map, a channel, a func).
	sum func() uint64
	// rk is where the datum's versions live across ranks (remote.go); nil on one rank.
	rk *rankState

	// The dependency state, under Graph.mu (access.go).
	last    []ref // the tasks that produced the current version: a writer, or a commute group
	readers []ref // readers of the current version
	base    []ref // what an open commute group waits for
	commute bool  // the last accesses form an open commute group

	// The commute token (task.go): one member of a group at a time.
	cmu     sync.Mutex
	owner   *task
	waiters []*task
}

// Data is a datum of a graph with a value of type T: a tile ([]float64), a vector block, or a
// registered Go value. Bodies read and write Value; the graph orders the tasks that access a
// Data by the modes they declare.
type Data[T any] struct {
	datum
	value T
}

// Value returns the datum's host value.
func (d *Data[T]) Value() T { return d.value }

// Name returns the datum's name, as errors and DOT output show it.
func (d *Data[T]) Name() string { return d.name }

// RT returns the rt.Data behind the datum (its versions and device copies).
func (d *Data[T]) RT() *rt.Data { return d.d }

// ReadOnly marks the datum read-only: inserting a task that writes it fails with ErrMode. It
// returns d. Call it before the first insertion that names d.
func (d *Data[T]) ReadOnly() *Data[T] {
	d.g.mu.Lock()
	d.ro = true
	d.g.mu.Unlock()
	return d
}

// reference returns the address and length that identify a value of a reference type, and
// whether it is one.
func reference(v reflect.Value) (p unsafe.Pointer, n uintptr, ok bool) {
	switch v.Kind() {
	case reflect.Slice:
		if v.Len() == 0 {
			return nil, 0, false
		}
		return v.UnsafePointer(), uintptr(v.Len()) * v.Type().Elem().Size(), true
	case reflect.Pointer:
		if v.IsNil() {
			return nil, 0, false
		}
		return v.UnsafePointer(), v.Type().Elem().Size(), true
	case reflect.Map, reflect.Chan, reflect.Func:
		if v.IsNil() {
			return nil, 0, false
		}
		return v.UnsafePointer(), 0, true
	}
	return nil, 0, false
}

var seed = maphash.MakeSeed()

// checksum returns a function hashing n bytes at p, or nil when n is 0.
func checksum(p unsafe.Pointer, n uintptr) func() uint64 {
	if n == 0 {
		return nil
	}
	b := unsafe.Slice((*byte)(p), n)
	return func() uint64 { return maphash.Bytes(seed, b) }
}

// regKey identifies a registered value: two registrations of one slice or pointer give one
// datum, so that their tasks are ordered.
type regKey struct {
	p unsafe.Pointer
	n uintptr
	t reflect.Type
}

// Register makes v, a non-empty slice, a non-nil pointer, map, channel or function, a datum of
// g named name. Registering the same slice (same first element and length) or pointer again
// returns the same Data, so that the tasks of both registrations are ordered. Values of other
// kinds are refused with ErrMode: a copy could not carry a task's writes to the next task.
func Register[T any](g *Graph, name string, v T) (*Data[T], error) {
	if g == nil {
		return nil, ErrNilData
	}
	rv := reflect.ValueOf(&v).Elem()
	p, n, ok := reference(rv)
	if !ok {
		return nil, fmt.Errorf("%w: %s is a %s (register a non-empty slice or a non-nil pointer, map, channel or func)",
			ErrMode, name, rv.Type())
	}
	k := regKey{p: p, n: n, t: rv.Type()}
	g.mu.Lock()
	defer g.mu.Unlock()
	if d, ok := g.registered[k]; ok {
		return d.(*Data[T]), nil
	}
	d := &Data[T]{value: v}
	g.initDatum(&d.datum, rt.NewData(g.nextID, v), name)
	d.sum = checksum(p, n)
	g.dist.trackValue(&d.datum)
	if g.registered == nil {
		g.registered = map[regKey]any{}
	}
	g.registered[k] = d
	return d, nil
}

// initDatum sets up a datum of g; g.mu is held or d is not yet shared.
func (g *Graph) initDatum(d *datum, rd *rt.Data, name string) {
	d.g, d.d, d.name, d.id = g, rd, name, g.nextID
	g.nextID++
}

// Matrix gives the tiles of an rt.TiledMatrix to a graph, one Data per tile, made on first
// use.
type Matrix struct {
	g     *Graph
	name  string
	a     *rt.TiledMatrix
	tiles []atomic.Pointer[Data[[]float64]]
	coll  uint64 // its number across ranks (remote.go)
}

// NewMatrix returns the tiles of a as data of g; name prefixes their names ("A(1, 2)").
func NewMatrix(g *Graph, name string, a *rt.TiledMatrix) *Matrix {
	return &Matrix{g: g, name: name, a: a, tiles: make([]atomic.Pointer[Data[[]float64]], a.MT*a.NT),
		coll: g.dist.newCollection()}
}

// Tile returns tile (i, j), or nil when it lies outside the matrix or, on a graph of one
// rank, this rank does not hold it; inserting a nil datum fails with ErrNilData. Across ranks
// every tile has a Data: one of another rank is a buffer of this rank where its versions
// arrive.
func (m *Matrix) Tile(i, j int) *Data[[]float64] {
	if m == nil || i < 0 || j < 0 || i >= m.a.MT || j >= m.a.NT {
		return nil
	}
	slot := &m.tiles[i+j*m.a.MT]
	if d := slot.Load(); d != nil {
		return d
	}
	ix := rt.Ix(i, j)
	rd := m.a.DataOf(ix)
	if rd == nil {
		if rd = m.g.dist.landing(m.a.MB*m.a.NB, m.a.KeyOf(ix)); rd == nil {
			return nil
		}
	}
	d := &Data[[]float64]{value: rd.Host().Float64s()}
	d.sum = sumFloats(d.value)
	m.g.mu.Lock()
	if old := slot.Load(); old != nil {
		m.g.mu.Unlock()
		return old
	}
	m.g.initDatum(&d.datum, rd, fmt.Sprintf("%s(%d, %d)", m.name, i, j))
	m.g.dist.track(&d.datum, m.a.RankOf(ix), m.coll, m.a.KeyOf(ix))
	slot.Store(d)
	m.g.mu.Unlock()
	return d
}

// Vector gives the blocks of an rt.Vector to a graph, one Data per block.
type Vector struct {
	g      *Graph
	name   string
	v      *rt.Vector
	blocks []atomic.Pointer[Data[[]float64]]
	coll   uint64 // its number across ranks (remote.go)
}

// NewVector returns the blocks of v as data of g; name prefixes their names ("x(3)").
func NewVector(g *Graph, name string, v *rt.Vector) *Vector {
	return &Vector{g: g, name: name, v: v, blocks: make([]atomic.Pointer[Data[[]float64]], v.NT),
		coll: g.dist.newCollection()}
}

// Block returns block k, or nil when it lies outside the vector or, on a graph of one rank,
// this rank does not hold it (across ranks, see Matrix.Tile).
func (x *Vector) Block(k int) *Data[[]float64] {
	if x == nil || k < 0 || k >= x.v.NT {
		return nil
	}
	slot := &x.blocks[k]
	if d := slot.Load(); d != nil {
		return d
	}
	ix := rt.Ix(k)
	rd := x.v.DataOf(ix)
	if rd == nil {
		if rd = x.g.dist.landing(x.v.NB, x.v.KeyOf(ix)); rd == nil {
			return nil
		}
	}
	d := &Data[[]float64]{value: rd.Host().Float64s()}
	d.sum = sumFloats(d.value)
	x.g.mu.Lock()
	if old := slot.Load(); old != nil {
		x.g.mu.Unlock()
		return old
	}
	x.g.initDatum(&d.datum, rd, fmt.Sprintf("%s(%d)", x.name, k))
	x.g.dist.track(&d.datum, x.v.RankOf(ix), x.coll, x.v.KeyOf(ix))
	slot.Store(d)
	x.g.mu.Unlock()
	return d
}

func sumFloats(s []float64) func() uint64 {
	if len(s) == 0 {
		return nil
	}
	return checksum(unsafe.Pointer(unsafe.SliceData(s)), uintptr(len(s))*8)
}
