//go:build mpi

package mpi

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/jdf2go/jdf2go/rt/ce"
)

// Option configures New.
type Option func(*options)

type options struct {
	level       ce.Level
	depth       int
	maxAM       int
	checkThread bool
	logger      *slog.Logger
}

// ThreadLevel sets the level asked of MPI_Init_thread (default LevelFunneled: every call from
// the comm goroutine). With LevelMultiple workers call MPI directly (docs/ce.md, "Callers and
// paths").
func ThreadLevel(l ce.Level) Option { return func(o *options) { o.level = l } }

// RecvDepth sets how many persistent receives of MaxAM bytes, any tag, stay posted
// (default 16). More absorb bursts without MPI's unexpected-message queue.
func RecvDepth(n int) Option { return func(o *options) { o.depth = max(n, 1) } }

// MaxAM sets the largest AM payload (default 64 KiB), the size of every receive buffer.
func MaxAM(n int) Option { return func(o *options) { o.maxAM = n } }

// CheckThread makes every transport call ask MPI_Is_thread_main and count the calls where it
// is false (ThreadMainViolations): under FUNNELED there must be none.
func CheckThread(on bool) Option { return func(o *options) { o.checkThread = on } }

// Logger sets where warnings go (default slog.Default()).
func Logger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// Transport is the MPI ce.Transport. Create it with New and give it to ce.New; the Engine's
// comm goroutine calls Start (MPI_Init_thread, unless MPI is already initialised) and Close
// (MPI_Finalize, if Start initialised MPI) on its locked OS thread.
type Transport struct {
	opt options

	// Fixed at Start.
	owns                            bool // Start initialised MPI, so Close finalises it
	level                           ce.Level
	amComm, dataComm, barComm, rawC comm
	rank, size                      int
	tagUB                           int

	// Comm goroutine only.
	arr      arrays
	slots    []slot
	hw       int // slots in use are below hw
	free     []int
	armed    [ce.MaxTags]bool
	order    []int // posted receive slots, in posting order
	restart  []int // receive slots whose arrival was handed out: re-armed at the next Poll
	pending  []pendingEvent
	phead    int
	dataSlot map[ce.OpID]int
	closed   bool
	closing  []ce.Event // completions owed after Close
	zombies  []request  // requests abandoned with a lost peer: MPI keeps them, we never test them

	// lost[r]: the Engine gave up on rank r (AbandonPeer); read by direct callers.
	lost []atomic.Bool

	// Requests started by direct callers, waiting to be installed in the arrays.
	postMu    sync.Mutex
	posted    []postedReq
	postSpare []postedReq
	anyPosted atomic.Bool

	regMu   sync.Mutex
	regs    map[ce.LocalKey]unsafe.Pointer
	nextKey ce.LocalKey

	notMain atomic.Int64
}

type slotKind uint8

const (
	kFree slotKind = iota
	kAMRecv
	kAMSend
	kData
	kBarrier
)

type slot struct {
	kind slotKind
	msg  *ce.Msg
	id   ce.OpID
	recv bool // data receive (cancellable)
	peer int  // the other side of a send or data operation
	// AM receives.
	tag       ce.Tag
	buf       unsafe.Pointer
	done      bool // completed, waiting for its turn in posting order
	cancelled bool
	src       int
	count     int
	err       error
}

type postedReq struct {
	req  request
	kind slotKind
	msg  *ce.Msg
	id   ce.OpID
	recv bool
	peer int
}

type pendingEvent struct {
	ev   ce.Event
	slot int // the receive slot behind an arrival, else -1
}

// arrays are the C request, index and status arrays handed to MPI_Testsome.
type arrays struct {
	n    int
	reqs unsafe.Pointer
	idx  unsafe.Pointer
	sts  unsafe.Pointer
}

func (a *arrays) req(i int) *request {
	return (*request)(unsafe.Add(a.reqs, uintptr(i)*uintptr(sizeofRequest)))
}
func (a *arrays) status(i int) *status {
	return (*status)(unsafe.Add(a.sts, uintptr(i)*uintptr(sizeofStatus)))
}
func (a *arrays) index(i int) int {
	return int(*(*cint)(unsafe.Add(a.idx, uintptr(i)*uintptr(sizeofInt))))
}

func (a *arrays) grow(n int) {
	a.reqs = crealloc(a.reqs, n*int(sizeofRequest))
	a.idx = crealloc(a.idx, n*int(sizeofInt))
	a.sts = crealloc(a.sts, n*int(sizeofStatus))
	for i := a.n; i < n; i++ {
		*a.req(i) = requestNull
	}
	a.n = n
}

