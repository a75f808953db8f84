package cholesky_test

import (
	"context"
	"testing"

	"github.com/jdf2go/jdf2go/examples/potrf/cholesky"
	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/gpu"
	_ "github.com/jdf2go/jdf2go/rt/gpu/sim"
)

// factorOnSim factors an n×n matrix in nb tiles with the generated potrf.jdf
// on one free-running simulated device, the CPU workers sharing the work or
// not, and returns the residual and the device's statistics.
func factorOnSim(t *testing.T, n, nb int, share bool) (float64, gpu.Stats) {
	t.Helper()
	devs, err := gpu.Open("sim")
	if err != nil {
		t.Fatal(err)
	}
	dev := devs[0]
	ctx, err := rt.New(rt.Workers(2), rt.Devices(dev), rt.ShareWork(share))
	if err != nil {
		t.Fatal(err)
	}
	p, err := cholesky.NewProblem(n, nb, 7)
	if err != nil {
		t.Fatal(err)
	}
	ferr := cholesky.Factor(context.Background(), ctx, p.A, blas.Gonum())
	if err := ctx.Close(); err != nil {
		t.Fatal(err)
	}
	st := dev.Device().Stats()
	if err := dev.Close(); err != nil { // writes back what stayed on the device
		t.Fatal(err)
	}
	if ferr != nil {
		t.Fatal(ferr)
	}
	res, err := p.Residual(blas.Gonum())
	if err != nil {
		t.Fatal(err)
	}
	return res, st
}

// TestPotrfWritesBackFinalTilesOnly: when the device runs every task (no
// sharing), only the final value of each tile (POTRF and TRSM, whose flows go
// to the collection) is copied back at stage-out; the intermediate values of
// SYRK and GEMM stay on the device for their successors, and the factor is
// right.
func TestPotrfWritesBackFinalTilesOnly(t *testing.T) {
	const n, nb = 192, 32
	mt := n / nb
	res, st := factorOnSim(t, n, nb, false)
	if res > 1e-12 {
		t.Errorf("residual %g", res)
	}
	if want := uint64(cholesky.Tasks(mt)); st.Executed != want {
		t.Errorf("device ran %d tasks, want all %d", st.Executed, want)
	}
	if want := uint64(mt * (mt + 1) / 2); st.StageOuts != want {
		t.Errorf("%d flows written back at stage-out, want the %d final tiles", st.StageOuts, want)
	}
}

// TestPotrfSharedWritesBackWhatTheCPUMayRead: when CPU workers share the
// classes, every written tile may be read by a CPU task, so every task's
// output is written back (a POTRF's two: the factor and its inverse), and the
// factor is right whoever ran what.
func TestPotrfSharedWritesBackWhatTheCPUMayRead(t *testing.T) {
	const n, nb = 192, 32
	res, st := factorOnSim(t, n, nb, true)
	if res > 1e-12 {
		t.Errorf("residual %g", res)
	}
	if mt := uint64(n / nb); st.StageOuts < st.Executed || st.StageOuts > st.Executed+mt {
		t.Errorf("%d flows written back for %d device tasks, want one per task and one per POTRF", st.StageOuts, st.Executed)
	}
}

// TestPotrfBatchedGemmRaggedTiles: with every task on the device and a matrix whose last
// tile row is ragged, the batched GEMM body launches rings of two shapes, and the factor is
// right.
func TestPotrfBatchedGemmRaggedTiles(t *testing.T) {
	res, st := factorOnSim(t, 1000, 64, false)
	if res > 1e-12 {
		t.Errorf("residual %g", res)
	}
	t.Logf("%d tasks in %d hook calls", st.Batched, st.Batches)
}
