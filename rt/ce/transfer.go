package ce

import (
	"container/heap"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// Transfer describes a Get or a Put.
type Transfer struct {
	Local     *MemReg   // this rank's registration
	LocalOff  int       // offset in Local
	Remote    RemoteKey // the peer's registration; the peer is Remote.Rank()
	RemoteOff int       // offset in Remote
	Len       int       // bytes to move (0 is allowed: the handshake still runs)
	Notify    Tag       // tag whose handler runs on the peer when its side completes; NoTag: none
	Note      []byte    // payload for that handler (copied at submit; at most 256 bytes)
	Prio      int32     // higher starts first when the window is full
	Taskpool  TaskpoolID
}

// One-sided transfers are emulated over two-sided transports like PaRSEC's rendezvous
// (docs/ce.md, "The distributed layer"), with ids and registered notify tags instead of pointers
// on the wire. The rank that receives the data always allocates its data tag, from its per-peer
// counter, so tags never collide.
//
//	Get (A reads B):  A posts RecvData(B, dtag)  →  A sends GETREQ{id, key, off, n, dtag}
//	                  B checks the key (NACK if bad) → B SendData(A, dtag) when its serve window allows
//	                  A: RecvData done → done(nil)       B: SendData done → notify handler
//	Put (A writes B): A sends PUTREQ{id, key, off, n} → B checks, posts RecvData(A, dtag), sends CTS{id, dtag}
//	                  A: SendData(B, dtag) → done(nil)   B: RecvData done → notify handler
//
// A NACK to a Get cancels A's posted receive first, so the memory is quiet before done runs.

type xferKind uint8

const (
	xGet xferKind = iota + 1
	xPut
	xServeGet
	xServePut
)

func (k xferKind) served() bool { return k >= xServeGet }

// Transfer states. A state is an atomic because a direct caller starts a transfer while the
// comm goroutine may already be failing it (peer lost); everything else about a started
// transfer belongs to the comm goroutine.
const (
	xQueued   uint32 = iota // accepted, no window slot yet
	xStarting               // holds a slot, not yet posted
	xWaitCTS                // Put: request sent
	xWaitData               // data operation posted
	xDone
)

// xfer is one transfer, on the initiating or the serving side.
type xfer struct {
	id     OpID
	kind   xferKind
	state  atomic.Uint32
	slot   bool // holds a window slot
	peer   Rank
	reg    *MemReg // local registration, referenced
	off, n int
	// Initiator: the remote key. Served: unused.
	rslot, rgen uint32
	rlen        int64
	roff        int
	dtag        uint32
	remoteID    OpID // served: the initiator's id
	notify      Tag
	note        []byte
	prio        int32
	tp          TaskpoolID
	done        Done
	nackErr     error // the peer refused (Get: completes once the cancel did)

	seq uint64 // FIFO among equal priorities
}

// xferTable finds transfers by id. Direct callers add; the comm goroutine looks up and
// removes.
type xferTable struct {
	mu sync.Mutex
	m  map[OpID]*xfer
}

func (t *xferTable) put(x *xfer) {
	t.mu.Lock()
	t.m[x.id] = x
	t.mu.Unlock()
}

func (t *xferTable) get(id OpID) *xfer {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[id]
}

func (t *xferTable) del(id OpID) {
	t.mu.Lock()
	delete(t.m, id)
	t.mu.Unlock()
}

func (t *xferTable) all() []*xfer {
	t.mu.Lock()
	defer t.mu.Unlock()
	xs := make([]*xfer, 0, len(t.m))
	for _, x := range t.m {
		xs = append(xs, x)
	}
	return xs
}

// window bounds the transfers in the transport (the can_serve analogue) and holds the rest in
// a priority heap. Invariant: the heap is non-empty only while the window is full, so a newly
// admitted transfer never overtakes a queued one of higher priority.
type window struct {
	mu     sync.Mutex
	max    int
	active int
	hwm    int
	seq    uint64
	q      xferHeap
}

// admit takes a slot for x (true: start it now) or queues it.
func (w *window) admit(x *xfer) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.q) == 0 && w.active < w.max {
		w.active++
		w.hwm = max(w.hwm, w.active)
		x.slot = true
		return true
	}
	w.seq++
	x.seq = w.seq
	heap.Push(&w.q, x)
	return false
}

