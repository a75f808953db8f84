// Command dpotrf runs the tiled Cholesky factorisation of examples/potrf.jdf written as a
// dynamic task graph (rt/dynamic): instead of the .jdf's rules, the program inserts the
// POTRF, TRSM, SYRK and GEMM tasks of the right-looking algorithm in their sequential order,
// each with the tiles it reads and writes, and the graph infers the dependencies. The tile
// kernels, the priorities and the problem are those of examples/potrf (package cholesky,
// FactorDynamic), so the two factors are equal bit for bit.
//
//	go run ./examples/dpotrf -n 4096 -nb 256 -workers 2
//	go run ./examples/dpotrf -n 8192 -nb 320 -blas openblas -runs 3
//	./dpotrf -gpus cuda -n 16384 -nb 1024 -runs 3
//	go run ./examples/dpotrf -ranks 2 -n 2048 -nb 256            (2 in-process ranks, 1x2 grid)
//	go build -tags mpi ./examples/dpotrf && mpirun --bind-to none -np 4 ./dpotrf -P 2
//
// It checks ‖A − L·Lᵀ‖/‖A‖ < 1e-12 (-check) and exits with an error when the residual is too
// large. -blas picks the CPU tile kernels: auto (OpenBLAS when libopenblas.so.0 loads, gonum
// otherwise), gonum or openblas; OpenBLAS runs single-threaded inside tasks. -runs factors the
// matrix that many times (from the same input) and prints the median, minimum and maximum.
// -gpus picks the devices, as for examples/potrf (none, sim:N, cuda or auto; by default
// $JDF2GO_GPUS, else auto). With devices, every task has a GPU body besides its CPU body (the
// calls of potrf.jdf's GPU bodies, GEMMs batched) and rt shares the tasks between the CPU
// workers and the devices by estimated finish time (-share=false: the devices take every
// task); the output says how many tasks each device ran. On CUDA the tiles live in pinned
// host memory.
//
// -ranks N runs the graph across N in-process ranks (remote.Run; a binary built with -tags mpi
// and started by mpirun runs one rank per process instead). The tiles are dealt 2-D
// block-cyclically over a P×Q grid (-P rows, Q = ranks / P), every rank inserts the whole
// graph into a dynamic.Distributed graph, and each task runs on the owner of the tile it
// writes; Wait returns every tile to its owner. The time is that of the whole job (barriers
// before and after), and the check gathers the factor on rank 0 (remote.Node.GatherDense), as
// examples/potrf does. Graphs across ranks run CPU bodies only, so -gpus with several ranks
// is an error (other than none), and $JDF2GO_GPUS is ignored there.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/jdf2go/jdf2go/examples/potrf/cholesky"
	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/dynamic"
	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/cuda"
	_ "github.com/jdf2go/jdf2go/rt/gpu/sim"
	"github.com/jdf2go/jdf2go/rt/remote"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "dpotrf:", err)
		os.Exit(1)
	}
}

// maxResidual is the accuracy the factorisation must reach, as for examples/potrf.
const maxResidual = 1e-12

