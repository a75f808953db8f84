// Command stencil1d runs examples/stencil1d.jdf: T iterations of a 3-point
// Jacobi smoothing over a vector cut into blocks, with halos exchanged between
// neighbouring blocks at every iteration.
//
//	go run ./examples/stencil1d -n 1024 -bs 64 -t 50
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
	workers := fs.Int("workers", 0, "workers (0: all cores)")
	fs.Func("dashboard", "serve a live dashboard of the run on `ADDR` (localhost:8080; same as $JDF2GO_DASHBOARD)", func(a string) error { return os.Setenv("JDF2GO_DASHBOARD", a) })
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *bs < 1 || *n%*bs != 0 || *n == 0 {
		return fmt.Errorf("-n %d must be a positive multiple of -bs %d", *n, *bs)
	}
	x := initial(*n)
	got, err := stencil(x, *bs, *steps, *workers)
	if err != nil {
		return err
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

// stencil runs the program on a copy of x cut into blocks of bs and returns the result.
func stencil(x []float64, bs, steps, workers int) ([]float64, error) {
	var opts []rt.Option
	if workers > 0 {
		opts = append(opts, rt.Workers(workers))
	}
	ctx, err := rt.New(opts...)
	if err != nil {
		return nil, err
	}
	defer ctx.Close()
	data, err := rt.NewVector(len(x), bs, 1, 0)
	if err != nil {
		return nil, err
	}
	for k := 0; k < data.NT; k++ {
		copy(data.Block(k), x[k*bs:])
	}
	tp, err := NewStencil1D(steps, data)
	if err != nil {
		return nil, err
	}
	if err := tp.Verify(); err != nil {
		return nil, err
	}
	if err := ctx.Add(tp.Taskpool); err != nil {
		return nil, err
	}
	if err := tp.Wait(context.Background()); err != nil {
		return nil, err
	}
	out := make([]float64, 0, len(x))
	for k := 0; k < data.NT; k++ {
		out = append(out, data.Block(k)...)
	}
	return out, nil
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
