package ce

import (
	"context"
	"fmt"
	"hash/crc32"
	"math/bits"
	"sync"
	"sync/atomic"
)

// Msg is a CE-owned message buffer (docs/ce.md, "Messages and buffers"). Its life:
//
//	NewMsg/TryNewMsg → owned by the caller (write Bytes)
//	SendAM           → submitted: the caller has lost every right to it, on either path
//	completion       → released by the Engine, exactly once (or Discard before SendAM)
//
// A *Msg is never reused: a stale pointer keeps pointing at a released header, so a second
// release or a late Bytes call is caught instead of touching another message. Only the
// buffer memory is recycled, through size-class pools under a byte budget.
type Msg struct {
	pool     *msgPool
	buf      []byte // the size-class buffer; len(buf) is the class size
	n        int
	class    int
	internal bool // Engine handshake traffic: outside the budget
	beat     bool // a heartbeat: one per peer, owned by the Engine for its life, never pooled
	state    atomic.Uint32

	// Set by SendAM.
	tp   TaskpoolID
	done Done
	tag  Tag
	dst  Rank
	sum  uint32 // debug: checksum at submit
	x    *xfer  // internal handshake message: the transfer it belongs to
}

const (
	msgOwned uint32 = iota + 1
	msgSubmitted
	msgReleased
)

// Done is a completion callback. It runs on the comm goroutine, serially with handlers and
// other callbacks, and gets the comm goroutine's Caller so that follow-up operations go
// direct. It must not block.
type Done func(c *Caller, err error)

// Bytes returns the message payload, writable while the caller owns the message. After
// SendAM or Discard it returns nil (and the misuse is reported).
func (m *Msg) Bytes() []byte {
	if m.state.Load() != msgOwned {
		m.pool.report(fmt.Errorf("%w: Msg.Bytes after SendAM or Discard", ErrReleased))
		return nil
	}
	return m.buf[:m.n:m.n]
}

// Len is the payload length.
func (m *Msg) Len() int { return m.n }

// Cap is the largest length SetLen accepts.
func (m *Msg) Cap() int { return min(len(m.buf), m.pool.maxAM) }

// SetLen changes the payload length (to shrink a message packed into a larger buffer).
func (m *Msg) SetLen(n int) error {
	if m.state.Load() != msgOwned {
		return fmt.Errorf("%w: Msg.SetLen after SendAM or Discard", ErrReleased)
	}
	if n < 0 || n > m.Cap() {
		return fmt.Errorf("%w: SetLen(%d), capacity %d", ErrTooLarge, n, m.Cap())
	}
	m.n = n
	return nil
}

// SetTaskpool makes the send count toward taskpool tp's in-flight counter.
func (m *Msg) SetTaskpool(tp TaskpoolID) { m.tp = tp }

// Discard gives back a message that will not be sent. A second Discard, or a Discard after
// SendAM, returns ErrReleased and is reported.
func (m *Msg) Discard() error {
	if !m.state.CompareAndSwap(msgOwned, msgReleased) {
		err := fmt.Errorf("%w: Discard of a message already submitted or released", ErrReleased)
		m.pool.report(err)
		return err
	}
	m.pool.release(m)
	return nil
}

// Wire is for transports: the bytes to send, valid from SendAM to the message's
// EventSendDone.
func (m *Msg) Wire() []byte { return m.buf[:m.n] }

// submit moves an owned message to submitted (SendAM). In debug mode it records a checksum so
// that a write after submit is found at completion.
func (m *Msg) submit() error {
	if !m.state.CompareAndSwap(msgOwned, msgSubmitted) {
		err := fmt.Errorf("%w: SendAM of a message already submitted or released", ErrReleased)
		m.pool.report(err)
		return err
	}
	if m.pool.debug {
		m.sum = crc32.Checksum(m.buf[:m.n], crcTable)
	}
	return nil
}

