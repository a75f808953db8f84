package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"text/tabwriter"

	"github.com/jdf2go/jdf2go/dashboard"
	"github.com/spf13/cobra"
)

func init() { register(newViewCmd) }

func newViewCmd(s *streams) *cobra.Command {
	var addr string
	var public, summary bool
	cmd := &cobra.Command{
		Use:   "view TRACE.json",
		Short: "Serve the dashboard of a finished run from its trace",
		Long: `view replays the trace a jdf2go program wrote (rt.Trace or JDF2GO_TRACE) in the
live dashboard's page: tasks completed per second, progress per class, worker
occupancy and device activity, over the whole run. It serves until interrupted.
A trace records no class totals: each class's total is the tasks the trace holds.

The trace is read as a stream, twice (the tracks and the time span, then the
spans), and only what the page shows is kept, so memory does not grow with the
trace: 600 snapshots at most, 64 classes and 16 devices by name (the others
counted together), and per worker at most 1024 lane segments (fewer beyond 256
workers; a busier lane is drawn coarser). The page says when a bound was reached.
A span whose time is not a finite number within about 31 years, or a malformed or
truncated file, is an error naming the event.

--summary prints the run's totals (tasks per class, busy workers, devices) and
exits instead of serving: a quick look at a trace, and what the benchmark of
view measures.`,
		Example: "  JDF2GO_TRACE=run.json go run ./examples/potrf -n 2048\n  jdf2go view run.json --addr localhost:8080\n  jdf2go view --summary run.json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if summary {
				return summarizeTrace(s, args[0])
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return serveTrace(ctx, s, args[0], addr, public, nil)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "localhost:8080", "address to serve on (a non-loopback host needs --public)")
	cmd.Flags().BoolVar(&public, "public", false, "allow a non-loopback address: anyone who can reach it sees the run")
	cmd.Flags().BoolVar(&summary, "summary", false, "print the run's totals and exit instead of serving")
	return cmd
}

// readTrace replays the trace at path as the dashboard's snapshots.
func readTrace(path string) ([]*dashboard.Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return dashboard.FromTrace(f, filepath.Base(path))
}

// serveTrace serves the replay of the trace at path until ctx ends; ready, if not nil, gets
// the page's address once it is served.
func serveTrace(ctx context.Context, s *streams, path, addr string, public bool, ready func(url string)) error {
	snaps, err := readTrace(path)
	if err != nil {
		return failure{err}
	}
	srv, err := dashboard.Listen(addr, dashboard.Options{Public: public, History: len(snaps), HistoryBytes: -1})
	if err != nil {
		return failure{err}
	}
	for _, snap := range snaps {
		if err := srv.Publish(snap); err != nil {
			srv.Close()
			return failure{err}
		}
	}
	fmt.Fprintf(s.out, "serving the run of %s on %s (interrupt to stop)\n", path, srv.URL())
	if ready != nil {
		ready(srv.URL())
	}
	<-ctx.Done()
	if err := srv.Close(); err != nil {
		return failure{err}
	}
	return nil
}

// summarizeTrace prints the totals of the trace at path: what the page's last snapshot shows,
// with the workers' busy time over the whole run.
func summarizeTrace(s *streams, path string) error {
	snaps, err := readTrace(path)
	if err != nil {
		return failure{err}
	}
	last := snaps[len(snaps)-1]
	// The share of the run each worker spent in spans: its busy fraction per snapshot
	// interval, weighted by the interval's length.
	busy, prev := 0.0, 0.0
	for _, sn := range snaps {
		for _, b := range sn.Busy {
			busy += b * (sn.Time - prev)
		}
		prev = sn.Time
	}
	if last.Time > 0 && last.Workers > 0 {
		busy /= last.Time * float64(last.Workers)
	}
	fmt.Fprintf(s.out, "%s: %d tasks in %.6g s; workers: %d, busy %.0f%% of the run; devices: %d\n",
		path, last.Done, last.Time, last.Workers, 100*busy, len(last.GPUs))
	tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "class\ttasks\n")
	for _, c := range last.Classes {
		fmt.Fprintf(tw, "%s\t%d\n", c.Name, c.Total)
	}
	if err := tw.Flush(); err != nil {
		return failure{err}
	}
	if len(last.GPUs) > 0 {
		tw = tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "device\ttasks\tstage-ins\tstage-outs\n")
		for _, g := range last.GPUs {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", g.Name, g.Executed, g.StageIns, g.StageOuts)
		}
		if err := tw.Flush(); err != nil {
			return failure{err}
		}
	}
	if last.Note != "" {
		fmt.Fprintf(s.out, "note: %s\n", last.Note)
	}
	return nil
}