func (a *arrays) release() {
	cfree(a.reqs)
	cfree(a.idx)
	cfree(a.sts)
	*a = arrays{}
}

// New returns an MPI transport; nothing touches MPI before Start.
func New(opts ...Option) *Transport {
	o := options{level: ce.LevelFunneled, depth: 16, maxAM: 64 << 10, logger: slog.Default()}
	for _, f := range opts {
		f(&o)
	}
	return &Transport{opt: o, dataSlot: make(map[ce.OpID]int), regs: make(map[ce.LocalKey]unsafe.Pointer)}
}

// Start initialises MPI (unless already initialised) and duplicates the communicators.
func (t *Transport) Start(ctx context.Context) (ce.Rank, int, error) {
	if finalized() {
		return 0, 0, fmt.Errorf("mpi: MPI was already finalized")
	}
	var err error
	if initialized() {
		t.level, err = queryThread()
	} else {
		t.owns = true
		t.level, err = initThread(t.opt.level)
	}
	if err != nil {
		return 0, 0, err
	}
	if runtime.GOMAXPROCS(0) == 1 {
		t.opt.logger.Warn("mpi: GOMAXPROCS is 1 and the comm goroutine owns an OS thread; " +
			"launch with mpirun --bind-to none (Open MPI binds each rank to one core by default)")
	}
	if err := setErrorsReturn(commWorld); err != nil {
		return 0, 0, err
	}
	for _, c := range []*comm{&t.amComm, &t.dataComm, &t.barComm, &t.rawC} {
		if *c, err = commDup(commWorld); err != nil {
			return 0, 0, err
		}
	}
	if t.rank, t.size, err = commRankSize(t.amComm); err != nil {
		return 0, 0, err
	}
	if t.tagUB, err = tagUB(t.amComm); err != nil {
		return 0, 0, err
	}
	t.lost = make([]atomic.Bool, t.size)
	t.arr.grow(64)
	t.slots = make([]slot, 64)
	// One ring of persistent receives for every tag. MPI matches messages to posted receives
	// in posting order, so handing arrivals out in that order keeps each sender's messages in
	// send order; and a message for a tag nobody registered still arrives, so the Engine can
	// report it.
	for range t.opt.depth {
		s := t.allocSlot()
		buf := cmalloc(t.opt.maxAM)
		t.slots[s] = slot{kind: kAMRecv, buf: buf}
		if err := recvInit(buf, t.opt.maxAM, t.amComm, t.arr.req(s)); err != nil {
			return 0, 0, err
		}
		if err := start(t.arr.req(s)); err != nil {
			return 0, 0, err
		}
		t.order = append(t.order, s)
	}
	return ce.Rank(t.rank), t.size, nil
}

// Caps: Level is what MPI provided.
func (t *Transport) Caps() ce.Caps {
	return ce.Caps{
		Level:       t.level,
		PinThread:   true,
		MaxAM:       t.opt.maxAM,
		PinMemory:   true,
		MaxTransfer: 1<<31 - 1, // MPI counts are C ints
		DataTagMax:  uint32(max(t.tagUB, 0)),
		SilentLoss:  true, // without ULFM, MPI reports no dead rank: the Engine heartbeats
	}
}

// ThreadMainViolations counts calls made off MPI's main thread (see CheckThread).
func (t *Transport) ThreadMainViolations() int64 { return t.notMain.Load() }

// Level is the thread level MPI provided (after Start).
func (t *Transport) Level() ce.Level { return t.level }

// Abort ends the whole job (MPI_Abort on MPI_COMM_WORLD).
func (t *Transport) Abort(code int) { abort(commWorld, code) }

func (t *Transport) checkMain() {
	if t.opt.checkThread && !isThreadMain() {
		t.notMain.Add(1)
	}
}

// AllocBuffer and FreeBuffer give the Engine's message pool C memory: MPI keeps a send
// buffer's address after MPI_Isend returns.
func (t *Transport) AllocBuffer(n int) []byte { return unsafe.Slice((*byte)(cmalloc(n)), n) }
func (t *Transport) FreeBuffer(b []byte)      { cfree(unsafe.Pointer(unsafe.SliceData(b))) }

func bufPtr(b []byte) unsafe.Pointer {
	if cap(b) == 0 {
		return nil
	}
	return unsafe.Pointer(unsafe.SliceData(b))
}

