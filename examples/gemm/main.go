// Command gemm runs examples/gemm.jdf: a tiled matrix product C = C + A·B, and
// checks it against one Dgemm call on the whole matrices.
//
//	go run ./examples/gemm -m 1024 -n 1024 -k 1024 -nb 128
package main

//go:generate go run github.com/jdf2go/jdf2go/cmd/jdf2go gen -o gemm_jdf.go ../gemm.jdf

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gemm:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("gemm", flag.ContinueOnError)
	m := fs.Int("m", 512, "rows of A and C")
	n := fs.Int("n", 512, "columns of B and C")
	k := fs.Int("k", 512, "columns of A, rows of B")
	nb := fs.Int("nb", 128, "tile size")
	workers := fs.Int("workers", 0, "workers (0: all cores)")
	fs.Func("dashboard", "serve a live dashboard of the run on `ADDR` (localhost:8080; same as $JDF2GO_DASHBOARD)", func(a string) error { return os.Setenv("JDF2GO_DASHBOARD", a) })
	if err := fs.Parse(args); err != nil {
		return err
	}
	res, err := gemm(*m, *n, *k, *nb, *workers)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "C = C + A·B, %dx%dx%d in %dx%d tiles: %v, %.1f GFLOP/s, relative error %.2g\n",
		*m, *n, *k, *nb, *nb, res.elapsed.Round(time.Microsecond), blas.GemmFlops(*m, *n, *k)/res.elapsed.Seconds()/1e9, res.relErr)
	if res.relErr > 1e-12 {
		return fmt.Errorf("relative error %g", res.relErr)
	}
	return nil
}

type result struct {
	elapsed time.Duration
	relErr  float64 // ‖C_tiled − C_ref‖_F / ‖C_ref‖_F
}

func random(r *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = r.Float64() - 0.5
	}
	return x
}

func tiled(rows, cols, nb int, dense []float64) (*rt.TiledMatrix, error) {
	t, err := rt.NewTiledMatrix(rows, cols, nb, nb, 1, 1, 0)
	if err != nil {
		return nil, err
	}
	t.FillFromDense(dense, rows)
	return t, nil
}

// gemm multiplies random matrices with the program and with one Dgemm call.
func gemm(m, n, k, nb, workers int) (result, error) {
	r := rand.New(rand.NewPCG(1, 2))
	a, b, c := random(r, m*k), random(r, k*n), random(r, m*n)
	ta, err := tiled(m, k, nb, a)
	if err != nil {
		return result{}, err
	}
	tb, err := tiled(k, n, nb, b)
	if err != nil {
		return result{}, err
	}
	tc, err := tiled(m, n, nb, c)
	if err != nil {
		return result{}, err
	}
	var opts []rt.Option
	if workers > 0 {
		opts = append(opts, rt.Workers(workers))
	}
	ctx, err := rt.New(opts...)
	if err != nil {
		return result{}, err
	}
	defer ctx.Close()
	tp, err := NewGemm(ta, tb, tc)
	if err != nil {
		return result{}, err
	}
	start := time.Now()
	if err := ctx.Add(tp.Taskpool); err != nil {
		return result{}, err
	}
	if err := tp.Wait(context.Background()); err != nil {
		return result{}, err
	}
	res := result{elapsed: time.Since(start)}
	if err := blas.Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, m, b, k, 1, c, m); err != nil {
		return res, err
	}
	got := make([]float64, m*n)
	tc.GatherToDense(got, m)
	var diff, norm float64
	for i := range got {
		diff += (got[i] - c[i]) * (got[i] - c[i])
		norm += c[i] * c[i]
	}
	res.relErr = math.Sqrt(diff / norm)
	return res, nil
}
