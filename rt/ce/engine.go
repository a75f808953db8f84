package ce

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Handler handles one active message. It runs on the comm goroutine, serially with every other
// handler and callback, and must not block. c is the comm goroutine's Caller: replies sent
// through it go direct. payload is valid only during the call; keep a copy to retain it.
type Handler func(c *Caller, src Rank, payload []byte)

// Engine lifecycle states.
const (
	stateNew int32 = iota
	stateStarting
	stateRunning
	stateClosing
	stateClosed
)

// Engine is the communication engine: the comm goroutine, the shift queue, tags, message
// buffers, registrations, transfer windows and shutdown, over one Transport. The package
// documentation describes the whole contract.
type Engine struct {
	t   Transport
	cfg config

	lifeMu sync.Mutex // serializes Start and Close
	state  atomic.Int32

	// Fixed at Start.
	rank   Rank
	size   int
	caps   Caps
	pinned bool // comm goroutine locked to its OS thread
	pool   *msgPool
	peers  []peer
	evbuf  []Event // comm goroutine only

	tagMu sync.Mutex                        // serializes tag registrations (copy-on-write writers)
	tags  atomic.Pointer[[MaxTags]tagEntry] // read lock-free by every sender

	sq     shiftQueue
	parked atomic.Int32
	wake   chan struct{}

	comm      *Caller
	callersMu sync.Mutex
	callers   []*Caller

	regs    registry
	xfers   xferTable
	winInit window // transfers this rank initiates
	winServ window // transfers this rank serves for peers

	barMu    sync.Mutex // serializes Barrier calls
	barriers sync.Map   // OpID → *barrier

	tpc sync.Map // TaskpoolID → *atomic.Int64

	nextID      atomic.Uint64
	amPending   atomic.Int64 // AM sends accepted and not completed
	xferPending atomic.Int64 // transfers accepted (either side) and not completed
	barPending  atomic.Int64

	inCallback atomic.Int32

	// Shutdown.
	closeCh   chan struct{} // closed by Close to wake the loop
	closeCtx  context.Context
	done      chan struct{} // closed when the comm goroutine has exited
	closeErr  error
	closeOnce sync.Once
	phase     int      // comm goroutine: shutdown progress
	closeBar  *barrier // the closing barrier
	tearing   atomic.Bool
	forced    bool // comm goroutine: the deadline passed

	errs  errorLog
	stats engineStats

	failed atomic.Pointer[error] // the first failure (ErrHandlerPanic), nil while healthy

	// Heartbeat (comm goroutine only; see heartbeat.go). hbOn is fixed at Start.
	hbOn   bool
	hbNext time.Time
}

type tagEntry struct {
	maxLen int
	h      Handler
}

// peer is what the Engine keeps per rank.
type peer struct {
	lost   atomic.Bool   // the transport lost it: every new operation with it fails with ErrPeerLost
	closed atomic.Bool   // it shut down: it serves no more transfers (it still receives AMs)
	dtag   atomic.Uint32 // data tags for data this rank receives from the peer
	sent   atomic.Int64  // AMs handed to the transport for it (for the shutdown count)

	// Traffic with it, for Fill: AM payload bytes and transfer bytes each way.
	sentBytes, recvMsgs, recvBytes atomic.Int64
	xferOut, xferIn                atomic.Int64

	// Comm goroutine only.
	dead     bool  // the transport reported it lost: no goodbye owed or expected
	recv     int64 // AMs received from it
	finSeen  bool
	finCount int64
	finDone  bool

	// Heartbeat (comm goroutine only).
	heard     bool      // something arrived from it since the last heartbeat tick
	lastHeard time.Time // the tick that last found heard set
	silent    bool      // declared lost by the heartbeat; the transport's EventPeerLost follows
	beat      *Msg      // the heartbeat message to it, reused
	beatOut   bool      // beat is in the transport
}

type engineStats struct {
	amsSent, amsRecv, unknownTag      atomic.Int64
	xfersInit, xfersServed, xfersFail atomic.Int64
	transportRegs, transportUnregs    atomic.Int64
	loops                             atomic.Int64
	handlers, callbacks               atomic.Int64
	callbackOverlap                   atomic.Int64
	beatsSent, beatsRecv, timedOut    atomic.Int64
}

// New returns an Engine over t. Nothing happens until Start.
func New(t Transport, opts ...Option) *Engine {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	e := &Engine{
		t:       t,
		cfg:     cfg,
		wake:    make(chan struct{}, 1),
		closeCh: make(chan struct{}),
		done:    make(chan struct{}),
	}
	e.tags.Store(new([MaxTags]tagEntry))
	e.comm = &Caller{e: e, role: RoleComm, name: "comm", direct: true}
	e.xfers.m = make(map[OpID]*xfer)
	return e
}