// release frees a slot and returns the queued transfer that takes it over, if any.
func (w *window) release() *xfer {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.q) > 0 {
		x := heap.Pop(&w.q).(*xfer) // the slot passes to it: active unchanged
		x.slot = true
		return x
	}
	w.active--
	return nil
}

// remove takes the queued transfers that match out of the heap.
func (w *window) remove(match func(*xfer) bool) []*xfer {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*xfer
	kept := w.q[:0]
	for _, x := range w.q {
		if match(x) {
			out = append(out, x)
		} else {
			kept = append(kept, x)
		}
	}
	for i := len(kept); i < len(w.q); i++ {
		w.q[i] = nil
	}
	w.q = kept
	heap.Init(&w.q)
	return out
}

func (w *window) highWater() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.hwm
}

type xferHeap []*xfer

func (h xferHeap) Len() int { return len(h) }
func (h xferHeap) Less(i, j int) bool {
	if h[i].prio != h[j].prio {
		return h[i].prio > h[j].prio
	}
	return h[i].seq < h[j].seq
}
func (h xferHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *xferHeap) Push(v any)   { *h = append(*h, v.(*xfer)) }
func (h *xferHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return x
}

// transfer validates and submits a Get or Put.
func (c *Caller) transfer(kind xferKind, t Transfer, done Done) error {
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	e := c.e
	if err := e.checkTransfer(&t); err != nil {
		return err
	}
	if !t.Local.ref() {
		return fmt.Errorf("%w: transfer on a released registration", ErrReleased)
	}
	x := &xfer{
		id: e.newID(), kind: kind, peer: t.Remote.rank, reg: t.Local,
		off: t.LocalOff, n: t.Len,
		rslot: t.Remote.slot, rgen: t.Remote.gen, rlen: t.Remote.n, roff: t.RemoteOff,
		notify: t.Notify, note: append([]byte(nil), t.Note...), prio: t.Prio, tp: t.Taskpool, done: done,
	}
	c.count()
	e.countStart(x.tp)
	e.xferPending.Add(1)
	e.xfers.put(x)
	if !c.direct {
		if err := c.shift(op{kind: opXfer, x: x}); err != nil {
			e.xfers.del(x.id)
			e.xferPending.Add(-1)
			e.countDone(x.tp)
			t.Local.unref(false)
			return err
		}
		return nil
	}
	if e.winInit.admit(x) {
		e.startXfer(x, c.role == RoleComm)
	} else {
		e.kick()
	}
	return nil
}

// checkTransfer is the validation done before any traffic (ErrOutOfRange, ErrBadKey, …).
func (e *Engine) checkTransfer(t *Transfer) error {
	if t.Local == nil || t.Local.e != e {
		return fmt.Errorf("%w: transfer without a registration of this engine", ErrBadKey)
	}
	if !t.Local.owned.Load() {
		return fmt.Errorf("%w: transfer on a released registration", ErrReleased)
	}
	k := t.Remote
	if k.gen == 0 || k.rank < 0 || int(k.rank) >= e.size || k.n < 0 {
		return fmt.Errorf("%w: %+v", ErrBadKey, k)
	}
	if t.Len < 0 || t.LocalOff < 0 || t.RemoteOff < 0 ||
		t.LocalOff > t.Local.Len()-t.Len || int64(t.RemoteOff) > k.n-int64(t.Len) {
		return fmt.Errorf("%w: %d bytes at local %d (of %d), remote %d (of %d)",
			ErrOutOfRange, t.Len, t.LocalOff, t.Local.Len(), t.RemoteOff, k.n)
	}
	if e.caps.MaxTransfer > 0 && t.Len > e.caps.MaxTransfer {
		return fmt.Errorf("%w: transfer of %d bytes, transport maximum %d", ErrTooLarge, t.Len, e.caps.MaxTransfer)
	}
	if t.Notify != NoTag {
		if t.Notify < FirstRTTag || t.Notify >= MaxTags {
			return fmt.Errorf("%w: notify tag %d", ErrTagRange, t.Notify)
		}
		if e.tags.Load()[t.Notify].h == nil {
			return fmt.Errorf("%w: notify tag %d", ErrUnknownTag, t.Notify)
		}
	}
	if len(t.Note) > e.cfg.maxNote {
		return fmt.Errorf("%w: note of %d bytes (maximum %d)", ErrTooLarge, len(t.Note), e.cfg.maxNote)
	}
	return nil
}

