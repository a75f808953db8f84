package cetest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt/ce"
)

// Tags of the suite, one set per invariant, so the tests can share one Engine under MPI.
const (
	tag1 = ce.FirstUserTag + 1 + iota
	tag2
	tag3
	tag4
	tag5
	tag6
	tag10
	tag11
	tag12a
	tag12b
	tag14n
	tag15n
	tag19
	tag21
	tag21n
	tag22
	// unregistered is never registered by anyone.
	unregistered ce.Tag = ce.MaxTags - 1
)

// counter is a handler that counts arrivals.
func counter(n *atomic.Int64) ce.Handler {
	return func(*ce.Caller, ce.Rank, []byte) { n.Add(1) }
}

// Invariant1 (docs/ce.md, "Invariants"): an AM sent by a RoleDeviceManager Caller is handed to the
// transport by the comm goroutine; the strict checker records zero calls from other threads.
func Invariant1(t *testing.T, env *Env) {
	if env.Strict == nil {
		t.Skip("needs a strict transport checker")
	}
	var got atomic.Int64
	Register(t, env.E, tag1, 16, counter(&got))
	env.Sync(t)
	before := env.Strict.Report()
	dm := Attach(t, env.E, ce.RoleDeviceManager, "dm")
	const k = 200
	for i := range k {
		Send(t, dm, env.Next(), tag1, []byte{byte(i)}, nil)
	}
	WaitFor(t, "arrivals", func() bool { return got.Load() == k })
	env.Sync(t)
	after := env.Strict.Report()
	if d := after.Foreign - before.Foreign; d != 0 {
		t.Errorf("rank %d: %d transport calls from other OS threads: %v", env.Rank(), d, after.ByMethod)
	}
	if st := dm.Stats(); st != (ce.CallerStats{Shifted: k}) {
		t.Errorf("rank %d: device manager stats %s", env.Rank(), Diff(ce.CallerStats{Shifted: k}, st))
	}
}

// Invariant2: with a FUNNELED transport every transport call, from every role, comes
// from the comm thread, and workers report zero direct operations.
func Invariant2(t *testing.T, env *Env) {
	if lvl := env.E.Caps().Level; lvl != ce.LevelFunneled {
		t.Skipf("needs a funneled transport, this one is %v", lvl)
	}
	if env.Strict == nil && env.ThreadMainViolations == nil {
		t.Skip("needs a strict checker or the transport's own thread check")
	}
	var got atomic.Int64
	Register(t, env.E, tag2, 16, counter(&got))
	env.Sync(t)
	var before ce.StrictReport
	if env.Strict != nil {
		before = env.Strict.Report()
	}
	var tmBefore int64
	if env.ThreadMainViolations != nil {
		tmBefore = env.ThreadMainViolations()
	}
	callers := []*ce.Caller{
		Attach(t, env.E, ce.RoleWorker, "worker"),
		Attach(t, env.E, ce.RoleDeviceManager, "dm"),
		Attach(t, env.E, ce.RoleOther, "other"),
	}
	const k = 20
	mine := make([]byte, 64*len(callers))
	reg := RegisterMem(t, callers[0], mine)
	remote := env.ExchangeKey(t, reg.Key())
	var puts sync.WaitGroup
	for i, c := range callers {
		for j := range k {
			Send(t, c, env.Next(), tag2, []byte{byte(j)}, nil)
		}
		local := RegisterMem(t, c, bytes.Repeat([]byte{byte(i)}, 64))
		puts.Add(1)
		if err := c.Put(ce.Transfer{Local: local, Remote: remote, RemoteOff: 64 * i, Len: 64},
			func(_ *ce.Caller, err error) {
				if err != nil {
					t.Errorf("put: %v", err)
				}
				puts.Done()
			}); err != nil {
			Fatalf(t, "put: %v", err)
		}
		local.Release()
	}
	WaitFor(t, "arrivals", func() bool { return got.Load() == k*int64(len(callers)) })
	WaitGroupWait(t, &puts)
	env.Sync(t)
	reg.Release()
	for _, c := range callers {
		if c.Role() == ce.RoleWorker && (c.Direct() || c.Stats().Direct != 0) {
			t.Errorf("rank %d: worker went direct under FUNNELED: %+v", env.Rank(), c.Stats())
		}
	}
	if env.Strict != nil {
		if d := env.Strict.Report().Foreign - before.Foreign; d != 0 {
			t.Errorf("rank %d: %d transport calls off the comm thread", env.Rank(), d)
		}
	}
	if env.ThreadMainViolations != nil {
		if d := env.ThreadMainViolations() - tmBefore; d != 0 {
			t.Errorf("rank %d: %d transport calls where the transport saw a thread other than its main thread", env.Rank(), d)
		}
	}
}

