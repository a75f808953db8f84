package remote_test

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/ce"
	"github.com/jdf2go/jdf2go/rt/remote"
)

// The fault matrix's column of 2 in-process ranks (rt/gpu's TestFaultMatrix has the CPU and
// device columns, rt/ce the engine-level kinds). The chain P(0) … P(6) alternates between
// the ranks and the fault happens on rank 1 while rank 0 waits for it, so both must fail:
//   - every rank's Wait returns a named error within a second of the fault;
//   - rank 1's error names the task and the cause, rank 0's names rank 1 and the cause;
//   - the goroutines return to their count before the run;
//   - each Engine got every message buffer back (Run checks it after the collective Close).

// rankFault is a row: a fault in P(3)'s body (body), rank 1 killed before the first task
// (kill), or a panic in rank 1's execution-space check of P, which runs on the comm
// goroutine when the activation from P(0) arrives (handlerPanic).
type rankFault struct {
	name         string
	body         func() error
	kill         bool
	handlerPanic bool
	want, peer   []error // what rank 1's and rank 0's errors must match
	cause        string  // what both must contain
}

var rankFaults = []rankFault{
	{name: "cpu-error", body: func() error { return errBody },
		want: []error{rt.ErrTaskpoolFailed, errBody}, peer: []error{remote.ErrRemoteFailure}, cause: "body failed on purpose"},
	{name: "cpu-panic", body: func() error { panic("injected cpu panic") },
		want: []error{rt.ErrTaskpoolFailed}, peer: []error{remote.ErrRemoteFailure}, cause: "injected cpu panic"},
	{name: "cpu-goexit", body: func() error { runtime.Goexit(); return nil },
		want: []error{rt.ErrTaskpoolFailed, rt.ErrGoexit}, peer: []error{remote.ErrRemoteFailure}, cause: "Goexit"},
	{name: "peer-killed", kill: true,
		want: []error{ce.ErrPeerLost}, peer: []error{ce.ErrPeerLost}, cause: "rank"},
	{name: "ce-handler-panic", handlerPanic: true,
		want: []error{ce.ErrHandlerPanic}, peer: []error{remote.ErrRemoteFailure}, cause: "injected panic in the space check of P(0)"},
}

func TestFaultMatrixRanks(t *testing.T) {
	for _, k := range rankFaults {
		t.Run("ranks2/"+k.name, func(t *testing.T) { runRankFault(t, k) })
	}
}

func runRankFault(t *testing.T, k rankFault) {
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	quiet := slog.New(slog.DiscardHandler)
	var (
		seen, added atomic.Int64
		gate        = make(chan struct{})
		start       time.Time // written before gate closes
		errs        [2]error
		took        [2]time.Duration
	)
	cfg := remote.Config{Ranks: 2, Workers: 2, RT: []rt.Option{rt.Logger(quiet)},
		CE: []ce.Option{ce.Debug(true), ce.Logger(quiet)}, Remote: []remote.Option{remote.Logger(quiet)}}
	runErr := remote.Run(ctx, cfg, func(ctx context.Context, j *remote.Job) error {
		v, err := rt.NewVector(7*4, 4, j.Size, j.Rank)
		if err != nil {
			return err
		}
		p := &prog{n: 7, j: 2, nb: 4, v: v, seen: &seen, failAt: -1, gate: gate, fault: k.body}
		if k.body != nil {
			p.failAt = 3 // on rank 1
		}
		tp := rt.NewTaskpool("prog", p, &classP, &classC)
		if err := j.Add(tp); err != nil {
			return err
		}
		p.badSpace.Store(k.handlerPanic && j.Rank == 1)
		if added.Add(1) == 2 {
			start = time.Now()
			if k.kill {
				j.World.Kill(1)
			}
			close(gate)
		}
		err = tp.Wait(ctx)
		<-gate
		errs[j.Rank], took[j.Rank] = err, time.Since(start)
		return err
	})
	if ctx.Err() != nil {
		t.Fatalf("the job hung: %v", runErr)
	}
	for r, want := range [][]error{k.peer, k.want} {
		err := errs[r]
		if err == nil {
			t.Errorf("rank %d: Wait = nil, want the fault", r)
			continue
		}
		if took[r] > time.Second {
			t.Errorf("rank %d: Wait returned %v after the fault, want within 1s", r, took[r])
		}
		for _, w := range want {
			if !errors.Is(err, w) {
				t.Errorf("rank %d: error does not match %v: %v", r, w, err)
			}
		}
		msg := err.Error()
		if !strings.Contains(msg, k.cause) {
			t.Errorf("rank %d: error does not give the cause %q: %v", r, k.cause, err)
		}
		if k.body != nil && !strings.Contains(msg, "P(3)") {
			t.Errorf("rank %d: error does not name P(3): %v", r, err)
		}
		if r == 0 && !k.kill && !strings.Contains(msg, "rank 1") {
			t.Errorf("rank 0: error does not name rank 1: %v", err)
		}
	}
	// Run returns the ranks' errors; anything else (unbalanced buffers, a failed close) is
	// a defect of the fault's handling.
	if runErr == nil {
		t.Error("Run = nil")
	} else if s := runErr.Error(); strings.Contains(s, "handed out") || strings.Contains(s, "close") {
		t.Errorf("Run: %v", runErr)
	}
	for deadline := time.Now().Add(2 * time.Second); runtime.NumGoroutine() > before; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines after the run, %d before:\n%s", runtime.NumGoroutine(), before,
				buf[:runtime.Stack(buf, true)])
		}
	}
}