// startXfer starts an initiated transfer that holds a window slot. All of x is written before
// the first transport call; after it the caller only reads.
func (e *Engine) startXfer(x *xfer, onComm bool) {
	x.state.Store(xStarting)
	fail := func(err error) {
		if onComm {
			e.failXfer(x, err)
			return
		}
		if e.sq.push(op{kind: opXferFail, x: x, err: err}) {
			e.kick()
		}
	}
	if p := &e.peers[x.peer]; p.lost.Load() || p.closed.Load() {
		fail(fmt.Errorf("%w: rank %d", ErrPeerLost, x.peer))
		return
	}
	if e.tearing.Load() {
		fail(ErrClosed)
		return
	}
	lkey, err := x.reg.ensure()
	if err != nil {
		fail(err)
		return
	}
	req := xferReq{id: x.id, slot: x.rslot, gen: x.rgen, rlen: x.rlen, off: int64(x.roff), n: int64(x.n),
		notify: x.notify, prio: x.prio, note: x.note}
	size := xferReqHeader + len(x.note)
	tag := tagPutReq
	if x.kind == xGet {
		tag = tagGetReq
		x.dtag = e.peers[x.peer].nextDtag(e.caps.DataTagMax)
		req.dtag = x.dtag
		x.state.Store(xWaitData)
		if err := e.t.RecvData(x.peer, x.dtag, lkey, x.off, x.n, x.id); err != nil {
			x.state.Store(xStarting)
			fail(err)
			return
		}
	} else {
		x.state.Store(xWaitCTS)
	}
	if err := e.sendInternal(x.peer, tag, req.encode, size, x, onComm); err != nil {
		fail(err)
	}
}

// startNext starts a transfer that just got a window slot (comm goroutine).
func (e *Engine) startNext(x *xfer) {
	if x.kind.served() {
		e.startServed(x)
	} else {
		e.startXfer(x, true)
	}
}

func (p *peer) nextDtag(maxTag uint32) uint32 {
	v := p.dtag.Add(1)
	if maxTag == ^uint32(0) {
		return v
	}
	return v % (maxTag + 1)
}

// failXfer ends x with err (comm goroutine): a posted receive is cancelled first and x
// finishes when the transport reports it; anything else finishes now.
func (e *Engine) failXfer(x *xfer, err error) {
	switch x.state.Load() {
	case xDone:
	case xWaitData:
		if x.kind == xGet || x.kind == xServePut {
			if x.nackErr == nil {
				x.nackErr = err
				if cerr := e.t.Cancel(x.id); cerr != nil {
					e.report(fmt.Errorf("ce: cancel transfer %d: %w", x.id, cerr))
				}
			}
		}
		// A posted send completes (or fails) in the transport; its completion finishes x.
	default:
		e.finishXfer(x, err)
	}
}

