//go:build mpi

package remote_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/ce"
	"github.com/jdf2go/jdf2go/rt/remote"
)

// Peer loss under MPI. The job runs the chain program on two MPI ranks; P(1), on rank 1,
// first keeps its worker busy for longBody (longer than the heartbeat timeout: its comm
// goroutine must go on beating meanwhile) and then kills its own process with SIGKILL. Rank 0
// waits in Taskpool.Wait for P(1)'s result; it must get ce.ErrPeerLost no earlier than the
// body's end and no later than the heartbeat timeout plus a margin after it, and its Engine
// must close.
//
// mpirun's exit status says nothing about such a job (Open MPI 4.1 under --enable-recovery
// returns 0 even when a surviving rank failed), so the test does not run under go test -exec
// mpirun: it starts mpirun itself (JDF2GO_MPIRUN, default "mpirun --oversubscribe --bind-to
// none", plus --enable-recovery so that mpirun leaves the survivor running) on this test
// binary, and reads the survivor's verdict from the job's output.
const (
	lossInterval = 100 * time.Millisecond
	lossTimeout  = time.Second
	longBody     = 3 * time.Second
	// What the bound allows beyond longBody+lossTimeout+lossInterval: mpirun starting the
	// ranks at different times, and a loaded machine.
	lossMargin = 4 * time.Second
)

var verdict = regexp.MustCompile(`peer-loss verdict rank 0: ok after ([0-9.]+)s`)

func TestMPIPeerLoss(t *testing.T) {
	if os.Getenv("OMPI_COMM_WORLD_SIZE") != "" {
		peerLossRank(t)
		return
	}
	if testing.Short() {
		t.Skip("starts an MPI job")
	}
	launcher := strings.Fields(os.Getenv("JDF2GO_MPIRUN"))
	if len(launcher) == 0 {
		launcher = []string{"mpirun", "--oversubscribe", "--bind-to", "none"}
	}
	if _, err := exec.LookPath(launcher[0]); err != nil {
		t.Skipf("no %s: %v", launcher[0], err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append(launcher[1:], "--enable-recovery", "-np", "2",
		os.Args[0], "-test.run", "^TestMPIPeerLoss$", "-test.v", "-test.count", "1")
	cmd := exec.CommandContext(ctx, launcher[0], args...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the job did not end within 2 minutes (the survivor hangs?):\n%s", out)
	}
	// Whatever mpirun's status, the verdict is rank 0's.
	m := verdict.FindSubmatch(out)
	if m == nil || strings.Contains(string(out), "--- FAIL") {
		t.Fatalf("no verdict from rank 0 (mpirun: %v):\n%s", err, out)
	}
	t.Logf("rank 0 got ErrPeerLost %ss after its taskpool started", m[1])
}

// peerLossRank is one rank of the job.
func peerLossRank(t *testing.T) {
	// A survivor that hangs shows where, and ends the job, instead of waiting for the
	// launching test's deadline.
	watchdog := time.AfterFunc(45*time.Second, func() {
		fmt.Fprintln(os.Stderr, "peer-loss: rank still running after 45 s; goroutines:")
		pprof.Lookup("goroutine").WriteTo(os.Stderr, 2)
		os.Exit(3)
	})
	defer watchdog.Stop()
	var seen atomic.Int64
	var lostAfter time.Duration
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := remote.Run(ctx, remote.Config{Workers: 1, CE: []ce.Option{ce.Heartbeat(lossInterval, lossTimeout)}},
		func(ctx context.Context, j *remote.Job) error {
			if j.Size != 2 {
				return fmt.Errorf("want 2 ranks, mpirun started %d", j.Size)
			}
			v, err := rt.NewVector(4*4, 4, j.Size, j.Rank)
			if err != nil {
				return err
			}
			p := &prog{n: 4, j: 2, nb: 4, v: v, seen: &seen, failAt: 1, fault: func() error {
				// Busy, not asleep: the worker holds a thread the whole time.
				for begin := time.Now(); time.Since(begin) < longBody; {
				}
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {} // the signal is on its way
			}}
			tp := rt.NewTaskpool("prog", p, &classP, &classC)
			begin := time.Now()
			if err := j.Add(tp); err != nil {
				return err
			}
			err = tp.Wait(ctx)
			lostAfter = time.Since(begin)
			return err
		})
	rank, _ := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_RANK"))
	if rank != 0 {
		t.Fatalf("rank %d outlived its own SIGKILL: %v", rank, err)
	}
	if !errors.Is(err, ce.ErrPeerLost) || ctx.Err() != nil {
		t.Fatalf("rank 0: err = %v, want ce.ErrPeerLost", err)
	}
	if lostAfter < longBody {
		t.Fatalf("rank 0 declared rank 1 lost after %v, while its body still ran (%v): its heartbeats stopped", lostAfter, longBody)
	}
	if bound := longBody + lossTimeout + lossInterval + lossMargin; lostAfter > bound {
		t.Fatalf("rank 0 learnt of the loss after %v, bound %v", lostAfter, bound)
	}
	t.Logf("survivor: %v", err)
	fmt.Printf("peer-loss verdict rank 0: ok after %.2fs\n", lostAfter.Seconds())
}
