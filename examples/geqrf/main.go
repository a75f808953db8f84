// Command geqrf runs the tiled QR factorisation of examples/geqrf.jdf (generated into
// package qr) on a random M×N matrix, checks ‖A − QR‖/‖A‖ and ‖I − QᵀQ‖ (Q formed from the
// reflectors the factorisation leaves in A and T), and prints the time and the GFLOP/s.
//
//	go run ./examples/geqrf -m 2000 -n 1500 -nb 200 -ib 40 -workers 2 -blas openblas
//	go run ./examples/geqrf -ranks 4 -P 2 -m 1000 -n 1000    (4 in-process ranks, 2x2 grid)
//
// It exits with an error when either measure is above qr.Tolerance. -blas picks the CPU tile
// kernels: auto (OpenBLAS when libopenblas.so.0 loads, gonum otherwise), gonum or openblas.
// With -ranks the tiles of A and of the T factors are dealt over a P×Q grid, 2-D
// block-cyclic, and each task runs on the rank that owns the tile it writes; the factors are
// gathered on rank 0 for the check. The generated code is in qr/geqrf_jdf.go (go generate).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/jdf2go/jdf2go/examples/geqrf/qr"
	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/remote"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "geqrf:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("geqrf", flag.ContinueOnError)
	o := &opts{}
	fs.IntVar(&o.m, "m", 2048, "rows of the matrix")
	fs.IntVar(&o.n, "n", 2048, "columns of the matrix")
	fs.IntVar(&o.nb, "nb", 256, "tile size")
	fs.IntVar(&o.ib, "ib", 32, "inner block size of the tile kernels (1 .. nb)")
	workers := fs.Int("workers", 0, "workers of this process (0: all cores, shared by the ranks of this node)")
	fs.StringVar(&o.sched, "sched", "lfq", "scheduler: lfq, ap (strict priority order) or gd")
	fs.StringVar(&o.backend, "blas", "auto", "CPU tile kernels: auto, gonum or openblas")
	trace := fs.String("trace", filepath.Join(os.TempDir(), "jdf2go-geqrf-trace.json"), "Perfetto trace file (empty: none; several ranks write one file each, trace.rankN.json)")
	fs.BoolVar(&o.verify, "verify", true, "check the task graph (Verify) before running it")
	fs.BoolVar(&o.check, "check", true, "check ‖A − QR‖/‖A‖ and ‖I − QᵀQ‖ after the factorisation")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the random matrix")
	ranks := fs.Int("ranks", 0, "in-process ranks (0: one, or one per process under mpirun with a binary built with -tags mpi)")
	fs.IntVar(&o.grid.P, "P", 1, "rows of the process grid (Q = ranks / P; ranks beyond P×Q own no tile)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o.stdout = stdout
	cfg := remote.Config{Ranks: *ranks, Workers: *workers, Trace: *trace}
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
	m, n, nb, ib   int
	sched, backend string
	verify, check  bool
	seed           uint64
	grid           rt.Grid
	stdout         io.Writer
}

// rank runs this rank's part of the factorisation; rank 0 prints and checks.
func (o *opts) rank(bg context.Context, j *remote.Job) error {
	stdout := o.stdout
	if j.Rank != 0 {
		stdout = io.Discard
	}
	impl, err := blas.Select(o.backend)
	if err != nil {
		return err
	}
	g := o.grid
	if g.P < 1 || g.P > j.Size {
		return fmt.Errorf("-P %d: want 1 .. %d (the number of ranks)", g.P, j.Size)
	}
	g.Q = j.Size / g.P
	p, err := qr.NewProblemGrid(o.m, o.n, o.nb, o.ib, o.seed, g, j.Rank)
	if err != nil {
		return err
	}
	if o.verify && j.Rank == 0 {
		if err := qr.Verify(p, impl); err != nil {
			return err
		}
	}
	ctx, err := j.Context(rt.Scheduler(o.sched))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "geqrf: M=%d N=%d NB=%d IB=%d (%dx%d tiles, %d tasks), %d workers, scheduler %s, BLAS %s\n",
		o.m, o.n, o.nb, o.ib, p.A.MT, p.A.NT, qr.Tasks(p.A.MT, p.A.NT), ctx.Workers(), ctx.SchedulerName(), impl.Config())
	if j.Size > 1 {
		fmt.Fprintf(stdout, "  %d ranks (%s), grid %dx%d, %d workers per rank\n", j.Size, j.Backend(), g.P, g.Q, ctx.Workers())
	}
	if err := j.Node.Barrier(bg); err != nil {
		return err
	}
	start := time.Now()
	err = qr.FactorOn(bg, j.Add, p, impl)
	elapsed := time.Since(start)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "  factorisation: %v, %.1f GFLOP/s\n", elapsed.Round(time.Microsecond), p.Flops()/elapsed.Seconds()/1e9)
	if !o.check {
		return nil
	}
	var f, t []float64
	ldt := p.A.MT * p.IB
	if j.Rank == 0 {
		f, t = make([]float64, o.m*o.n), make([]float64, ldt*o.n)
	}
	if err := j.Node.GatherDense(bg, p.A, 0, f, o.m); err != nil {
		return err
	}
	if err := j.Node.GatherDense(bg, p.T, 0, t, ldt); err != nil {
		return err
	}
	if j.Rank != 0 {
		return nil
	}
	resid, orth, err := p.Check(impl, f, t)
	if err != nil {
		return err
	}
	tol := qr.Tolerance(o.m, o.n)
	fmt.Fprintf(stdout, "  ‖A − QR‖/‖A‖ = %.3g, ‖I − QᵀQ‖ = %.3g (tolerance %.3g)\n", resid, orth, tol)
	if !(resid < tol) || !(orth < tol) {
		return fmt.Errorf("‖A − QR‖/‖A‖ = %g, ‖I − QᵀQ‖ = %g: not both below %g", resid, orth, tol)
	}
	return nil
}
