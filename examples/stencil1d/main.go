// Command stencil1d runs examples/stencil1d.jdf: T iterations of a 3-point
// Jacobi smoothing over a vector cut into blocks, with halos exchanged between
// neighbouring blocks at every iteration.
//
//	go run ./examples/stencil1d -n 1024 -bs 64 -t 50
//	go run ./examples/stencil1d -ranks 3    (blocks dealt cyclically over 3 in-process ranks)
package main

//go:generate go run github.com/jdf2go/jdf2go/cmd/jdf2go gen -o stencil1d_jdf.go ../stencil1d.jdf

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/remote"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "stencil1d:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("stencil1d", flag.ContinueOnError)
	n := fs.Int("n", 256, "vector length (a multiple of -bs)")
	bs := fs.Int("bs", 32, "block size")
	steps := fs.Int("t", 20, "iterations")
	workers := fs.Int("workers", 0, "workers of this process (0: all cores, shared by the ranks of this node)")
	fs.Func("dashboard", "serve a live dashboard of the run on `ADDR` (localhost:8080; same as $JDF2GO_DASHBOARD)", func(a string) error { return os.Setenv("JDF2GO_DASHBOARD", a) })
	ranks := fs.Int("ranks", 0, "in-process ranks (0: one, or one per process under mpirun with -tags mpi)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *bs < 1 || *n%*bs != 0 || *n == 0 {
		return fmt.Errorf("-n %d must be a positive multiple of -bs %d", *n, *bs)
	}
	x := initial(*n)
	got, err := stencil(x, *bs, *steps, remote.Config{Ranks: *ranks, Workers: *workers})
	if err != nil || got == nil {
		return err // got is nil in an MPI process other than rank 0's, which checks and prints
	}
	diff := maxDiff(got, reference(x, *steps))
	fmt.Fprintf(stdout, "%d iterations over %d blocks of %d: max difference to the sequential result %.3g\n",
		*steps, *n / *bs, *bs, diff)
	if diff > 1e-12 {
		return fmt.Errorf("result differs from the sequential one by %g", diff)
	}
	return nil
}

// initial is a step function: the smoothing has something to do.
func initial(n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		if i%17 < 8 {
			x[i] = float64(i % 5)
		}
	}
	return x
}

// stencil runs the program on a copy of x cut into blocks of bs, on the ranks of cfg (the
// blocks dealt cyclically), and returns the result gathered from every rank (nil in an MPI
// process other than rank 0's).
func stencil(x []float64, bs, steps int, cfg remote.Config) ([]float64, error) {
	out := make([]float64, len(x))
	root := false
	err := remote.Run(context.Background(), cfg, func(ctx context.Context, j *remote.Job) error {
		data, err := rt.NewVector(len(x), bs, j.Size, j.Rank)
		if err != nil {
			return err
		}
		for k := 0; k < data.NT; k++ {
			if b := data.Block(k); b != nil {
				copy(b, x[k*bs:])
			}
		}
		tp, err := NewStencil1D(steps, data)
		if err != nil {
			return err
		}
		if err := tp.Verify(); err != nil {
			return err
		}
		if err := j.Add(tp.Taskpool); err != nil {
			return err
		}
		if err := tp.Wait(ctx); err != nil {
			return err
		}
		var dst []float64
		if j.Rank == 0 {
			dst, root = out, true
		}
		return j.Node.GatherVector(ctx, data, 0, dst)
	})
	if !root {
		out = nil
	}
	return out, err
}

// reference is the sequential smoothing: each element becomes the mean of itself and its
// neighbours, the edge values standing in for the missing neighbours at the ends.
func reference(x []float64, steps int) []float64 {
	cur := append([]float64(nil), x...)
	next := make([]float64, len(x))
	last := len(x) - 1
	for t := 0; t < steps; t++ {
		for j := range cur {
			next[j] = (cur[max(j-1, 0)] + cur[j] + cur[min(j+1, last)]) / 3
		}
		cur, next = next, cur
	}
	return cur
}

func maxDiff(a, b []float64) float64 {
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(a[i]-b[i]))
	}
	return d
}