// opts are the command's settings, the same on every rank.
type opts struct {
	n, nb, runs, window int
	sched, backend      string
	gpus                string
	check, share        bool
	seed                uint64
	p                   int // rows of the process grid
	stdout              io.Writer
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("dpotrf", flag.ContinueOnError)
	o := &opts{stdout: stdout}
	fs.IntVar(&o.n, "n", 4096, "matrix size")
	fs.IntVar(&o.nb, "nb", 256, "tile size")
	workers := fs.Int("workers", 0, "workers (0: all cores)")
	fs.StringVar(&o.sched, "sched", "lfq", "scheduler: lfq, ap (strict priority order) or gd")
	fs.StringVar(&o.backend, "blas", "auto", "CPU tile kernels: auto, gonum or openblas")
	fs.StringVar(&o.gpus, "gpus", "", "devices: none, sim:N, cuda or auto (default: $"+gpu.EnvDevices+", else auto; with several ranks: none only)")
	fs.BoolVar(&o.share, "share", true, "share the tasks between the CPU workers and the devices by estimated time (false: the devices take every task)")
	fs.IntVar(&o.window, "window", dynamic.DefaultWindow, "tasks inserted and not yet done past which insertion waits")
	fs.IntVar(&o.runs, "runs", 1, "factorisations of the same matrix, timed one by one")
	fs.BoolVar(&o.check, "check", true, "check the residual after the last factorisation")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the random matrix")
	ranks := fs.Int("ranks", 0, "in-process ranks (0: one, or one per process under mpirun with a binary built with -tags mpi)")
	fs.IntVar(&o.p, "P", 1, "rows of the process grid (Q = ranks / P; ranks beyond P×Q own no tile)")
	trace := fs.String("trace", "", "Perfetto trace file (empty: none)")
	fs.Func("dashboard", "serve a live dashboard of the run on `ADDR` (localhost:8080; same as $JDF2GO_DASHBOARD)",
		func(a string) error { return os.Setenv("JDF2GO_DASHBOARD", a) })
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.runs < 1 {
		return fmt.Errorf("-runs %d: want at least 1", o.runs)
	}
	if *ranks < 0 {
		return fmt.Errorf("-ranks %d: want at least 0", *ranks)
	}
	if *ranks > 1 {
		if err := o.cpuOnly(); err != nil {
			return err
		}
	}
	// The job's ranks come from remote.Run, as for examples/potrf: in process, or under mpirun.
	cfg := remote.Config{Ranks: *ranks, Workers: *workers, Trace: *trace}
	if err := remote.Run(context.Background(), cfg, o.rank); err != nil {
		return err
	}
	if *trace != "" {
		fmt.Fprintf(stdout, "  trace: %s (open it in https://ui.perfetto.dev)\n", *trace)
	}
	return nil
}

