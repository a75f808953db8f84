package cuda

import (
	"errors"
	"slices"
	"testing"
	"unsafe"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/gpu/driver"
	"github.com/jdf2go/jdf2go/rt/rttest"
)

// chunkSource is a fake driver for the pool: it hands out address ranges
// and records what is outstanding.
type chunkSource struct {
	next  DevicePtr
	live  map[DevicePtr]int64
	fails bool
}

func newChunkSource() *chunkSource { return &chunkSource{next: 1 << 32, live: map[DevicePtr]int64{}} }

func (c *chunkSource) alloc(n int64) (DevicePtr, error) {
	if c.fails {
		return 0, driverError("cuMemAlloc_v2", 2)
	}
	p := c.next
	c.next += DevicePtr(n+4095)&^4095 + 1<<20
	c.live[p] = n
	return p, nil
}

func (c *chunkSource) free(p DevicePtr) error {
	if _, ok := c.live[p]; !ok {
		return driverError("cuMemFree_v2", 1)
	}
	delete(c.live, p)
	return nil
}

func TestSizeClasses(t *testing.T) {
	for _, c := range [][2]int64{{1, 256}, {256, 256}, {257, 512}, {2048, 2048}, {2049, 2304}, {4096, 4096},
		{8192, 8192}, {8193, 9216}, {32 << 20, 32 << 20}, {18 << 20, 18 << 20}, {1536 * 1536 * 8, 1536 * 1536 * 8}} {
		if got := sizeClass(c[0]); got != c[1] {
			t.Errorf("sizeClass(%d) = %d, want %d", c[0], got, c[1])
		}
	}
	for n := int64(1); n < 1<<22; n = n*5/4 + 1 {
		s := sizeClass(n)
		if s < n || s%poolAlign != 0 || s-n > max(poolAlign-1, n/8) {
			t.Fatalf("sizeClass(%d) = %d: not a 256-aligned cover within 12.5%%", n, s)
		}
	}
}