// Rank is this process's rank (valid after Start).
func (e *Engine) Rank() Rank { return e.rank }

// Size is the number of ranks (valid after Start).
func (e *Engine) Size() int { return e.size }

// Caps is what the transport reported at Start.
func (e *Engine) Caps() Caps { return e.caps }

// RegisterTag makes tag t carry messages of up to maxLen bytes to h. Registration is
// symmetric: every rank registers the same tag with the same maximum length. Before Start it is
// recorded and armed by Start; after Start the handler is published at once and the transport
// side is armed by the comm goroutine before it next polls, so a message a peer sends after its
// own RegisterTag returned is delivered (with MPI it waits in the unexpected queue until armed).
// It never blocks, so handlers may call it.
func (e *Engine) RegisterTag(t Tag, maxLen int, h Handler) error {
	if t < FirstRTTag || t >= MaxTags {
		return fmt.Errorf("%w: %d (open range %d..%d)", ErrTagRange, t, FirstRTTag, MaxTags-1)
	}
	if h == nil {
		return fmt.Errorf("%w: nil handler for tag %d", ErrUnknownTag, t)
	}
	if maxLen < 0 {
		return fmt.Errorf("%w: negative maximum length %d for tag %d", ErrTooLarge, maxLen, t)
	}
	e.tagMu.Lock()
	defer e.tagMu.Unlock()
	st := e.state.Load()
	if st >= stateClosing {
		return ErrClosed
	}
	if st == stateRunning && maxLen > e.caps.MaxAM {
		return fmt.Errorf("%w: tag %d maximum %d above the transport's MaxAM %d", ErrTooLarge, t, maxLen, e.caps.MaxAM)
	}
	old := e.tags.Load()
	if old[t].h != nil {
		return fmt.Errorf("%w: %d", ErrTagInUse, t)
	}
	tab := *old
	tab[t] = tagEntry{maxLen: maxLen, h: h}
	if st == stateRunning {
		if !e.sq.push(op{kind: opArmTag, tag: t, maxLen: maxLen}) {
			return ErrClosed
		}
		e.tags.Store(&tab)
		e.kick()
		return nil
	}
	// Not started (or starting: Start holds tagMu while it arms, so this cannot interleave).
	e.tags.Store(&tab)
	return nil
}

// Start starts the comm goroutine, which starts the transport (for MPI: MPI_Init_thread on
// the locked comm thread) and arms the registered tags. ctx bounds the start only: the Engine
// then runs until Close.
func (e *Engine) Start(ctx context.Context) error {
	e.lifeMu.Lock()
	defer e.lifeMu.Unlock()
	switch e.state.Load() {
	case stateNew:
	case stateClosing, stateClosed:
		return ErrClosed
	default:
		return ErrStarted
	}
	e.state.Store(stateStarting)
	ready := make(chan error, 1)
	go e.run(ctx, ready)
	select {
	case err := <-ready:
		return err
	case <-ctx.Done():
		if e.state.CompareAndSwap(stateStarting, stateClosing) {
			// The comm goroutine closes the transport again as soon as its start returns;
			// Close waits for that.
			return fmt.Errorf("ce: start: %w", ctx.Err())
		}
		return <-ready
	}
}

