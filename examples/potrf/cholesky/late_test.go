package cholesky_test

import (
	"context"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/examples/potrf/cholesky"
	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/driver"
	"github.com/jdf2go/jdf2go/rt/gpu/sim"
)

// TestLateWriteBacks factors on one simulated device whose copies to the host land
// milliseconds after they are queued, with the CPU workers not sharing the device's
// classes: every task runs on the device, so a task whose result is a final tile
// completes when its kernels are done, before that tile is back (gpu.Flow.Late). Factor
// must still return only once every tile has landed, with the right factor.
func TestLateWriteBacks(t *testing.T) {
	slow := &sim.Faults{Delay: func(stream, label string) time.Duration {
		if stream == "out" {
			return 2 * time.Millisecond
		}
		return 0
	}}
	driver.Register("late-test-sim", driver.Instances(sim.New(sim.WithFaults(slow))))
	devs, err := gpu.Open("late-test-sim")
	if err != nil {
		t.Fatal(err)
	}
	dev := devs[0]
	c, err := rt.New(rt.Workers(2), rt.Devices(dev), rt.ShareWork(false))
	if err != nil {
		t.Fatal(err)
	}
	p, err := cholesky.NewProblem(320, 64, 3)
	if err != nil {
		t.Fatal(err)
	}
	impl := blas.Gonum()
	if err := cholesky.Factor(context.Background(), c, p.A, impl); err != nil {
		t.Fatal(err)
	}
	// Read the tiles at once: Factor's return is the promise that they are final.
	res, err := p.Residual(impl)
	if err != nil {
		t.Fatal(err)
	}
	st := dev.Device().Stats()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := dev.Close(); err != nil {
		t.Fatal(err)
	}
	if !(res < 1e-12) {
		t.Fatalf("residual %.3g after Factor returned: a tile had not landed", res)
	}
	// 5 POTRF and 10 TRSM write final tiles.
	if st.Early != 15 || st.StageOuts != 15 {
		t.Fatalf("%d tasks completed early, %d tiles written back; want 15 and 15", st.Early, st.StageOuts)
	}
}
