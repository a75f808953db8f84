package ce_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt/ce"
	"github.com/jdf2go/jdf2go/rt/ce/cetest"
)

// Sends that are still in the shift queue when Close begins. Rank 0's comm goroutine is held
// in a handler, so what its device manager sends meanwhile cannot leave the queue; Close
// starts on both ranks, and only once rank 0 refuses new operations (it is closing) is the
// handler let go. Close must then deliver those sends (drain), or, once its deadline has
// passed, complete each with an error (teardown): never drop one.

const tagHold, tagQueued = ce.FirstUserTag + 30, ce.FirstUserTag + 31

// queuedAtClose is a two-rank world whose rank 0 holds k sends to rank 1 in its shift queue.
type queuedAtClose struct {
	es      []*ce.Engine
	release chan struct{} // closing it lets rank 0's comm goroutine go
	got     atomic.Int64  // messages rank 1 received on tagQueued

	mu   sync.Mutex
	errs []error // the done callbacks' errors, one per call
}

func newQueuedAtClose(t *testing.T, k int) *queuedAtClose {
	t.Helper()
	q := &queuedAtClose{release: make(chan struct{})}
	q.es = ce.NewWorld(2).Engines(ce.Debug(true))
	entered := make(chan struct{})
	for i, e := range q.es {
		if err := e.RegisterTag(tagQueued, 8, func(*ce.Caller, ce.Rank, []byte) { q.got.Add(1) }); err != nil {
			t.Fatal(err)
		}
		hold := func(*ce.Caller, ce.Rank, []byte) {}
		if i == 0 {
			hold = func(*ce.Caller, ce.Rank, []byte) {
				close(entered)
				<-q.release
			}
		}
		if err := e.RegisterTag(tagHold, 8, hold); err != nil {
			t.Fatal(err)
		}
		if err := e.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		select {
		case <-q.release:
		default:
			close(q.release)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ce.CloseAll(ctx, q.es...)
		for _, e := range q.es {
			cetest.CheckBalanced(t, e, "after Close")
		}
	})
	dm := attach(t, q.es[0], ce.RoleDeviceManager) // always shifts
	if err := dm.SendAM(0, tagHold, msg(t, dm, []byte("hold")), nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("rank 0's comm goroutine never ran the holding handler")
	}
	done := func(_ *ce.Caller, err error) {
		q.mu.Lock()
		q.errs = append(q.errs, err)
		q.mu.Unlock()
	}
	for range k {
		if err := dm.SendAM(1, tagQueued, msg(t, dm, []byte("queued")), done); err != nil {
			t.Fatal(err)
		}
	}
	return q
}

// closeWhileHeld closes both ranks with ctx, lets rank 0's comm goroutine go once rank 0 is
// closing and after wait returns, and returns Close's result.
func (q *queuedAtClose) closeWhileHeld(ctx context.Context, t *testing.T, wait func()) error {
	t.Helper()
	probe := attach(t, q.es[0], ce.RoleOther)
	res := make(chan error, 1)
	go func() { res <- ce.CloseAll(ctx, q.es...) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		m, err := probe.TryNewMsg(1)
		if errors.Is(err, ce.ErrClosed) {
			break
		}
		if err == nil {
			m.Discard()
		}
		if time.Now().After(deadline) {
			close(q.release)
			t.Fatalf("rank 0 never started closing: %v", err)
		}
		time.Sleep(100 * time.Microsecond)
	}
	wait()
	close(q.release)
	select {
	case err := <-res:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("Close did not return")
		return nil
	}
}

func (q *queuedAtClose) callbacks() []error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]error(nil), q.errs...)
}

// TestCloseDeliversQueuedSends: with healthy peers and time to spare, Close drains the shift
// queue: every send queued before it arrives, and its done callback gets nil.
func TestCloseDeliversQueuedSends(t *testing.T) {
	const k = 20
	q := newQueuedAtClose(t, k)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := q.closeWhileHeld(ctx, t, func() {}); err != nil {
		t.Errorf("Close: %v", err)
	}
	if got := q.got.Load(); got != k {
		t.Errorf("rank 1 received %d of the %d sends queued before Close", got, k)
	}
	errs := q.callbacks()
	if len(errs) != k {
		t.Errorf("%d done callbacks, want %d", len(errs), k)
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("done callback %d: %v, want nil (delivered)", i, err)
		}
	}
}