// post hands a started request to the comm goroutine.
func (t *Transport) post(p postedReq) {
	t.postMu.Lock()
	t.posted = append(t.posted, p)
	t.anyPosted.Store(true)
	t.postMu.Unlock()
}

// install moves posted requests into the arrays (comm goroutine).
func (t *Transport) install() {
	if !t.anyPosted.Load() {
		return
	}
	t.postMu.Lock()
	ps := t.posted
	t.posted = t.postSpare[:0]
	t.anyPosted.Store(false)
	t.postMu.Unlock()
	for _, p := range ps {
		s := t.allocSlot()
		*t.arr.req(s) = p.req
		t.slots[s] = slot{kind: p.kind, msg: p.msg, id: p.id, recv: p.recv, peer: p.peer}
		if p.kind == kData {
			t.dataSlot[p.id] = s
		}
		if (p.kind == kAMSend || p.kind == kData) && t.lost[p.peer].Load() {
			// A direct caller posted it while AbandonPeer ran.
			t.abandon(s)
		}
	}
	clear(ps)
	t.postSpare = ps
}

func (t *Transport) allocSlot() int {
	if k := len(t.free); k > 0 {
		s := t.free[k-1]
		t.free = t.free[:k-1]
		return s
	}
	if t.hw == t.arr.n {
		t.arr.grow(2 * t.arr.n)
		t.slots = append(t.slots, make([]slot, t.arr.n-len(t.slots))...)
	}
	t.hw++
	return t.hw - 1
}

func (t *Transport) freeSlot(s int) {
	t.slots[s] = slot{}
	*t.arr.req(s) = requestNull
	t.free = append(t.free, s)
}

// RegisterTag only records the tag: the receive ring takes every tag.
func (t *Transport) RegisterTag(tag ce.Tag, maxLen int) error {
	t.checkMain()
	if maxLen > t.opt.maxAM {
		return fmt.Errorf("%w: tag %d maximum %d above MaxAM %d", ce.ErrTooLarge, tag, maxLen, t.opt.maxAM)
	}
	if t.armed[tag] {
		return fmt.Errorf("%w: %d", ce.ErrTagInUse, tag)
	}
	t.armed[tag] = true
	return nil
}

func (t *Transport) UnregisterTag(tag ce.Tag) error {
	t.checkMain()
	if !t.armed[tag] {
		return fmt.Errorf("%w: %d", ce.ErrUnknownTag, tag)
	}
	t.armed[tag] = false
	return nil
}

func (t *Transport) SendAM(tag ce.Tag, dst ce.Rank, m *ce.Msg) error {
	t.checkMain()
	if err := t.lostErr(dst); err != nil {
		return err
	}
	b := m.Wire()
	var req request
	if err := isend(bufPtr(b), len(b), int(dst), int(tag), t.amComm, &req); err != nil {
		return err
	}
	t.post(postedReq{req: req, kind: kAMSend, msg: m, peer: int(dst)})
	return nil
}

func (t *Transport) Register(m ce.Mem) (ce.LocalKey, error) {
	t.checkMain()
	var p unsafe.Pointer
	switch {
	case m.IsDevice():
		return 0, ce.ErrDeviceMemory
	case len(m.Host) > 0:
		p = unsafe.Pointer(unsafe.SliceData(m.Host)) // pinned by the Engine if Go memory
	}
	t.regMu.Lock()
	defer t.regMu.Unlock()
	t.nextKey++
	t.regs[t.nextKey] = p
	return t.nextKey, nil
}

func (t *Transport) Unregister(k ce.LocalKey) error {
	t.checkMain()
	t.regMu.Lock()
	defer t.regMu.Unlock()
	if _, ok := t.regs[k]; !ok {
		return fmt.Errorf("%w: local key %d", ce.ErrBadKey, k)
	}
	delete(t.regs, k)
	return nil
}

func (t *Transport) addr(k ce.LocalKey, off int) (unsafe.Pointer, error) {
	t.regMu.Lock()
	p, ok := t.regs[k]
	t.regMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: local key %d", ce.ErrBadKey, k)
	}
	if p == nil {
		return nil, nil
	}
	return unsafe.Add(p, off), nil
}

func (t *Transport) SendData(dst ce.Rank, dtag uint32, k ce.LocalKey, off, n int, id ce.OpID) error {
	return t.data(true, dst, dtag, k, off, n, id)
}

func (t *Transport) RecvData(src ce.Rank, dtag uint32, k ce.LocalKey, off, n int, id ce.OpID) error {
	return t.data(false, src, dtag, k, off, n, id)
}

