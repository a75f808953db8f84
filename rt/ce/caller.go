package ce

import (
	"context"
	"fmt"
	"sync/atomic"
)

// Caller is one goroutine's handle on the Engine: a worker, a device manager, a test, or the
// comm goroutine itself (handed to handlers and callbacks). Its path is fixed for its life
// (docs/ce.md, "Callers and paths"): direct callers call the transport themselves, the others
// shift every operation to the comm goroutine, fire and forget. Either way completions are found
// by the comm goroutine, so done callbacks always run there.
//
// A Caller may be used from several goroutines, but messages are ordered per Caller only
// when its calls are ordered (one goroutine, as with a worker or a device manager).
type Caller struct {
	e      *Engine
	role   Role
	name   string
	direct bool // fixed before the first operation (Attach after Start, or Start)

	active   atomic.Int32 // operations in progress: Close waits for zero
	nDirect  atomic.Int64
	nShifted atomic.Int64
}

// Role is the role the Caller was attached with.
func (c *Caller) Role() Role { return c.role }

// Rank is the Engine's rank.
func (c *Caller) Rank() Rank { return c.e.rank }

// Engine is the Engine the Caller belongs to.
func (c *Caller) Engine() *Engine { return c.e }

// Name is the name given at Attach.
func (c *Caller) Name() string { return c.name }

// Direct reports whether the Caller calls the transport itself (valid once the Engine has
// started).
func (c *Caller) Direct() bool { return c.direct }

// CallerStats counts a Caller's operations by path; one of the two is always zero.
type CallerStats struct{ Direct, Shifted int64 }

// Stats returns the Caller's counters.
func (c *Caller) Stats() CallerStats {
	return CallerStats{Direct: c.nDirect.Load(), Shifted: c.nShifted.Load()}
}

// enter admits an operation; exit ends it. Close sets the closing state first and then waits
// for every Caller's active count to reach zero, so an operation either sees closing here or
// is finished before the comm goroutine drains for the last time.
func (c *Caller) enter() error {
	if c.role != RoleComm {
		c.active.Add(1)
	}
	switch st := c.e.state.Load(); {
	case st == stateRunning:
		return nil
	case st < stateRunning:
		c.exit()
		return ErrNotStarted
	default:
		c.exit()
		return ErrClosed
	}
}

func (c *Caller) exit() {
	if c.role != RoleComm {
		c.active.Add(-1)
	}
}

func (c *Caller) count() {
	if c.direct {
		c.nDirect.Add(1)
	} else {
		c.nShifted.Add(1)
	}
}

// shift hands o to the comm goroutine.
func (c *Caller) shift(o op) error {
	if !c.e.sq.push(o) {
		return ErrClosed
	}
	c.e.kick()
	return nil
}

// NewMsg returns a CE-owned buffer of n bytes, waiting while the buffer budget is spent until
// ctx ends. Two roles never wait and get TryNewMsg's behaviour instead: device managers (they
// never block on the network) and the comm goroutine's Caller (the releases it would wait for
// run on its own goroutine).
func (c *Caller) NewMsg(ctx context.Context, n int) (*Msg, error) {
	if err := c.enter(); err != nil {
		return nil, err
	}
	c.exit() // waiting for budget does not hold Close up
	if c.role == RoleComm || c.role == RoleDeviceManager {
		return c.e.pool.tryGet(n, false)
	}
	return c.e.pool.get(ctx, n)
}

// TryNewMsg is NewMsg without waiting: ErrNoBuffers when the budget is spent. Device
// managers use only this and treat ErrNoBuffers like AGAIN.
func (c *Caller) TryNewMsg(n int) (*Msg, error) {
	if err := c.enter(); err != nil {
		return nil, err
	}
	c.exit()
	return c.e.pool.tryGet(n, false)
}

// SendAM sends m to handler tag t on rank dst and takes m: from here on the caller has no
// right to it, whatever the path and whatever the result. A nil return promises one call of
// done (if not nil) on the comm goroutine; an error (ErrTagRange, ErrUnknownTag, ErrTooLarge,
// ErrClosed, …) means nothing was sent, done will not be called, and m was already released.
// Messages from one Caller to one (dst, t) arrive in send order.
func (c *Caller) SendAM(dst Rank, t Tag, m *Msg, done Done) error {
	if m == nil {
		return fmt.Errorf("%w: nil message", ErrReleased)
	}
	if err := m.submit(); err != nil {
		return err // not ours to release: it was already submitted or released
	}
	m.tag, m.dst, m.done = t, dst, done
	e := c.e
	if err := c.enter(); err != nil {
		m.finish()
		return err
	}
	defer c.exit()
	if err := e.checkSend(dst, t, m.n); err != nil {
		m.finish()
		return err
	}
	c.count()
	e.countStart(m.tp)
	e.amPending.Add(1)
	if c.direct {
		e.postAM(m, c.role == RoleComm)
		return nil
	}
	if !e.sq.push(op{kind: opSendAM, msg: m}) {
		// Cannot happen while this Caller is active (Close seals only after every Caller
		// left), but never lose a buffer.
		e.amPending.Add(-1)
		e.countDone(m.tp)
		m.finish()
		return ErrClosed
	}
	e.kick()
	return nil
}

