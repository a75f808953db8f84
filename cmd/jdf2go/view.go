package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/jdf2go/jdf2go/dashboard"
	"github.com/spf13/cobra"
)

func init() { register(newViewCmd) }

func newViewCmd(s *streams) *cobra.Command {
	var addr string
	var public bool
	cmd := &cobra.Command{
		Use:   "view TRACE.json",
		Short: "Serve the dashboard of a finished run from its trace",
		Long: `view replays the trace a jdf2go program wrote (rt.Trace or JDF2GO_TRACE) in the
live dashboard's page: tasks completed per second, progress per class, worker
occupancy and device activity, over the whole run. It serves until interrupted.
A trace records no class totals: each class's total is the tasks the trace holds.`,
		Example: "  JDF2GO_TRACE=run.json go run ./examples/potrf -n 2048\n  jdf2go view run.json --addr localhost:8080",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return serveTrace(ctx, s, args[0], addr, public, nil)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "localhost:8080", "address to serve on (a non-loopback host needs --public)")
	cmd.Flags().BoolVar(&public, "public", false, "allow a non-loopback address: anyone who can reach it sees the run")
	return cmd
}

// serveTrace serves the replay of the trace at path until ctx ends; ready, if not nil, gets
// the page's address once it is served.
func serveTrace(ctx context.Context, s *streams, path, addr string, public bool, ready func(url string)) error {
	f, err := os.Open(path)
	if err != nil {
		return failure{err}
	}
	snaps, err := dashboard.FromTrace(f, filepath.Base(path))
	f.Close()
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
