// Package hugepage allocates float64 storage for rt's collections from memory backed by
// transparent huge pages.
package hugepage

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/jdf2go/jdf2go/rt"
)

// Pool is an rt.Alloc for large float64 collections (tiles of an rt.TiledMatrix, blocks of an
// rt.Vector) that CPU kernels stream through: it cuts the pieces from big anonymous mappings,
// aligned to 2 MiB, which it asks the kernel to back with transparent huge pages (on Linux,
// madvise(MADV_HUGEPAGE); that is what THP's "madvise" mode, a common default, waits for,
// and Go's heap never asks), so that kernels walking many tiles miss the TLB less. Whether that
// pays depends on the machine and the tile size (docs/runtime.md, "Memory"), so the examples
// leave it opt-in (potrf -hugepages).
//
// Ownership: the pool owns every mapping. Pieces are never freed one by one; Close unmaps
// them all at once, after which no piece may be used (the program's collections must be
// dead or no longer touched). The garbage collector never frees them: a pool that is not
// closed keeps its memory until the process exits. Where mappings are not available (not
// Linux), or when the system refuses one, the pool falls back to the Go heap, which the
// garbage collector frees as usual. New memory is zero. A Pool is safe for
// concurrent use; the zero value is not usable.
type Pool struct {
	mu       sync.Mutex
	slabSize int
	mappings [][]byte // unmapped by Close
	cur      []byte   // the current slab (2 MiB-aligned window of the last mapping)
	off      int      // bytes of cur already handed out
	total    int64
	advised  bool // madvise(MADV_HUGEPAGE) succeeded on every slab
	heap     bool // some piece came from the Go heap (no mappings here)
	closed   bool
}

const (
	hugePageBytes = 2 << 20
	// DefaultSlabBytes is the slab size of NewPool(0). Slabs are virtual until
	// touched, so a large one costs nothing it does not use.
	DefaultSlabBytes = 256 << 20
	// hugeAlign keeps pieces on cache-line boundaries.
	hugeAlign = 64
)

// NewPool returns a pool whose slabs are slabBytes (0: DefaultSlabBytes) rounded
// up to 2 MiB; a larger request gets a slab of its own.
func NewPool(slabBytes int) *Pool {
	if slabBytes <= 0 {
		slabBytes = DefaultSlabBytes
	}
	return &Pool{slabSize: roundUp(slabBytes, hugePageBytes), advised: true}
}

func roundUp(n, to int) int { return (n + to - 1) / to * to }

// Float64s returns n zeroed float64s; it is an rt.Alloc (pool.Float64s).
func (p *Pool) Float64s(n int) ([]float64, error) {
	if n <= 0 {
		return nil, fmt.Errorf("%w: hugepage.Pool.Float64s(%d): size must be positive", rt.ErrBadOption, n)
	}
	b, err := p.bytes(n * 8)
	if err != nil {
		return nil, err
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(b))), n), nil
}

// bytes cuts n bytes from the current slab, mapping a new one when it is full.
func (p *Pool) bytes(n int) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, fmt.Errorf("%w: hugepage.Pool used after Close", rt.ErrClosed)
	}
	off := roundUp(p.off, hugeAlign)
	if p.cur == nil || off+n > len(p.cur) {
		size := max(p.slabSize, roundUp(n, hugePageBytes))
		mapping, slab, advised, err := mapHuge(size)
		if err != nil {
			// No mapping here: the Go heap, 64-byte aligned like the rest.
			p.heap = true
			b := make([]byte, n+hugeAlign)
			skip := (hugeAlign - int(uintptr(unsafe.Pointer(unsafe.SliceData(b))))%hugeAlign) % hugeAlign
			return b[skip : skip+n : skip+n], nil
		}
		p.mappings = append(p.mappings, mapping)
		p.total += int64(size)
		p.advised = p.advised && advised
		if n > p.slabSize {
			return slab[:n:n], nil // a slab of its own; keep cutting the current one
		}
		p.cur, off = slab, 0
	}
	p.off = off + n
	return p.cur[off : off+n : off+n], nil
}

// Allocated returns the bytes of all slabs mapped so far (virtual: pages count in memory only
// once touched).
func (p *Pool) Allocated() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.total
}

// Advised reports whether every slab was mapped and advised for huge pages. False on systems
// without the mappings (the Go heap served the pieces) or where the kernel refused the advice
// (THP compiled out); the memory works the same, only without huge pages. Whether the kernel
// then backs the slabs with huge pages depends on its THP mode ("never" disables them) and
// on free contiguous memory.
func (p *Pool) Advised() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.advised && !p.heap
}

// Close unmaps every slab. No piece may be used afterwards. Close is idempotent.
func (p *Pool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	var first error
	for _, m := range p.mappings {
		if err := unmapHuge(m); err != nil && first == nil {
			first = fmt.Errorf("hugepage: unmapping a slab: %w", err)
		}
	}
	p.mappings, p.cur, p.off = nil, nil, 0
	return first
}
