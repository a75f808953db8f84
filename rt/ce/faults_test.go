package ce_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt/ce"
	"github.com/jdf2go/jdf2go/rt/ce/cetest"
)

// A handler that panics does not crash the process: the Engine fails with the panic
// (Err, OnFailure, Errors), and its comm goroutine keeps its duties: later messages are
// delivered, every buffer is released and Close completes.
func TestHandlerPanicFailsTheEngine(t *testing.T) {
	var hooked atomic.Pointer[error]
	w := ce.NewWorld(2)
	es := w.Engines(ce.Logger(cetest.Quiet), ce.OnFailure(func(err error) { hooked.Store(&err) }))
	var got atomic.Int64
	for _, e := range es {
		cetest.Register(t, e, tagA, 64, func(_ *ce.Caller, _ ce.Rank, p []byte) {
			if string(p) == "boom" {
				panic("handler boom")
			}
			got.Add(1)
		})
		if err := e.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	c := attach(t, es[0], ce.RoleWorker)
	var dones atomic.Int64
	done := func(*ce.Caller, error) { dones.Add(1) }
	for _, p := range []string{"ok", "boom", "ok", "ok"} {
		cetest.Send(t, c, 1, tagA, []byte(p), done)
	}
	cetest.WaitFor(t, "the messages after the panic", func() bool { return got.Load() == 3 && dones.Load() == 4 })
	err := es[1].Err()
	if !errors.Is(err, ce.ErrHandlerPanic) || !strings.Contains(err.Error(), "handler boom") ||
		!strings.Contains(err.Error(), fmt.Sprint("tag ", tagA)) {
		t.Fatalf("Err() = %v, want ErrHandlerPanic with the panic value and the tag", err)
	}
	if p := hooked.Load(); p == nil || *p != err {
		t.Fatalf("OnFailure saw %v, want %v", p, err)
	}
	if es[0].Err() != nil {
		t.Errorf("rank 0 failed too: %v", es[0].Err())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ce.CloseAll(ctx, es...); err != nil {
		t.Errorf("Close: %v", err)
	}
	for i, e := range es {
		cetest.CheckBalanced(t, e, fmt.Sprintf("rank %d after Close", i))
	}
}

// A done callback that panics fails the Engine the same way.
func TestDoneCallbackPanicFailsTheEngine(t *testing.T) {
	_, es := startWorld(t, 2, nil, []ce.Option{ce.Logger(cetest.Quiet)}, func(e *ce.Engine) {
		cetest.Register(t, e, tagB, 64, func(*ce.Caller, ce.Rank, []byte) {})
	})
	c := attach(t, es[0], ce.RoleWorker)
	var dones atomic.Int64
	cetest.Send(t, c, 1, tagB, []byte("x"), func(*ce.Caller, error) { panic("done boom") })
	cetest.Send(t, c, 1, tagB, []byte("y"), func(*ce.Caller, error) { dones.Add(1) })
	cetest.WaitFor(t, "the completion after the panic", func() bool { return dones.Load() == 1 })
	if err := es[0].Err(); !errors.Is(err, ce.ErrHandlerPanic) || !strings.Contains(err.Error(), "done boom") {
		t.Fatalf("Err() = %v, want ErrHandlerPanic with the panic value", err)
	}
}

// TestFaultMatrixCE is the engine's part of the fault matrix (rt/gpu's TestFaultMatrix has the
// task-level kinds): each communication fault ends in a named error within a second that
// names its cause, the engine's goroutines end, and every message buffer and registration of
// every rank is given back.
func TestFaultMatrixCE(t *testing.T) {
	type cell struct {
		name string
		// inject provokes the fault on a started world of 2 ranks and returns the error it
		// ended in, or fails the test.
		inject func(t *testing.T, w *ce.World, es []*ce.Engine, failed <-chan error) error
		want   error
		cause  string
	}
	cells := []cell{
		{name: "handler-panic", want: ce.ErrHandlerPanic, cause: "handler boom", inject: func(t *testing.T, _ *ce.World, es []*ce.Engine, failed <-chan error) error {
			c := attach(t, es[0], ce.RoleWorker)
			cetest.Send(t, c, 1, tagA, []byte("boom"), nil)
			return within(t, failed, "the engine's failure")
		}},
		{name: "done-panic", want: ce.ErrHandlerPanic, cause: "done boom", inject: func(t *testing.T, _ *ce.World, es []*ce.Engine, failed <-chan error) error {
			c := attach(t, es[0], ce.RoleDeviceManager)
			cetest.Send(t, c, 1, tagA, []byte("x"), func(*ce.Caller, error) { panic("done boom") })
			return within(t, failed, "the engine's failure")
		}},
		{name: "peer-killed", want: ce.ErrPeerLost, cause: "rank 1", inject: func(t *testing.T, w *ce.World, es []*ce.Engine, _ <-chan error) error {
			c := attach(t, es[0], ce.RoleWorker)
			errc := make(chan error, 1)
			w.Kill(1)
			cetest.Send(t, c, 1, tagA, []byte("x"), func(_ *ce.Caller, err error) { errc <- err })
			return within(t, errc, "the send's completion")
		}},
	}
	for _, tc := range cells {
		t.Run("ranks2/"+tc.name, func(t *testing.T) {
			base := runtime.NumGoroutine()
			func() {
				failed := make(chan error, 2)
				w := ce.NewWorld(2)
				es := w.Engines(ce.Logger(cetest.Quiet), ce.OnFailure(func(err error) { failed <- err }))
				for _, e := range es {
					cetest.Register(t, e, tagA, 64, func(_ *ce.Caller, _ ce.Rank, p []byte) {
						if string(p) == "boom" {
							panic("handler boom")
						}
					})
					if err := e.Start(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
				err := tc.inject(t, w, es, failed)
				if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.cause) {
					t.Errorf("fault ended in %v, want %v naming %q", err, tc.want, tc.cause)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if err := ce.CloseAll(ctx, es...); err != nil && !errors.Is(err, ce.ErrPeerLost) {
					t.Errorf("Close: %v", err)
				}
				for i, e := range es {
					cetest.CheckBalanced(t, e, fmt.Sprintf("rank %d after Close", i))
				}
			}()
			waitGoroutines(t, base)
		})
	}
}

// within receives from c, failing the test after a second.
func within(t *testing.T, c <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-c:
		return err
	case <-time.After(time.Second):
		t.Fatalf("%s did not come within 1s", what)
		return nil
	}
}
