package rt_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/rttest"
)

// closeBound is how long Close may take once the taskpool it would wait for was cancelled.
const closeBound = 100 * time.Millisecond

// addHuge starts a Context of 2 workers and Adds to it, on another goroutine, the ep
// example's space with NT=10, DEPTH=1e9; it returns once Add is walking the space, with the
// channel that receives Add's result.
func addHuge(t *testing.T) (*rt.Context, *rt.Taskpool, <-chan error) {
	t.Helper()
	c, err := rt.New(rt.Workers(2))
	if err != nil {
		t.Fatal(err)
	}
	tp := rttest.Chains(10, 1_000_000_000, nil)
	added := make(chan error, 1)
	go func() { added <- c.Add(tp) }()
	time.Sleep(20 * time.Millisecond)
	return c, tp, added
}

// TestAddStopsWhenCancelled adds a sparse space of 1e10 instances (the ep example with
// NT=10, DEPTH=1e9: ten chains, ten ready tasks), whose enumeration alone would take
// minutes, and cancels it through Wait while Add still enumerates: Add returns the
// cancellation at once, and Close does not wait for a walk.
func TestAddStopsWhenCancelled(t *testing.T) {
	c, tp, added := addHuge(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := tp.Wait(ctx)
	for ; errors.Is(err, rt.ErrNotAdded); err = tp.Wait(ctx) {
		time.Sleep(time.Millisecond)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait = %v, want the cancellation", err)
	}
	select {
	case err := <-added:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Add = %v, want the cancellation", err)
		}
	case <-time.After(closeBound):
		t.Fatalf("Add still walks the space %v after its taskpool was cancelled", closeBound)
	}
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > closeBound {
		t.Fatalf("Close took %v after the cancelled Wait, want under %v", d, closeBound)
	}
}

// TestAddStopsWhenClosed closes the Context while Add enumerates a space of 1e10
// instances: Add returns ErrClosed at once.
func TestAddStopsWhenClosed(t *testing.T) {
	c, tp, added := addHuge(t)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-added:
		if !errors.Is(err, rt.ErrClosed) {
			t.Errorf("Add = %v, want ErrClosed", err)
		}
	case <-time.After(closeBound):
		t.Fatalf("Add still walks the space %v after Close", closeBound)
	}
	if err := wait(t, tp); !errors.Is(err, rt.ErrClosed) {
		t.Errorf("Wait = %v, want ErrClosed", err)
	}
}

// TestCloseAfterCancelDuringStartupWalk cancels a taskpool while its startup walks pass over
// instances that are not ready (two chains: two ready tasks among two million instances),
// then closes the Context: the walks stop, although they find no ready task that would make
// them look at the taskpool, and Close returns within closeBound. Every walk after Add's
// enumeration is slowed down, so that without the check it would last seconds.
func TestCloseAfterCancelDuringStartupWalk(t *testing.T) {
	c, err := rt.New(rt.Workers(2))
	if err != nil {
		t.Fatal(err)
	}
	tc := *rttest.Chains(2, 1_000_000, nil).Classes()[0]
	space := tc.Space
	var walks atomic.Int32
	walking := make(chan struct{}, 2)
	tc.Space = func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
		if walks.Add(1) == 1 { // Add's enumeration
			space(tp, l, yield)
			return
		}
		i := 0
		space(tp, l, func(l *rt.Locals) bool {
			if i++; i == 64 {
				select {
				case walking <- struct{}{}:
				default:
				}
			}
			if i%64 == 0 {
				time.Sleep(100 * time.Microsecond)
			}
			return yield(l)
		})
	}
	tp := rt.NewTaskpool("sparse", rttest.Chains(2, 1_000_000, nil).Globals(), &tc)
	if err := c.Add(tp); err != nil {
		t.Fatal(err)
	}
	<-walking
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := tp.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait = %v, want the cancellation", err)
	}
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > closeBound {
		t.Fatalf("Close took %v after the cancelled Wait, want under %v", d, closeBound)
	}
}
