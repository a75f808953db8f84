package ce_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt/ce"
	"github.com/jdf2go/jdf2go/rt/ce/cetest"
)

// The invariants of docs/ce.md, "Invariants" that only the in-process world can show (debug
// poisoning against delayed transports, Kill, parking) or that need several ranks in one address
// space.

const tagA, tagB, tagN = ce.FirstUserTag + 20, ce.FirstUserTag + 21, ce.FirstUserTag + 22

// startWorld starts n engines on a fresh world; they are closed at cleanup.
func startWorld(t *testing.T, n int, wopts []ce.WorldOption, eopts []ce.Option, setup func(e *ce.Engine)) (*ce.World, []*ce.Engine) {
	t.Helper()
	w := ce.NewWorld(n, wopts...)
	es := w.Engines(eopts...)
	for _, e := range es {
		if setup != nil {
			setup(e)
		}
		if err := e.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ce.CloseAll(ctx, es...)
		for i, e := range es {
			cetest.CheckBalanced(t, e, fmt.Sprintf("rank %d after Close", i))
		}
	})
	return w, es
}

func attach(t *testing.T, e *ce.Engine, r ce.Role) *ce.Caller {
	t.Helper()
	c, err := e.Attach(r, r.String())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func msg(t *testing.T, c *ce.Caller, b []byte) *ce.Msg {
	t.Helper()
	m, err := c.NewMsg(context.Background(), len(b))
	if err != nil {
		t.Fatal(err)
	}
	copy(m.Bytes(), b)
	return m
}

func wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

func hasError(errs []error, target error, substr string) bool {
	for _, err := range errs {
		if errors.Is(err, target) && strings.Contains(err.Error(), substr) {
			return true
		}
	}
	return false
}

func TestInvariant7_DoubleReleaseAndWriteAfterSubmit(t *testing.T) {
	t.Run("double-release", func(t *testing.T) {
		_, es := startWorld(t, 1, nil, []ce.Option{ce.Debug(true)}, nil)
		c := attach(t, es[0], ce.RoleWorker)
		m := msg(t, c, []byte("x"))
		if err := m.Discard(); err != nil {
			t.Fatal(err)
		}
		if err := m.Discard(); !errors.Is(err, ce.ErrReleased) {
			t.Fatalf("second Discard = %v, want ErrReleased", err)
		}
		if !hasError(es[0].Errors(), ce.ErrReleased, "Discard") {
			t.Errorf("double release not reported: %v", es[0].Errors())
		}
		if s := es[0].Stats(); s.MsgAllocs != 1 || s.MsgReleases != 1 {
			t.Errorf("allocations %d releases %d, want 1 and 1", s.MsgAllocs, s.MsgReleases)
		}
	})
	t.Run("write-after-submit", func(t *testing.T) {
		if raceEnabled {
			t.Skip("the write races with the transport's read on purpose; the race detector reports that instead")
		}
		var got atomic.Value
		setup := func(e *ce.Engine) {
			e.RegisterTag(tagA, 64, func(_ *ce.Caller, _ ce.Rank, p []byte) { got.Store(string(p)) })
		}
		_, es := startWorld(t, 2, []ce.WorldOption{ce.InjectDelay(30*time.Millisecond, 30*time.Millisecond)},
			[]ce.Option{ce.Debug(true)}, setup)
		dm := attach(t, es[0], ce.RoleDeviceManager)
		m := msg(t, dm, []byte("original"))
		b := m.Bytes()
		done := make(chan error, 1)
		if err := dm.SendAM(1, tagA, m, func(_ *ce.Caller, err error) { done <- err }); err != nil {
			t.Fatal(err)
		}
		copy(b, "MODIFIED") // too late: the Engine owns it now
		if m.Bytes() != nil {
			t.Error("Bytes after SendAM still returns the buffer")
		}
		if err := <-done; !errors.Is(err, ce.ErrMsgModified) {
			t.Errorf("done got %v, want ErrMsgModified", err)
		}
		if !hasError(es[0].Errors(), ce.ErrMsgModified, "tag") || !hasError(es[0].Errors(), ce.ErrReleased, "Bytes") {
			t.Errorf("misuse not reported: %v", es[0].Errors())
		}
	})
	t.Run("write-after-release", func(t *testing.T) {
		setup := func(e *ce.Engine) { e.RegisterTag(tagA, 64, func(*ce.Caller, ce.Rank, []byte) {}) }
		_, es := startWorld(t, 2, nil, []ce.Option{ce.Debug(true)}, setup)
		c := attach(t, es[0], ce.RoleWorker)
		m := msg(t, c, []byte("hello"))
		b := m.Bytes()
		done := make(chan error, 1)
		if err := c.SendAM(1, tagA, m, func(_ *ce.Caller, err error) { done <- err }); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, bytes.Repeat([]byte{0xDB}, len(b))) {
			t.Errorf("released buffer not poisoned: %q", b)
		}
		b[0] = 'X'                   // a write after release...
		m2 := msg(t, c, []byte("y")) // ...is found when the buffer is handed out again
		m2.Discard()
		if !hasError(es[0].Errors(), ce.ErrReleased, "written after it was released") {
			t.Errorf("write after release not reported: %v", es[0].Errors())
		}
	})
}

