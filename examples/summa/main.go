// Command summa runs examples/summa.jdf: C = C + A·B on tiled matrices dealt
// 2-D block-cyclically over a P×Q grid of ranks, each tile of A and B
// broadcast to the ranks that need it, and checks the result against one
// Dgemm call.
//
//	go run ./examples/summa -m 512 -n 512 -k 512 -nb 64
//	go run ./examples/summa -ranks 4 -P 2 -bcast binomial
//	go build -tags mpi ./examples/summa && mpirun --bind-to none -np 4 ./summa -P 2
package main

//go:generate go run github.com/jdf2go/jdf2go/cmd/jdf2go gen -o summa_jdf.go ../summa.jdf

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
	"github.com/jdf2go/jdf2go/rt/remote"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "summa:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("summa", flag.ContinueOnError)
	var s shape
	fs.IntVar(&s.m, "m", 512, "rows of A and C")
	fs.IntVar(&s.n, "n", 512, "columns of B and C")
	fs.IntVar(&s.k, "k", 512, "columns of A, rows of B")
	fs.IntVar(&s.nb, "nb", 128, "tile size")
	workers := fs.Int("workers", 0, "workers of this process (0: all cores, shared by the ranks of this node)")
	ranks := fs.Int("ranks", 0, "in-process ranks (0: one, or one per process under mpirun with -tags mpi)")
	fs.IntVar(&s.p, "P", 1, "rows of the process grid (Q = ranks / P)")
	tree := fs.String("bcast", "star", "broadcast of a tile to several ranks: star or binomial")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg := remote.Config{Ranks: *ranks, Workers: *workers}
	switch *tree {
	case "star":
	case "binomial":
		cfg.Remote = append(cfg.Remote, remote.Broadcast(remote.Binomial))
	default:
		return fmt.Errorf("-bcast %q: want star or binomial", *tree)
	}
	res, err := s.gemm(cfg)
	if err != nil {
		return err
	}
	if res.ranks == 0 {
		return nil // an MPI rank other than 0: rank 0 checks and prints
	}
	fmt.Fprintf(stdout, "C = C + A·B, %dx%dx%d in %dx%d tiles on %d ranks (grid %dx%d): %v, %.1f GFLOP/s, relative error %.2g\n",
		s.m, s.n, s.k, s.nb, s.nb, res.ranks, s.p, max(res.ranks/s.p, 1), res.elapsed.Round(time.Microsecond),
		blas.GemmFlops(s.m, s.n, s.k)/res.elapsed.Seconds()/1e9, res.relErr)
	if res.relErr > 1e-12 {
		return fmt.Errorf("relative error %g", res.relErr)
	}
	return nil
}

type shape struct{ m, n, k, nb, p int }

type result struct {
	ranks   int // 0 in an MPI process other than rank 0's
	elapsed time.Duration
	relErr  float64   // ‖C_tiled − C_ref‖_F / ‖C_ref‖_F
	c       []float64 // the product, dense
}

func random(r *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = r.Float64() - 0.5
	}
	return x
}

// gemm multiplies random matrices with the program on cfg's ranks, gathers C on rank 0
// and compares it with one Dgemm call.
func (s shape) gemm(cfg remote.Config) (result, error) {
	r := rand.New(rand.NewPCG(1, 2))
	a, b, c := random(r, s.m*s.k), random(r, s.k*s.n), random(r, s.m*s.n)
	res := result{c: make([]float64, s.m*s.n)}
	err := remote.Run(context.Background(), cfg, func(ctx context.Context, j *remote.Job) error {
		if s.p < 1 || s.p > j.Size {
			return fmt.Errorf("-P %d: want 1 .. %d (the number of ranks)", s.p, j.Size)
		}
		g := rt.Grid{P: s.p, Q: j.Size / s.p}
		tiled := func(rows, cols int, dense []float64) (*rt.TiledMatrix, error) {
			t, err := rt.NewTiledMatrixGrid(rows, cols, s.nb, s.nb, g, j.Rank, nil)
			if err == nil {
				t.FillFromDense(dense, rows)
			}
			return t, err
		}
		ta, err := tiled(s.m, s.k, a)
		if err != nil {
			return err
		}
		tb, err := tiled(s.k, s.n, b)
		if err != nil {
			return err
		}
		tc, err := tiled(s.m, s.n, c)
		if err != nil {
			return err
		}
		tp, err := NewSumma(ta, tb, tc)
		if err != nil {
			return err
		}
		if err := j.Node.Barrier(ctx); err != nil {
			return err
		}
		start := time.Now()
		if err := j.Add(tp.Taskpool); err != nil {
			return err
		}
		if err := tp.Wait(ctx); err != nil {
			return err
		}
		var dst []float64
		if j.Rank == 0 {
			res.elapsed, res.ranks = time.Since(start), j.Size
			dst = res.c
		}
		return j.Node.GatherDense(ctx, tc, 0, dst, s.m)
	})
	if err != nil || res.ranks == 0 {
		return res, err
	}
	if err := blas.Dgemm(blas.NoTrans, blas.NoTrans, s.m, s.n, s.k, 1, a, s.m, b, s.k, 1, c, s.m); err != nil {
		return res, err
	}
	var diff, norm float64
	for i := range c {
		diff += (res.c[i] - c[i]) * (res.c[i] - c[i])
		norm += c[i] * c[i]
	}
	res.relErr = math.Sqrt(diff / norm)
	return res, nil
}