// run is the comm goroutine.
func (e *Engine) run(ctx context.Context, ready chan<- error) {
	defer close(e.done)
	e.pinned = e.t.Caps().PinThread
	if e.pinned {
		// MPI_Init_thread, every FUNNELED call and MPI_Finalize must share one OS thread.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	rank, size, err := e.t.Start(ctx)
	if err != nil {
		e.state.Store(stateClosed)
		ready <- fmt.Errorf("ce: transport start: %w", err)
		return
	}
	if err := e.setup(rank, size); err != nil {
		if cerr := e.t.Close(); cerr != nil {
			err = fmt.Errorf("%w (and close: %v)", err, cerr)
		}
		e.state.Store(stateClosed)
		ready <- err
		return
	}
	ready <- nil
	e.loop()
}

// setup runs on the comm goroutine once the transport started.
func (e *Engine) setup(rank Rank, size int) error {
	e.rank, e.size, e.caps = rank, size, e.t.Caps()
	if e.caps.MaxAM <= 0 {
		return fmt.Errorf("ce: transport reports MaxAM %d", e.caps.MaxAM)
	}
	if e.caps.DataTagMax == 0 {
		e.caps.DataTagMax = 1<<31 - 1
	}
	e.hbOn = e.cfg.hbInterval > 0 || e.cfg.hbInterval < 0 && e.caps.SilentLoss
	if e.cfg.hbInterval < 0 {
		e.cfg.hbInterval = DefaultHeartbeatInterval
	}
	if e.cfg.idleSpin < 0 {
		e.cfg.idleSpin = time.Millisecond
		if e.caps.Wakeable {
			e.cfg.idleSpin = 50 * time.Microsecond
		}
	}
	alloc, _ := e.t.(BufferAllocator)
	e.pool = newMsgPool(alloc, e.cfg.budget, e.caps.MaxAM, e.cfg.debug, e.report)
	e.peers = make([]peer, size)
	now := time.Now()
	for r := range e.peers {
		e.peers[r].lastHeard = now
	}
	e.winInit.max = e.cfg.maxInflight
	e.winServ.max = e.cfg.maxInflight
	e.evbuf = make([]Event, 256)

	e.callersMu.Lock()
	for _, c := range e.callers {
		c.direct = e.directFor(c.role)
	}
	e.callersMu.Unlock()

	internal := xferReqHeader + e.cfg.maxNote
	for _, t := range []Tag{tagGetReq, tagPutReq, tagPutCTS, tagNack, tagFin, tagBeat} {
		if err := e.t.RegisterTag(t, internal); err != nil {
			return fmt.Errorf("ce: arm internal tag %d: %w", t, err)
		}
	}
	e.tagMu.Lock()
	defer e.tagMu.Unlock()
	tab := e.tags.Load()
	for t := FirstRTTag; t < MaxTags; t++ {
		if tab[t].h == nil {
			continue
		}
		if tab[t].maxLen > e.caps.MaxAM {
			return fmt.Errorf("%w: tag %d maximum %d above the transport's MaxAM %d", ErrTooLarge, t, tab[t].maxLen, e.caps.MaxAM)
		}
		if err := e.t.RegisterTag(t, tab[t].maxLen); err != nil {
			return fmt.Errorf("ce: arm tag %d: %w", t, err)
		}
	}
	// Running from here, still under tagMu: a RegisterTag waiting for the lock then sees the
	// running state and arms its tag through the queue instead of being skipped.
	if !e.state.CompareAndSwap(stateStarting, stateRunning) {
		return fmt.Errorf("%w: Start gave up while the transport was starting", ErrClosed)
	}
	return nil
}

// directFor is the per-caller path table of docs/ce.md, "Callers and paths"
func (e *Engine) directFor(r Role) bool {
	switch r {
	case RoleComm:
		return true
	case RoleWorker:
		return e.caps.Level == LevelMultiple && e.cfg.multiple != Off
	}
	return false // device managers always shift; so does everyone else
}

// Attach returns a Caller for one goroutine of the given role; name appears in diagnostics.
// The Caller's path (direct or shifted) is decided once, here or at Start if the Engine has
// not started yet, and never changes. RoleComm is the Engine's own and cannot be attached.
func (e *Engine) Attach(r Role, name string) (*Caller, error) {
	if r == RoleComm || r < RoleComm || r > RoleOther {
		return nil, fmt.Errorf("%w: cannot attach role %v", ErrWrongRole, r)
	}
	c := &Caller{e: e, role: r, name: name}
	e.lifeMu.Lock()
	defer e.lifeMu.Unlock()
	if e.state.Load() >= stateClosing {
		return nil, ErrClosed
	}
	e.callersMu.Lock()
	if e.state.Load() == stateRunning {
		c.direct = e.directFor(r)
	}
	e.callers = append(e.callers, c)
	e.callersMu.Unlock()
	return c, nil
}

// kick wakes the comm goroutine if it announced that it is parked.
func (e *Engine) kick() {
	if e.parked.Load() != 0 {
		select {
		case e.wake <- struct{}{}:
		default:
		}
	}
}

func (e *Engine) newID() OpID { return OpID(e.nextID.Add(1)) }

// Err returns nil while the Engine is healthy, and the error it failed with (wrapping
// ErrHandlerPanic) once a handler or a done callback panicked.
func (e *Engine) Err() error {
	if p := e.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// fail records the Engine's first failure, reports it and runs the OnFailure hook (comm
// goroutine).
func (e *Engine) fail(err error) {
	e.report(err)
	if !e.failed.CompareAndSwap(nil, &err) {
		return
	}
	if f := e.cfg.onFailure; f != nil {
		func() {
			defer func() {
				if p := recover(); p != nil {
					e.report(fmt.Errorf("%w: OnFailure hook: %v", ErrHandlerPanic, p))
				}
			}()
			f(err)
		}()
	}
}

// report records a misuse or a failure that has no caller to return to.
func (e *Engine) report(err error) {
	e.errs.add(err)
	e.cfg.logger.Warn("ce: "+err.Error(), "rank", e.rank)
}

// Errors returns the problems reported so far (at most the last 256), oldest first: messages
// for unknown tags with their source, double releases, writes after submit, failed transport
// calls without a caller to tell.
func (e *Engine) Errors() []error { return e.errs.snapshot() }

type errorLog struct {
	mu    sync.Mutex
	errs  []error
	total int
}

func (l *errorLog) add(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total++
	if len(l.errs) == 256 {
		copy(l.errs, l.errs[1:])
		l.errs = l.errs[:255]
	}
	l.errs = append(l.errs, err)
}

func (l *errorLog) snapshot() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]error(nil), l.errs...)
}