func TestInvariant8_DeviceManagerDropsReferences(t *testing.T) {
	const k = 100
	var mu sync.Mutex
	got := map[string]bool{}
	setup := func(e *ce.Engine) {
		e.RegisterTag(tagA, 64, func(_ *ce.Caller, _ ce.Rank, p []byte) {
			mu.Lock()
			got[string(p)] = true
			mu.Unlock()
		})
	}
	_, es := startWorld(t, 2, []ce.WorldOption{ce.InjectDelay(5*time.Millisecond, 20*time.Millisecond)},
		[]ce.Option{ce.Debug(true)}, setup)
	dm := attach(t, es[0], ce.RoleDeviceManager)
	for i := range k {
		m, err := dm.TryNewMsg(32)
		if err != nil {
			t.Fatal(err)
		}
		copy(m.Bytes(), fmt.Sprintf("message %04d from the manager...", i))
		if err := dm.SendAM(1, tagA, m, nil); err != nil {
			t.Fatal(err)
		}
		// No reference kept: the transport reads the bytes 5-20 ms from now.
	}
	if s := es[0].Stats(); s.MsgBytesInUse == 0 {
		t.Error("no buffer held while deliveries are pending")
	}
	wait(t, "deliveries", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == k })
	for i := range k {
		if want := fmt.Sprintf("message %04d from the manager...", i); !got[want] {
			t.Errorf("missing or corrupted: %q", want)
		}
	}
}

func TestInvariant9_HandlerPayloadPoisonedAfterReturn(t *testing.T) {
	var kept []byte
	var stable, poisoned atomic.Bool
	second := make(chan struct{})
	setup := func(e *ce.Engine) {
		e.RegisterTag(tagA, 64, func(_ *ce.Caller, _ ce.Rank, p []byte) {
			if kept == nil {
				want := string(p)
				runtime.Gosched()
				time.Sleep(time.Millisecond)
				stable.Store(string(p) == want && want == "keep me")
				kept = p // retained without a copy: a bug the debug build must expose
				return
			}
			poisoned.Store(bytes.Equal(kept, bytes.Repeat([]byte{0xDB}, len(kept))))
			close(second)
		})
	}
	_, es := startWorld(t, 2, nil, []ce.Option{ce.Debug(true)}, setup)
	c := attach(t, es[0], ce.RoleWorker)
	if err := c.SendAM(1, tagA, msg(t, c, []byte("keep me")), nil); err != nil {
		t.Fatal(err)
	}
	if err := c.SendAM(1, tagA, msg(t, c, []byte("next")), nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-second:
	case <-time.After(10 * time.Second):
		t.Fatal("second message never arrived")
	}
	if !stable.Load() {
		t.Error("payload changed during the handler")
	}
	if !poisoned.Load() {
		t.Errorf("a payload kept after the handler returned is not poisoned: %q", kept)
	}
}

