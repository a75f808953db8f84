package cuda

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"

	"github.com/jdf2go/jdf2go/rt/gpu/driver"
)

// pool is a device's memory pool. cuMemAlloc and cuMemFree are slow and
// cuMemFree synchronizes the device, so the pool takes memory from the
// driver in a few large chunks, cut by a bump pointer, and keeps freed
// blocks in free lists by size class for reuse; nothing goes back to the
// driver before close.
//
// Sizes are rounded up to a class: a multiple of 256 bytes up to 2 KiB,
// then eight classes per power of two (at most 12.5% lost to rounding; tile
// sizes that are powers of two or small multiples of one are exact). Blocks
// of a quarter chunk or more get a chunk of their own, of their exact class.
//
// The capacity bounds the bytes handed out (by class), so Alloc fails with
// an error wrapping driver.ErrOutOfMemory once the pool is full, and the
// manager accounts device memory against it (MemInfo). When the chunks have
// used the whole capacity but no free block of the class exists
// (fragmentation), a block of a larger class is reused whole, and as a last
// resort a dedicated cuMemAlloc is tried, which Free gives back.
type pool struct {
	mu        sync.Mutex
	capacity  int64 // bytes the pool may hand out
	chunkSize int64
	alloc     func(n int64) (DevicePtr, error)
	free      func(DevicePtr) error

	chunks    []chunk
	chunked   int64 // bytes of all chunks
	cur       int   // chunk being cut, -1 before the first
	off       int64 // bump offset in chunks[cur]
	freeLists map[int64][]driver.Ptr
	live      map[driver.Ptr]block
	reserved  int64 // bytes of live blocks, by class
	peak      int64
}

type chunk struct {
	base DevicePtr
	size int64
}

type block struct {
	size      int64 // class size of the block (may exceed the request's class)
	dedicated bool  // its own cuMemAlloc outside the chunks, freed on Free
}

// poolAlign is the alignment of every block: cuBLAS and the copy engines
// want 256 bytes.
const poolAlign = 256

func newPool(capacity, chunkSize int64, alloc func(int64) (DevicePtr, error), free func(DevicePtr) error) *pool {
	if chunkSize <= 0 || chunkSize > capacity {
		chunkSize = capacity
	}
	chunkSize = (chunkSize + poolAlign - 1) &^ (poolAlign - 1)
	return &pool{capacity: capacity, chunkSize: chunkSize, alloc: alloc, free: free, cur: -1,
		freeLists: make(map[int64][]driver.Ptr), live: make(map[driver.Ptr]block)}
}

// sizeClass rounds n up to its class.
func sizeClass(n int64) int64 {
	n = (n + poolAlign - 1) &^ (poolAlign - 1)
	if n <= 2048 {
		return n
	}
	step := int64(1) << (bits.Len64(uint64(n-1)) - 4) // an eighth of the power of two above
	return (n + step - 1) &^ (step - 1)
}

// Alloc returns a 256-byte aligned block of at least n bytes.
func (p *pool) Alloc(n int64) (driver.Ptr, error) {
	if n <= 0 {
		return 0, fmt.Errorf("%w: device allocation of %d bytes", driver.ErrBadArgument, n)
	}
	s := sizeClass(n)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reserved+s > p.capacity {
		return 0, fmt.Errorf("%w: %d bytes requested, %d of %d in use", driver.ErrOutOfMemory, n, p.reserved, p.capacity)
	}
	ptr, b, err := p.take(s)
	if err != nil {
		return 0, err
	}
	p.live[ptr] = b
	p.reserved += b.size
	p.peak = max(p.peak, p.reserved)
	return ptr, nil
}

