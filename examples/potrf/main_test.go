package main

import (
	"bytes"
	"context"
	"errors"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/examples/potrf/cholesky"
	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/cuda"
)

// TestPotrf factors small matrices, ragged tiles included, on every available backend.
func TestPotrf(t *testing.T) {
	backends := []string{"gonum"}
	if _, err := blas.OpenBLAS(); err == nil {
		backends = append(backends, "openblas")
	}
	for _, b := range backends {
		for _, c := range []struct{ n, nb int }{{1, 1}, {64, 64}, {200, 48}, {257, 32}} {
			var out bytes.Buffer
			trace := filepath.Join(t.TempDir(), "trace.json")
			args := []string{"-n", strconv.Itoa(c.n), "-nb", strconv.Itoa(c.nb), "-workers", "2", "-blas", b, "-trace", trace}
			if err := run(args, &out); err != nil {
				t.Fatalf("%s %+v: %v\n%s", b, c, err, out.String())
			}
			for _, want := range []string{"GFLOP/s", "‖A − L·Lᵀ‖/‖A‖", "trace: " + trace} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("%s %+v: output lacks %q:\n%s", b, c, want, out.String())
				}
			}
		}
	}
}

// TestPotrfMemory: without CUDA the tiles live in the Go heap by default and in huge pages
// (where the system has them) with -hugepages; the factorisation is correct in both.
func TestPotrfMemory(t *testing.T) {
	for _, c := range []struct {
		flag string
		want []string
	}{
		{"-hugepages=true", []string{"huge pages)", "no huge pages here)"}},
		{"-hugepages=false", []string{"Go heap)"}},
	} {
		var out bytes.Buffer
		args := []string{"-n", "96", "-nb", "32", "-workers", "2", "-blas", "gonum", "-trace", "", "-gpus", "none", c.flag}
		if err := run(args, &out); err != nil {
			t.Fatalf("%s: %v\n%s", c.flag, err, out.String())
		}
		found := false
		for _, w := range c.want {
			found = found || strings.Contains(out.String(), w)
		}
		if !found || !strings.Contains(out.String(), "‖A − L·Lᵀ‖/‖A‖") {
			t.Errorf("%s: output names none of %q as the memory, or lacks the residual:\n%s", c.flag, c.want, out.String())
		}
	}
}

// TestNotPositiveDefinite: a matrix that is not SPD fails the taskpool with the failing
// POTRF task named.
func TestNotPositiveDefinite(t *testing.T) {
	p, err := cholesky.NewProblem(64, 16, 1)
	if err != nil {
		t.Fatal(err)
	}
	p.Dense[40+40*64] = -1e6 // a negative pivot in tile (2, 2)
	p.Reset()
	ctx, err := rt.New(rt.Workers(2))
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	err = cholesky.Factor(context.Background(), ctx, p.A, blas.Gonum())
	if !errors.Is(err, blas.ErrNotPositiveDefinite) || !strings.Contains(err.Error(), "POTRF(2)") {
		t.Errorf("error %v: want ErrNotPositiveDefinite from POTRF(2)", err)
	}
}

// TestPotrfOnSimulatedGPUs runs the command on one and two simulated devices, with the data
// in host memory and already resident: the GPU bodies share the work with the CPU and the
// residual check passes.
func TestPotrfOnSimulatedGPUs(t *testing.T) {
	for _, args := range [][]string{
		{"-gpus", "sim:1"},
		{"-gpus", "sim:2"},
		{"-gpus", "sim:2", "-resident"},
		{"-gpus", "sim:1", "-share=false"},
	} {
		var out bytes.Buffer
		all := append([]string{"-n", "300", "-nb", "64", "-workers", "2", "-blas", "gonum", "-trace", ""}, args...)
		if err := run(all, &out); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out.String())
		}
		for _, want := range []string{"GFLOP/s", "tasks: CPU ", "gpu0 ", "‖A − L·Lᵀ‖/‖A‖"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%v: output lacks %q:\n%s", args, want, out.String())
			}
		}
	}
}

