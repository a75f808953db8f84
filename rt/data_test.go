package rt_test

import (
	"errors"
	"math"
	"testing"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/rttest"
)

func TestDataCopies(t *testing.T) {
	d := rt.NewData(7, []float64{1, 2})
	h := d.Host()
	if h.Device() != 0 || rt.Impl.CopyData(h) != d || rt.Impl.Version(h) != 0 || rt.Impl.State(h) != rt.Exclusive || d.Key() != 7 {
		t.Fatalf("host copy: dev %d version %d state %v", h.Device(), rt.Impl.Version(h), rt.Impl.State(h))
	}
	g := rt.NewCopy("device buffer")
	if err := rt.Impl.Attach(d, 2, g); err != nil {
		t.Fatal(err)
	}
	other := rt.NewCopy(nil)
	if err := rt.Impl.Attach(d, 2, other); !errors.Is(err, rt.ErrCopyExists) {
		t.Fatalf("second Attach: %v", err)
	}
	if rt.Impl.CopyData(other) != nil || other.Device() != 0 {
		t.Fatalf("a copy that failed to attach says it is on slot %d of %p", other.Device(), rt.Impl.CopyData(other))
	}
	if rt.Impl.DeviceCopy(d, 2) != g || g.Device() != 2 || rt.Impl.CopyData(g) != d {
		t.Fatal("device copy not attached")
	}
	rt.Impl.SetVersion(g, rt.Impl.Version(h))
	rt.Impl.BumpVersion(g)
	if d.Newest() != g {
		t.Fatal("Newest is not the written device copy")
	}
	if !g.CompareAndSwapState(rt.Invalid, rt.Owned) || rt.Impl.State(g) != rt.Owned {
		t.Fatal("state CAS")
	}
	if !rt.Impl.Detach(d, 2, g) || rt.Impl.DeviceCopy(d, 2) != nil || rt.Impl.Detach(d, 2, g) {
		t.Fatal("Detach")
	}
	if (*rt.Copy)(nil).Float64s() != nil || rt.NewCopy(3).Float64s() != nil {
		t.Fatal("Float64s on nil or non-float copy")
	}
}