// rank runs this rank's part of the factorisations; rank 0 prints.
func (o *opts) rank(bg context.Context, j *remote.Job) (err error) {
	stdout := o.stdout
	if j.Rank != 0 {
		stdout = io.Discard
	}
	gpus := o.gpus
	if j.Size > 1 { // under mpirun the flags did not know the size
		if err := o.cpuOnly(); err != nil {
			return err
		}
		gpus = "none"
	}
	grid := rt.Grid{P: o.p}
	if grid.P < 1 || grid.P > j.Size {
		return fmt.Errorf("-P %d: want 1 .. %d (the number of ranks)", grid.P, j.Size)
	}
	grid.Q = j.Size / grid.P
	impl, err := blas.Select(o.backend)
	if err != nil {
		return err
	}
	devs, err := gpu.Open(gpus)
	if err != nil {
		return err
	}
	// Devices close after the Context (the launcher closes it when rank returns), and the
	// pinned tiles after the devices.
	var pool *cuda.PinnedPool
	defer func() {
		for _, d := range devs {
			err = errors.Join(err, d.Close())
		}
		if pool != nil {
			err = errors.Join(err, pool.Close())
		}
	}()
	var alloc rt.Alloc
	for _, d := range devs {
		if d.Device().Info().Type == gpu.TypeCUDA && pool == nil {
			if pool, err = cuda.NewPinnedPool(0); err != nil {
				return err
			}
			alloc = pool.Float64s
		}
	}
	p, err := cholesky.NewProblemGrid(o.n, o.nb, o.seed, grid, j.Rank, alloc)
	if err != nil {
		return err
	}
	c, err := j.Context(rt.Scheduler(o.sched), rt.Devices(gpu.RTDevices(devs)...), rt.ShareWork(o.share))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "dpotrf: N=%d NB=%d (%dx%d tiles), %d workers, scheduler %s, BLAS %s, window %d, devices: %s\n",
		o.n, o.nb, p.A.MT, p.A.NT, c.Workers(), c.SchedulerName(), impl.Config(), o.window, gpu.Describe(devs))
	if j.Size > 1 {
		fmt.Fprintf(stdout, "  %d ranks (%s), grid %dx%d, %d workers per rank\n", j.Size, j.Backend(), grid.P, grid.Q, c.Workers())
	}
	// The clock starts once the devices have their runtime kernels (gpu.Device.Ready).
	for _, d := range devs {
		if err := d.Device().Ready(bg); err != nil {
			return err
		}
	}
	before := deviceStats(devs)
	times := make([]time.Duration, 0, o.runs)
	var tasks int64
	gopts := []dynamic.Option{dynamic.Name("dpotrf"), dynamic.Window(o.window)}
	if j.Size > 1 {
		// Every rank inserts the whole graph; each task runs on the owner of the tile it writes.
		gopts = append(gopts, dynamic.Distributed(j.Node))
	}
	for r := range o.runs {
		if r > 0 {
			p.Reset() // this rank's tiles
		}
		// Across ranks the clock covers the whole job: every rank starts together, and the
		// time ends once every rank's Wait has returned its tiles to their owners.
		if err := j.Node.Barrier(bg); err != nil {
			return err
		}
		start := time.Now()
		// One graph per factorisation.
		g, err := dynamic.New(c, gopts...)
		if err == nil {
			err = cholesky.RunFactor(bg, g, p.A, impl, len(devs) > 0)
		}
		if err == nil && j.Size > 1 {
			err = j.Node.Barrier(bg)
		}
		el := time.Since(start)
		if err != nil {
			return err
		}
		times = append(times, el)
		tasks = g.Taskpool().Total()
	}
	med := median(times)
	fmt.Fprintf(stdout, "  factorisation: %v, %.1f GFLOP/s", med.Round(time.Microsecond), p.Flops()/med.Seconds()/1e9)
	if o.runs > 1 {
		fmt.Fprintf(stdout, " (median of %d; min %v, max %v)", o.runs,
			slices.Min(times).Round(time.Microsecond), slices.Max(times).Round(time.Microsecond))
	}
	if j.Size > 1 {
		fmt.Fprintf(stdout, "\n  tasks: %d per factorisation, over %d ranks\n", cholesky.Tasks(p.A.MT), j.Size)
		st := j.Node.Stats()
		fmt.Fprintf(stdout, "  rank 0 sent %d tiles inside messages, %d by Get\n", st.Eager, st.Gets)
	} else {
		fmt.Fprintf(stdout, "\n  tasks: %d per factorisation\n", tasks)
	}
	if len(devs) > 0 {
		fmt.Fprintf(stdout, "  device tasks over %d runs: %s\n", o.runs, devShares(devs, before))
	}
	if o.check {
		if j.Size > 1 {
			return o.checkRanks(bg, j, p, impl, stdout)
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
	return nil
}

// cpuOnly refuses -gpus other than none: graphs across ranks run CPU bodies only
// (dynamic.ErrGPUAcrossRanks).
func (o *opts) cpuOnly() error {
	if o.gpus != "" && o.gpus != "none" {
		return fmt.Errorf("-gpus %s with several ranks: graphs across ranks run CPU bodies only (use -gpus none or one rank)", o.gpus)
	}
	return nil
}

// checkRanks gathers the factor, dealt over the ranks, on rank 0 (as examples/potrf does) and
// checks its residual there; every rank takes part.
func (o *opts) checkRanks(ctx context.Context, j *remote.Job, p *cholesky.Problem, impl *blas.Impl, stdout io.Writer) error {
	var f []float64
	if j.Rank == 0 {
		f = make([]float64, o.n*o.n)
	}
	if err := j.Node.GatherDense(ctx, p.A, 0, f, o.n); err != nil {
		return err
	}
	if j.Rank != 0 {
		return nil
	}
	res, err := impl.PotrfResidual(blas.Lower, o.n, p.Dense, o.n, f, o.n)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "  ‖A − L·Lᵀ‖/‖A‖ = %.3g\n", res)
	if !(res < maxResidual) {
		return fmt.Errorf("residual %g is not below %g", res, maxResidual)
	}
	return nil
}

// median returns the median of ds (the upper one of an even count), sorting ds.
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// deviceStats returns each device's statistics so far.
func deviceStats(devs []*gpu.RTDevice) []gpu.Stats {
	out := make([]gpu.Stats, len(devs))
	for i, d := range devs {
		out[i] = d.Device().Stats()
	}
	return out
}

// devShares formats the tasks each device completed since before and the mean number of
// tasks per body call (batched GEMMs raise it above 1): "sim0 120 tasks (1.8 per call)".
func devShares(devs []*gpu.RTDevice, before []gpu.Stats) string {
	parts := make([]string, len(devs))
	for i, d := range devs {
		st := d.Device().Stats()
		perCall := 0.0
		if calls := st.Batches - before[i].Batches; calls > 0 {
			perCall = float64(st.Batched-before[i].Batched) / float64(calls)
		}
		parts[i] = fmt.Sprintf("%s %d tasks (%.1f per call)", d.Device().Name(), st.Executed-before[i].Executed, perCall)
	}
	return strings.Join(parts, ", ")
}
