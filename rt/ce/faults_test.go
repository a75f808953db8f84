package ce_test

import (
	"context"
	"errors"
	"fmt"
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
