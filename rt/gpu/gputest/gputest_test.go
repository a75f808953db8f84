package gputest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/gputest"
	_ "github.com/jdf2go/jdf2go/rt/gpu/sim"
	"github.com/jdf2go/jdf2go/rt/rttest"
)

// The graphs run here on the simulated device; the CUDA backend's tests run
// them on CUDA (and on its CPU fake).

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func run(t *testing.T, devs []*gpu.RTDevice, tps ...*rt.Taskpool) {
	t.Helper()
	c, err := rt.New(rt.Workers(2), rt.Devices(gpu.RTDevices(devs)...))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tp := range tps {
		if err := c.Add(tp); err != nil {
			t.Fatal(err)
		}
		if err := tp.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

func simDevices(t *testing.T, n int) []*gpu.RTDevice {
	t.Helper()
	devs, err := gpu.Open(fmt.Sprintf("sim:%d", n), gpu.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	return devs
}

func closeAll(t *testing.T, devs []*gpu.RTDevice) (executed uint64) {
	t.Helper()
	for _, d := range devs {
		executed += d.Device().Stats().Executed
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return executed
}

func maxDiff(a, b []float64) float64 {
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(a[i]-b[i]))
	}
	return d
}

func TestPotrfOnSimMatchesCPU(t *testing.T) {
	const n, nb = 150, 32 // ragged last tile
	for _, c := range []struct {
		mode gputest.WriteBack
		devs int
	}{{gputest.WriteFinal, 1}, {gputest.WriteNone, 1}, {gputest.WriteFinal, 2}} {
		mode := c.mode
		dense := rttest.RandomSPD(n, 3)
		want := slices.Clone(dense)
		if err := blas.Gonum().Dpotrf(blas.Lower, n, want, n); err != nil {
			t.Fatal(err)
		}
		a, err := rt.NewTiledMatrix(n, n, nb, nb, 1, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		a.FillFromDense(dense, n)
		devs := simDevices(t, c.devs)
		run(t, devs, gputest.NewPotrf(a, mode))
		// WriteNone leaves the factor on the device until Close writes it
		// back.
		if got := closeAll(t, devs); got != uint64(gputest.Tasks(a.MT)) {
			t.Fatalf("mode %d: device ran %d tasks, want %d", mode, got, gputest.Tasks(a.MT))
		}
		if d := gputest.FactorDiff(a, want, n); d > 1e-12 {
			t.Fatalf("mode %d: factor differs from the CPU by %g", mode, d)
		}
	}
}

func TestGemmOnSimMatchesCPU(t *testing.T) {
	const m, n, k, nb = 70, 64, 96, 32
	for _, batch := range []bool{false, true} {
		mat := func(r, c int, seed uint64) (*rt.TiledMatrix, []float64) {
			x, err := rt.NewTiledMatrix(r, c, nb, nb, 1, 1, 0)
			if err != nil {
				t.Fatal(err)
			}
			d := make([]float64, r*c)
			for i := range d {
				d[i] = math.Sin(float64(i)*0.37 + float64(seed))
			}
			x.FillFromDense(d, r)
			return x, d
		}
		a, da := mat(m, k, 1)
		b, db := mat(k, n, 2)
		cm, dc := mat(m, n, 3)
		if err := blas.Gonum().Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, da, m, db, k, 1, dc, m); err != nil {
			t.Fatal(err)
		}
		devs := simDevices(t, 2)
		g := &gputest.Gemm{A: a, B: b, C: cm, Batch: batch, BatchMax: 4}
		run(t, devs, gputest.NewGemm(g))
		if got := closeAll(t, devs); got != uint64(cm.MT*cm.NT*a.NT) {
			t.Fatalf("devices ran %d tasks, want %d", got, cm.MT*cm.NT*a.NT)
		}
		got := make([]float64, m*n)
		cm.GatherToDense(got, m)
		if d := maxDiff(got, dc); d > 1e-12 {
			t.Fatalf("batch %v: product differs from the CPU by %g", batch, d)
		}
	}
}

func TestTouchThenResidentPotrf(t *testing.T) {
	const n, nb = 96, 32
	dense := rttest.RandomSPD(n, 9)
	a, err := rt.NewTiledMatrix(n, n, nb, nb, 1, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	a.FillFromDense(dense, n)
	devs := simDevices(t, 1)
	run(t, devs, gputest.NewTouch(a, true))
	in := devs[0].Device().Stats().Reservations
	run(t, devs, gputest.NewPotrf(a, gputest.WriteNone))
	st := devs[0].Device().Stats()
	// The factorization found every tile resident: no tile was staged
	// twice, so device memory holds exactly the lower triangle.
	if want := int64(a.MT*(a.MT+1)/2) * nb * nb * 8; st.MemUsed != want {
		t.Fatalf("device memory %d bytes after the factorization, want %d (reservations %d then %d)", st.MemUsed, want, in, st.Reservations)
	}
	closeAll(t, devs)
	want := slices.Clone(dense)
	if err := blas.Gonum().Dpotrf(blas.Lower, n, want, n); err != nil {
		t.Fatal(err)
	}
	if d := gputest.FactorDiff(a, want, n); d > 1e-12 {
		t.Fatalf("factor differs from the CPU by %g", d)
	}
}

// Two devices, each owning the tiles it writes: the tiles written on one
// device and read on the other cross through the host, and concurrent
// readers of a tile whose copy is still in flight wait for it (a
// manager fix: without it the second reader ran before the copy landed).
func TestPotrfOnTwoSimDevicesRepeatedly(t *testing.T) {
	const n, nb = 150, 32
	dense := rttest.RandomSPD(n, 3)
	want := slices.Clone(dense)
	if err := blas.Gonum().Dpotrf(blas.Lower, n, want, n); err != nil {
		t.Fatal(err)
	}
	for it := range 25 {
		a, err := rt.NewTiledMatrix(n, n, nb, nb, 1, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		a.FillFromDense(dense, n)
		devs := simDevices(t, 2)
		run(t, devs, gputest.NewPotrf(a, gputest.WriteFinal))
		closeAll(t, devs)
		if d := gputest.FactorDiff(a, want, n); d > 1e-12 {
			t.Fatalf("run %d: factor differs from the CPU by %g", it, d)
		}
	}
}

// A GPU task that fails (a tile that is not positive definite) fails the
// taskpool with the cause; nothing crashes and the device drains.
func TestPotrfFailureOnSim(t *testing.T) {
	const n, nb = 96, 32
	dense := rttest.RandomSPD(n, 4)
	dense[40+40*n] = -1e6 // tile (1, 1) cannot be factored
	a, err := rt.NewTiledMatrix(n, n, nb, nb, 1, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	a.FillFromDense(dense, n)
	devs := simDevices(t, 1)
	c, err := rt.New(rt.Workers(2), rt.Devices(gpu.RTDevices(devs)...))
	if err != nil {
		t.Fatal(err)
	}
	tp := gputest.NewPotrf(a, gputest.WriteFinal)
	if err := c.Add(tp); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = tp.Wait(ctx)
	if !errors.Is(err, gpu.ErrNotPositiveDefinite) || !strings.Contains(err.Error(), "POTRF(1)") {
		t.Fatalf("Wait: %v, want POTRF(1) failing with ErrNotPositiveDefinite", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	closeAll(t, devs)
}
