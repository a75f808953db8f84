// Command potrf runs the tiled Cholesky factorisation of examples/potrf.jdf
// (generated into package cholesky) on a random symmetric positive definite
// matrix, on the CPU workers and the GPUs together, checks
// ‖A − L·Lᵀ‖/‖A‖ < 1e-12, and prints the time, the GFLOP/s, the share of the
// tasks each device and the CPU ran, and the path of the Perfetto trace.
//
//	go run ./examples/potrf -n 4096 -nb 256 -workers 2 -blas openblas
//	JDF2GO_GPUS=sim:2 go run ./examples/potrf -n 2048
//	./potrf -gpus cuda -n 32768 -nb 1024 -resident
//	go run ./examples/potrf -ranks 4 -P 2 -n 2048            (4 in-process ranks, 2x2 grid)
//	go build -tags mpi ./examples/potrf && mpirun --bind-to none -np 4 ./potrf -P 2
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
// (hugepage.Pool; docs/runtime.md, "Memory", says when it helps). Before the
// clock starts, each CPU tile kernel runs once on as many threads as there are
// workers (blas.Impl.WarmUp; -warmup=false skips it), so that the timed run
// does not pay for the BLAS library's set-up on its first tasks. -resident
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
	"github.com/jdf2go/jdf2go/rt/hugepage"
	"github.com/jdf2go/jdf2go/rt/remote"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "potrf:", err)
		os.Exit(1)
	}
}

// maxResidual is the accuracy the factorisation must reach.
const maxResidual = 1e-12

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("potrf", flag.ContinueOnError)
	o := &opts{}
	fs.IntVar(&o.n, "n", 4096, "matrix size")
	fs.IntVar(&o.nb, "nb", 256, "tile size")
	workers := fs.Int("workers", 0, "workers of this process (0: all cores, shared by the ranks of this node)")
	fs.StringVar(&o.sched, "sched", "lfq", "scheduler: lfq, ap (strict priority order) or gd")
	fs.Func("dashboard", "serve a live dashboard of the run on `ADDR` (localhost:8080; same as $JDF2GO_DASHBOARD)", func(a string) error { return os.Setenv("JDF2GO_DASHBOARD", a) })
	fs.StringVar(&o.backend, "blas", "auto", "CPU tile kernels: auto, gonum or openblas")
	fs.StringVar(&o.gpus, "gpus", "", "devices of each rank: none, sim:N, cuda or auto (default: $"+gpu.EnvDevices+", else auto)")
	fs.BoolVar(&o.resident, "resident", false, "stage the tiles on the devices before the timed factorisation")
	fs.BoolVar(&o.share, "share", true, "share the tasks between the CPU workers and the devices by estimated time (false: the devices take every task)")
	fs.BoolVar(&o.huge, "hugepages", false, "without CUDA, keep the tiles in huge-page memory (hugepage.Pool) instead of the Go heap")
	trace := fs.String("trace", filepath.Join(os.TempDir(), "jdf2go-potrf-trace.json"), "Perfetto trace file (empty: none; several ranks write one file each, trace.rankN.json)")
	fs.BoolVar(&o.verify, "verify", true, "check the task graph (Verify) before running it")
	fs.BoolVar(&o.check, "check", true, "check the residual after the factorisation")
	fs.BoolVar(&o.warmup, "warmup", true, "before the clock starts, run each CPU tile kernel once on as many threads as there are workers (blas.Impl.WarmUp)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the random matrix")
	ranks := fs.Int("ranks", 0, "in-process ranks (0: one, or one per process under mpirun with a binary built with -tags mpi)")
	fs.IntVar(&o.grid.P, "P", 1, "rows of the process grid (Q = ranks / P; ranks beyond P×Q own no tile)")
	fs.IntVar(&o.grid.KP, "kp", 1, "supertile rows: consecutive tile rows per grid row")
	fs.IntVar(&o.grid.KQ, "kq", 1, "supertile columns: consecutive tile columns per grid column")
	tree := fs.String("bcast", "star", "broadcast of a tile to several ranks: star or binomial")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var dopts []remote.Option
	switch *tree {
	case "star":
	case "binomial":
		dopts = append(dopts, remote.Broadcast(remote.Binomial))
	default:
		return fmt.Errorf("-bcast %q: want star or binomial", *tree)
	}
	o.stdout = stdout
	cfg := remote.Config{Ranks: *ranks, Workers: *workers, Trace: *trace, Remote: dopts}
	if err := remote.Run(context.Background(), cfg, o.rank); err != nil {
		return err
	}
	if *trace != "" {
		fmt.Fprintf(stdout, "  trace: %s (open it in https://ui.perfetto.dev)\n", *trace)
	}
	return nil
}

// opts are the command's settings, the same on every rank.
type opts struct {
	n, nb                                int
	sched, backend, gpus                 string
	resident, share, huge, verify, check bool
	warmup                               bool
	seed                                 uint64
	grid                                 rt.Grid
	stdout                               io.Writer
}