func (e *Engine) checkSend(dst Rank, t Tag, n int) error {
	if t < FirstRTTag || t >= MaxTags {
		return fmt.Errorf("%w: %d", ErrTagRange, t)
	}
	ent := &e.tags.Load()[t]
	if ent.h == nil {
		return fmt.Errorf("%w: %d", ErrUnknownTag, t)
	}
	if n > ent.maxLen {
		return fmt.Errorf("%w: %d bytes on tag %d (maximum %d)", ErrTooLarge, n, t, ent.maxLen)
	}
	if dst < 0 || int(dst) >= e.size {
		return fmt.Errorf("%w: rank %d of %d", ErrBadRank, dst, e.size)
	}
	return nil
}

// postAM hands an accepted message to the transport (direct callers and the comm goroutine).
func (e *Engine) postAM(m *Msg, onComm bool) {
	var err error
	if e.peers[m.dst].lost.Load() {
		err = fmt.Errorf("%w: rank %d", ErrPeerLost, m.dst)
	} else if err = e.t.SendAM(m.tag, m.dst, m); err == nil {
		e.peers[m.dst].sent.Add(1)
		e.peers[m.dst].sentBytes.Add(int64(m.n))
		if !onComm {
			e.kick() // a loop that cannot be woken by the transport must poll for this
		}
		return
	}
	if onComm {
		e.completeAM(m, err)
		return
	}
	if !e.sq.push(op{kind: opFailAM, msg: m, err: err}) {
		e.completeAM(m, err) // unreachable while the caller is active; never lose m
		return
	}
	e.kick()
}

// sendInternal sends one of the Engine's own messages (handshakes, shutdown). They are outside
// the buffer budget, so a transfer never waits for budget that only it could free.
func (e *Engine) sendInternal(dst Rank, t Tag, fill func([]byte) []byte, size int, x *xfer, onComm bool) error {
	m, err := e.pool.tryGet(size, true)
	if err != nil {
		return err
	}
	m.n = len(fill(m.buf[:0]))
	if err := m.submit(); err != nil {
		return err
	}
	m.tag, m.dst, m.x = t, dst, x
	e.amPending.Add(1)
	e.postAM(m, onComm)
	return nil
}

// Register registers m for Get and Put and returns the owner's reference. Go memory is pinned
// for the registration's life when the transport keeps addresses (MPI). Device memory needs
// Caps.GPUMemory (otherwise stage it to host memory first).
func (c *Caller) Register(m Mem) (*MemReg, error) {
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	e := c.e
	if m.IsDevice() && !e.caps.GPUMemory {
		return nil, ErrDeviceMemory
	}
	r := &MemReg{e: e, mem: m}
	r.refs.Store(1)
	r.owned.Store(true)
	if e.caps.PinMemory && len(m.Host) > 0 {
		r.pinner.Pin(&m.Host[0])
		r.pinned = true
	}
	if !e.regs.add(r) {
		r.drop(false)
		return nil, ErrClosed
	}
	c.count()
	if c.direct {
		if _, err := r.ensure(); err != nil {
			e.regs.remove(r)
			r.drop(true)
			return nil, fmt.Errorf("ce: register: %w", err)
		}
		return r, nil
	}
	if err := c.shift(op{kind: opRegister, reg: r}); err != nil {
		e.regs.remove(r)
		r.drop(false)
		return nil, err
	}
	return r, nil
}

// unregister ends r's transport registration on the comm goroutine.
func (e *Engine) unregister(r *MemReg) {
	r.drop(true)
	e.regs.remove(r)
}

// Get copies x.Len bytes from the peer's registration x.Remote (at x.RemoteOff) into x.Local
// (at x.LocalOff). done runs on this rank once the bytes are here; the peer's handler for
// x.Notify (if not NoTag) runs there, with x.Note, once its side has completed. A validation
// error (ErrOutOfRange, ErrBadKey, ErrUnknownTag, ErrTooLarge, ErrClosed) is returned at once,
// before any traffic, and done is not called; later failures (ErrBadKey from the peer,
// ErrPeerLost, shutdown) go to done.
func (c *Caller) Get(x Transfer, done Done) error { return c.transfer(xGet, x, done) }

// Put copies x.Len bytes from x.Local (at x.LocalOff) into the peer's registration x.Remote
// (at x.RemoteOff); completion and notification as for Get.
func (c *Caller) Put(x Transfer, done Done) error { return c.transfer(xPut, x, done) }

// Barrier waits until every rank has entered a barrier. It is collective: all ranks call it in
// the same order, one at a time per Engine. Device managers may not call it (they never wait
// on the network), nor may handlers (the comm goroutine would wait on itself): ErrWrongRole.
// If ctx ends first Barrier returns ctx's error, and the barrier still completes in the
// background.
func (c *Caller) Barrier(ctx context.Context) error {
	if c.role == RoleDeviceManager || c.role == RoleComm {
		return fmt.Errorf("%w: %v may not wait on a barrier", ErrWrongRole, c.role)
	}
	e := c.e
	e.barMu.Lock()
	defer e.barMu.Unlock()
	if err := c.enter(); err != nil {
		return err
	}
	b := &barrier{id: e.newID(), done: make(chan error, 1)}
	e.barriers.Store(b.id, b)
	e.barPending.Add(1)
	c.count()
	if c.direct {
		if err := e.t.Barrier(b.id); err != nil {
			e.barriers.Delete(b.id)
			e.barPending.Add(-1)
			c.exit()
			return err
		}
		e.kick()
	} else if err := c.shift(op{kind: opBarrier, bar: b}); err != nil {
		e.barriers.Delete(b.id)
		e.barPending.Add(-1)
		c.exit()
		return err
	}
	c.exit() // waiting does not hold Close up
	select {
	case err := <-b.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// barrier is one Barrier call in flight.
type barrier struct {
	id       OpID
	internal bool
	done     chan error
	err      error
	finished bool
}