// TestForcedCloseReportsQueuedSends: when Close's deadline passes with sends still queued,
// teardown completes each of them with ErrShutdownTimeout (their buffers back in the pool,
// checked at cleanup) instead of dropping them.
func TestForcedCloseReportsQueuedSends(t *testing.T) {
	const k = 20
	q := newQueuedAtClose(t, k)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := q.closeWhileHeld(ctx, t, func() { <-ctx.Done() })
	if !errors.Is(err, ce.ErrShutdownTimeout) {
		t.Errorf("Close = %v, want ErrShutdownTimeout", err)
	}
	errs := q.callbacks()
	if len(errs) != k {
		t.Errorf("%d done callbacks for the %d sends queued at the deadline, want %d", len(errs), k, k)
	}
	for i, err := range errs {
		if !errors.Is(err, ce.ErrShutdownTimeout) {
			t.Errorf("done callback %d: %v, want ErrShutdownTimeout", i, err)
		}
	}
	if s := q.es[0].Stats(); s.MsgAllocs != s.MsgReleases || s.MsgBytesInUse != 0 {
		t.Errorf("rank 0: %d message buffers allocated, %d released, %d bytes in use", s.MsgAllocs, s.MsgReleases, s.MsgBytesInUse)
	}
}

// TestCloseWaitsForOvertakenAMs: a rank's FIN may arrive before the AMs it counts (over MPI
// an eager send completes once its bytes are copied, and FIN travels on a tag of its own), so
// Close must wait, for each peer, until as many AMs as its FIN announced have arrived, not
// stop at the FIN or one message short of the count. The world holds one AM of each pair of
// ranks in flight well after its send completed: the sender's FIN overtakes it, and Close on
// the receiver returns only once it arrived. Stopping one message early would let the
// receiver pass its barrier and close its transport first, and that AM would be lost.
func TestCloseWaitsForOvertakenAMs(t *testing.T) {
	const (
		n       = 3
		onTime  = 5 // AMs per pair of ranks delivered at once
		tagNow  = ce.FirstUserTag + 32
		tagLate = ce.FirstUserTag + 33
		hold    = 500 * time.Millisecond
	)
	held := func(_, _ ce.Rank, tag ce.Tag) time.Duration {
		if tag == tagLate {
			return hold
		}
		return 0
	}
	es := ce.NewWorld(n, ce.WorldHoldAM(held)).Engines(ce.Debug(true))
	var got [n][n]atomic.Int64 // got[dst][src]: AMs rank dst's handlers received from src
	for i, e := range es {
		count := func(_ *ce.Caller, src ce.Rank, _ []byte) { got[i][src].Add(1) }
		for _, tag := range []ce.Tag{tagNow, tagLate} {
			if err := e.RegisterTag(tag, 8, count); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	var sendErrs atomic.Int64
	done := func(_ *ce.Caller, err error) {
		if err != nil {
			sendErrs.Add(1)
		}
	}
	for src, e := range es {
		c := attach(t, e, ce.RoleOther)
		for dst := range n {
			if dst == src {
				continue
			}
			// The held AM goes first: every later one, and the FIN, overtake it.
			if err := c.SendAM(ce.Rank(dst), tagLate, msg(t, c, []byte("late")), done); err != nil {
				t.Fatal(err)
			}
			for range onTime {
				if err := c.SendAM(ce.Rank(dst), tagNow, msg(t, c, []byte("now")), done); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	if err := ce.CloseAll(ctx, es...); err != nil {
		t.Errorf("Close: %v", err)
	}
	elapsed := time.Since(start)
	for dst := range n {
		for src := range n {
			if src == dst {
				continue
			}
			if g := got[dst][src].Load(); g != onTime+1 {
				t.Errorf("rank %d received %d of the %d AMs rank %d sent it before Close returned (Close took %v; one AM was held %v)",
					dst, g, onTime+1, src, elapsed.Round(time.Millisecond), hold)
			}
		}
	}
	if e := sendErrs.Load(); e != 0 {
		t.Errorf("%d sends completed with an error, want none", e)
	}
	for _, e := range es {
		cetest.CheckBalanced(t, e, "after Close")
	}
}
