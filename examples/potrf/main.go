// Command potrf runs the tiled Cholesky factorisation of examples/potrf.jdf
// (generated into package cholesky) on a random symmetric positive definite
// matrix, on the CPU workers and the GPUs together, checks
// ‖A − L·Lᵀ‖/‖A‖ < 1e-12, and prints the time, the GFLOP/s, the share of the
// tasks each device and the CPU ran, and the path of the Perfetto trace.
//
//	go run ./examples/potrf -n 4096 -nb 256 -workers 2 -blas openblas
//	JDF2GO_GPUS=sim:2 go run ./examples/potrf -n 2048
//	./potrf -gpus cuda -n 32768 -nb 1024 -resident
//
// It exits with an error when the residual is too large.
// -blas picks the CPU tile kernels: auto (OpenBLAS when libopenblas.so.0 loads,
// gonum otherwise), gonum or openblas. OpenBLAS runs single-threaded inside
// tasks. -gpus picks the devices (none, sim:N, cuda or auto; by default
// $JDF2GO_GPUS, else auto: every CUDA GPU when there is one). Every class has
// a GPU body and a CPU body; rt shares the tasks between the devices and the
// CPU workers by estimated finish time (-share=false: the devices take every
// task; use it when a GPU is so much faster that measuring the CPU time of
// each class on one task costs more than the CPU brings). With a CUDA device
// the tiles live in page-locked memory, which the GPU reads and writes without
// staging; otherwise in the Go heap, or with -hugepages in huge-page memory
// (rt.HugePagePool; docs/runtime.md, "Memory", says when it helps). -resident
// stages every tile on a device before the timed factorisation (the data
// starts resident instead of in host memory). The simulated and CUDA backends
// are linked in, so the same binary (CGO_ENABLED=0) runs on a GPU machine.
// The generated code is in cholesky/potrf_jdf.go (go generate).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jdf2go/jdf2go/examples/potrf/cholesky"
	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/cuda"
	_ "github.com/jdf2go/jdf2go/rt/gpu/sim"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "potrf:", err)
		os.Exit(1)
	}
}

// maxResidual is the accuracy the factorisation must reach.
const maxResidual = 1e-12

func run(args []string, stdout io.Writer) (err error) {
	fs := flag.NewFlagSet("potrf", flag.ContinueOnError)
	n := fs.Int("n", 4096, "matrix size")
	nb := fs.Int("nb", 256, "tile size")
	workers := fs.Int("workers", 0, "workers (0: all cores)")
	fs.Func("dashboard", "serve a live dashboard of the run on `ADDR` (localhost:8080; same as $JDF2GO_DASHBOARD)", func(a string) error { return os.Setenv("JDF2GO_DASHBOARD", a) })
	sched := fs.String("sched", "lfq", "scheduler: lfq, ap (strict priority order) or gd")
	backend := fs.String("blas", "auto", "CPU tile kernels: auto, gonum or openblas")
	gpus := fs.String("gpus", "", "devices: none, sim:N, cuda or auto (default: $"+gpu.EnvDevices+", else auto)")
	resident := fs.Bool("resident", false, "stage the tiles on the devices before the timed factorisation")
	share := fs.Bool("share", true, "share the tasks between the CPU workers and the devices by estimated time (false: the devices take every task)")
	huge := fs.Bool("hugepages", false, "without CUDA, keep the tiles in huge-page memory (rt.HugePagePool) instead of the Go heap")
	trace := fs.String("trace", filepath.Join(os.TempDir(), "jdf2go-potrf-trace.json"), "Perfetto trace file (empty: none)")
	verify := fs.Bool("verify", true, "check the task graph (Verify) before running it")
	check := fs.Bool("check", true, "check the residual after the factorisation")
	seed := fs.Uint64("seed", 1, "seed of the random matrix")
	if err := fs.Parse(args); err != nil {
		return err
	}
	impl, err := blas.Select(*backend)
	if err != nil {
		return err
	}
	spec, err := gpu.ProgramSpec(*gpus)
	if err != nil {
		return err
	}
	devs, err := gpu.OpenRT(spec)
	if err != nil {
		return err
	}
	// Devices close after the Context (they write their dirty copies back), and the tiles'
	// memory (pinned or huge pages) after the devices.
	var pool *cuda.PinnedPool
	var hugePool *rt.HugePagePool
	defer func() {
		for _, d := range devs {
			err = errors.Join(err, d.Close())
		}
		if pool != nil {
			err = errors.Join(err, pool.Close())
		}
		if hugePool != nil {
			err = errors.Join(err, hugePool.Close())
		}
	}()
	var alloc rt.Alloc
	memory := "Go heap"
	switch {
	case usesCUDA(devs):
		if pool, err = cuda.NewPinnedPool(0); err != nil {
			return err
		}
		alloc, memory = pool.Float64s, "pinned"
	case *huge:
		// CPU tile kernels miss the TLB less on huge pages (rt.HugePagePool).
		hugePool = rt.NewHugePagePool(0)
		alloc, memory = hugePool.Float64s, "huge pages"
	}
	p, err := cholesky.NewProblemAlloc(*n, *nb, *seed, alloc)
	if err != nil {
		return err
	}
	if *verify {
		if err := cholesky.Verify(p.A, impl); err != nil {
			return err
		}
	}
	opts := []rt.Option{rt.Scheduler(*sched), rt.WithDevices(gpu.RTDevices(devs)...), rt.ShareWork(*share)}
	if *workers > 0 {
		opts = append(opts, rt.Workers(*workers))
	}
	if *trace != "" {
		opts = append(opts, rt.WithTrace(*trace))
	}
	ctx, err := rt.New(opts...)
	if err != nil {
		return err
	}
	if hugePool != nil && !hugePool.Advised() {
		memory = "Go heap (no huge pages here)"
	}
	fmt.Fprintf(stdout, "potrf: N=%d NB=%d (%dx%d tiles, %s), %d workers, scheduler %s, BLAS %s, devices: %s\n",
		*n, *nb, p.A.MT, p.A.NT, memory, ctx.Workers(), ctx.SchedulerName(), impl.Config(), gpu.Describe(devs))
	if *resident && len(devs) > 0 {
		if err := stageTiles(p.A, devs); err != nil {
			return errors.Join(err, ctx.Close())
		}
	}
	before := executed(devs)
	start := time.Now()
	err = cholesky.Factor(context.Background(), ctx, p.A, impl)
	elapsed := time.Since(start)
	if cerr := ctx.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "  factorisation: %v, %.1f GFLOP/s\n", elapsed.Round(time.Microsecond), p.Flops()/elapsed.Seconds()/1e9)
	fmt.Fprintf(stdout, "  tasks: %s\n", shares(cholesky.Tasks(p.A.MT), devs, before))
	if len(devs) > 1 {
		fmt.Fprintf(stdout, "  device to device: %s\n", peerCopies(devs))
	}
	if *check {
		for _, d := range devs {
			if err := d.Close(); err != nil { // writes back what stayed on the device
				return err
			}
		}
		res, err := p.Residual(impl)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "  ‖A − L·Lᵀ‖/‖A‖ = %.3g\n", res)
		if !(res < maxResidual) {
			return fmt.Errorf("residual %g is not below %g", res, maxResidual)
		}
	}
	if *trace != "" {
		fmt.Fprintf(stdout, "  trace: %s (open it in https://ui.perfetto.dev)\n", *trace)
	}
	return nil
}