// Invariant3: with LevelMultiple, workers go direct (direct > 0, shifted = 0) while
// device managers stay 100 % shifted.
func Invariant3(t *testing.T, env *Env) {
	if lvl := env.E.Caps().Level; lvl != ce.LevelMultiple {
		t.Skipf("needs LevelMultiple, this transport has %v", lvl)
	}
	var got atomic.Int64
	Register(t, env.E, tag3, 16, counter(&got))
	env.Sync(t)
	var before ce.StrictReport
	if env.Strict != nil {
		before = env.Strict.Report()
	}
	w1 := Attach(t, env.E, ce.RoleWorker, "w1")
	w2 := Attach(t, env.E, ce.RoleWorker, "w2")
	dm := Attach(t, env.E, ce.RoleDeviceManager, "dm")
	const k = 50
	var wg sync.WaitGroup
	for _, c := range []*ce.Caller{w1, w2, dm} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range k {
				Send(t, c, env.Next(), tag3, []byte{byte(i)}, nil)
			}
		}()
	}
	wg.Wait()
	WaitFor(t, "arrivals", func() bool { return got.Load() == 3*k })
	env.Sync(t)
	for _, w := range []*ce.Caller{w1, w2} {
		if st := w.Stats(); !w.Direct() || st.Direct != k || st.Shifted != 0 {
			t.Errorf("rank %d: worker %s: direct=%v stats %s", env.Rank(), w.Name(), w.Direct(), Diff(ce.CallerStats{Direct: k}, st))
		}
	}
	if st := dm.Stats(); dm.Direct() || st != (ce.CallerStats{Shifted: k}) {
		t.Errorf("rank %d: device manager %s", env.Rank(), Diff(ce.CallerStats{Shifted: k}, st))
	}
	if env.Strict != nil {
		if d := env.Strict.Report().Violations - before.Violations; d != 0 {
			t.Errorf("rank %d: %d forbidden transport calls: %v", env.Rank(), d, env.Strict.Report().Errors)
		}
	}
}

// Invariant4: a Caller's path never changes: per-Caller stats have one non-zero
// column, the one its Direct() names, whatever operations it performed.
func Invariant4(t *testing.T, env *Env) {
	var got atomic.Int64
	Register(t, env.E, tag4, 16, counter(&got))
	env.Sync(t)
	buf := make([]byte, 1024)
	reg := RegisterMem(t, Attach(t, env.E, ce.RoleOther, "owner"), buf)
	remote := env.ExchangeKey(t, reg.Key())
	roles := []ce.Role{ce.RoleWorker, ce.RoleWorker, ce.RoleDeviceManager, ce.RoleOther}
	var wg sync.WaitGroup
	callers := make([]*ce.Caller, len(roles))
	for i, r := range roles {
		c := Attach(t, env.E, r, fmt.Sprintf("%v-%d", r, i))
		callers[i] = c
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Gets and Puts touch disjoint memory on both sides: the in-process copies run on
			// different goroutines, and the race detector would rightly object.
			getBuf := RegisterMem(t, c, make([]byte, 64))
			putBuf := RegisterMem(t, c, make([]byte, 64))
			defer getBuf.Release()
			defer putBuf.Release()
			var xfers sync.WaitGroup
			for j := range 30 {
				switch j % 3 {
				case 0:
					Send(t, c, env.Next(), tag4, []byte{byte(j)}, nil)
				case 1, 2:
					xfers.Add(1)
					x := ce.Transfer{Local: getBuf, Remote: remote, RemoteOff: 128 * i, Len: 64}
					do := c.Get
					if j%3 == 2 {
						x.Local, x.RemoteOff, do = putBuf, 128*i+64, c.Put
					}
					if err := do(x, func(_ *ce.Caller, err error) {
						if err != nil {
							t.Errorf("transfer: %v", err)
						}
						xfers.Done()
					}); err != nil {
						t.Errorf("transfer: %v", err)
						xfers.Done()
					}
				}
			}
			WaitGroupWait(t, &xfers)
		}()
	}
	wg.Wait()
	WaitFor(t, "arrivals", func() bool { return got.Load() == 10*int64(len(roles)) })
	env.Sync(t)
	reg.Release()
	for _, c := range callers {
		st := c.Stats()
		if (st.Direct != 0) == (st.Shifted != 0) || (st.Direct != 0) != c.Direct() {
			t.Errorf("rank %d: %s (direct=%v) used both paths or the wrong one: %+v", env.Rank(), c.Name(), c.Direct(), st)
		}
	}
}