func TestInvariant13_UnknownTagReported(t *testing.T) {
	var got atomic.Int64
	w := ce.NewWorld(2)
	es := w.Engines()
	es[0].RegisterTag(tagA, 8, func(*ce.Caller, ce.Rank, []byte) {}) // rank 1 never registers tagA
	for _, e := range es {
		e.RegisterTag(tagB, 8, func(*ce.Caller, ce.Rank, []byte) { got.Add(1) })
		if err := e.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	defer ce.CloseAll(context.Background(), es...)
	c := attach(t, es[0], ce.RoleWorker)
	if err := c.SendAM(1, tagA, msg(t, c, []byte("lost")), nil); err != nil {
		t.Fatal(err)
	}
	if err := c.SendAM(1, tagB, msg(t, c, []byte("fine")), nil); err != nil {
		t.Fatal(err)
	}
	wait(t, "the registered message", func() bool { return got.Load() == 1 })
	if n := es[1].Stats().UnknownTagDrops; n != 1 {
		t.Errorf("unknown-tag drops = %d, want 1", n)
	}
	if !hasError(es[1].Errors(), ce.ErrUnknownTag, "from rank 0") {
		t.Errorf("drop not reported with its source: %v", es[1].Errors())
	}
}

// keyOf registers b on e and returns the registration.
func reg(t *testing.T, c *ce.Caller, b []byte) *ce.MemReg {
	t.Helper()
	r, err := c.Register(ce.HostMem(b))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestInvariant16_StaleOrForgedKey(t *testing.T) {
	w, es := startWorld(t, 2, nil, nil, nil)
	owner := attach(t, es[1], ce.RoleWorker)
	c := attach(t, es[0], ce.RoleWorker)
	secret := []byte("0123456789abcdef")
	live := reg(t, owner, secret)
	gone := reg(t, owner, make([]byte, 16))
	stale := gone.Key()
	gone.Release()
	wait(t, "unregister", func() bool { return w.Stats(1).Unregisters == 1 })

	enc, _ := live.Key().AppendBinary(nil)
	forge := func(at int, v byte) ce.RemoteKey {
		b := slices.Clone(enc)
		b[at] += v
		k, err := ce.ParseRemoteKey(b)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	local := reg(t, c, make([]byte, 16))
	before := w.Stats(1)
	for _, tc := range []struct {
		name string
		key  ce.RemoteKey
	}{
		{"stale", stale},
		{"wrong-slot", forge(4, 7)},
		{"wrong-generation", forge(8, 1)},
		{"wrong-length", forge(12, 1)},
	} {
		for _, put := range []bool{false, true} {
			done := make(chan error, 1)
			do := c.Get
			if put {
				do = c.Put
			}
			x := ce.Transfer{Local: local, Remote: tc.key, Len: 8}
			if err := do(x, func(_ *ce.Caller, err error) { done <- err }); err != nil {
				t.Fatalf("%s: submit: %v", tc.name, err)
			}
			if err := <-done; !errors.Is(err, ce.ErrBadKey) {
				t.Errorf("%s (put=%v): %v, want ErrBadKey", tc.name, put, err)
			}
		}
	}
	after := w.Stats(1)
	if after.DataBytesRead != before.DataBytesRead || after.DataBytesWritten != before.DataBytesWritten {
		t.Errorf("the target's memory was touched: %+v → %+v", before, after)
	}
	// Keys that cannot name a rank are refused before any traffic.
	var zero ce.RemoteKey
	if err := c.Get(ce.Transfer{Local: local, Remote: zero, Len: 1}, nil); !errors.Is(err, ce.ErrBadKey) {
		t.Errorf("zero key: %v", err)
	}
	if err := c.Get(ce.Transfer{Local: local, Remote: forge(0, 9), Len: 1}, nil); !errors.Is(err, ce.ErrBadKey) {
		t.Errorf("rank outside the job: %v", err)
	}
	if _, err := ce.ParseRemoteKey(enc[:5]); !errors.Is(err, ce.ErrBadKey) {
		t.Errorf("short key: %v", err)
	}
	live.Release()
	local.Release()
}

func TestInvariant17_OutOfRangeBeforeTraffic(t *testing.T) {
	w, es := startWorld(t, 2, nil, nil, nil)
	owner := attach(t, es[1], ce.RoleWorker)
	remote := reg(t, owner, make([]byte, 100))
	c := attach(t, es[0], ce.RoleDeviceManager)
	local := reg(t, c, make([]byte, 50))
	wait(t, "registration", func() bool { return w.Stats(0).Registers == 1 })
	before, wbefore := es[0].Stats(), w.Stats(1)
	for _, x := range []ce.Transfer{
		{LocalOff: 0, RemoteOff: 0, Len: 51},
		{LocalOff: 45, RemoteOff: 0, Len: 6},
		{LocalOff: 0, RemoteOff: 95, Len: 6},
		{LocalOff: 0, RemoteOff: 101, Len: 0},
		{LocalOff: -1, Len: 1},
		{RemoteOff: -1, Len: 1},
		{Len: -1},
	} {
		x.Local, x.Remote = local, remote.Key()
		for _, do := range []func(ce.Transfer, ce.Done) error{c.Get, c.Put} {
			if err := do(x, func(*ce.Caller, error) { t.Error("done called") }); !errors.Is(err, ce.ErrOutOfRange) {
				t.Errorf("%+v: %v, want ErrOutOfRange", x, err)
			}
		}
	}
	time.Sleep(5 * time.Millisecond)
	after, wafter := es[0].Stats(), w.Stats(1)
	if after.AMsSent != before.AMsSent || wafter.AMsDelivered != wbefore.AMsDelivered || c.Stats().Shifted != 1 {
		t.Errorf("traffic after a refused transfer: sent %d→%d, delivered %d→%d, ops %+v",
			before.AMsSent, after.AMsSent, wbefore.AMsDelivered, wafter.AMsDelivered, c.Stats())
	}
	local.Release()
	remote.Release()
}

func TestInvariant18_KillFailsPendingOpsWithPeerLost(t *testing.T) {
	base := runtime.NumGoroutine()
	func() {
		setup := func(e *ce.Engine) {
			e.RegisterTag(tagA, 64, func(*ce.Caller, ce.Rank, []byte) {})
			e.RegisterTag(tagN, 8, func(*ce.Caller, ce.Rank, []byte) {})
		}
		w, es := startWorld(t, 3, []ce.WorldOption{ce.InjectDelay(200*time.Millisecond, 300*time.Millisecond)}, nil, setup)
		victim := attach(t, es[1], ce.RoleWorker)
		remote := reg(t, victim, make([]byte, 1<<20))
		var results sync.Map
		var pending sync.WaitGroup
		record := func(name string) ce.Done {
			pending.Add(1)
			return func(_ *ce.Caller, err error) {
				if _, dup := results.LoadOrStore(name, err); dup {
					t.Errorf("%s completed twice", name)
				}
				pending.Done()
			}
		}
		for _, role := range []ce.Role{ce.RoleWorker, ce.RoleDeviceManager} {
			c := attach(t, es[0], role)
			local := reg(t, c, make([]byte, 1<<20))
			for i := range 3 {
				x := ce.Transfer{Local: local, Remote: remote.Key(), Len: 1 << 20, Notify: tagN}
				if err := c.Get(x, record(fmt.Sprint(role, " get ", i))); err != nil {
					t.Fatal(err)
				}
				if err := c.Put(x, record(fmt.Sprint(role, " put ", i))); err != nil {
					t.Fatal(err)
				}
				if err := c.SendAM(1, tagA, msg(t, c, []byte("hi")), record(fmt.Sprint(role, " am ", i))); err != nil {
					t.Fatal(err)
				}
			}
			local.Release()
		}
		// The victim's own pending send fails too.
		if err := victim.SendAM(2, tagA, msg(t, victim, []byte("bye")), record("victim am")); err != nil {
			t.Fatal(err)
		}
		barrierErr := make(chan error, 2)
		for _, r := range []int{0, 2} {
			o := attach(t, es[r], ce.RoleOther)
			go func() { barrierErr <- o.Barrier(context.Background()) }()
		}
		time.Sleep(20 * time.Millisecond) // everything is in flight now
		start := time.Now()
		w.Kill(1)
		done := make(chan struct{})
		go func() { pending.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("pending operations not failed within 5 s of Kill")
		}
		for range 2 {
			if err := <-barrierErr; !errors.Is(err, ce.ErrPeerLost) {
				t.Errorf("barrier: %v, want ErrPeerLost", err)
			}
		}
		t.Logf("every pending operation failed %v after Kill", time.Since(start))
		results.Range(func(k, v any) bool {
			if err, _ := v.(error); !errors.Is(err, ce.ErrPeerLost) {
				t.Errorf("%v: %v, want ErrPeerLost", k, err)
			}
			return true
		})
		// Later operations with the dead rank fail the same way.
		c := attach(t, es[2], ce.RoleWorker)
		errc := make(chan error, 1)
		if err := c.SendAM(1, tagA, msg(t, c, []byte("late")), func(_ *ce.Caller, err error) { errc <- err }); err != nil {
			t.Fatal(err)
		}
		if err := <-errc; !errors.Is(err, ce.ErrPeerLost) {
			t.Errorf("send after Kill: %v", err)
		}
		remote.Release()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := ce.CloseAll(ctx, es...); err != nil && !errors.Is(err, ce.ErrPeerLost) {
			t.Errorf("close after Kill: %v", err)
		}
		for _, e := range es {
			if s := e.Stats(); s.MsgAllocs != s.MsgReleases {
				t.Errorf("rank %d: %d allocations, %d releases", e.Rank(), s.MsgAllocs, s.MsgReleases)
			}
		}
	}()
	waitGoroutines(t, base)
}

// testCloseDeadline is the forced half of invariant 19: operations that cannot finish before
// the deadline fail with ErrShutdownTimeout, and Close still returns in time.
func testCloseDeadline(t *testing.T) {
	base := runtime.NumGoroutine()
	w := ce.NewWorld(2, ce.InjectDelay(5*time.Second, 5*time.Second))
	es := w.Engines(ce.Debug(true))
	for _, e := range es {
		e.RegisterTag(tagA, 64, func(*ce.Caller, ce.Rank, []byte) {})
		if err := e.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	dm := attach(t, es[0], ce.RoleDeviceManager)
	wk := attach(t, es[1], ce.RoleWorker)
	var calls atomic.Int64
	var bad sync.Map
	done := func(name string) ce.Done {
		return func(_ *ce.Caller, err error) {
			calls.Add(1)
			if !errors.Is(err, ce.ErrShutdownTimeout) && !errors.Is(err, ce.ErrClosed) {
				bad.Store(name, err)
			}
		}
	}
	for i := range 50 {
		if err := dm.SendAM(1, tagA, msg(t, dm, []byte("pending")), done(fmt.Sprint("am ", i))); err != nil {
			t.Fatal(err)
		}
	}
	remote := reg(t, wk, make([]byte, 64))
	local := reg(t, dm, make([]byte, 64))
	if err := dm.Put(ce.Transfer{Local: local, Remote: remote.Key(), Len: 64}, done("put")); err != nil {
		t.Fatal(err)
	}
	local.Release()
	remote.Release()
	const deadline = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	err := ce.CloseAll(ctx, es...)
	el := time.Since(start)
	if !errors.Is(err, ce.ErrShutdownTimeout) {
		t.Errorf("Close = %v, want ErrShutdownTimeout", err)
	}
	if el > deadline+500*time.Millisecond {
		t.Errorf("Close took %v, deadline %v", el, deadline)
	}
	if calls.Load() != 51 {
		t.Errorf("%d callbacks, want 51", calls.Load())
	}
	bad.Range(func(k, v any) bool { t.Errorf("%v: %v", k, v); return true })
	for _, e := range es {
		if s := e.Stats(); s.MsgAllocs != s.MsgReleases || s.MsgBytesInUse != 0 {
			t.Errorf("rank %d: %d allocations, %d releases, %d bytes in use", e.Rank(), s.MsgAllocs, s.MsgReleases, s.MsgBytesInUse)
		}
	}
	waitGoroutines(t, base)
}

func TestInvariant23_BufferBudget(t *testing.T) {
	const budget = 4096
	setup := func(e *ce.Engine) { e.RegisterTag(tagA, 256, func(*ce.Caller, ce.Rank, []byte) {}) }
	_, es := startWorld(t, 2, []ce.WorldOption{ce.InjectDelay(time.Millisecond, 2*time.Millisecond)},
		[]ce.Option{ce.Budget(budget)}, setup)
	dm := attach(t, es[0], ce.RoleDeviceManager)
	var held []*ce.Msg
	for {
		m, err := dm.TryNewMsg(256)
		if errors.Is(err, ce.ErrNoBuffers) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, m)
	}
	if len(held) != budget/256 {
		t.Errorf("got %d buffers of 256 bytes from a %d-byte budget", len(held), budget)
	}
	if _, err := dm.NewMsg(context.Background(), 256); !errors.Is(err, ce.ErrNoBuffers) {
		t.Errorf("a device manager's NewMsg with the budget spent: %v, want ErrNoBuffers at once", err)
	}
	w := attach(t, es[0], ce.RoleWorker)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	_, err := w.NewMsg(ctx, 256)
	cancel()
	if !errors.Is(err, ce.ErrNoBuffers) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("NewMsg with the budget spent: %v", err)
	}
	got := make(chan error, 1)
	go func() {
		m, err := w.NewMsg(context.Background(), 256)
		if err == nil {
			m.Discard()
		}
		got <- err
	}()
	time.Sleep(5 * time.Millisecond)
	held[0].Discard()
	if err := <-got; err != nil {
		t.Errorf("NewMsg after a release: %v", err)
	}
	for _, m := range held[1:] {
		m.Discard()
	}
	// A burst of shifted sends over a slow transport: the queue never holds more than the budget.
	var dones atomic.Int64
	for range 200 {
		m := cetest.NewMsg(t, dm, 256)
		if err := dm.SendAM(1, tagA, m, func(*ce.Caller, error) { dones.Add(1) }); err != nil {
			t.Fatal(err)
		}
	}
	wait(t, "sends", func() bool { return dones.Load() == 200 })
	if hw := es[0].Stats().QueuedBytesHighWater; hw == 0 || hw > budget {
		t.Errorf("shift queue high water %d bytes, budget %d", hw, budget)
	}
	if _, err := dm.TryNewMsg(budget + 1); !errors.Is(err, ce.ErrTooLarge) {
		t.Errorf("a message larger than the budget: %v", err)
	}
}

// transferLoad runs k Gets and k Puts from rank 0 to rank 1, each with its own region.
func transferLoad(t *testing.T, es []*ce.Engine, k int, prio func(i int) int32, order *[]int32, mu *sync.Mutex) {
	t.Helper()
	owner := attach(t, es[1], ce.RoleWorker)
	remote := reg(t, owner, make([]byte, 2*k*64))
	c := attach(t, es[0], ce.RoleWorker)
	local := reg(t, c, make([]byte, 2*k*64))
	var wg sync.WaitGroup
	for i := range 2 * k {
		wg.Add(1)
		x := ce.Transfer{Local: local, LocalOff: 64 * i, Remote: remote.Key(), RemoteOff: 64 * i, Len: 64, Prio: prio(i)}
		do := c.Get
		if i%2 == 1 {
			do = c.Put
		}
		if err := do(x, func(_ *ce.Caller, err error) {
			if err != nil {
				t.Errorf("transfer %d: %v", i, err)
			}
			if order != nil {
				mu.Lock()
				*order = append(*order, x.Prio)
				mu.Unlock()
			}
			wg.Done()
		}); err != nil {
			t.Fatal(err)
		}
	}
	cetest.WaitGroupWait(t, &wg)
	local.Release()
	remote.Release()
}

func TestInvariant24_MaxInflight(t *testing.T) {
	_, es := startWorld(t, 2, []ce.WorldOption{ce.InjectDelay(time.Millisecond, 3*time.Millisecond)},
		[]ce.Option{ce.MaxInflight(3)}, nil)
	transferLoad(t, es, 20, func(int) int32 { return 0 }, nil, nil)
	if hw := es[0].Stats().InflightHighWater; hw != 3 {
		t.Errorf("initiator high water %d, want 3 (the window, reached)", hw)
	}
	if hw := es[1].Stats().ServeHighWater; hw < 1 || hw > 3 {
		t.Errorf("owner serve high water %d, want 1..3", hw)
	}
}

func TestInvariant25_PriorityOrder(t *testing.T) {
	_, es := startWorld(t, 2, []ce.WorldOption{ce.InjectDelay(20*time.Millisecond, 20*time.Millisecond)},
		[]ce.Option{ce.MaxInflight(1)}, nil)
	prios := []int32{100, 1, 5, 3, 5, 4, 2, 0}
	var order []int32
	var mu sync.Mutex
	transferLoad(t, es, len(prios)/2, func(i int) int32 { return prios[i] }, &order, &mu)
	// The first takes the only slot at once; the rest start (and, one at a time, finish) by
	// priority, FIFO among equals.
	want := []int32{100, 5, 5, 4, 3, 2, 1, 0}
	if !slices.Equal(order, want) {
		t.Errorf("completion order %s", cetest.Diff(want, order))
	}
}

func TestInvariant26_CountersDrainAndTotalsMatch(t *testing.T) {
	const tp = ce.TaskpoolID(7)
	var idle sync.Map
	setup := func(e *ce.Engine) {
		e.RegisterTag(tagA, 8, func(*ce.Caller, ce.Rank, []byte) {})
	}
	eopts := []ce.Option{ce.OnTaskpoolIdle(func(id ce.TaskpoolID) { idle.Store(id, true) })}
	w := ce.NewWorld(3, ce.InjectDelay(time.Millisecond, 4*time.Millisecond))
	es := w.Engines(eopts...)
	for _, e := range es {
		setup(e)
		if err := e.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	keys := make([]*ce.MemReg, 3)
	for i, e := range es {
		keys[i] = reg(t, attach(t, e, ce.RoleOther), make([]byte, 64*64))
	}
	sawInFlight := atomic.Bool{}
	for i, e := range es {
		c := attach(t, e, ce.RoleDeviceManager)
		local := reg(t, c, make([]byte, 64*64))
		for j := range 30 {
			wg.Add(1)
			dst := ce.Rank((i + 1 + j%2) % 3)
			m := msg(t, c, []byte{byte(j)})
			m.SetTaskpool(tp)
			if err := c.SendAM(dst, tagA, m, func(*ce.Caller, error) { wg.Done() }); err != nil {
				t.Fatal(err)
			}
			if j%3 == 0 {
				wg.Add(1)
				x := ce.Transfer{Local: local, LocalOff: 64 * j, Remote: keys[dst].Key(), RemoteOff: 64 * (i*30 + j) % (64 * 64), Len: 64, Taskpool: tp}
				do := c.Get
				if j%2 == 0 {
					x.LocalOff = 64 * (j + 1)
					do = c.Put
				}
				if err := do(x, func(_ *ce.Caller, err error) {
					if err != nil {
						t.Error(err)
					}
					wg.Done()
				}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if e.InFlight(tp) > 0 {
			sawInFlight.Store(true)
		}
		local.Release()
	}
	cetest.WaitGroupWait(t, &wg)
	if !sawInFlight.Load() {
		t.Error("in-flight counter never rose")
	}
	wait(t, "counters at zero", func() bool {
		for _, e := range es {
			if e.InFlight(tp) != 0 {
				return false
			}
		}
		return true
	})
	if _, ok := idle.Load(tp); !ok {
		t.Error("OnTaskpoolIdle never called")
	}
	for _, k := range keys {
		k.Release()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ce.CloseAll(ctx, es...); err != nil {
		t.Fatal(err)
	}
	var sent, recv, init, served int64
	for _, e := range es {
		s := e.Stats()
		sent, recv, init, served = sent+s.AMsSent, recv+s.AMsReceived, init+s.TransfersInitiated, served+s.TransfersServed
	}
	if sent != recv || init != served || init != 3*10 {
		t.Errorf("over all ranks: sent %d received %d AMs; %d transfers initiated, %d served (want 30)", sent, recv, init, served)
	}
}

func TestInvariant27_OnlyCommGoroutinePolls(t *testing.T) {
	w := ce.NewWorld(2, ce.StrictMode())
	es := w.Engines()
	for _, e := range es {
		e.RegisterTag(tagA, 8, func(*ce.Caller, ce.Rank, []byte) {})
		if err := e.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	var dones atomic.Int64
	for _, e := range es {
		for range 3 {
			c := attach(t, e, ce.RoleWorker) // direct: they call the transport from their own threads
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range 300 {
					m := cetest.NewMsg(t, c, 1)
					c.SendAM(ce.Rank(1-int(e.Rank())), tagA, m, func(*ce.Caller, error) { dones.Add(1) })
					if j%50 == 0 {
						runtime.Gosched()
					}
				}
			}()
		}
	}
	cetest.WaitGroupWait(t, &wg)
	wait(t, "sends", func() bool { return dones.Load() == 2*3*300 })
	for r := range 2 {
		rep := w.Strict(ce.Rank(r)).Report()
		if rep.ByMethod["Poll"] != 0 || rep.PollForeign != 0 || rep.Violations != 0 {
			t.Errorf("rank %d: %+v", r, rep)
		}
		if rep.ByMethod["SendAM"] == 0 {
			t.Logf("rank %d: no direct call landed on another thread (scheduler luck); the guard is still checked below", r)
		}
	}
	// A Poll from anywhere else is refused and recorded, not executed.
	st := w.Strict(0)
	if n := st.Poll(make([]ce.Event, 8)); n != 0 {
		t.Errorf("foreign Poll returned %d events", n)
	}
	rep := st.Report()
	if rep.PollForeign != 1 || rep.Violations != 1 || len(rep.Errors) != 1 || !errors.Is(rep.Errors[0], ce.ErrNotCommGoroutine) {
		t.Errorf("foreign Poll not reported: %+v", rep)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ce.CloseAll(ctx, es...); err != nil {
		t.Fatal(err)
	}
}

func TestInvariant28_IdleEngineParks(t *testing.T) {
	setup := func(e *ce.Engine) { e.RegisterTag(tagA, 8, func(*ce.Caller, ce.Rank, []byte) {}) }
	_, es := startWorld(t, 2, nil, nil, setup)
	c := attach(t, es[0], ce.RoleWorker)
	done := make(chan error, 1)
	c.SendAM(1, tagA, msg(t, c, []byte("x")), func(_ *ce.Caller, err error) { done <- err })
	<-done
	time.Sleep(20 * time.Millisecond) // past the spin window
	before := []int64{es[0].Stats().LoopIterations, es[1].Stats().LoopIterations}
	time.Sleep(200 * time.Millisecond)
	for i, e := range es {
		if d := e.Stats().LoopIterations - before[i]; d > 5 {
			t.Errorf("rank %d: %d loop iterations in 200 ms of idleness; an idle engine must park", i, d)
		}
	}
}

func TestInvariant30_ConcurrentWorkersAndDeviceManagers(t *testing.T) {
	const ranks, perRole, rounds = 3, 2, 150
	var got, notes atomic.Int64
	setup := func(e *ce.Engine) {
		e.RegisterTag(tagA, 64, func(*ce.Caller, ce.Rank, []byte) { got.Add(1) })
		e.RegisterTag(tagN, 8, func(*ce.Caller, ce.Rank, []byte) { notes.Add(1) })
	}
	_, es := startWorld(t, ranks, []ce.WorldOption{ce.InjectDelay(0, 200*time.Microsecond)}, []ce.Option{ce.Debug(true)}, setup)
	// One owner region per (initiator rank, caller, op) so concurrent copies never overlap.
	const slots = ranks * 2 * perRole * 2
	owners := make([]*ce.MemReg, ranks)
	for i, e := range es {
		owners[i] = reg(t, attach(t, e, ce.RoleOther), make([]byte, slots*64))
	}
	var wg sync.WaitGroup
	var sent, dones, xfers atomic.Int64
	for i, e := range es {
		for j, role := range []ce.Role{ce.RoleWorker, ce.RoleWorker, ce.RoleDeviceManager, ce.RoleDeviceManager} {
			c := attach(t, e, role)
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(i), uint64(j)))
				getBuf, putBuf := reg(t, c, make([]byte, 64)), reg(t, c, make([]byte, 64))
				defer getBuf.Release()
				defer putBuf.Release()
				for range rounds {
					dst := ce.Rank(rng.IntN(ranks))
					switch rng.IntN(4) {
					case 0, 1:
						m := cetest.NewMsg(t, c, 1+rng.IntN(63))
						if err := c.SendAM(dst, tagA, m, func(_ *ce.Caller, err error) {
							if err != nil {
								t.Error(err)
							}
							dones.Add(1)
						}); err != nil {
							t.Error(err)
						}
						sent.Add(1)
					case 2, 3:
						slot := (i*4+j)*2 + rng.IntN(2)
						x := ce.Transfer{Remote: owners[dst].Key(), RemoteOff: 64 * slot, Len: 64, Notify: tagN, Prio: int32(rng.IntN(3))}
						do := c.Get
						if slot%2 == 0 {
							x.Local = putBuf
							do = c.Put
						} else {
							x.Local = getBuf
						}
						// The same region may be in flight twice from this caller: wait for each
						// transfer so that no two copies of one region overlap.
						ch := make(chan error, 1)
						if err := do(x, func(_ *ce.Caller, err error) { ch <- err }); err != nil {
							t.Error(err)
							continue
						}
						if err := <-ch; err != nil {
							t.Error(err)
						}
						xfers.Add(1)
					}
				}
			}()
		}
	}
	cetest.WaitGroupWait(t, &wg)
	wait(t, "all traffic", func() bool {
		return dones.Load() == sent.Load() && got.Load() == sent.Load() && notes.Load() == xfers.Load()
	})
	for _, o := range owners {
		o.Release()
	}
	for _, e := range es {
		if errs := e.Errors(); len(errs) != 0 {
			t.Errorf("rank %d: %v", e.Rank(), errs)
		}
	}
}