func usesCUDA(devs []*gpu.RTDevice) bool {
	for _, d := range devs {
		if d.Device().Info().Type == gpu.TypeCUDA {
			return true
		}
	}
	return false
}

// stageTiles puts the lower triangle's tiles on the devices, tile (i, j) on device
// (i + j) mod the number of devices, before any task runs.
func stageTiles(a *rt.TiledMatrix, devs []*gpu.RTDevice) error {
	for j := range a.NT {
		for i := j; i < a.MT; i++ {
			d := devs[(i+j)%len(devs)]
			if err := d.Prefetch(context.Background(), a.DataOf(rt.Index{N: 2, I: [rt.MaxIndex]int{i, j}})); err != nil {
				return fmt.Errorf("stage tile (%d, %d) on %s: %w", i, j, d.Name(), err)
			}
		}
	}
	return nil
}

// peerCopies formats, per device, the tiles it copied from the other devices' memory and
// how the readers of its own tiles were released (docs/gpu.md, "The manager"): "gpu0 12 in (3
// direct, 9 by command)".
func peerCopies(devs []*gpu.RTDevice) string {
	parts := make([]string, len(devs))
	for i, d := range devs {
		st := d.Device().Stats()
		parts[i] = fmt.Sprintf("%s %d in (%d released direct, %d by command)", d.Device().Name(), st.PeerCopies, st.D2DDirect, st.D2DCommands)
	}
	return strings.Join(parts, ", ")
}

// executed returns the number of tasks each device has completed so far.
func executed(devs []*gpu.RTDevice) []uint64 {
	out := make([]uint64, len(devs))
	for i, d := range devs {
		out[i] = d.Device().Stats().Executed
	}
	return out
}

// shares formats how many of total tasks each device ran since before, and the CPU the
// rest: "CPU 120 (45.5%), gpu0 144 (54.5%)".
func shares(total int64, devs []*gpu.RTDevice, before []uint64) string {
	var parts []string
	cpu := total
	for i, d := range devs {
		k := int64(d.Device().Stats().Executed - before[i])
		cpu -= k
		parts = append(parts, fmt.Sprintf("%s %d (%.1f%%)", d.Device().Name(), k, 100*float64(k)/float64(total)))
	}
	return strings.Join(append([]string{fmt.Sprintf("CPU %d (%.1f%%)", cpu, 100*float64(cpu)/float64(total))}, parts...), ", ")
}
