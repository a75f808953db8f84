// Command potrf runs the tiled Cholesky factorisation of examples/potrf.jdf
// (generated into package cholesky) on a random symmetric positive definite
// matrix, checks ‖A − L·Lᵀ‖/‖A‖ < 1e-12, and prints the time, the GFLOP/s and
// the path of the Perfetto trace.
//
//	go run ./examples/potrf -n 4096 -nb 256 -workers 2 -blas openblas
//
// It exits with an error when the residual is too large.
// -blas picks the tile kernels: auto (OpenBLAS when libopenblas.so.0 loads,
// gonum otherwise), gonum or openblas. OpenBLAS runs single-threaded inside
// tasks. The generated code is in cholesky/potrf_jdf.go (go generate).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/jdf2go/jdf2go/examples/potrf/cholesky"
	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
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
	n := fs.Int("n", 4096, "matrix size")
	nb := fs.Int("nb", 256, "tile size")
	workers := fs.Int("workers", 0, "workers (0: all cores)")
	sched := fs.String("sched", "lfq", "scheduler: lfq, ap (strict priority order) or gd")
	backend := fs.String("blas", "auto", "tile kernels: auto, gonum or openblas")
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
	p, err := cholesky.NewProblem(*n, *nb, *seed)
	if err != nil {
		return err
	}
	if *verify {
		if err := cholesky.Verify(p.A, impl); err != nil {
			return err
		}
	}
	opts := []rt.Option{rt.Scheduler(*sched)}
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
	fmt.Fprintf(stdout, "potrf: N=%d NB=%d (%dx%d tiles), %d workers, scheduler %s, BLAS %s\n",
		*n, *nb, p.A.MT, p.A.NT, ctx.Workers(), ctx.SchedulerName(), impl.Config())
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
	if *check {
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
