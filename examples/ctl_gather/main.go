// Command ctl_gather runs examples/ctl_gather.jdf: N+1 tasks fill their
// blocks, and one task gathers them through a CTL flow and adds them up.
//
//	go run ./examples/ctl_gather -n 100
package main

//go:generate go run github.com/jdf2go/jdf2go/cmd/jdf2go gen -o ctl_gather_jdf.go ../ctl_gather.jdf

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
		fmt.Fprintln(os.Stderr, "ctl_gather:", err)
		os.Exit(1)
	}
}

const blockSize = 8

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("ctl_gather", flag.ContinueOnError)
	n := fs.Int("n", 16, "index of the last Work task")
	workers := fs.Int("workers", 0, "workers (0: all cores)")
	fs.Func("dashboard", "serve a live dashboard of the run on `ADDR` (localhost:8080; same as $JDF2GO_DASHBOARD)", func(a string) error { return os.Setenv("JDF2GO_DASHBOARD", a) })
	if err := fs.Parse(args); err != nil {
		return err
	}
	total, err := gather(*n, *workers)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d tasks wrote %d values; their sum is %v\n", *n+1, (*n+1)*blockSize, total)
	return nil
}

// gather runs the program and returns Join's total.
func gather(n, workers int) (float64, error) {
	var opts []rt.Option
	if workers > 0 {
		opts = append(opts, rt.Workers(workers))
	}
	ctx, err := rt.New(opts...)
	if err != nil {
		return 0, err
	}
	defer ctx.Close()
	data, err := rt.NewVector((n+1)*blockSize, blockSize, 1, 0)
	if err != nil {
		return 0, err
	}
	var total float64
	tp, err := NewCtlGather(n, data, &total)
	if err != nil {
		return 0, err
	}
	if err := tp.Verify(); err != nil {
		return 0, err
	}
	if err := ctx.Add(tp.Taskpool); err != nil {
		return 0, err
	}
	return total, tp.Wait(context.Background())
}
