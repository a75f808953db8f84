// Command histogram runs examples/histogram.jdf (package hist): NT tiny tasks each count a
// block of NB samples into one shared histogram, in rings of up to BATCH tasks (a batched
// CPU body). It checks the histogram against a sequential count and reports the task
// throughput; -batching=false runs every task alone, for comparison.
//
//	go run ./examples/histogram -nt 200000 -nb 32 -batch 64
//	go run ./examples/histogram -nt 200000 -nb 32 -batching=false
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/jdf2go/jdf2go/examples/histogram/hist"
	"github.com/jdf2go/jdf2go/rt"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "histogram:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("histogram", flag.ContinueOnError)
	nt := fs.Int("nt", 100000, "tasks")
	nb := fs.Int("nb", 32, "samples per task")
	batch := fs.Int("batch", 64, "batch_max: tasks per ring (0: no bound)")
	batching := fs.Bool("batching", true, "collect rings (false: every ring is one task, as with JDF2GO_BATCHING=off)")
	workers := fs.Int("workers", 0, "workers (0: all cores)")
	sched := fs.String("sched", "lfq", "scheduler: lfq, ap or gd")
	fs.Func("dashboard", "serve a live dashboard of the run on `ADDR` (localhost:8080; same as $JDF2GO_DASHBOARD)", func(a string) error { return os.Setenv("JDF2GO_DASHBOARD", a) })
	if err := fs.Parse(args); err != nil {
		return err
	}
	v, err := hist.Samples(*nt, *nb)
	if err != nil {
		return err
	}
	opts := []rt.Option{rt.Scheduler(*sched), rt.Batching(*batching)}
	if *workers > 0 {
		opts = append(opts, rt.Workers(*workers))
	}
	ctx, err := rt.New(opts...)
	if err != nil {
		return err
	}
	defer ctx.Close()
	h, elapsed, err := hist.Run(ctx, v, *batch)
	if err != nil {
		return err
	}
	if err := hist.Check(h, v); err != nil {
		return err
	}
	state := "on"
	if !*batching {
		state = "off"
	}
	fmt.Fprintf(stdout, "%d tasks of %d samples, %d bins, batch_max %d, batching %s: %v, %.0f ns/task, %.2f M tasks/s, %d merges; histogram checked\n",
		*nt, *nb, hist.Bins, *batch, state, elapsed.Round(time.Microsecond),
		float64(elapsed.Nanoseconds())/float64(*nt), float64(*nt)/elapsed.Seconds()/1e6, h.Merges)
	return nil
}