func (t *Transport) data(send bool, peer ce.Rank, dtag uint32, k ce.LocalKey, off, n int, id ce.OpID) error {
	t.checkMain()
	if err := t.lostErr(peer); err != nil {
		return err
	}
	p, err := t.addr(k, off)
	if err != nil {
		return err
	}
	var req request
	if send {
		err = isend(p, n, int(peer), int(dtag), t.dataComm, &req)
	} else {
		err = irecv(p, n, int(peer), int(dtag), t.dataComm, &req)
	}
	if err != nil {
		return err
	}
	t.post(postedReq{req: req, kind: kData, id: id, recv: !send, peer: int(peer)})
	return nil
}

func (t *Transport) Cancel(id ce.OpID) error {
	t.checkMain()
	t.install()
	s, ok := t.dataSlot[id]
	if !ok || !t.slots[s].recv {
		return nil // completed already, or a send: its completion comes normally
	}
	return cancel(t.arr.req(s))
}

func (t *Transport) Barrier(id ce.OpID) error {
	t.checkMain()
	if r := t.firstLost(); r >= 0 {
		return fmt.Errorf("%w: barrier without rank %d", ce.ErrPeerLost, r)
	}
	var req request
	if err := ibarrier(t.barComm, &req); err != nil {
		return err
	}
	t.post(postedReq{req: req, kind: kBarrier, id: id})
	return nil
}

// lostErr refuses operations with a rank the Engine gave up on.
func (t *Transport) lostErr(r ce.Rank) error {
	if int(r) >= 0 && int(r) < len(t.lost) && t.lost[r].Load() {
		return fmt.Errorf("%w: rank %d", ce.ErrPeerLost, r)
	}
	return nil
}

// AbandonPeer gives up on rank r (ce.PeerAbandoner; comm goroutine), after the Engine's
// heartbeat found it silent. MPI without ULFM cannot fail a request whose peer died: a send
// to it may stay pending for ever and a barrier never completes. So every send, data
// operation and barrier outstanding with r is completed here with ErrPeerLost, queued for
// the next Poll ahead of one EventPeerLost, and its request leaves the arrays for the
// zombie list, which MPI keeps and nobody tests again. Receives are cancelled first, so a
// rank that was only slow cannot write into memory the Engine has since released.
func (t *Transport) AbandonPeer(r ce.Rank) bool {
	if int(r) < 0 || int(r) >= len(t.lost) || t.closed {
		return false
	}
	t.checkMain()
	t.lost[r].Store(true)
	t.install()
	for s := range t.hw {
		sl := &t.slots[s]
		if (sl.kind == kAMSend || sl.kind == kData) && sl.peer == int(r) || sl.kind == kBarrier {
			t.abandon(s)
		}
	}
	t.pending = append(t.pending, pendingEvent{ce.Event{Kind: ce.EventPeerLost, Src: r}, -1})
	return true
}

// firstLost is the first rank the Engine gave up on, or -1.
func (t *Transport) firstLost() int {
	for r := range t.lost {
		if t.lost[r].Load() {
			return r
		}
	}
	return -1
}

// abandon completes slot s with ErrPeerLost and parks its request among the zombies.
func (t *Transport) abandon(s int) {
	sl := &t.slots[s]
	err := fmt.Errorf("%w: rank %d abandoned", ce.ErrPeerLost, sl.peer)
	var ev ce.Event
	switch sl.kind {
	case kAMSend:
		ev = ce.Event{Kind: ce.EventSendDone, Msg: sl.msg, Err: err}
	case kData:
		if sl.recv {
			if cerr := cancel(t.arr.req(s)); cerr != nil {
				t.opt.logger.Warn("mpi: cancelling a receive from a lost rank", "err", cerr)
			}
		}
		ev = ce.Event{Kind: ce.EventDataDone, ID: sl.id, Err: err}
		delete(t.dataSlot, sl.id)
	case kBarrier:
		ev = ce.Event{Kind: ce.EventBarrierDone, ID: sl.id, Err: fmt.Errorf("%w: barrier abandoned", ce.ErrPeerLost)}
	default:
		return
	}
	t.pending = append(t.pending, pendingEvent{ev, -1})
	t.zombies = append(t.zombies, *t.arr.req(s))
	t.freeSlot(s)
}

