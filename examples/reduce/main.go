// Command reduce runs examples/reduce.jdf: a binary tree adds up the N blocks
// of a vector into block 0.
//
//	go run ./examples/reduce -n 1000
package main

//go:generate go run github.com/jdf2go/jdf2go/cmd/jdf2go gen -o reduce_jdf.go ../reduce.jdf

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/jdf2go/jdf2go/rt"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "reduce:", err)
		os.Exit(1)
	}
}

const blockSize = 4

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("reduce", flag.ContinueOnError)
	n := fs.Int("n", 100, "number of blocks")
	workers := fs.Int("workers", 0, "workers (0: all cores)")
	fs.Func("dashboard", "serve a live dashboard of the run on `ADDR` (localhost:8080; same as $JDF2GO_DASHBOARD)", func(a string) error { return os.Setenv("JDF2GO_DASHBOARD", a) })
	if err := fs.Parse(args); err != nil {
		return err
	}
	sum, tasks, err := reduce(*n, *workers)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d blocks reduced by %d tasks: %v\n", *n, tasks, sum)
	return nil
}

// reduce fills block i with i+1 (every element), runs the tree, and returns
// block 0 and the number of tasks.
func reduce(n, workers int) ([]float64, int64, error) {
	if n < 1 {
		return nil, 0, errors.New("need at least one block")
	}
	var opts []rt.Option
	if workers > 0 {
		opts = append(opts, rt.Workers(workers))
	}
	ctx, err := rt.New(opts...)
	if err != nil {
		return nil, 0, err
	}
	defer ctx.Close()
	data, err := rt.NewVector(n*blockSize, blockSize, 1, 0)
	if err != nil {
		return nil, 0, err
	}
	for i := 0; i < n; i++ {
		for j := range data.Block(i) {
			data.Block(i)[j] = float64(i + 1)
		}
	}
	tp, err := NewReduce(n, data)
	if err != nil {
		return nil, 0, err
	}
	if err := tp.Verify(); err != nil {
		return nil, 0, err
	}
	if err := ctx.Add(tp.Taskpool); err != nil {
		return nil, 0, err
	}
	if err := tp.Wait(context.Background()); err != nil {
		return nil, 0, err
	}
	return data.Block(0), tp.Total(), nil
}