// TestSim2MatchesCPU: the factor computed with two simulated devices (GPU bodies on the
// devices, CPU bodies on the workers) equals the CPU-only factor to 1e-12, and the devices
// ran tasks of every class they can.
func TestSim2MatchesCPU(t *testing.T) {
	const n, nb = 400, 50
	factor := func(devs []*gpu.RTDevice) []float64 {
		t.Helper()
		p, err := cholesky.NewProblem(n, nb, 7)
		if err != nil {
			t.Fatal(err)
		}
		ctx, err := rt.New(rt.Workers(2), rt.Devices(gpu.RTDevices(devs)...))
		if err != nil {
			t.Fatal(err)
		}
		err = cholesky.Factor(context.Background(), ctx, p.A, blas.Gonum())
		if cerr := ctx.Close(); err == nil {
			err = cerr
		}
		for _, d := range devs {
			if cerr := d.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		l := make([]float64, n*n)
		p.A.GatherToDense(l, n)
		return l
	}
	cpu := factor(nil)
	devs, err := gpu.Open("sim:2")
	if err != nil {
		t.Fatal(err)
	}
	sim := factor(devs)
	var ran, peer uint64
	for _, d := range devs {
		ran += d.Device().Stats().Executed
		peer += d.Device().Stats().PeerCopies
	}
	if ran == 0 {
		t.Fatal("the simulated devices ran no task")
	}
	var diff, scale float64
	for j := 0; j < n; j++ {
		for i := j; i < n; i++ {
			diff = math.Max(diff, math.Abs(sim[i+j*n]-cpu[i+j*n]))
			scale = math.Max(scale, math.Abs(cpu[i+j*n]))
		}
	}
	if diff/scale > 1e-12 {
		t.Fatalf("factor on sim:2 differs from the CPU's by %.3g (relative)", diff/scale)
	}
	t.Logf("sim:2 ran %d of %d tasks (%d tiles copied device to device); factors differ by %.3g",
		ran, cholesky.Tasks((n+nb-1)/nb), peer, diff/scale)
}

// Tasks counts the tasks of the generated taskpool.
func TestTasks(t *testing.T) {
	for _, mt := range []int{1, 2, 3, 7} {
		p, err := cholesky.NewProblem(mt*4, 4, 1)
		if err != nil {
			t.Fatal(err)
		}
		ctx, err := rt.New(rt.Workers(1))
		if err != nil {
			t.Fatal(err)
		}
		tp, err := cholesky.NewPotrf(p.A, blas.Gonum())
		if err != nil {
			t.Fatal(err)
		}
		inverses := mt%2 == 1 // POTRF's CPU body computes the inverses, which the TRSMs ignore
		if inverses {
			if err := tp.UseInverses(); err != nil {
				t.Fatal(err)
			}
		}
		if err := ctx.Add(tp.Taskpool); err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err = tp.Wait(wctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if err := ctx.Close(); err != nil {
			t.Fatal(err)
		}
		if got, want := tp.Total(), cholesky.Tasks(mt); got != want {
			t.Errorf("mt=%d, inverses %v: the taskpool has %d tasks, Tasks says %d", mt, inverses, got, want)
		}
	}
}

// TestExplicitCUDAWithoutCUDA: -gpus cuda on a machine without CUDA fails with the reason
// instead of running on the CPU only.
func TestExplicitCUDAWithoutCUDA(t *testing.T) {
	if cuda.Init() == nil {
		t.Skip("CUDA is available here")
	}
	var out bytes.Buffer
	err := run([]string{"-gpus", "cuda", "-n", "64", "-nb", "32", "-trace", ""}, &out)
	if !errors.Is(err, gpu.ErrNoDevice) || !errors.Is(err, cuda.ErrUnavailable) {
		t.Fatalf("run -gpus cuda = %v, want ErrNoDevice wrapping cuda.ErrUnavailable", err)
	}
	if out.Len() != 0 {
		t.Fatalf("a failed device choice printed %q", out.String())
	}
}
