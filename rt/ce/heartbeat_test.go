package ce_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt/ce"
	"github.com/jdf2go/jdf2go/rt/ce/cetest"
)

// muteTransport is an in-process rank that can lose touch with one peer the way an MPI rank
// loses a killed one: once muted, nothing arrives from the peer, what is sent to it vanishes
// (the send still completes locally, as a small MPI send does), and nothing reports a loss.
// It reports Caps.SilentLoss, like MPI.
type muteTransport struct {
	ce.Transport
	peer  ce.Rank
	muted atomic.Bool

	mu      sync.Mutex
	swallow []*ce.Msg // sends to the muted peer, completed at the next Poll
}

func (m *muteTransport) Caps() ce.Caps {
	c := m.Transport.Caps()
	c.SilentLoss = true
	return c
}

func (m *muteTransport) SendAM(t ce.Tag, dst ce.Rank, msg *ce.Msg) error {
	if dst == m.peer && m.muted.Load() {
		m.mu.Lock()
		m.swallow = append(m.swallow, msg)
		m.mu.Unlock()
		return nil
	}
	return m.Transport.SendAM(t, dst, msg)
}

func (m *muteTransport) Poll(ev []ce.Event) int {
	n := m.Transport.Poll(ev)
	if m.muted.Load() {
		k := 0
		for _, e := range ev[:n] {
			if e.Kind == ce.EventArrival && e.Src == m.peer {
				continue
			}
			ev[k] = e
			k++
		}
		n = k
	}
	m.mu.Lock()
	for len(m.swallow) > 0 && n < len(ev) {
		ev[n] = ce.Event{Kind: ce.EventSendDone, Msg: m.swallow[0]}
		m.swallow = m.swallow[1:]
		n++
	}
	m.mu.Unlock()
	return n
}

// abandoningTransport also gives up on a peer when asked (ce.PeerAbandoner), as the MPI
// transport does: here by killing it in the world, which fails everything involving it and
// reports EventPeerLost.
type abandoningTransport struct {
	*muteTransport
	w         *ce.World
	abandoned atomic.Int32
}

func (a *abandoningTransport) AbandonPeer(r ce.Rank) bool {
	a.abandoned.Add(1)
	a.w.Kill(r)
	return true
}

// TestInvariant31_SilentPeerLost: a peer that falls silent is declared lost after the heartbeat
// timeout, not before it and not much after; a Get waiting on it and a later send fail with
// ErrPeerLost, OnPeerLost runs once, and both ranks still close, with no goroutine left.
// Once the Engine fails the peer itself, once the transport abandons it.
func TestInvariant31_SilentPeerLost(t *testing.T) {
	for _, abandon := range []bool{false, true} {
		t.Run(fmt.Sprint("abandon=", abandon), func(t *testing.T) { testSilentPeer(t, abandon) })
	}
}

