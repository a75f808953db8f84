package ce

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// Strict wraps a Transport and records the OS thread of every call (docs/ce.md, "Backends", strict
// mode). It reports PinThread, so the Engine locks its comm goroutine to one OS thread, and
// takes that thread's id at Start. A call from another thread is a violation when the
// transport's level forbids it: always for Start, Poll and Close, and for everything below
// LevelMultiple. A Poll from another thread is refused (it returns nothing), so a violation is
// an error, never a race. Use it in tests and to audit a new backend.
type Strict struct {
	t       Transport
	commTID atomic.Int64

	calls, foreign, violations atomic.Int64
	pollForeign                atomic.Int64
	perMethod                  sync.Map // method name → *atomic.Int64 (foreign calls)
	mu                         sync.Mutex
	errs                       []error
}

// NewStrict wraps t.
func NewStrict(t Transport) *Strict { return &Strict{t: t} }

// StrictReport is what a Strict checker saw.
type StrictReport struct {
	Calls       int64            // transport calls
	Foreign     int64            // calls from an OS thread other than the comm thread
	Violations  int64            // foreign calls the level forbids
	PollForeign int64            // Polls from another thread (refused)
	ByMethod    map[string]int64 // foreign calls by method
	Errors      []error          // one per violation (the first 100)
}

// Report returns the counts so far.
func (s *Strict) Report() StrictReport {
	r := StrictReport{
		Calls:       s.calls.Load(),
		Foreign:     s.foreign.Load(),
		Violations:  s.violations.Load(),
		PollForeign: s.pollForeign.Load(),
		ByMethod:    map[string]int64{},
	}
	s.perMethod.Range(func(k, v any) bool {
		r.ByMethod[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	s.mu.Lock()
	r.Errors = append(r.Errors, s.errs...)
	s.mu.Unlock()
	return r
}

// CommThread is the OS thread id the transport was started on (0 before Start).
func (s *Strict) CommThread() int64 { return s.commTID.Load() }

// check records one call; commOnly marks calls that only the comm goroutine may make.
func (s *Strict) check(method string, commOnly bool) bool {
	s.calls.Add(1)
	tid := gettid()
	if tid == s.commTID.Load() || s.commTID.Load() == 0 {
		return true
	}
	s.foreign.Add(1)
	v, _ := s.perMethod.LoadOrStore(method, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
	if !commOnly && s.t.Caps().Level == LevelMultiple {
		return true
	}
	s.violations.Add(1)
	s.mu.Lock()
	if len(s.errs) < 100 {
		s.errs = append(s.errs, fmt.Errorf("%w: %s from OS thread %d (comm thread %d)", ErrNotCommGoroutine, method, tid, s.commTID.Load()))
	}
	s.mu.Unlock()
	return false
}

func (s *Strict) Start(ctx context.Context) (Rank, int, error) {
	s.commTID.Store(gettid())
	s.calls.Add(1)
	return s.t.Start(ctx)
}

func (s *Strict) Caps() Caps {
	c := s.t.Caps()
	c.PinThread = true
	return c
}

func (s *Strict) RegisterTag(t Tag, maxLen int) error {
	s.check("RegisterTag", false)
	return s.t.RegisterTag(t, maxLen)
}

func (s *Strict) UnregisterTag(t Tag) error {
	s.check("UnregisterTag", false)
	return s.t.UnregisterTag(t)
}

func (s *Strict) SendAM(t Tag, dst Rank, m *Msg) error {
	s.check("SendAM", false)
	return s.t.SendAM(t, dst, m)
}

func (s *Strict) Register(m Mem) (LocalKey, error) {
	s.check("Register", false)
	return s.t.Register(m)
}

func (s *Strict) Unregister(k LocalKey) error {
	s.check("Unregister", false)
	return s.t.Unregister(k)
}

func (s *Strict) SendData(dst Rank, dtag uint32, k LocalKey, off, n int, id OpID) error {
	s.check("SendData", false)
	return s.t.SendData(dst, dtag, k, off, n, id)
}

func (s *Strict) RecvData(src Rank, dtag uint32, k LocalKey, off, n int, id OpID) error {
	s.check("RecvData", false)
	return s.t.RecvData(src, dtag, k, off, n, id)
}

func (s *Strict) Cancel(id OpID) error {
	s.check("Cancel", false)
	return s.t.Cancel(id)
}

func (s *Strict) Barrier(id OpID) error {
	s.check("Barrier", false)
	return s.t.Barrier(id)
}

func (s *Strict) Poll(ev []Event) int {
	if !s.check("Poll", true) {
		s.pollForeign.Add(1)
		return 0
	}
	return s.t.Poll(ev)
}

func (s *Strict) Wake() <-chan struct{} { return s.t.Wake() }

func (s *Strict) Close() error {
	s.check("Close", true)
	return s.t.Close()
}

// AllocBuffer and FreeBuffer pass through to the wrapped transport's allocator, if any.
func (s *Strict) AllocBuffer(n int) []byte {
	if a, ok := s.t.(BufferAllocator); ok {
		return a.AllocBuffer(n)
	}
	return make([]byte, n)
}

func (s *Strict) FreeBuffer(b []byte) {
	if a, ok := s.t.(BufferAllocator); ok {
		a.FreeBuffer(b)
	}
}

// AbandonPeer passes through to the wrapped transport, if it can abandon a peer.
func (s *Strict) AbandonPeer(r Rank) bool {
	s.check("AbandonPeer", true)
	if a, ok := s.t.(PeerAbandoner); ok {
		return a.AbandonPeer(r)
	}
	return false
}
