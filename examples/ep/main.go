// Command ep runs examples/ep.jdf: NT independent chains of DEPTH empty tasks
// ordered by a CTL flow, and reports the task throughput.
//
//	go run ./examples/ep -nt 1024 -depth 1024
package main

//go:generate go run github.com/jdf2go/jdf2go/cmd/jdf2go gen -o ep_jdf.go ../ep.jdf

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/jdf2go/jdf2go/rt"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ep:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("ep", flag.ContinueOnError)
	nt := fs.Int("nt", 256, "number of chains")
	depth := fs.Int("depth", 1024, "tasks per chain")
	workers := fs.Int("workers", 0, "workers (0: all cores)")
	fs.Func("dashboard", "serve a live dashboard of the run on `ADDR` (localhost:8080; same as $JDF2GO_DASHBOARD)", func(a string) error { return os.Setenv("JDF2GO_DASHBOARD", a) })
	sched := fs.String("sched", "lfq", "scheduler: lfq, ap or gd")
	if err := fs.Parse(args); err != nil {
		return err
	}
	n, elapsed, err := ep(*nt, *depth, *workers, *sched)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d chains x %d tasks: %d tasks in %v, %.0f ns/task, %.2f M tasks/s\n",
		*nt, *depth, n, elapsed.Round(time.Microsecond), float64(elapsed.Nanoseconds())/float64(n), float64(n)/elapsed.Seconds()/1e6)
	return nil
}

// ep runs the chains and returns how many tasks ran and the time from Add to the end of Wait.
func ep(nt, depth, workers int, sched string) (int64, time.Duration, error) {
	opts := []rt.Option{rt.Scheduler(sched)}
	if workers > 0 {
		opts = append(opts, rt.Workers(workers))
	}
	ctx, err := rt.New(opts...)
	if err != nil {
		return 0, 0, err
	}
	defer ctx.Close()
	dist, err := rt.NewVector(max(nt, 1), 1, 1, 0)
	if err != nil {
		return 0, 0, err
	}
	var count atomic.Int64
	tp, err := NewEP(nt, depth, dist, &count)
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	if err := ctx.Add(tp.Taskpool); err != nil {
		return 0, 0, err
	}
	if err := tp.Wait(context.Background()); err != nil {
		return 0, 0, err
	}
	return count.Load(), time.Since(start), nil
}