// Invariant5: AMs from one Caller to one (destination, tag) arrive in send order, on
// both paths, under concurrent senders: 4 Callers × 10^4 numbered messages.
func Invariant5(t *testing.T, env *Env) {
	const callers, k = 4, 10_000
	var mu sync.Mutex
	next := map[[2]int]uint32{} // (src, caller) → next expected sequence number
	var got, disorder atomic.Int64
	Register(t, env.E, tag5, 8, func(_ *ce.Caller, src ce.Rank, p []byte) {
		key := [2]int{int(src), int(p[0])}
		seq := binary.LittleEndian.Uint32(p[4:])
		mu.Lock()
		if next[key] != seq {
			if disorder.Add(1) <= 5 {
				t.Errorf("rank %d: from rank %d caller %d: got message %d, want %d", env.Rank(), src, p[0], seq, next[key])
			}
		}
		next[key] = seq + 1
		mu.Unlock()
		got.Add(1)
	})
	env.Sync(t)
	roles := []ce.Role{ce.RoleWorker, ce.RoleWorker, ce.RoleDeviceManager, ce.RoleOther}
	var wg sync.WaitGroup
	for i := range callers {
		c := Attach(t, env.E, roles[i], fmt.Sprintf("sender-%d", i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			var b [8]byte
			b[0] = byte(i)
			for seq := range uint32(k) {
				binary.LittleEndian.PutUint32(b[4:], seq)
				Send(t, c, env.Next(), tag5, b[:], nil)
			}
		}()
	}
	wg.Wait()
	WaitFor(t, "all messages", func() bool { return got.Load() == callers*k })
	env.Sync(t)
	if n := disorder.Load(); n != 0 {
		t.Errorf("rank %d: %d messages out of order", env.Rank(), n)
	}
}

// Invariant6: every Msg is released exactly once: allocations equal releases after
// successful sends, failed sends and discards. (After Close with pending operations:
// Invariant19.)
func Invariant6(t *testing.T, env *Env) {
	var got atomic.Int64
	Register(t, env.E, tag6, 32, counter(&got))
	env.Sync(t)
	w := Attach(t, env.E, ce.RoleWorker, "w")
	dm := Attach(t, env.E, ce.RoleDeviceManager, "dm")
	var dones, bad atomic.Int64
	done := func(_ *ce.Caller, err error) {
		if err != nil {
			bad.Add(1)
		}
		dones.Add(1)
	}
	const k = 100
	for i := range k {
		c := w
		if i%2 == 1 {
			c = dm
		}
		Send(t, c, env.Next(), tag6, []byte{byte(i)}, done)
	}
	for _, c := range []*ce.Caller{w, dm} {
		for _, tc := range []struct {
			tag  ce.Tag
			n    int
			want error
		}{{unregistered, 1, ce.ErrUnknownTag}, {200, 1, ce.ErrTagRange}, {tag6, 33, ce.ErrTooLarge}} {
			m := NewMsg(t, c, tc.n)
			if err := c.SendAM(env.Next(), tc.tag, m, done); !errors.Is(err, tc.want) {
				t.Errorf("SendAM(tag %d, %d bytes) = %v, want %v", tc.tag, tc.n, err, tc.want)
			}
			if err := c.SendAM(env.Next(), tag6, m, done); !errors.Is(err, ce.ErrReleased) {
				t.Errorf("resubmitting a failed message: %v, want ErrReleased", err)
			}
		}
		for range 10 {
			m := NewMsg(t, c, 8)
			if err := m.Discard(); err != nil {
				t.Errorf("discard: %v", err)
			}
			if err := c.SendAM(env.Next(), tag6, m, done); !errors.Is(err, ce.ErrReleased) {
				t.Errorf("sending a discarded message: %v, want ErrReleased", err)
			}
		}
	}
	WaitFor(t, "completions", func() bool { return dones.Load() == k })
	WaitFor(t, "arrivals", func() bool { return got.Load() == k })
	env.Sync(t)
	if bad.Load() != 0 {
		t.Errorf("rank %d: %d sends failed", env.Rank(), bad.Load())
	}
	WaitFor(t, "allocations == releases", func() bool {
		s := env.E.Stats()
		return s.MsgAllocs == s.MsgReleases
	})
	time.Sleep(10 * time.Millisecond)
	if d := dones.Load(); d != k {
		t.Errorf("rank %d: %d done callbacks, want %d", env.Rank(), d, k)
	}
	// The only problems reported are the resubmissions above, one each: a message released
	// twice on an error path would add "completed twice" (or a second report).
	const misuse = 2 * (3 + 10)
	checkErrors(t, env, misuse, "SendAM of a message already submitted or released")
}

// checkErrors fails the test unless env's Engine reported exactly n problems, each containing
// want (n == 0: none at all).
func checkErrors(t *testing.T, env *Env, n int, want string) {
	t.Helper()
	// Under MPI the suite shares one Engine: the problems that earlier checks accounted for
	// are not this invariant's.
	total := env.E.Stats().Errors
	errs := env.E.Errors()
	errs = errs[len(errs)-min(len(errs), total-env.errSeen):]
	total -= env.errSeen
	env.errSeen += total
	bad := 0
	for _, err := range errs {
		if want == "" || !strings.Contains(err.Error(), want) {
			bad++
			t.Errorf("rank %d: unexpected problem reported: %v", env.Rank(), err)
		}
	}
	if total != n && bad == 0 {
		t.Errorf("rank %d: %d problems reported, want %d: %v", env.Rank(), total, n, errs)
	}
}

// Invariant10: SendAM to an unregistered tag gives ErrUnknownTag, to a tag out of
// range ErrTagRange; the buffer is released and nothing reaches the network.
func Invariant10(t *testing.T, env *Env) {
	var got atomic.Int64
	Register(t, env.E, tag10, 8, counter(&got))
	env.Sync(t)
	before := env.E.Stats()
	for _, r := range []ce.Role{ce.RoleWorker, ce.RoleDeviceManager, ce.RoleOther} {
		c := Attach(t, env.E, r, r.String())
		for _, tc := range []struct {
			tag  ce.Tag
			want error
		}{{unregistered, ce.ErrUnknownTag}, {ce.MaxTags, ce.ErrTagRange}, {1, ce.ErrTagRange}, {ce.NoTag, ce.ErrTagRange}} {
			m := NewMsg(t, c, 4)
			called := false
			if err := c.SendAM(env.Next(), tc.tag, m, func(*ce.Caller, error) { called = true }); !errors.Is(err, tc.want) {
				t.Errorf("%v: SendAM(tag %d) = %v, want %v", r, tc.tag, err, tc.want)
			}
			if m.Bytes() != nil {
				t.Errorf("%v: message still usable after a refused SendAM", r)
			}
			if called {
				t.Errorf("%v: done called for a refused SendAM", r)
			}
		}
	}
	env.Sync(t)
	after := env.E.Stats()
	if after.AMsSent != before.AMsSent || after.MsgAllocs-before.MsgAllocs != after.MsgReleases-before.MsgReleases {
		t.Errorf("rank %d: sent %d messages, allocations %d, releases %d (want 0 sent, equal counts)", env.Rank(),
			after.AMsSent-before.AMsSent, after.MsgAllocs-before.MsgAllocs, after.MsgReleases-before.MsgReleases)
	}
	if got.Load() != 0 || after.UnknownTagDrops != before.UnknownTagDrops {
		t.Errorf("rank %d: something reached a receiver", env.Rank())
	}
	// Refusals are returned, never reported; the only reports are the Bytes calls above, one
	// per refused message: a message released twice while refusing it would add one.
	checkErrors(t, env, 3*4, "Msg.Bytes after SendAM or Discard")
}

// Invariant11: a payload above the tag's maximum gives ErrTooLarge at the sender, and
// the receiver keeps working.
func Invariant11(t *testing.T, env *Env) {
	var got atomic.Int64
	var maxSeen atomic.Int64
	Register(t, env.E, tag11, 8, func(_ *ce.Caller, _ ce.Rank, p []byte) {
		got.Add(1)
		maxSeen.Store(max(maxSeen.Load(), int64(len(p))))
	})
	env.Sync(t)
	c := Attach(t, env.E, ce.RoleDeviceManager, "dm")
	m := NewMsg(t, c, 9)
	if err := c.SendAM(env.Next(), tag11, m, nil); !errors.Is(err, ce.ErrTooLarge) {
		t.Errorf("9 bytes on an 8-byte tag: %v, want ErrTooLarge", err)
	}
	Send(t, c, env.Next(), tag11, []byte("12345678"), nil)
	WaitFor(t, "the 8-byte message", func() bool { return got.Load() == 1 })
	env.Sync(t)
	if got.Load() != 1 || maxSeen.Load() != 8 {
		t.Errorf("rank %d: %d arrivals, largest %d bytes; want 1 of 8", env.Rank(), got.Load(), maxSeen.Load())
	}
}

// Invariant12: registering a tag twice gives ErrTagInUse; a tag registered after
// Start receives a message sent after RegisterTag returned.
func Invariant12(t *testing.T, env *Env) {
	var n atomic.Int64
	Register(t, env.E, tag12a, 8, counter(&n))
	if err := env.E.RegisterTag(tag12a, 8, counter(&n)); !errors.Is(err, ce.ErrTagInUse) {
		t.Errorf("second registration: %v, want ErrTagInUse", err)
	}
	// The Engine is running: this registration is after Start.
	var fromPrev, fromSelf atomic.Int64
	Register(t, env.E, tag12b, 8, func(_ *ce.Caller, src ce.Rank, _ []byte) {
		if src == env.Rank() {
			fromSelf.Add(1)
		} else {
			fromPrev.Add(1)
		}
	})
	c := Attach(t, env.E, ce.RoleWorker, "w")
	// To itself, right away: the arm op precedes this send.
	Send(t, c, env.Rank(), tag12b, []byte("self"), nil)
	env.Sync(t)
	if env.Size() > 1 {
		Send(t, c, env.Next(), tag12b, []byte("next"), nil)
	}
	WaitFor(t, "messages on the late tag", func() bool {
		return fromSelf.Load() == 1 && (env.Size() == 1 || fromPrev.Load() == 1)
	})
	env.Sync(t)
}

// Invariant14: Get copies exactly (sizes 0, 1, 4095 and 4 MiB, non-zero offsets,
// bytes outside the range untouched); the initiator's done and the peer's notify handler each
// fire exactly once per transfer.
func Invariant14(t *testing.T, env *Env) {
	sizes := []int{0, 1, 4095, 4 << 20}
	const loff, roff, pad = 3, 5, 16
	pattern := func(r ce.Rank, i int) byte { return byte(i*7 + int(r)*13 + 1) }
	var notes sync.Map
	var notified atomic.Int64
	Register(t, env.E, tag14n, 8, func(_ *ce.Caller, src ce.Rank, note []byte) {
		if _, dup := notes.LoadOrStore(fmt.Sprint(src, note), true); dup {
			t.Errorf("rank %d: notified twice for %v from %d", env.Rank(), note, src)
		}
		notified.Add(1)
	})
	owner := Attach(t, env.E, ce.RoleOther, "owner")
	src := make([]byte, sizes[len(sizes)-1]+pad)
	for i := range src {
		src[i] = pattern(env.Rank(), i)
	}
	srcReg := RegisterMem(t, owner, src)
	remote := env.ExchangeKey(t, srcReg.Key())
	env.Sync(t)
	c := Attach(t, env.E, ce.RoleWorker, "w")
	dsts := make([][]byte, len(sizes))
	dones := make([]atomic.Int64, len(sizes))
	var regs []*ce.MemReg
	for i, n := range sizes {
		dsts[i] = bytes.Repeat([]byte{0xEE}, n+pad)
		reg := RegisterMem(t, c, dsts[i])
		regs = append(regs, reg)
		err := c.Get(ce.Transfer{Local: reg, LocalOff: loff, Remote: remote, RemoteOff: roff, Len: n,
			Notify: tag14n, Note: []byte{byte(i)}}, func(_ *ce.Caller, err error) {
			if err != nil {
				t.Errorf("get %d bytes: %v", n, err)
			}
			dones[i].Add(1)
		})
		if err != nil {
			Fatalf(t, "get %d bytes: %v", n, err)
		}
	}
	WaitFor(t, "gets", func() bool {
		for i := range dones {
			if dones[i].Load() == 0 {
				return false
			}
		}
		return true
	})
	WaitFor(t, "notifications", func() bool { return notified.Load() == int64(len(sizes)) })
	env.Sync(t)
	for i, n := range sizes {
		want := bytes.Repeat([]byte{0xEE}, n+pad)
		for j := range n {
			want[loff+j] = pattern(env.Next(), roff+j)
		}
		if !bytes.Equal(dsts[i], want) {
			t.Errorf("rank %d: get of %d bytes: wrong bytes (first difference at %d)", env.Rank(), n, firstDiff(dsts[i], want))
		}
		if d := dones[i].Load(); d != 1 {
			t.Errorf("rank %d: get of %d bytes: done ran %d times", env.Rank(), n, d)
		}
		regs[i].Release()
	}
	if v := notified.Load(); v != int64(len(sizes)) {
		t.Errorf("rank %d: %d notifications, want %d", env.Rank(), v, len(sizes))
	}
	srcReg.Release()
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// Invariant15: a registration with a transfer in flight is unregistered only after the
// transfer completed, even though its owner released it first; Register and Unregister counts
// match at the end.
func Invariant15(t *testing.T, env *Env) {
	var notified atomic.Int64
	Register(t, env.E, tag15n, 8, counter(&notified))
	owner := Attach(t, env.E, ce.RoleOther, "owner")
	const n = 4 << 20
	src := bytes.Repeat([]byte{byte(env.Rank() + 1)}, n)
	srcReg := RegisterMem(t, owner, src)
	remote := env.ExchangeKey(t, srcReg.Key())
	env.Sync(t)
	c := Attach(t, env.E, ce.RoleWorker, "w")
	dst := make([]byte, n)
	reg := RegisterMem(t, c, dst)
	var unregAtDone atomic.Int64
	unregAtDone.Store(-1)
	before := env.E.Stats().TransportUnregisters
	done := make(chan error, 1)
	if err := c.Get(ce.Transfer{Local: reg, Remote: remote, Len: n, Notify: tag15n}, func(_ *ce.Caller, err error) {
		unregAtDone.Store(env.E.Stats().TransportUnregisters - before)
		done <- err
	}); err != nil {
		Fatalf(t, "get: %v", err)
	}
	if err := reg.Release(); err != nil { // the owner lets go while the Get runs
		t.Errorf("release: %v", err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("get: %v", err)
		}
	case <-time.After(Timeout):
		Fatalf(t, "get did not complete")
	}
	if d := unregAtDone.Load(); d != 0 {
		t.Errorf("rank %d: the registration was unregistered before its transfer completed (%d unregisters at done)", env.Rank(), d)
	}
	if dst[0] != byte(env.Next()+1) || dst[n-1] != byte(env.Next()+1) {
		t.Errorf("rank %d: wrong bytes after the owner released", env.Rank())
	}
	WaitFor(t, "unregister after completion", func() bool { return env.E.Stats().TransportUnregisters-before >= 1 })
	WaitFor(t, "notification", func() bool { return notified.Load() == 1 })
	env.Sync(t)
	srcReg.Release()
	WaitFor(t, "registers == unregisters", func() bool {
		s := env.E.Stats()
		return s.TransportRegisters == s.TransportUnregisters
	})
}

// Invariant19: Close with operations pending returns by its deadline; their
// callbacks get nil (drained), ErrClosed or ErrShutdownTimeout, each exactly once; every
// buffer is back in the pool; the goroutine count returns to baseline.
func Invariant19(t *testing.T, env *Env) {
	var got atomic.Int64
	Register(t, env.E, tag19, 64, counter(&got))
	env.Sync(t)
	c := Attach(t, env.E, ce.RoleWorker, "w")
	dm := Attach(t, env.E, ce.RoleDeviceManager, "dm")
	const k = 200
	var calls, bad atomic.Int64
	done := func(_ *ce.Caller, err error) {
		if err != nil && !errors.Is(err, ce.ErrClosed) && !errors.Is(err, ce.ErrShutdownTimeout) {
			bad.Add(1)
			t.Errorf("callback error %v", err)
		}
		calls.Add(1)
	}
	for i := range k {
		s := c
		if i%2 == 0 {
			s = dm
		}
		Send(t, s, env.Next(), tag19, make([]byte, 64), done)
	}
	const deadline = 10 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	err := env.E.Close(ctx)
	if el := time.Since(start); el > deadline+time.Second {
		t.Errorf("rank %d: Close took %v with a %v deadline", env.Rank(), el, deadline)
	}
	if err != nil && !errors.Is(err, ce.ErrShutdownTimeout) {
		t.Errorf("rank %d: Close: %v", env.Rank(), err)
	}
	if calls.Load() != k {
		t.Errorf("rank %d: %d callbacks after Close, want %d", env.Rank(), calls.Load(), k)
	}
	if s := env.E.Stats(); s.MsgAllocs != s.MsgReleases || s.MsgBytesInUse != 0 {
		t.Errorf("rank %d: after Close %d allocations, %d releases, %d bytes in use", env.Rank(), s.MsgAllocs, s.MsgReleases, s.MsgBytesInUse)
	}
	if env.Shared() {
		WaitFor(t, "the Engine's goroutines to end", func() bool { return OwnedGoroutines() == 0 })
	}
}

// Invariant20: Close twice is fine, and every operation after Close returns ErrClosed
// without panicking.
func Invariant20(t *testing.T, env *Env) {
	pre, err := env.E.Attach(ce.RoleWorker, "before-close")
	var m *ce.Msg
	var reg *ce.MemReg
	if err == nil {
		m, _ = pre.TryNewMsg(8)
		reg, _ = pre.Register(ce.HostMem(make([]byte, 8)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	first := env.E.Close(ctx)
	if second := env.E.Close(ctx); !errors.Is(second, first) && second != first {
		t.Errorf("second Close = %v, first %v", second, first)
	}
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ce.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", what, err)
		}
	}
	_, err = env.E.Attach(ce.RoleWorker, "after")
	check("Attach", err)
	check("RegisterTag", env.E.RegisterTag(ce.MaxTags-2, 8, counter(new(atomic.Int64))))
	if pre == nil {
		return
	}
	_, err = pre.TryNewMsg(8)
	check("TryNewMsg", err)
	_, err = pre.NewMsg(ctx, 8)
	check("NewMsg", err)
	if m != nil {
		check("SendAM", pre.SendAM(env.Next(), tag19, m, nil))
		// The refused message was released: nothing stays allocated.
		CheckBalanced(t, env.E, fmt.Sprintf("rank %d after SendAM on a closed engine", env.Rank()))
	}
	_, err = pre.Register(ce.HostMem(make([]byte, 8)))
	check("Register", err)
	if reg != nil {
		x := ce.Transfer{Local: reg, Remote: reg.Key(), Len: 8}
		check("Get", pre.Get(x, nil))
		check("Put", pre.Put(x, nil))
		if err := reg.Release(); err != nil {
			t.Errorf("Release after Close: %v", err)
		}
	}
	check("Barrier", pre.Barrier(ctx))
}

// Invariant21: handlers and done callbacks never run concurrently with each other.
func Invariant21(t *testing.T, env *Env) {
	var in, overlap, got, notes atomic.Int64
	enter := func() {
		if !in.CompareAndSwap(0, 1) {
			overlap.Add(1)
		}
		runtime.Gosched() // widen the window a concurrent callback would need
	}
	leave := func() { in.Store(0) }
	Register(t, env.E, tag21, 8, func(*ce.Caller, ce.Rank, []byte) { enter(); got.Add(1); leave() })
	Register(t, env.E, tag21n, 8, func(*ce.Caller, ce.Rank, []byte) { enter(); notes.Add(1); leave() })
	const k, xfers = 300, 20
	buf := make([]byte, 3*xfers*128) // one region per Put: concurrent copies never overlap
	reg := RegisterMem(t, Attach(t, env.E, ce.RoleOther, "owner"), buf)
	remote := env.ExchangeKey(t, reg.Key())
	env.Sync(t)
	var dones atomic.Int64
	done := func(*ce.Caller, error) { enter(); dones.Add(1); leave() }
	var wg sync.WaitGroup
	for i, r := range []ce.Role{ce.RoleWorker, ce.RoleWorker, ce.RoleDeviceManager} {
		c := Attach(t, env.E, r, fmt.Sprint(r, i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := RegisterMem(t, c, make([]byte, 128))
			defer local.Release()
			for j := range k {
				Send(t, c, env.Next(), tag21, []byte{byte(j)}, done)
				if j%(k/xfers) == 0 {
					off := 128 * (i*xfers + j/(k/xfers))
					if err := c.Put(ce.Transfer{Local: local, Remote: remote, RemoteOff: off, Len: 128, Notify: tag21n}, done); err != nil {
						t.Errorf("put: %v", err)
					}
				}
			}
		}()
	}
	wg.Wait()
	WaitFor(t, "callbacks", func() bool { return dones.Load() == 3*(k+xfers) && got.Load() == 3*k && notes.Load() == 3*xfers })
	env.Sync(t)
	reg.Release()
	if overlap.Load() != 0 || env.E.Stats().CallbackOverlaps != 0 {
		t.Errorf("rank %d: %d overlapping callbacks (engine counted %d)", env.Rank(), overlap.Load(), env.E.Stats().CallbackOverlaps)
	}
}

// Invariant22: a handler that replies never deadlocks: 10^4 round trips between pairs
// of ranks, every reply sent from the handler.
func Invariant22(t *testing.T, env *Env) {
	const rounds = 10_000
	partner := env.Rank() ^ 1
	active := int(partner) < env.Size()
	initiator := env.Rank()%2 == 0
	var count atomic.Int64
	finished := make(chan struct{})
	Register(t, env.E, tag22, 8, func(c *ce.Caller, src ce.Rank, p []byte) {
		if initiator && count.Add(1) == rounds {
			close(finished)
			return
		}
		m, err := c.TryNewMsg(8)
		if err != nil {
			t.Errorf("reply: %v", err)
			return
		}
		copy(m.Bytes(), p)
		if err := c.SendAM(src, tag22, m, nil); err != nil {
			t.Errorf("reply: %v", err)
		}
	})
	env.Sync(t)
	if active && initiator {
		c := Attach(t, env.E, ce.RoleWorker, "pinger")
		Send(t, c, partner, tag22, []byte("ping"), nil)
		select {
		case <-finished:
		case <-time.After(Timeout):
			Fatalf(t, "rank %d: ping-pong stuck after %d round trips", env.Rank(), count.Load())
		}
	}
	env.Sync(t)
}

// RegisterMem registers b or fails the test.
func RegisterMem(t testing.TB, c *ce.Caller, b []byte) *ce.MemReg {
	t.Helper()
	r, err := c.Register(ce.HostMem(b))
	if err != nil {
		Fatalf(t, "register: %v", err)
	}
	return r
}

// WaitGroupWait waits for wg with the suite's timeout.
func WaitGroupWait(t testing.TB, wg *sync.WaitGroup) {
	t.Helper()
	ch := make(chan struct{})
	go func() { wg.Wait(); close(ch) }()
	select {
	case <-ch:
	case <-time.After(Timeout):
		Fatalf(t, "timed out waiting for completions")
	}
}
