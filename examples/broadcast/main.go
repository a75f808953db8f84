// Command broadcast runs examples/broadcast.jdf: one block is broadcast to N
// readers, each adds it into its own block, and a CTL gather sums them.
//
//	go run ./examples/broadcast -n 16
package main

//go:generate go run github.com/jdf2go/jdf2go/cmd/jdf2go gen -o broadcast_jdf.go ../broadcast.jdf

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/jdf2go/jdf2go/rt"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "broadcast:", err)
		os.Exit(1)
	}
}

const blockSize = 4

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("broadcast", flag.ContinueOnError)
	n := fs.Int("n", 8, "number of readers")
	workers := fs.Int("workers", 0, "workers (0: all cores)")
	fs.Func("dashboard", "serve a live dashboard of the run on `ADDR` (localhost:8080; same as $JDF2GO_DASHBOARD)", func(a string) error { return os.Setenv("JDF2GO_DASHBOARD", a) })
	if err := fs.Parse(args); err != nil {
		return err
	}
	sum, err := broadcast(*n, *workers)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d readers: sum of their blocks %v\n", *n, sum)
	return nil
}

// broadcast fills block 0 with 1, 2, 3, ... and block i with i*100, runs the
// program and returns Sum's result.
func broadcast(n, workers int) ([]float64, error) {
	var opts []rt.Option
	if workers > 0 {
		opts = append(opts, rt.Workers(workers))
	}
	ctx, err := rt.New(opts...)
	if err != nil {
		return nil, err
	}
	defer ctx.Close()
	data, err := rt.NewVector((n+1)*blockSize, blockSize, 1, 0)
	if err != nil {
		return nil, err
	}
	for i := 0; i <= n; i++ {
		for j := range data.Block(i) {
			if i == 0 {
				data.Block(i)[j] = float64(j + 1)
			} else {
				data.Block(i)[j] = float64(i * 100)
			}
		}
	}
	sum := make([]float64, blockSize)
	tp, err := NewBroadcast(n, data, sum)
	if err != nil {
		return nil, err
	}
	if err := tp.Verify(); err != nil {
		return nil, err
	}
	if err := ctx.Add(tp.Taskpool); err != nil {
		return nil, err
	}
	return sum, tp.Wait(context.Background())
}