func TestPoolReusesFreedBlocks(t *testing.T) {
	src := newChunkSource()
	p := newPool(16<<20, 1<<20, src.alloc, src.free)
	var ptrs []driver.Ptr
	for range 300 {
		ptr, err := p.Alloc(8192)
		if err != nil {
			t.Fatal(err)
		}
		if ptr%poolAlign != 0 {
			t.Fatalf("block %#x is not 256-byte aligned", uintptr(ptr))
		}
		ptrs = append(ptrs, ptr)
	}
	// 128 blocks of 8 KiB per 1 MiB chunk.
	if st := p.stats(); st.Chunks != 3 || st.Reserved != 300*8192 || st.Live != 300 {
		t.Fatalf("after 300 blocks: %+v", st)
	}
	seen := map[driver.Ptr]bool{}
	for _, q := range ptrs {
		if seen[q] {
			t.Fatalf("block %#x handed out twice", uintptr(q))
		}
		seen[q] = true
	}
	for _, q := range ptrs[:100] {
		if err := p.Free(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Free(ptrs[0]); !errors.Is(err, driver.ErrBadArgument) {
		t.Fatalf("double free: %v", err)
	}
	for range 100 {
		q, err := p.Alloc(8000) // same class
		if err != nil {
			t.Fatal(err)
		}
		if !seen[q] {
			t.Fatalf("a freed block was not reused: %#x", uintptr(q))
		}
	}
	if st := p.stats(); st.Chunks != 3 {
		t.Fatalf("reuse took new chunks: %+v", st)
	}
	// A block of a quarter chunk or more has a chunk of its own.
	if _, err := p.Alloc(512 << 10); err != nil {
		t.Fatal(err)
	}
	if st := p.stats(); st.Chunks != 4 || st.Chunked != 3<<20+512<<10 {
		t.Fatalf("large block: %+v", st)
	}
	if err := p.close(); err != nil {
		t.Fatal(err)
	}
	if len(src.live) != 0 {
		t.Fatalf("close left %d allocations", len(src.live))
	}
}

func TestPoolFullIsOutOfMemory(t *testing.T) {
	src := newChunkSource()
	p := newPool(1<<20, 1<<20, src.alloc, src.free)
	for range 4 {
		if _, err := p.Alloc(256 << 10); err != nil {
			t.Fatal(err)
		}
	}
	_, err := p.Alloc(1)
	if !errors.Is(err, driver.ErrOutOfMemory) {
		t.Fatalf("Alloc on a full pool: %v, want ErrOutOfMemory", err)
	}
	if free, total := p.Info(); free != 0 || total != 1<<20 {
		t.Fatalf("Info = %d, %d", free, total)
	}
	// The driver refusing a chunk is out of memory too.
	q := newPool(8<<20, 1<<20, (&chunkSource{fails: true}).alloc, src.free)
	if _, err := q.Alloc(4096); !errors.Is(err, driver.ErrOutOfMemory) || !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("driver refusal: %v", err)
	}
	if _, err := p.Alloc(0); !errors.Is(err, driver.ErrBadArgument) {
		t.Fatalf("Alloc(0): %v", err)
	}
}

func TestPoolFragmentationFallbacks(t *testing.T) {
	src := newChunkSource()
	// 192 KiB blocks: five per 1 MiB chunk, 64 KiB of tail lost in each.
	p := newPool(4<<20, 1<<20, src.alloc, src.free)
	var blocks []driver.Ptr
	for range 20 {
		b, err := p.Alloc(192 << 10)
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, b)
	}
	if st := p.stats(); st.Chunked != 4<<20 {
		t.Fatalf("%+v", st)
	}
	// No chunk budget left, 256 KiB of capacity: a dedicated allocation.
	d, err := p.Alloc(192 << 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(src.live) != 5 {
		t.Fatalf("%d driver allocations, want 4 chunks and a dedicated block", len(src.live))
	}
	if err := p.Free(d); err != nil {
		t.Fatal(err)
	}
	if len(src.live) != 4 {
		t.Fatal("the dedicated block was not given back")
	}
	// A smaller class with no free block takes a free block of a larger
	// one (96 KiB does not fit the 64 KiB tail of the last chunk).
	if err := p.Free(blocks[0]); err != nil {
		t.Fatal(err)
	}
	small, err := p.Alloc(96 << 10)
	if err != nil {
		t.Fatal(err)
	}
	if small != blocks[0] {
		t.Fatalf("fallback gave %#x, want the free 192 KiB block %#x", uintptr(small), uintptr(blocks[0]))
	}
	if err := p.Free(small); err != nil {
		t.Fatal(err)
	}
	if st := p.stats(); st.Reserved != 19*192<<10 {
		t.Fatalf("accounting after the fallback block came back: %+v", st)
	}
	if err := p.close(); err != nil || len(src.live) != 0 {
		t.Fatalf("close: %v, %d left", err, len(src.live))
	}
}

func TestRing(t *testing.T) {
	r := ring{size: 1000}
	off, c1, ok := r.alloc(400, 64)
	if !ok || off != 0 || c1 != 400 {
		t.Fatalf("first: %d %d %v", off, c1, ok)
	}
	off, c2, ok := r.alloc(400, 64)
	if !ok || off != 448 || c2 != 448 {
		t.Fatalf("second (aligned to 448): %d %d %v", off, c2, ok)
	}
	if _, _, ok := r.alloc(200, 64); ok {
		t.Fatal("a third range fitted a full ring")
	}
	// The oldest range is released. 500 bytes fit neither before the end
	// nor at 0, where the second range starts at 448; 300 fit at 0, and the
	// skipped tail [848, 1000) counts as part of that reservation.
	r.release(c1)
	if _, _, ok := r.alloc(500, 64); ok {
		t.Fatal("overlapped the range still in use")
	}
	off, c3, ok := r.alloc(300, 64)
	if !ok || off != 0 || c3 != 152+300 {
		t.Fatalf("wrapped: %d %d %v (used %d)", off, c3, ok, r.used)
	}
	if _, _, ok := r.alloc(101, 1); ok {
		t.Fatal("took more than the 100 bytes left")
	}
	off, c4, ok := r.alloc(100, 1)
	if !ok || off != 300 {
		t.Fatalf("last 100 bytes: %d %v", off, ok)
	}
	for _, c := range []int64{c2, c3, c4} {
		r.release(c)
	}
	if r.used != 0 {
		t.Fatalf("used %d after releasing everything", r.used)
	}
	if _, _, ok := r.alloc(1001, 1); ok {
		t.Fatal("a range larger than the ring fitted")
	}
	off, _, ok = r.alloc(1000, 256)
	if !ok || off != 0 {
		t.Fatalf("an empty ring starts again at 0: %d %v", off, ok)
	}
}

func TestPinnedRegistry(t *testing.T) {
	a, b := make([]byte, 4096), make([]byte, 1000)
	ha := HostMem{p: unsafe.Pointer(&a[0]), n: len(a)}
	hb := HostMem{p: unsafe.Pointer(&b[0]), n: len(b)}
	registerPinned(ha)
	registerPinned(hb)
	defer unregisterPinned(ha)
	defer unregisterPinned(hb)
	for _, c := range []struct {
		s    []byte
		want bool
	}{{a, true}, {a[100:200], true}, {a[4095:], true}, {b[999:], true}, {b, true},
		{make([]byte, 10), false}, {nil, false}} {
		if got := IsPinned(c.s); got != c.want {
			t.Errorf("IsPinned(%d bytes) = %v, want %v", len(c.s), got, c.want)
		}
	}
	// A slice that runs past its region is not pinned.
	c := make([]byte, 4096)
	hc := HostMem{p: unsafe.Pointer(&c[0]), n: 2048}
	registerPinned(hc)
	defer unregisterPinned(hc)
	if IsPinned(c[2000:2100]) || !IsPinned(c[1000:2048]) {
		t.Error("a slice running past its pinned region counts as pinned")
	}
	h, ok := pinnedAt(a[10:20])
	if !ok || h.Len() != 10 || h.Pointer() != unsafe.Pointer(&a[10]) {
		t.Errorf("pinnedAt: %v %v", h, ok)
	}
	unregisterPinned(hb)
	if IsPinned(b) {
		t.Error("unregistered memory still counts as pinned")
	}
}

func TestPinnedPool(t *testing.T) {
	f := newFakeOps(1 << 30)
	p := newPinnedPool(1<<20, f.hostAlloc, f.hostFree)
	x, err := p.Float64s(1000)
	if err != nil {
		t.Fatal(err)
	}
	y, err := p.Bytes(10)
	if err != nil {
		t.Fatal(err)
	}
	z, err := p.Bytes(3 << 20) // larger than a slab: a slab of its own
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.Bytes(100) // still cut from the first slab
	if err != nil {
		t.Fatal(err)
	}
	if uintptr(unsafe.Pointer(&y[0]))%pinnedAlign != 0 || uintptr(unsafe.Pointer(&w[0]))%pinnedAlign != 0 {
		t.Error("pieces are not aligned")
	}
	if uintptr(unsafe.Pointer(&w[0])) < uintptr(unsafe.Pointer(&y[0])) || uintptr(unsafe.Pointer(&w[0]))-uintptr(unsafe.Pointer(&y[0])) != 64 {
		t.Errorf("the piece after a large request did not come from the current slab")
	}
	for _, b := range [][]byte{y, z, w, unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), 8000)} {
		if !IsPinned(b) {
			t.Fatal("a piece of the pool is not registered as pinned")
		}
	}
	if len(y) != 10 || cap(y) != 10 {
		t.Errorf("piece len %d cap %d: pieces must not extend into each other", len(y), cap(y))
	}
	if p.Allocated() != 4<<20 || f.hostAllocs.Load() != 2 {
		t.Errorf("allocated %d bytes in %d slabs", p.Allocated(), f.hostAllocs.Load())
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if IsPinned(y) || len(f.hosts) != 0 {
		t.Error("Close left slabs")
	}
	if _, err := p.Bytes(1); !errors.Is(err, ErrBadArgument) {
		t.Errorf("Bytes after Close: %v", err)
	}
}