// Poll re-arms the receives whose arrivals the previous Poll handed out, installs requests
// posted by direct callers, tests everything with one MPI_Testsome and hands out events.
func (t *Transport) Poll(ev []ce.Event) int {
	if t.closed {
		n := copy(ev, t.closing)
		t.closing = t.closing[n:]
		return n
	}
	t.checkMain()
	for _, s := range t.restart {
		sl := &t.slots[s]
		if sl.kind != kAMRecv {
			continue
		}
		if err := start(t.arr.req(s)); err != nil {
			t.opt.logger.Error("mpi: re-arming a receive", "err", err)
			continue
		}
		t.order = append(t.order, s)
	}
	t.restart = t.restart[:0]
	t.install()
	if t.phead == len(t.pending) {
		t.pending, t.phead = t.pending[:0], 0
		t.testAll()
	}
	n := 0
	for n < len(ev) && t.phead < len(t.pending) {
		p := &t.pending[t.phead]
		ev[n] = p.ev
		if p.slot >= 0 {
			t.restart = append(t.restart, p.slot)
		}
		*p = pendingEvent{}
		t.phead++
		n++
	}
	return n
}

// testAll runs MPI_Testsome over every slot and queues what completed.
func (t *Transport) testAll() {
	if t.hw == 0 {
		return
	}
	out, inStatus, err := testsome(t.hw, t.arr.req(0), (*cint)(t.arr.idx), t.arr.status(0))
	if err != nil {
		t.opt.logger.Error("mpi: MPI_Testsome", "err", err)
		return
	}
	arrived := false
	for i := range out {
		s := t.arr.index(i)
		st := t.arr.status(i)
		sl := &t.slots[s]
		var serr error
		if inStatus {
			serr = statusError(st)
		}
		switch sl.kind {
		case kAMSend:
			t.pending = append(t.pending, pendingEvent{ce.Event{Kind: ce.EventSendDone, Msg: sl.msg, Err: serr}, -1})
			t.freeSlot(s)
		case kData:
			if sl.recv && testCancelled(st) {
				serr = ce.ErrCanceled
			}
			t.pending = append(t.pending, pendingEvent{ce.Event{Kind: ce.EventDataDone, ID: sl.id, Err: serr}, -1})
			delete(t.dataSlot, sl.id)
			t.freeSlot(s)
		case kBarrier:
			t.pending = append(t.pending, pendingEvent{ce.Event{Kind: ce.EventBarrierDone, ID: sl.id, Err: serr}, -1})
			t.freeSlot(s)
		case kAMRecv:
			sl.done, sl.err = true, serr
			var src, tag, count int
			src, tag, count, sl.cancelled = arrival(st)
			if !sl.cancelled {
				sl.src, sl.tag, sl.count = src, ce.Tag(tag), count
			}
			arrived = true
		}
	}
	// Hand arrivals out in posting order (see Start).
	for arrived && len(t.order) > 0 && t.slots[t.order[0]].done {
		s := t.order[0]
		t.order = t.order[1:]
		sl := &t.slots[s]
		sl.done = false
		if sl.cancelled {
			continue
		}
		t.pending = append(t.pending, pendingEvent{ce.Event{
			Kind: ce.EventArrival, Src: ce.Rank(sl.src), Tag: sl.tag, Err: sl.err,
			Payload: unsafe.Slice((*byte)(sl.buf), sl.count),
		}, s})
	}
}

