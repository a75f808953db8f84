package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/jdf2go/jdf2go/rt"
)

// Pinned host memory. Asynchronous copies need page-locked memory, and Go
// memory is never handed to them. A backend stream copies straight from or
// to a host slice that lies inside memory allocated here (IsPinned); any
// other slice goes through the stream's pinned staging ring, which costs a
// host memcpy. Programs avoid it by placing their matrices here: PinnedPool
// for tiles and buffers, PinTiles for an rt.TiledMatrix, PinnedArena for
// NEW flows.

// region is one pinned allocation, as [base, end).
type region struct{ base, end uintptr }

// pinnedRegions lists the live pinned allocations sorted by base. Readers
// (every copy) load it without a lock; writers replace it under
// pinnedMu.
var (
	pinnedRegions atomic.Pointer[[]region]
	pinnedMu      sync.Mutex
)

func registerPinned(h HostMem) {
	pinnedMu.Lock()
	defer pinnedMu.Unlock()
	var cur []region
	if p := pinnedRegions.Load(); p != nil {
		cur = *p
	}
	r := region{uintptr(h.p), uintptr(h.p) + uintptr(h.n)}
	i, _ := slices.BinarySearchFunc(cur, r.base, func(x region, b uintptr) int {
		switch {
		case x.base < b:
			return -1
		case x.base > b:
			return 1
		}
		return 0
	})
	next := slices.Insert(slices.Clone(cur), i, r)
	pinnedRegions.Store(&next)
}

func unregisterPinned(h HostMem) {
	pinnedMu.Lock()
	defer pinnedMu.Unlock()
	p := pinnedRegions.Load()
	if p == nil {
		return
	}
	next := slices.DeleteFunc(slices.Clone(*p), func(x region) bool { return x.base == uintptr(h.p) })
	pinnedRegions.Store(&next)
}

// pinnedAt returns the pinned memory that b lies in, as a HostMem of b's
// bytes, and whether b lies entirely inside one pinned allocation.
func pinnedAt(b []byte) (HostMem, bool) {
	if len(b) == 0 {
		return HostMem{}, false
	}
	p := pinnedRegions.Load()
	if p == nil {
		return HostMem{}, false
	}
	rs := *p
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	end := start + uintptr(len(b))
	// The last region whose base is <= start.
	lo, hi := 0, len(rs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if rs[m].base <= start {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 || end > rs[lo-1].end {
		return HostMem{}, false
	}
	return HostMem{p: unsafe.Pointer(unsafe.SliceData(b)), n: len(b)}, true
}

// IsPinned reports whether b lies entirely inside page-locked memory that
// this package allocated (PinnedPool, the staging rings): backend copies
// then use it directly.
func IsPinned(b []byte) bool {
	_, ok := pinnedAt(b)
	return ok
}

// primaryBinding runs pinned-memory calls with device 0's primary context
// current: cuMemHostAlloc and cuMemFreeHost need a context, and the
// memory lives as long as that context, so the binding holds a retain of it
// until release.
type primaryBinding struct {
	dev Device
	ctx Context
}

func retainPrimary() (*primaryBinding, error) {
	if err := Init(); err != nil {
		return nil, err
	}
	dev, err := GetDevice(0)
	if err != nil {
		return nil, err
	}
	ctx, err := dev.PrimaryCtxRetain()
	if err != nil {
		return nil, err
	}
	return &primaryBinding{dev: dev, ctx: ctx}, nil
}

// do runs fn on a locked thread with the context current, and restores
// the thread's previous context.
func (p *primaryBinding) do(fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	prev, err := CurrentContext()
	if err != nil {
		return err
	}
	if err := p.ctx.SetCurrent(); err != nil {
		return err
	}
	return errors.Join(fn(), prev.SetCurrent())
}

func (p *primaryBinding) alloc(n int) (h HostMem, err error) {
	err = p.do(func() error {
		h, err = MemHostAlloc(n, HostAllocPortable)
		return err
	})
	return h, err
}

func (p *primaryBinding) free(h HostMem) error { return p.do(h.Free) }

func (p *primaryBinding) release() error { return p.dev.PrimaryCtxRelease() }

// PinnedPool hands out page-locked host memory cut from large slabs
// (cuMemHostAlloc is slow and pins whole pages). Pieces are never freed one
// by one: Close frees every slab at once, after which no piece may be
// used. A PinnedPool is safe for concurrent use.
type PinnedPool struct {
	mu       sync.Mutex
	slabSize int
	alloc    func(n int) (HostMem, error)
	free     func(HostMem) error
	release  func() error // after the slabs are freed (nil: nothing)
	slabs    []HostMem
	cur      HostMem
	off      int
	total    int64
	closed   bool
}

// DefaultSlabBytes is the slab size of NewPinnedPool(0).
const DefaultSlabBytes = 256 << 20

// NewPinnedPool returns a pool that allocates slabs of slabBytes (0:
// DefaultSlabBytes); a request larger than a slab gets a slab of its own.
// It fails with an error wrapping ErrUnavailable without CUDA.
func NewPinnedPool(slabBytes int) (*PinnedPool, error) {
	b, err := retainPrimary()
	if err != nil {
		return nil, err
	}
	p := newPinnedPool(slabBytes, b.alloc, b.free)
	p.release = b.release
	return p, nil
}

func newPinnedPool(slabBytes int, alloc func(int) (HostMem, error), free func(HostMem) error) *PinnedPool {
	if slabBytes <= 0 {
		slabBytes = DefaultSlabBytes
	}
	return &PinnedPool{slabSize: slabBytes, alloc: alloc, free: free}
}

// pinnedAlign keeps pieces cache-line and float64 aligned.
const pinnedAlign = 64

// Bytes returns n bytes of pinned memory (zeroed when the slab is new;
// otherwise as the pool found it).
func (p *PinnedPool) Bytes(n int) ([]byte, error) {
	if n <= 0 {
		return nil, badArgf("PinnedPool.Bytes(%d): size must be positive", n)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, badArgf("PinnedPool.Bytes: the pool is closed")
	}
	off := (p.off + pinnedAlign - 1) &^ (pinnedAlign - 1)
	if p.cur.p == nil || off+n > p.cur.n {
		size := max(p.slabSize, n)
		h, err := p.alloc(size)
		if err != nil {
			return nil, fmt.Errorf("cuda: pinned slab of %d bytes: %w", size, err)
		}
		registerPinned(h)
		p.slabs = append(p.slabs, h)
		p.total += int64(size)
		if n > p.slabSize {
			// A slab of its own: keep cutting the current one.
			return h.Bytes()[:n:n], nil
		}
		p.cur, off = h, 0
	}
	p.off = off + n
	return p.cur.Bytes()[off : off+n : off+n], nil
}

// Float64s returns n float64s of pinned memory.
func (p *PinnedPool) Float64s(n int) ([]float64, error) {
	b, err := p.Bytes(n * 8)
	if err != nil {
		return nil, err
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(b))), n), nil
}

