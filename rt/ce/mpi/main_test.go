//go:build mpi

package mpi_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt/ce"
	"github.com/jdf2go/jdf2go/rt/ce/cetest"
	"github.com/jdf2go/jdf2go/rt/ce/mpi"
)

// One Engine per process: MPI can be initialised once. TestMain starts it (its comm goroutine
// initialises MPI) and closes it if the tests did not. Every rank runs the same tests in the
// same order (SPMD); every wait is bounded, so a failure on one rank cannot hang the others.
//
// JDF2GO_CE_MPI_LEVEL (funneled or multiple, default multiple) picks the thread level, which
// is fixed at MPI_Init_thread: run the tests once per level, for example
//
//	go test -tags mpi -exec "mpirun --allow-run-as-root --oversubscribe --bind-to none -x JDF2GO_CE_MPI_LEVEL=funneled -np 2" ./rt/ce/mpi/

var (
	engine    *ce.Engine
	transport *mpi.Transport
	env       *cetest.Env
	level     ce.Level
)

func TestMain(m *testing.M) {
	flag.Parse()
	if err := setup(); err != nil {
		fmt.Fprintln(os.Stderr, "mpi test setup:", err)
		os.Exit(2)
	}
	code := m.Run()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := engine.Close(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "close:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func setup() error {
	level = ce.LevelMultiple
	if s := os.Getenv("JDF2GO_CE_MPI_LEVEL"); s != "" {
		l, err := ce.ParseLevel(s)
		if err != nil {
			return err
		}
		level = l
	}
	benchmarking := flag.Lookup("test.bench").Value.String() != ""
	var t ce.Transport
	transport = mpi.New(mpi.ThreadLevel(level), mpi.CheckThread(!benchmarking))
	t = transport
	var strict *ce.Strict
	// A longer spin window than the default: on a loaded machine a comm thread that naps
	// waits milliseconds for the CPU, and the suite's 10^4 round trips would crawl.
	opts := []ce.Option{ce.Debug(!benchmarking), ce.IdleSpin(time.Millisecond), ce.Logger(cetest.Quiet)}
	if !benchmarking {
		// The checker costs a system call per transport call: tests only.
		strict = ce.NewStrict(transport)
		t = strict
	}
	engine = ce.New(t, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := engine.Start(ctx); err != nil {
		return err
	}
	if got := transport.Level(); got != level {
		return fmt.Errorf("asked MPI for %v, got %v", level, got)
	}
	var err error
	env, err = cetest.NewEnv(engine, strict)
	if err != nil {
		return err
	}
	env.ThreadMainViolations = transport.ThreadMainViolations
	return nil
}