// Tiles in pinned memory, allocated there (rt.NewTiledMatrixAlloc) or moved
// there with their content (PinTiles, for a matrix that exists already).
func TestPinnedTiles(t *testing.T) {
	f := newFakeOps(1 << 30)
	p := newPinnedPool(1<<20, f.hostAlloc, f.hostFree)
	defer func() { must(t, p.Close()) }()
	pinned := func(a *rt.TiledMatrix, keep func(i, j int) bool) {
		t.Helper()
		for j := range a.NT {
			for i := range a.MT {
				tile := a.Tile(i, j)
				b := unsafe.Slice((*byte)(unsafe.Pointer(&tile[0])), len(tile)*8)
				if want := keep == nil || keep(i, j); IsPinned(b) != want {
					t.Fatalf("tile (%d, %d) pinned %v, want %v", i, j, !want, want)
				}
			}
		}
	}
	a, err := rt.NewTiledMatrixAlloc(40, 40, 16, 16, 1, 1, 0, p.Float64s)
	must(t, err)
	pinned(a, nil)
	b, err := rt.NewTiledMatrix(40, 40, 16, 16, 1, 1, 0)
	must(t, err)
	dense := rttest.RandomSPD(40, 3)
	b.FillFromDense(dense, 40)
	lower := func(i, j int) bool { return i >= j }
	must(t, PinTiles(b, p, lower))
	pinned(b, lower)
	got := make([]float64, 40*40)
	b.GatherToDense(got, 40)
	if !slices.Equal(got, dense) {
		t.Fatal("PinTiles changed the matrix")
	}
}