// finishXfer completes x exactly once (comm goroutine, docs/ce.md, "Registrations and one-sided
// transfers"): drop the registration reference, pass the window slot on, count, and call back.
func (e *Engine) finishXfer(x *xfer, err error) {
	if x.state.Swap(xDone) == xDone {
		return
	}
	e.xfers.del(x.id)
	// The registration reference is dropped after the callback or notification, so the
	// memory stays registered until everyone who waited on this transfer has seen it done.
	defer x.reg.unref(true)
	if x.slot {
		x.slot = false
		win := &e.winInit
		if x.kind.served() {
			win = &e.winServ
		}
		if next := win.release(); next != nil {
			e.startNext(next)
		}
	}
	e.xferPending.Add(-1)
	e.countDone(x.tp)
	if err != nil {
		e.stats.xfersFail.Add(1)
	} else if p := int(x.peer); p >= 0 && p < len(e.peers) {
		if x.kind == xGet || x.kind == xServePut {
			e.peers[p].xferIn.Add(int64(x.n))
		} else {
			e.peers[p].xferOut.Add(int64(x.n))
		}
	}
	if x.kind.served() {
		if err != nil {
			e.report(fmt.Errorf("ce: serving a transfer for rank %d: %w", x.peer, err))
			return
		}
		e.stats.xfersServed.Add(1)
		if x.notify != NoTag {
			if h := e.tags.Load()[x.notify].h; h != nil {
				e.callHandler(h, x.peer, x.notify, x.note)
			}
		}
		return
	}
	if err == nil {
		e.stats.xfersInit.Add(1)
	}
	if x.done != nil {
		e.callDone(x.done, err)
	}
}

// dataDone handles a SendData/RecvData completion.
func (e *Engine) dataDone(id OpID, err error) {
	x := e.xfers.get(id)
	if x == nil {
		e.report(fmt.Errorf("ce: completion for unknown transfer %d", id))
		return
	}
	if x.nackErr != nil && (err == nil || isCanceled(err)) {
		if isCanceled(err) {
			err = x.nackErr
		}
		// err == nil: the data had already arrived when the cancel came; that is a success.
	}
	e.finishXfer(x, err)
}

// onXferReq serves a peer's GET or PUT request (comm goroutine).
func (e *Engine) onXferReq(src Rank, put bool, payload []byte) {
	req, err := decodeXferReq(payload)
	if err != nil {
		e.report(fmt.Errorf("ce: from rank %d: %w", src, err))
		return
	}
	nack := func(err error) {
		if serr := e.sendInternal(src, tagNack, func(b []byte) []byte {
			return encodeIDTag(b, req.id, uint32(nackCode(err)))
		}, 12, nil, true); serr != nil {
			e.report(fmt.Errorf("ce: nack to rank %d: %w", src, serr))
		}
	}
	if e.phase >= phaseFin {
		// This rank already told src it is done; src fails the transfer when it reads that.
		e.report(fmt.Errorf("%w: transfer request from rank %d after shutdown began", ErrClosed, src))
		return
	}
	reg := e.regs.lookup(req.slot, req.gen)
	if reg == nil {
		nack(ErrBadKey)
		return
	}
	if int64(reg.Len()) != req.rlen {
		reg.unref(true)
		nack(ErrBadKey) // a key with the right slot and generation but the wrong length is forged
		return
	}
	if req.off < 0 || req.n < 0 || req.off > req.rlen-req.n {
		reg.unref(true)
		nack(ErrOutOfRange)
		return
	}
	if req.notify != NoTag && (req.notify < FirstRTTag || req.notify >= MaxTags || e.tags.Load()[req.notify].h == nil) {
		reg.unref(true)
		nack(ErrUnknownTag)
		return
	}
	kind := xServeGet
	if put {
		kind = xServePut
	}
	x := &xfer{
		id: e.newID(), kind: kind, peer: src, reg: reg, off: int(req.off), n: int(req.n),
		dtag: req.dtag, remoteID: req.id, notify: req.notify, note: append([]byte(nil), req.note...), prio: req.prio,
	}
	e.xferPending.Add(1)
	e.xfers.put(x)
	if e.winServ.admit(x) {
		e.startServed(x)
	}
}

