// Command chain runs examples/chain.jdf: a block travels through NB+1 tasks,
// each adding one to every element.
//
//	go run ./examples/chain -nb 1000
package main

//go:generate go run github.com/jdf2go/jdf2go/cmd/jdf2go gen -o chain_jdf.go ../chain.jdf

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
		fmt.Fprintln(os.Stderr, "chain:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("chain", flag.ContinueOnError)
	nb := fs.Int("nb", 100, "index of the last task")
	workers := fs.Int("workers", 0, "workers (0: all cores)")
	fs.Func("dashboard", "serve a live dashboard of the run on `ADDR` (localhost:8080; same as $JDF2GO_DASHBOARD)", func(a string) error { return os.Setenv("JDF2GO_DASHBOARD", a) })
	if err := fs.Parse(args); err != nil {
		return err
	}
	result, err := chain(*nb, *workers)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "chain of %d tasks: block %d holds %v\n", *nb+1, *nb, result)
	return nil
}

// chain runs the program and returns block NB.
func chain(nb, workers int) ([]float64, error) {
	var opts []rt.Option
	if workers > 0 {
		opts = append(opts, rt.Workers(workers))
	}
	ctx, err := rt.New(opts...)
	if err != nil {
		return nil, err
	}
	defer ctx.Close()
	data, err := rt.NewVector(2*(nb+1), 2, 1, 0)
	if err != nil {
		return nil, err
	}
	tp, err := NewChain(nb, data)
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
	return data.Block(nb), nil
}
