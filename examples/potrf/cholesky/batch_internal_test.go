package cholesky

import (
	"testing"

	"github.com/jdf2go/jdf2go/rt/gpu"
)

// TestGemmGroupsByShape: the GEMMs of a ring are grouped by shape, in order of first
// appearance, each group keeping its members' order.
func TestGemmGroupsByShape(t *testing.T) {
	buf := func(p uintptr) gpu.Buffer { return gpu.Buffer{Ptr: gpu.Ptr(p)} }
	var gs gemmGroups
	gs.add(64, 64, 64, buf(1), buf(2), buf(3))
	gs.add(40, 64, 64, buf(4), buf(5), buf(6))
	gs.add(64, 64, 64, buf(7), buf(8), buf(9))
	if len(gs) != 2 {
		t.Fatalf("%d groups, want 2", len(gs))
	}
	full, edge := gs[0], gs[1]
	if full.m != 64 || len(full.c) != 2 || full.c[0].Ptr != 3 || full.c[1].Ptr != 9 || full.a[1].Ptr != 7 || full.b[1].Ptr != 8 {
		t.Errorf("full group %+v", full)
	}
	if edge.m != 40 || len(edge.c) != 1 || edge.a[0].Ptr != 4 {
		t.Errorf("edge group %+v", edge)
	}
}