func testSilentPeer(t *testing.T, abandon bool) {
	const interval, timeout = 20 * time.Millisecond, 300 * time.Millisecond
	base := runtime.NumGoroutine()
	w := ce.NewWorld(2)
	mutes := []*muteTransport{{Transport: w.Transport(0), peer: 1}, {Transport: w.Transport(1), peer: 0}}
	lostAt := make([]chan time.Time, 2)
	es := make([]*ce.Engine, 2)
	ab := &abandoningTransport{muteTransport: mutes[0], w: w}
	for r := range es {
		lostAt[r] = make(chan time.Time, 2)
		var tr ce.Transport = mutes[r]
		if abandon && r == 0 {
			tr = ab
		}
		es[r] = ce.New(tr, ce.Heartbeat(interval, timeout), ce.Logger(cetest.Quiet),
			ce.OnPeerLost(func(ce.Rank) { lostAt[r] <- time.Now() }))
		cetest.Register(t, es[r], tagA, 64, func(*ce.Caller, ce.Rank, []byte) {})
		cetest.Register(t, es[r], tagN, 8, func(*ce.Caller, ce.Rank, []byte) {})
		if err := es[r].Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	owner := attach(t, es[1], ce.RoleWorker)
	remoteReg := reg(t, owner, make([]byte, 4096))
	c := attach(t, es[0], ce.RoleWorker)
	local := reg(t, c, make([]byte, 4096))

	// Heartbeats flow while nothing else does.
	time.Sleep(5 * interval)
	for r, e := range es {
		if s := e.Stats(); s.HeartbeatsReceived == 0 || s.PeersTimedOut != 0 {
			t.Fatalf("rank %d before the mute: %d heartbeats received, %d peers timed out", r, s.HeartbeatsReceived, s.PeersTimedOut)
		}
	}

	for _, m := range mutes {
		m.muted.Store(true)
	}
	muted := time.Now()
	getErr := make(chan error, 1)
	x := ce.Transfer{Local: local, Remote: remoteReg.Key(), Len: 4096}
	if err := c.Get(x, func(_ *ce.Caller, err error) { getErr <- err }); err != nil {
		t.Fatal(err)
	}
	var at time.Time
	select {
	case at = <-lostAt[0]:
	case <-time.After(timeout + 10*time.Second):
		t.Fatal("rank 0 never declared the silent rank 1 lost")
	}
	if d := at.Sub(muted); d < timeout-interval {
		t.Errorf("rank 1 declared lost %v after it fell silent, before the %v timeout", d, timeout)
	} else {
		t.Logf("rank 1 declared lost %v after it fell silent (timeout %v)", d, timeout)
	}
	select {
	case err := <-getErr:
		if !errors.Is(err, ce.ErrPeerLost) {
			t.Errorf("Get from the lost rank: %v, want ErrPeerLost", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the Get from the lost rank never completed")
	}
	sendErr := make(chan error, 1)
	if err := c.SendAM(1, tagA, msg(t, c, []byte("late")), func(_ *ce.Caller, err error) { sendErr <- err }); err != nil {
		t.Fatal(err)
	}
	if err := <-sendErr; !errors.Is(err, ce.ErrPeerLost) {
		t.Errorf("send to the lost rank: %v, want ErrPeerLost", err)
	}
	s := es[0].Stats()
	if s.PeersTimedOut != 1 || !hasError(es[0].Errors(), ce.ErrPeerLost, "nothing heard from it") {
		t.Errorf("rank 0: %d peers timed out, errors %v", s.PeersTimedOut, es[0].Errors())
	}
	if len(lostAt[0]) != 0 {
		t.Error("OnPeerLost ran twice for rank 1")
	}
	if n := ab.abandoned.Load(); abandon && n != 1 || !abandon && n != 0 {
		t.Errorf("the transport was asked %d times to abandon the peer", n)
	}
	local.Release()
	remoteReg.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	begin := time.Now()
	if err := ce.CloseAll(ctx, es...); err != nil && !errors.Is(err, ce.ErrPeerLost) {
		t.Errorf("Close after the loss: %v", err)
	}
	if ctx.Err() != nil {
		t.Errorf("Close took its whole deadline (%v)", time.Since(begin))
	}
	for r, e := range es {
		cetest.CheckBalanced(t, e, fmt.Sprintf("rank %d after Close", r))
	}
	waitGoroutines(t, base)
}

// TestInvariant31_BusyPeerNotLost: heartbeats come from the comm goroutine, so a rank whose every
// thread is taken by spinning goroutines (task bodies) for several timeouts is not declared
// lost, and neither is an idle one: an idle in-process Engine parks, but no longer than a
// heartbeat interval.
func TestInvariant31_BusyPeerNotLost(t *testing.T) {
	const interval, timeout = 50 * time.Millisecond, time.Second
	var lost atomic.Int32
	_, es := startWorld(t, 2, nil, []ce.Option{ce.Heartbeat(interval, timeout), ce.Logger(cetest.Quiet),
		ce.OnPeerLost(func(ce.Rank) { lost.Add(1) })}, nil)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
	}
	time.Sleep(2 * timeout)
	close(stop)
	wg.Wait()
	time.Sleep(2 * timeout) // and idle
	for r, e := range es {
		s := e.Stats()
		if s.PeersTimedOut != 0 || lost.Load() != 0 {
			t.Errorf("rank %d: %d peers timed out while busy or idle", r, s.PeersTimedOut)
		}
		// About 80 ticks in 4 s; a loaded machine may lose many, not most.
		if s.HeartbeatsReceived < 20 || s.AMsReceived != 0 || s.AMsSent != 0 {
			t.Errorf("rank %d: %d heartbeats received, %d AMs received, %d sent; want heartbeats only",
				r, s.HeartbeatsReceived, s.AMsReceived, s.AMsSent)
		}
	}
}

// TestHeartbeatDefaults: heartbeats are on by default only where the transport cannot see a
// peer die (Caps.SilentLoss), and Heartbeat(0, …) turns them off there.
func TestHeartbeatDefaults(t *testing.T) {
	cases := []struct {
		name   string
		silent bool
		opts   []ce.Option
		want   bool
	}{
		{"in-process", false, nil, false},
		{"silent loss", true, nil, true},
		{"silent loss, off", true, []ce.Option{ce.Heartbeat(0, 0)}, false},
		{"in-process, on", false, []ce.Option{ce.Heartbeat(10*time.Millisecond, time.Second)}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := ce.NewWorld(2)
			es := make([]*ce.Engine, 2)
			for r := range es {
				var tr ce.Transport = w.Transport(ce.Rank(r))
				if tc.silent {
					tr = &muteTransport{Transport: tr, peer: ce.Rank(1 - r)}
				}
				es[r] = ce.New(tr, append([]ce.Option{ce.Logger(cetest.Quiet)}, tc.opts...)...)
				if err := es[r].Start(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := ce.CloseAll(ctx, es...); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			if tc.want {
				// The first tick comes with the comm goroutine's first idle moment.
				wait(t, "a heartbeat", func() bool { return es[1].Stats().HeartbeatsReceived > 0 })
				return
			}
			time.Sleep(100 * time.Millisecond)
			if n := es[0].Stats().HeartbeatsSent + es[1].Stats().HeartbeatsSent; n != 0 {
				t.Errorf("%d heartbeats sent, want none", n)
			}
		})
	}
}