// finish releases a submitted message: the one place a sent message goes back to the pool
// (docs/ce.md, "Messages and buffers", "released exactly once: on local completion, on any error,
// or on Close"). It reports a second release instead of performing it.
func (m *Msg) finish() error {
	if !m.state.CompareAndSwap(msgSubmitted, msgReleased) {
		err := fmt.Errorf("%w: message completed twice", ErrReleased)
		m.pool.report(err)
		return err
	}
	var err error
	if m.pool.debug && crc32.Checksum(m.buf[:m.n], crcTable) != m.sum {
		err = fmt.Errorf("%w: tag %d to rank %d", ErrMsgModified, m.tag, m.dst)
		m.pool.report(err)
	}
	m.pool.release(m)
	return err
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// poison is the byte released buffers and spent handler payloads are filled with in debug
// mode; finding anything else in a free buffer means someone wrote after release.
const poison = 0xDB

func fillPoison(b []byte) {
	for i := range b {
		b[i] = poison
	}
}

func isPoisoned(b []byte) bool {
	for _, c := range b {
		if c != poison {
			return false
		}
	}
	return true
}

// Size classes: powers of two from 64 bytes.
const minClassShift = 6

func classOf(n int) int {
	if n <= 1<<minClassShift {
		return 0
	}
	return bits.Len(uint(n-1)) - minClassShift
}

func classSize(c int) int { return 1 << (c + minClassShift) }

// msgPool hands out message buffers by size class under a byte budget. It is goroutine-safe.
type msgPool struct {
	alloc  BufferAllocator // nil: Go memory
	budget int64
	maxAM  int
	debug  bool
	report func(error)

	used    atomic.Int64 // class bytes of budgeted messages not yet released
	cached  atomic.Int64 // bytes sitting in the free lists
	classes []poolClass
	closed  atomic.Bool

	waiting atomic.Int32
	waitMu  sync.Mutex
	waitCh  chan struct{} // closed and replaced when bytes come back and someone waits

	allocs, releases atomic.Int64
}

type poolClass struct {
	mu   sync.Mutex
	free [][]byte
}

func newMsgPool(alloc BufferAllocator, budget int64, maxAM int, debug bool, report func(error)) *msgPool {
	return &msgPool{
		alloc:   alloc,
		budget:  budget,
		maxAM:   maxAM,
		debug:   debug,
		report:  report,
		classes: make([]poolClass, classOf(max(maxAM, 1))+1),
		waitCh:  make(chan struct{}),
	}
}

// tryGet returns a message of n bytes, or ErrNoBuffers when the budget is spent.
func (p *msgPool) tryGet(n int, internal bool) (*Msg, error) {
	if n < 0 || n > p.maxAM {
		return nil, fmt.Errorf("%w: message of %d bytes, MaxAM %d", ErrTooLarge, n, p.maxAM)
	}
	c := classOf(n)
	size := int64(classSize(c))
	if !internal {
		if size > p.budget {
			return nil, fmt.Errorf("%w: message of %d bytes exceeds the buffer budget of %d", ErrTooLarge, n, p.budget)
		}
		for {
			u := p.used.Load()
			if u+size > p.budget {
				return nil, ErrNoBuffers
			}
			if p.used.CompareAndSwap(u, u+size) {
				break
			}
		}
	}
	buf, err := p.take(c)
	if err != nil {
		if !internal {
			p.used.Add(-size)
		}
		return nil, err
	}
	m := &Msg{pool: p, buf: buf, n: n, class: c, internal: internal}
	m.state.Store(msgOwned)
	p.allocs.Add(1)
	return m, nil
}

// get waits for budget until ctx ends.
func (p *msgPool) get(ctx context.Context, n int) (*Msg, error) {
	for {
		m, err := p.tryGet(n, false)
		if err != ErrNoBuffers {
			return m, err
		}
		// Announce the wait, then look once more: a release either sees waiting > 0 and
		// signals, or happened before the second look, which then succeeds.
		p.waitMu.Lock()
		ch := p.waitCh
		p.waitMu.Unlock()
		p.waiting.Add(1)
		m, err = p.tryGet(n, false)
		if err != ErrNoBuffers {
			p.waiting.Add(-1)
			return m, err
		}
		select {
		case <-ch:
			p.waiting.Add(-1)
		case <-ctx.Done():
			p.waiting.Add(-1)
			return nil, fmt.Errorf("%w: waiting for message buffers: %w", ErrNoBuffers, ctx.Err())
		}
	}
}

func (p *msgPool) take(c int) ([]byte, error) {
	pc := &p.classes[c]
	pc.mu.Lock()
	if p.closed.Load() {
		pc.mu.Unlock()
		return nil, ErrClosed
	}
	var buf []byte
	if k := len(pc.free); k > 0 {
		buf = pc.free[k-1]
		pc.free[k-1] = nil
		pc.free = pc.free[:k-1]
	}
	pc.mu.Unlock()
	if buf == nil {
		size := classSize(c)
		if p.alloc != nil {
			buf = p.alloc.AllocBuffer(size)
		} else {
			buf = make([]byte, size)
		}
		if p.debug {
			fillPoison(buf)
		}
		return buf, nil
	}
	p.cached.Add(-int64(len(buf)))
	if p.debug && !isPoisoned(buf) {
		p.report(fmt.Errorf("%w: a message buffer was written after it was released", ErrReleased))
		fillPoison(buf)
	}
	return buf, nil
}

func (p *msgPool) release(m *Msg) {
	if p.debug {
		fillPoison(m.buf)
	}
	size := int64(len(m.buf))
	pc := &p.classes[m.class]
	pc.mu.Lock()
	keep := !p.closed.Load() && p.cached.Load()+size <= p.budget
	if keep {
		pc.free = append(pc.free, m.buf)
		p.cached.Add(size)
	}
	pc.mu.Unlock()
	if !keep {
		p.freeBuf(m.buf)
	}
	m.buf = nil
	p.releases.Add(1)
	if !m.internal {
		p.used.Add(-size)
		if p.waiting.Load() > 0 {
			p.waitMu.Lock()
			close(p.waitCh)
			p.waitCh = make(chan struct{})
			p.waitMu.Unlock()
		}
	}
}

func (p *msgPool) freeBuf(b []byte) {
	if p.alloc != nil {
		p.alloc.FreeBuffer(b)
	}
}

// close frees the cached buffers; buffers still out are freed as they come back.
func (p *msgPool) close() {
	p.closed.Store(true)
	for i := range p.classes {
		pc := &p.classes[i]
		pc.mu.Lock()
		free := pc.free
		pc.free = nil
		pc.mu.Unlock()
		for _, b := range free {
			p.cached.Add(-int64(len(b)))
			p.freeBuf(b)
		}
	}
	p.waitMu.Lock()
	close(p.waitCh)
	p.waitCh = make(chan struct{})
	p.waitMu.Unlock()
}