func TestTiledMatrix(t *testing.T) {
	const m, n, mb, nb = 10, 7, 4, 3
	a, err := rt.NewTiledMatrix(m, n, mb, nb, 1, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if a.MT != 3 || a.NT != 3 || a.TileRows(2) != 2 || a.TileCols(2) != 1 {
		t.Fatalf("shape MT=%d NT=%d rows=%d cols=%d", a.MT, a.NT, a.TileRows(2), a.TileCols(2))
	}
	dense := make([]float64, m*n)
	for i := range dense {
		dense[i] = float64(i)
	}
	a.FillFromDense(dense, m)
	// Element (5, 4) is in tile (1, 1) at (1, 1).
	if got := a.Tile(1, 1)[1+1*mb]; got != dense[5+4*m] {
		t.Fatalf("tile element = %v, want %v", got, dense[5+4*m])
	}
	back := make([]float64, m*n)
	a.GatherToDense(back, m)
	for i := range dense {
		if back[i] != dense[i] {
			t.Fatalf("round trip differs at %d", i)
		}
	}
	// 2×3 grid: tile (i, j) lives on rank (i%2)*3 + j%3; rank 4 holds only its tiles.
	b, _ := rt.NewTiledMatrix(8, 12, 2, 2, 2, 3, 4)
	for i := 0; i < b.MT; i++ {
		for j := 0; j < b.NT; j++ {
			r := b.RankOf(rt.Ix(i, j))
			if r != (i%2)*3+j%3 || (b.DataOf(rt.Ix(i, j)) != nil) != (r == 4) {
				t.Fatalf("tile (%d, %d): rank %d, stored %v", i, j, r, b.DataOf(rt.Ix(i, j)) != nil)
			}
		}
	}
	if _, err := rt.NewTiledMatrix(4, 4, 0, 2, 1, 1, 0); !errors.Is(err, rt.ErrBadOption) {
		t.Fatalf("mb=0: %v", err)
	}
}

func TestRandomSPD(t *testing.T) {
	const n = 20
	a := rttest.RandomSPD(n, 1)
	if b := rttest.RandomSPD(n, 1); b[7] != a[7] {
		t.Fatal("not reproducible")
	}
	for i := 0; i < n; i++ {
		off := 0.0
		for j := 0; j < n; j++ {
			if a[i+j*n] != a[j+i*n] {
				t.Fatalf("not symmetric at (%d, %d)", i, j)
			}
			if i != j {
				off += math.Abs(a[i+j*n])
			}
		}
		if a[i+i*n] <= off {
			t.Fatalf("row %d not diagonally dominant", i)
		}
	}
}

func TestVector(t *testing.T) {
	v, err := rt.NewVector(10, 4, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if v.NT != 3 || v.Block(0) != nil || len(v.Block(1)) != 4 || v.RankOf(rt.Ix(2)) != 0 || v.KeyOf(rt.Ix(2)) != 2 {
		t.Fatalf("vector layout: NT=%d", v.NT)
	}
	if _, err := rt.NewVector(10, 4, 2, 2); !errors.Is(err, rt.ErrBadOption) {
		t.Fatalf("rank out of range: %v", err)
	}
}

// Collections take their storage from an allocator when given one: every local tile or
// block comes from it (no copy), and its failures and short slices are errors.
func TestCollectionAlloc(t *testing.T) {
	var calls, elems int
	slab := make([]float64, 0, 1<<10)
	alloc := func(n int) ([]float64, error) {
		calls++
		elems += n
		slab = slab[:len(slab)+n]
		return slab[len(slab)-n:], nil
	}
	a, err := rt.NewTiledMatrixAlloc(10, 7, 4, 4, 1, 1, 0, alloc)
	if err != nil {
		t.Fatal(err)
	}
	if calls != a.MT*a.NT || elems != a.MT*a.NT*16 || &a.Tile(0, 0)[0] != &slab[0] {
		t.Fatalf("%d calls for %d elements; tile (0, 0) not in the allocator's memory", calls, elems)
	}
	v, err := rt.NewVectorAlloc(10, 4, 2, 1, alloc)
	if err != nil {
		t.Fatal(err)
	}
	if b := v.Block(1); len(b) != 4 || &b[0] != &slab[elems-4] {
		t.Fatal("block 1 not in the allocator's memory")
	}
	boom := errors.New("no pinned memory")
	if _, err := rt.NewTiledMatrixAlloc(8, 8, 4, 4, 1, 1, 0, func(int) ([]float64, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("failing allocator: %v", err)
	}
	if _, err := rt.NewVectorAlloc(8, 4, 1, 0, func(n int) ([]float64, error) { return make([]float64, n-1), nil }); !errors.Is(err, rt.ErrBadOption) {
		t.Fatalf("short allocation: %v", err)
	}
}

func TestArenaReuse(t *testing.T) {
	a := rt.NewArena(64)
	c := a.Get()
	if len(c.Float64s()) != 8 || a.Bytes() != 64 || rt.Impl.CopyData(c) == nil || rt.Impl.CopyData(c).Host() != c {
		t.Fatalf("arena copy: %d elements", len(c.Float64s()))
	}
	type pair struct{ x, y int }
	b := rt.NewArenaOf(16, func() any { return &pair{} })
	if _, ok := b.Get().Value.(*pair); !ok {
		t.Fatal("NewArenaOf value type")
	}
	if rt.Ix(1, 2, 3).String() != "(1, 2, 3)" {
		t.Fatal("Index.String")
	}
}

// A buffer handed out for a NEW input is unwritten until its version moves; one taken from
// the arena directly (received data) never is, even after it went through a NEW input.
func TestCopyUnwritten(t *testing.T) {
	tp := rt.NewTaskpool("unwritten", nil)
	a := rt.NewArena(64)
	tp.SetArena("T", a)
	c, err := tp.NewCopy("T")
	if err != nil {
		t.Fatal(err)
	}
	if !rt.Impl.Unwritten(c) {
		t.Fatal("a NEW buffer is not unwritten")
	}
	rt.Impl.BumpVersion(c)
	if rt.Impl.Unwritten(c) {
		t.Fatal("a written NEW buffer is still unwritten")
	}
	if rt.Impl.Unwritten(a.Get()) {
		t.Fatal("a buffer taken with Arena.Get is unwritten")
	}
	if rt.Impl.Unwritten(rt.NewCopy(make([]float64, 4))) {
		t.Fatal("a copy outside arenas is unwritten")
	}
}

// The stencil's NEW buffers are recycled: a long run allocates far fewer buffers than tasks.
func TestArenaBuffersRecycled(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	c := newCtx(t, rt.Workers(2))
	stencilRun(t, c, 5, 8, 4) // warm up
	T, K := 200, 8
	allocs := testing.AllocsPerRun(1, func() { stencilRun(t, c, T, K, 4) })
	if tasks := float64((T + 1) * K); allocs > tasks/4 {
		t.Fatalf("%.0f allocations for %.0f tasks with NEW buffers", allocs, tasks)
	}
}
