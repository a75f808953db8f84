package hugepage_test

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/hugepage"
	"github.com/jdf2go/jdf2go/rt/rttest"
)

func addr(f []float64) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(f))) }

// Pieces of a Pool are zeroed, cache-line aligned, disjoint and writable; a request
// larger than a slab gets a slab of its own; Close is idempotent and ends the pool.
func TestPool(t *testing.T) {
	p := hugepage.NewPool(4 << 20)
	var pieces [][]float64
	for _, n := range []int{1, 1000, 128 * 128, 5 << 17, 5} { // 5<<17 float64s: 5 MiB, a slab of its own
		f, err := p.Float64s(n)
		if err != nil {
			t.Fatal(err)
		}
		if len(f) != n || cap(f) != n {
			t.Fatalf("Float64s(%d): len %d cap %d", n, len(f), cap(f))
		}
		if addr(f)%64 != 0 {
			t.Fatalf("Float64s(%d) at %#x: not 64-byte aligned", n, addr(f))
		}
		for i, x := range f {
			if x != 0 {
				t.Fatalf("Float64s(%d)[%d] = %g, want 0", n, i, x)
			}
		}
		for i := range f {
			f[i] = float64(len(pieces) + 1)
		}
		pieces = append(pieces, f)
	}
	for i, f := range pieces {
		for _, x := range f {
			if x != float64(i+1) {
				t.Fatalf("piece %d was overwritten (%g): pieces overlap", i, x)
			}
		}
	}
	if runtime.GOOS == "linux" {
		if !p.Advised() {
			t.Error("Advised() = false on Linux")
		}
		if addr(pieces[0])%(2<<20) != 0 {
			t.Errorf("first piece of a slab at %#x: not 2 MiB aligned", addr(pieces[0]))
		}
		// 4 MiB slabs: the first, then 5 MiB on its own (6 MiB: whole huge pages), then 5
		// more float64s in the first.
		if got := p.Allocated(); got != 10<<20 {
			t.Errorf("Allocated() = %d, want %d", got, 10<<20)
		}
		checkAdvised(t, pieces[0])
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := p.Float64s(8); !errors.Is(err, rt.ErrClosed) {
		t.Fatalf("Float64s after Close: err = %v, want ErrClosed", err)
	}
	if _, err := hugepage.NewPool(0).Float64s(0); !errors.Is(err, rt.ErrBadOption) {
		t.Fatalf("Float64s(0): err = %v, want ErrBadOption", err)
	}
}

// checkAdvised finds the mapping holding f in /proc/self/smaps and checks that it carries
// the kernel's "hg" flag (MADV_HUGEPAGE).
func checkAdvised(t *testing.T, f []float64) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Logf("no smaps: %v", err)
		return
	}
	a := addr(f)
	var inside bool
	for _, line := range strings.Split(string(b), "\n") {
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 {
			inside = lo <= a && a < hi
			continue
		}
		if inside && strings.HasPrefix(line, "VmFlags:") {
			if !strings.Contains(line+" ", " hg ") {
				t.Errorf("mapping of the slab lacks the hg flag: %s", line)
			}
			return
		}
	}
	t.Errorf("no mapping holds %#x in /proc/self/smaps", a)
}

// A TiledMatrix with its tiles in a Pool fills and gathers like one on the Go heap,
// and its tiles are disjoint.
func TestPoolTiles(t *testing.T) {
	p := hugepage.NewPool(0)
	defer p.Close()
	const n, nb = 100, 32
	a, err := rt.NewTiledMatrixAlloc(n, n, nb, nb, 1, 1, 0, p.Float64s)
	if err != nil {
		t.Fatal(err)
	}
	src := rttest.RandomSPD(n, 3)
	a.FillFromDense(src, n)
	dst := make([]float64, n*n)
	a.GatherToDense(dst, n)
	for i := range src {
		if src[i] != dst[i] {
			t.Fatalf("element %d: %g after the round trip, want %g", i, dst[i], src[i])
		}
	}
}