// take finds a block of class s; p.mu is held.
func (p *pool) take(s int64) (driver.Ptr, block, error) {
	if l := p.freeLists[s]; len(l) > 0 {
		ptr := l[len(l)-1]
		p.freeLists[s] = l[:len(l)-1]
		return ptr, block{size: s}, nil
	}
	if s*4 >= p.chunkSize {
		// A block this large gets a chunk of its own.
		if p.chunked+s <= p.capacity {
			base, err := p.newChunk(s)
			if err == nil {
				return driver.Ptr(base), block{size: s}, nil
			}
			if !errors.Is(err, driver.ErrOutOfMemory) {
				return 0, block{}, err
			}
		}
		return p.fallback(s)
	}
	if p.cur >= 0 && p.off+s <= p.chunks[p.cur].size {
		ptr := driver.Ptr(p.chunks[p.cur].base) + driver.Ptr(p.off)
		p.off += s
		return ptr, block{size: s}, nil
	}
	if size := min(p.chunkSize, p.capacity-p.chunked); size >= s {
		if _, err := p.newChunk(size); err == nil {
			p.cur, p.off = len(p.chunks)-1, s
			return driver.Ptr(p.chunks[p.cur].base), block{size: s}, nil
		} else if !errors.Is(err, driver.ErrOutOfMemory) {
			return 0, block{}, err
		}
	}
	return p.fallback(s)
}

// newChunk takes size bytes from the driver.
func (p *pool) newChunk(size int64) (DevicePtr, error) {
	base, err := p.alloc(size)
	if err != nil {
		if errors.Is(err, ErrOutOfMemory) {
			return 0, fmt.Errorf("%w: new chunk of %d bytes: %w", driver.ErrOutOfMemory, size, err)
		}
		return 0, fmt.Errorf("cuda: new chunk of %d bytes: %w", size, err)
	}
	p.chunks = append(p.chunks, chunk{base: base, size: size})
	p.chunked += size
	return base, nil
}

// fallback serves class s when the chunks cannot: a free block of the
// smallest larger class, whole, or a dedicated allocation.
func (p *pool) fallback(s int64) (driver.Ptr, block, error) {
	best := int64(-1)
	for c, l := range p.freeLists {
		if c > s && len(l) > 0 && (best < 0 || c < best) {
			best = c
		}
	}
	if best > 0 && p.reserved+best <= p.capacity {
		l := p.freeLists[best]
		ptr := l[len(l)-1]
		p.freeLists[best] = l[:len(l)-1]
		return ptr, block{size: best}, nil
	}
	base, err := p.alloc(s)
	if err != nil {
		return 0, block{}, fmt.Errorf("%w: %d bytes: the pool is fragmented and the driver refuses more: %w",
			driver.ErrOutOfMemory, s, err)
	}
	return driver.Ptr(base), block{size: s, dedicated: true}, nil
}

// Free returns a block obtained from Alloc.
func (p *pool) Free(ptr driver.Ptr) error {
	p.mu.Lock()
	b, ok := p.live[ptr]
	if !ok {
		p.mu.Unlock()
		return fmt.Errorf("%w: free of %#x, which is not a live block of the pool", driver.ErrBadArgument, uintptr(ptr))
	}
	delete(p.live, ptr)
	p.reserved -= b.size
	if !b.dedicated {
		p.freeLists[b.size] = append(p.freeLists[b.size], ptr)
		p.mu.Unlock()
		return nil
	}
	p.mu.Unlock()
	return p.free(DevicePtr(ptr))
}

// Info returns the bytes free and the capacity.
func (p *pool) Info() (free, capacity int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.capacity - p.reserved, p.capacity
}

// PoolStats describes a device memory pool.
type PoolStats struct {
	Capacity int64 // bytes the pool may hand out
	Reserved int64 // bytes of live blocks, rounded to their classes
	Peak     int64 // highest Reserved so far
	Chunked  int64 // bytes taken from the driver in chunks
	Chunks   int
	Live     int // live blocks
}

func (p *pool) stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return PoolStats{Capacity: p.capacity, Reserved: p.reserved, Peak: p.peak, Chunked: p.chunked,
		Chunks: len(p.chunks), Live: len(p.live)}
}

// close gives every chunk and dedicated block back to the driver. The pool
// must not be used afterwards.
func (p *pool) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for ptr, b := range p.live {
		if b.dedicated {
			errs = append(errs, p.free(DevicePtr(ptr)))
		}
	}
	for _, c := range p.chunks {
		errs = append(errs, p.free(c.base))
	}
	p.chunks, p.chunked, p.cur, p.off = nil, 0, -1, 0
	clear(p.freeLists)
	clear(p.live)
	p.reserved = 0
	return errors.Join(errs...)
}