// Close disarms every tag, waits briefly for outstanding requests, cancels the receives among
// them, finalises MPI if Start initialised it and no rank was lost, and keeps the completions
// it owes for Poll.
func (t *Transport) Close() error {
	if t.closed {
		return nil
	}
	t.checkMain()
	t.install()
	firstErr := t.dropReceives()
	owed := append([]ce.Event(nil), eventsOf(t.pending[t.phead:])...)
	t.pending, t.phead = nil, 0
	outstanding := func() bool {
		for s := range t.hw {
			if t.slots[s].kind != kFree {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(200 * time.Millisecond)
	cancelled := false
	for outstanding() {
		t.testAll()
		owed = append(owed, eventsOf(t.pending)...)
		t.pending = t.pending[:0]
		if time.Now().After(deadline) {
			if cancelled {
				break
			}
			for s := range t.hw {
				if sl := &t.slots[s]; sl.kind == kData && sl.recv {
					cancel(t.arr.req(s))
				}
			}
			cancelled, deadline = true, time.Now().Add(200*time.Millisecond)
		}
	}
	for s := range t.hw {
		sl := &t.slots[s]
		switch sl.kind {
		case kAMSend:
			owed = append(owed, ce.Event{Kind: ce.EventSendDone, Msg: sl.msg, Err: ce.ErrClosed})
		case kData:
			owed = append(owed, ce.Event{Kind: ce.EventDataDone, ID: sl.id, Err: ce.ErrClosed})
		case kBarrier:
			owed = append(owed, ce.Event{Kind: ce.EventBarrierDone, ID: sl.id, Err: ce.ErrClosed})
		default:
			continue
		}
		requestFree(t.arr.req(s))
		t.slots[s] = slot{}
	}
	if t.owns {
		if r := t.firstLost(); r >= 0 {
			// MPI_Finalize synchronises with every rank, and with a dead one it may never
			// return; the process is about to end anyway.
			if firstErr == nil {
				firstErr = fmt.Errorf("mpi: MPI_Finalize skipped: %w: rank %d", ce.ErrPeerLost, r)
			}
		} else if err := finalize(); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	t.arr.release()
	t.closing, t.closed = owed, true
	return firstErr
}

// dropReceives cancels the posted receives and frees the ring; arrivals not handed out yet
// are dropped (Close only: the Engine has received everything it waited for).
func (t *Transport) dropReceives() error {
	var firstErr error
	var st status
	posted := map[int]bool{}
	for _, s := range t.order {
		posted[s] = !t.slots[s].done
	}
	for s := range t.hw {
		sl := &t.slots[s]
		if sl.kind != kAMRecv {
			continue
		}
		if posted[s] {
			if err := cancel(t.arr.req(s)); err != nil && firstErr == nil {
				firstErr = err
			}
			for i := 0; i < 1_000_000; i++ {
				if ok, err := test(t.arr.req(s), &st); ok || err != nil {
					break
				}
			}
		}
		if err := requestFree(t.arr.req(s)); err != nil && firstErr == nil {
			firstErr = err
		}
		cfree(sl.buf)
		t.freeSlot(s)
	}
	kept := t.pending[:t.phead]
	for _, p := range t.pending[t.phead:] {
		if p.slot < 0 {
			kept = append(kept, p)
		}
	}
	t.pending, t.order, t.restart = kept, nil, nil
	return firstErr
}

func eventsOf(ps []pendingEvent) []ce.Event {
	out := make([]ce.Event, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.ev)
	}
	return out
}

// Wake is nil: MPI cannot signal arrivals, so the comm loop polls with back-off.
func (t *Transport) Wake() <-chan struct{} { return nil }

var (
	_ ce.Transport       = (*Transport)(nil)
	_ ce.BufferAllocator = (*Transport)(nil)
)

// RawPingPong times iters round trips of n bytes between this rank and peer using the binding
// alone, on a communicator of its own, from the calling goroutine: the reference the Engine's
// paths are measured against. Both ranks call it; the lower rank sends first. It needs
// MPI_THREAD_MULTIPLE (the comm goroutine owns MPI otherwise) and must not run concurrently
// with itself.
func (t *Transport) RawPingPong(peer ce.Rank, n, iters int) (time.Duration, error) {
	if t.level != ce.LevelMultiple {
		return 0, fmt.Errorf("mpi: RawPingPong needs MPI_THREAD_MULTIPLE, MPI provided %v", t.level)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	buf := cmalloc(n)
	defer cfree(buf)
	// Touch every page, as real data would: untouched pages all map the shared zero page and
	// copy faster than any buffer a program actually uses.
	b := unsafe.Slice((*byte)(buf), n)
	for i := range b {
		b[i] = byte(i)
	}
	reqs := (*request)(cmalloc(2 * int(sizeofRequest)))
	defer cfree(unsafe.Pointer(reqs))
	sreq, rreq := reqs, (*request)(unsafe.Add(unsafe.Pointer(reqs), sizeofRequest))
	var st status
	wait := func(r *request) error {
		for {
			done, err := test(r, &st)
			if done || err != nil {
				return err
			}
		}
	}
	first := t.rank < int(peer)
	begin := time.Now()
	for range iters {
		if err := irecv(buf, n, int(peer), 0, t.rawC, rreq); err != nil {
			return 0, err
		}
		if !first {
			if err := wait(rreq); err != nil {
				return 0, err
			}
		}
		if err := isend(buf, n, int(peer), 0, t.rawC, sreq); err != nil {
			return 0, err
		}
		if err := wait(sreq); err != nil {
			return 0, err
		}
		if first {
			if err := wait(rreq); err != nil {
				return 0, err
			}
		}
	}
	return time.Since(begin), nil
}