// Allocated returns the bytes of all slabs.
func (p *PinnedPool) Allocated() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.total
}

// Close frees every slab. The memory must no longer be in use by copies or
// referenced by data that a device may transfer.
func (p *PinnedPool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	var errs []error
	for _, h := range p.slabs {
		unregisterPinned(h)
		errs = append(errs, p.free(h))
	}
	p.slabs, p.cur, p.off = nil, HostMem{}, 0
	if p.release != nil {
		errs = append(errs, p.release())
	}
	return errors.Join(errs...)
}

// PinTiles moves the local tiles of a into pinned memory from p: each
// tile's content is copied and its host copy's value replaced, so device
// transfers of the tiles need no staging. Call it before the matrix is used
// by any taskpool. The tiles must not be used after p is closed.
func PinTiles(a *rt.TiledMatrix, p *PinnedPool, keep func(i, j int) bool) error {
	for j := 0; j < a.NT; j++ {
		for i := 0; i < a.MT; i++ {
			d := a.DataOf(rt.Index{N: 2, I: [rt.MaxIndex]int{i, j}})
			if d == nil || (keep != nil && !keep(i, j)) {
				continue
			}
			old := d.Host().Float64s()
			if old == nil {
				return fmt.Errorf("%w: tile (%d, %d) holds %T, not []float64", ErrBadArgument, i, j, d.Host().Value)
			}
			f, err := p.Float64s(len(old))
			if err != nil {
				return err
			}
			copy(f, old)
			d.Host().Value = f
		}
	}
	return nil
}

// PinnedArena returns an rt.Arena of []float64 buffers of bytes/8 elements
// in pinned memory from p (the pinned form of rt.NewArena). A buffer that
// cannot be pinned falls back to Go memory, which backend copies stage.
// Buffers the arena drops stay allocated until p is closed.
func PinnedArena(p *PinnedPool, bytes int) *rt.Arena {
	n := max(bytes/8, 1)
	return rt.NewArenaOf(bytes, func() any {
		if f, err := p.Float64s(n); err == nil {
			return f
		}
		return make([]float64, n)
	})
}