// rank runs this rank's part of the factorisation; rank 0 prints.
func (o *opts) rank(bg context.Context, j *remote.Job) (err error) {
	stdout := o.stdout
	if j.Rank != 0 {
		stdout = io.Discard
	}
	impl, err := blas.Select(o.backend)
	if err != nil {
		return err
	}
	devs, err := gpu.Open(o.gpus)
	if err != nil {
		return err
	}
	// Devices close after the Context (they write their dirty copies back), and the tiles'
	// memory (pinned or huge pages) after the devices.
	var pool *cuda.PinnedPool
	var hugePool *hugepage.Pool
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
	case o.huge:
		// CPU tile kernels miss the TLB less on huge pages (hugepage.Pool).
		hugePool = hugepage.NewPool(0)
		alloc, memory = hugePool.Float64s, "huge pages"
	}
	g := o.grid
	if g.P < 1 || g.P > j.Size {
		return fmt.Errorf("-P %d: want 1 .. %d (the number of ranks)", g.P, j.Size)
	}
	g.Q = j.Size / g.P
	p, err := cholesky.NewProblemGrid(o.n, o.nb, o.seed, g, j.Rank, alloc)
	if err != nil {
		return err
	}
	if o.verify && j.Rank == 0 {
		if err := cholesky.Verify(p.A, impl); err != nil {
			return err
		}
	}
	// The rank's Context comes from the launcher; devices are this rank's own.
	ctx, err := j.Context(rt.Scheduler(o.sched), rt.Devices(gpu.RTDevices(devs)...), rt.ShareWork(o.share))
	if err != nil {
		return err
	}
	if hugePool != nil && !hugePool.Advised() {
		memory = "Go heap (no huge pages here)"
	}
	fmt.Fprintf(stdout, "potrf: N=%d NB=%d (%dx%d tiles, %s), %d workers, scheduler %s, BLAS %s, devices: %s\n",
		o.n, o.nb, p.A.MT, p.A.NT, memory, ctx.Workers(), ctx.SchedulerName(), impl.Config(), gpu.Describe(devs))
	if j.Size > 1 {
		fmt.Fprintf(stdout, "  %d ranks (%s), grid %dx%d, supertiles %dx%d, %d workers per rank\n",
			j.Size, j.Backend(), g.P, g.Q, max(g.KP, 1), max(g.KQ, 1), ctx.Workers())
	}
	if o.resident && len(devs) > 0 {
		if err := stageTiles(p.A, devs); err != nil {
			return err
		}
	}
	// The BLAS library sets up its buffers on its first calls; without the warm-up the timed
	// run would pay for that on its first tasks, which are on the critical path.
	if o.warmup && (len(devs) == 0 || o.share) {
		if err := impl.WarmUp(ctx.Workers(), o.nb); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	// The clock starts once the devices have their runtime kernels (gpu.Device.Ready).
	for _, d := range devs {
		if err := d.Device().Ready(bg); err != nil {
			return err
		}
	}
	before := executed(devs)
	if err := j.Node.Barrier(bg); err != nil {
		return err
	}
	start := time.Now()
	err = cholesky.FactorOn(bg, j.Add, p.A, impl, len(devs) > 0)
	elapsed := time.Since(start)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "  factorisation: %v, %.1f GFLOP/s\n", elapsed.Round(time.Microsecond), p.Flops()/elapsed.Seconds()/1e9)
	if j.Size == 1 {
		fmt.Fprintf(stdout, "  tasks: %s\n", shares(cholesky.Tasks(p.A.MT), devs, before))
	} else {
		st := j.Node.Stats()
		fmt.Fprintf(stdout, "  rank 0 sent %d activations and %d write-backs: %d tiles inside messages, %d by Get\n",
			st.Activations, st.WriteBacks, st.Eager, st.Gets)
	}
	if len(devs) > 1 {
		fmt.Fprintf(stdout, "  device to device: %s\n", peerCopies(devs))
	}
	if o.check {
		for _, d := range devs {
			if err := d.Close(); err != nil { // writes back what stayed on the device
				return err
			}
		}
		var f []float64
		if j.Rank == 0 {
			f = make([]float64, o.n*o.n)
		}
		if err := j.Node.GatherDense(bg, p.A, 0, f, o.n); err != nil {
			return err
		}
		if j.Rank == 0 {
			res, err := impl.PotrfResidual(blas.Lower, o.n, p.Dense, o.n, f, o.n)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "  ‖A − L·Lᵀ‖/‖A‖ = %.3g\n", res)
			if !(res < maxResidual) {
				return fmt.Errorf("residual %g is not below %g", res, maxResidual)
			}
		}
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
	tiles := make([][]*rt.Data, len(devs))
	for j := range a.NT {
		for i := j; i < a.MT; i++ {
			k := (i + j) % len(devs)
			tiles[k] = append(tiles[k], a.DataOf(rt.Index{N: 2, I: [rt.MaxIndex]int{i, j}}))
		}
	}
	for k, d := range devs {
		if err := d.Prefetch(context.Background(), tiles[k]...); err != nil {
			return fmt.Errorf("stage tiles on %s: %w", d.Name(), err)
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

// executed returns each device's statistics so far (tasks completed, hook calls).
func executed(devs []*gpu.RTDevice) []gpu.Stats {
	out := make([]gpu.Stats, len(devs))
	for i, d := range devs {
		out[i] = d.Device().Stats()
	}
	return out
}

// shares formats how many of total tasks each device ran since before, with the mean
// number of tasks per hook call (batched GEMMs raise it above 1), and the CPU the rest:
// "CPU 120 (45.5%), gpu0 144 (54.5%, 1.8 per call)".
func shares(total int64, devs []*gpu.RTDevice, before []gpu.Stats) string {
	var parts []string
	cpu := total
	for i, d := range devs {
		st := d.Device().Stats()
		k := int64(st.Executed - before[i].Executed)
		cpu -= k
		perCall := 0.0
		if calls := st.Batches - before[i].Batches; calls > 0 {
			perCall = float64(st.Batched-before[i].Batched) / float64(calls)
		}
		parts = append(parts, fmt.Sprintf("%s %d (%.1f%%, %.1f per call)", d.Device().Name(), k, 100*float64(k)/float64(total), perCall))
	}
	return strings.Join(append([]string{fmt.Sprintf("CPU %d (%.1f%%)", cpu, 100*float64(cpu)/float64(total))}, parts...), ", ")
}