// startServed posts the owner's side of a transfer that holds a serve slot.
func (e *Engine) startServed(x *xfer) {
	x.state.Store(xStarting)
	if e.peers[x.peer].lost.Load() {
		e.finishXfer(x, fmt.Errorf("%w: rank %d", ErrPeerLost, x.peer))
		return
	}
	if e.tearing.Load() {
		e.finishXfer(x, ErrClosed)
		return
	}
	lkey, err := x.reg.ensure()
	if err != nil {
		e.finishXfer(x, err)
		return
	}
	x.state.Store(xWaitData)
	if x.kind == xServeGet {
		if err := e.t.SendData(x.peer, x.dtag, lkey, x.off, x.n, x.id); err != nil {
			x.state.Store(xStarting)
			e.finishXfer(x, err)
		}
		return
	}
	x.dtag = e.peers[x.peer].nextDtag(e.caps.DataTagMax)
	if err := e.t.RecvData(x.peer, x.dtag, lkey, x.off, x.n, x.id); err != nil {
		x.state.Store(xStarting)
		e.finishXfer(x, err)
		return
	}
	if err := e.sendInternal(x.peer, tagPutCTS, func(b []byte) []byte {
		return encodeIDTag(b, x.remoteID, x.dtag)
	}, 12, x, true); err != nil {
		e.failXfer(x, err)
	}
}

// onCTS: the owner posted its receive for our Put; send the data.
func (e *Engine) onCTS(src Rank, payload []byte) {
	id, dtag, err := decodeIDTag(payload)
	if err != nil {
		e.report(fmt.Errorf("ce: from rank %d: %w", src, err))
		return
	}
	x := e.xfers.get(id)
	if x == nil || x.kind != xPut || x.state.Load() != xWaitCTS {
		e.report(fmt.Errorf("ce: unexpected CTS %d from rank %d", id, src))
		return
	}
	x.dtag = dtag
	lkey, err := x.reg.ensure()
	if err != nil {
		e.finishXfer(x, err)
		return
	}
	x.state.Store(xWaitData)
	if err := e.t.SendData(x.peer, dtag, lkey, x.off, x.n, x.id); err != nil {
		x.state.Store(xWaitCTS)
		e.finishXfer(x, err)
	}
}

// onNack: the owner refused our transfer.
func (e *Engine) onNack(src Rank, payload []byte) {
	id, code, err := decodeIDTag(payload)
	if err != nil {
		e.report(fmt.Errorf("ce: from rank %d: %w", src, err))
		return
	}
	x := e.xfers.get(id)
	if x == nil || x.kind.served() {
		e.report(fmt.Errorf("ce: unexpected NACK %d from rank %d", id, src))
		return
	}
	e.failXfer(x, fmt.Errorf("%w (refused by rank %d)", nackErr(uint8(code)), src))
}

// failTransfers fails every transfer that waits on rank r, once r is lost or has shut down:
// queued transfers, transfers waiting for its handshake, and receives it will never match.
// Posted sends are left to the transport, which completes or fails them.
func (e *Engine) failTransfers(r Rank, err error) {
	match := func(x *xfer) bool { return x.peer == r }
	for _, x := range e.winInit.remove(match) {
		e.finishXfer(x, err)
	}
	for _, x := range e.winServ.remove(match) {
		e.finishXfer(x, err)
	}
	for _, x := range e.xfers.all() {
		// xQueued: still in the shift queue, and its start will see the peer lost.
		// xStarting: a direct caller is posting it; the transport fails what it posts.
		if st := x.state.Load(); x.peer == r && st != xQueued && st != xStarting {
			e.failXfer(x, err)
		}
	}
}

func isCanceled(err error) bool { return err != nil && errors.Is(err, ErrCanceled) }