// countStart and countDone maintain the per-taskpool in-flight counters (docs/ce.md, "Shutdown
// and errors").
func (e *Engine) countStart(tp TaskpoolID) {
	if tp == 0 {
		return
	}
	v, ok := e.tpc.Load(tp)
	if !ok {
		v, _ = e.tpc.LoadOrStore(tp, new(atomic.Int64))
	}
	v.(*atomic.Int64).Add(1)
}

func (e *Engine) countDone(tp TaskpoolID) {
	if tp == 0 {
		return
	}
	v, ok := e.tpc.Load(tp)
	if !ok {
		return
	}
	if v.(*atomic.Int64).Add(-1) == 0 && e.cfg.onIdle != nil {
		e.cfg.onIdle(tp)
	}
}

// InFlight is the number of operations of taskpool tp accepted and not yet completed on this
// rank (AM sends, transfers initiated and transfers served for peers).
func (e *Engine) InFlight(tp TaskpoolID) int64 {
	v, ok := e.tpc.Load(tp)
	if !ok {
		return 0
	}
	return v.(*atomic.Int64).Load()
}

// Stats is a snapshot of an Engine's counters.
type Stats struct {
	MsgAllocs, MsgReleases int64 // message buffers handed out and given back
	MsgBytesInUse          int64 // budgeted bytes not yet released
	AMsSent, AMsReceived   int64 // every AM, internal handshakes included
	UnknownTagDrops        int64 // arrivals for tags never registered here
	TransfersInitiated     int64 // Get/Put completed successfully as initiator
	TransfersServed        int64 // Get/Put served successfully for peers
	TransfersFailed        int64
	InflightHighWater      int // most initiated transfers in the transport at once
	ServeHighWater         int // most served transfers in the transport at once
	QueuedBytesHighWater   int64
	TransportRegisters     int64
	TransportUnregisters   int64
	LoopIterations         int64
	Handlers, Callbacks    int64
	CallbackOverlaps       int64 // times a handler or callback started while another ran: must be 0
	HeartbeatsSent         int64 // heartbeats handed to the transport (not counted in AMsSent)
	HeartbeatsReceived     int64 // heartbeats from peers (not counted in AMsReceived)
	PeersTimedOut          int64 // peers declared lost because nothing came from them in time
	Errors                 int   // problems reported, see Errors
}

// Stats returns the Engine's counters.
func (e *Engine) Stats() Stats {
	s := Stats{
		AMsSent:              e.stats.amsSent.Load(),
		AMsReceived:          e.stats.amsRecv.Load(),
		UnknownTagDrops:      e.stats.unknownTag.Load(),
		TransfersInitiated:   e.stats.xfersInit.Load(),
		TransfersServed:      e.stats.xfersServed.Load(),
		TransfersFailed:      e.stats.xfersFail.Load(),
		InflightHighWater:    e.winInit.highWater(),
		ServeHighWater:       e.winServ.highWater(),
		QueuedBytesHighWater: e.sq.highWater(),
		TransportRegisters:   e.stats.transportRegs.Load(),
		TransportUnregisters: e.stats.transportUnregs.Load(),
		LoopIterations:       e.stats.loops.Load(),
		Handlers:             e.stats.handlers.Load(),
		Callbacks:            e.stats.callbacks.Load(),
		CallbackOverlaps:     e.stats.callbackOverlap.Load(),
		HeartbeatsSent:       e.stats.beatsSent.Load(),
		HeartbeatsReceived:   e.stats.beatsRecv.Load(),
		PeersTimedOut:        e.stats.timedOut.Load(),
	}
	if p := e.pool; p != nil && e.state.Load() >= stateRunning {
		s.MsgAllocs, s.MsgReleases, s.MsgBytesInUse = p.allocs.Load(), p.releases.Load(), p.used.Load()
	}
	e.errs.mu.Lock()
	s.Errors = e.errs.total
	e.errs.mu.Unlock()
	return s
}
