package remote

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/ce"
	"github.com/jdf2go/jdf2go/rt/profile"
)

// Tree selects how a datum that several ranks read leaves its producer.
type Tree int

const (
	// Star: the producer sends one copy to every rank that reads it.
	Star Tree = iota
	// Binomial: the producer sends to at most ⌈log2 R⌉ ranks, each of which forwards the
	// activation and the data to its own children once the data has arrived.
	Binomial
)

func (t Tree) String() string {
	if t == Binomial {
		return "binomial"
	}
	return "star"
}

// ExpectFunc returns what the receiving rank expects on flow of the task class: the Go type
// name of the value ("[]float64") and its size in bytes; an empty name or a negative size
// means "anything".
type ExpectFunc func(tp *rt.Taskpool, class *rt.TaskClass, flow int) (typ string, bytes int)

// Option configures a Node.
type Option func(*config)

type config struct {
	eager     int
	tree      Tree
	expect    ExpectFunc
	log       *slog.Logger
	parkLimit int
}

// Eager sets the largest datum sent inside the activation message (default 64 KiB); larger
// ones are pulled by the receiver with a Get from the sender's memory (rendezvous). It is
// capped by the largest active message the transport carries.
func Eager(bytes int) Option { return func(c *config) { c.eager = bytes } }

// Broadcast selects the broadcast tree (default Star).
func Broadcast(t Tree) Option { return func(c *config) { c.tree = t } }

// Expect sets what receivers expect of each flow; a datum of another type or size fails the
// taskpool with ErrTypeMismatch or ErrSizeMismatch.
func Expect(f ExpectFunc) Option { return func(c *config) { c.expect = f } }

// Logger sets where diagnostics go (default slog.Default()).
func Logger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// Node is the distributed layer of one rank: it implements rt.Remote over a started
// ce.Engine. Create it with New, pass RTOptions to rt.New, add taskpools with Add (not
// Context.Add), and Close it before the Engine.
type Node struct {
	e          *ce.Engine
	cfg        config
	rank, size int
	eagerMax   int
	other      *ce.Caller // for goroutines that are neither workers nor the comm goroutine

	mu          sync.Mutex
	rtc         *rt.Context
	slots       []slot
	tps         map[uint32]*tpState
	byTP        map[*rt.Taskpool]*tpState
	nextID      uint32 // taskpool IDs below it were added here
	parked      map[uint32][]parkedMsg
	parkedBytes int
	earlyFail   map[uint32]error
	lost        error // a lost peer or the Engine's failure: later taskpools fail with it
	closed      bool
	errs        []error
	gath        *gather

	amu    sync.Mutex
	arenas map[arenaKey]*rt.Arena

	pmu       sync.Mutex
	pending   map[uint64]*pendingGet
	nextToken uint64

	trc      atomic.Pointer[tracing] // nil without a trace
	reported atomic.Bool             // a failure found here was reported to the other ranks
	spare    spare
	watchers sync.WaitGroup
	stats    counters
}

type tpState struct {
	tp     *rt.Taskpool
	id     uint32
	remote atomic.Bool // failed by a peer's report or a peer loss: not reported again
	recv   Receiver    // the task graph's receiver (AddGraph); nil for a PTG taskpool
}

type parkedMsg struct {
	src     ce.Rank
	payload []byte
}

// slot is the per-worker state of the sending side (index: worker ID + 1; 0 is rt's
// pseudo-worker of other goroutines). Only the goroutine that owns the worker uses it.
type slot struct {
	worker, manager atomic.Pointer[ce.Caller]
	cur             srcID
	sent            []uint64 // (kind, flow, rank) already sent for cur
	checked         uint32   // flows of cur whose local writers were looked for (localWriter)
	writers         uint32   // flows of cur that a local successor writes
	track           *profile.Track
}

type srcID struct {
	tp    *rt.Taskpool
	class int
	key   uint64
}

type counters struct {
	activations, writeBacks, forwards atomic.Int64
	eager, gets                       atomic.Int64 // data copies sent, by path
	eagerBytes, getBytes              atomic.Int64
	received, fetched                 atomic.Int64
	spared                            atomic.Int64
	snapshots                         atomic.Int64
}

// Stats counts what a Node did.
type Stats struct {
	Activations int64 // activation messages sent (forwards included)
	WriteBacks  int64 // write-back messages sent
	Forwards    int64 // activations forwarded down a broadcast tree
	Eager       int64 // data copies sent inside messages
	Gets        int64 // data copies offered for a Get
	EagerBytes  int64
	GetBytes    int64
	Received    int64 // activations and write-backs handled
	Fetched     int64 // Gets this rank completed
	Spared      int64 // messages left to the spare sender (no buffer for a caller that may not wait)
	Snapshots   int64 // rendezvous data copied before sending because a local successor writes it
}

// Stats returns the Node's counters.
func (n *Node) Stats() Stats {
	s := &n.stats
	return Stats{Activations: s.activations.Load(), WriteBacks: s.writeBacks.Load(), Forwards: s.forwards.Load(),
		Eager: s.eager.Load(), Gets: s.gets.Load(), EagerBytes: s.eagerBytes.Load(), GetBytes: s.getBytes.Load(),
		Received: s.received.Load(), Fetched: s.fetched.Load(), Spared: s.spared.Load(),
		Snapshots: s.snapshots.Load()}
}

// New returns the Node of the rank that e runs. e must be started (its rank, size and
// capabilities are read here); New registers the tags TagActivate, TagRemoteGet and
// TagTermination, so every rank creates its Node with the same options. A message reaching
// a rank before its Node exists is dropped: every rank creates its Node before any rank adds
// a taskpool (Run puts a barrier between the two).
func New(e *ce.Engine, opts ...Option) (*Node, error) {
	cfg := config{eager: 64 << 10, log: slog.Default(), parkLimit: 256 << 20}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.eager < 0 {
		return nil, fmt.Errorf("remote: eager threshold %d is negative", cfg.eager)
	}
	n := &Node{e: e, cfg: cfg, rank: int(e.Rank()), size: e.Size(), tps: map[uint32]*tpState{}, byTP: map[*rt.Taskpool]*tpState{},
		parked: map[uint32][]parkedMsg{}, earlyFail: map[uint32]error{}, pending: map[uint64]*pendingGet{}}
	if n.size < 1 {
		return nil, fmt.Errorf("remote: %w", ce.ErrNotStarted)
	}
	hdr := maxHeaderLen(n.size)
	maxLen := hdr + cfg.eager
	if m := e.Caps().MaxAM; m > 0 && maxLen > m {
		maxLen = m
	}
	n.eagerMax = maxLen - hdr
	if n.eagerMax < 0 {
		return nil, fmt.Errorf("remote: the transport's largest message (%d bytes) cannot hold an activation header for %d ranks (%d bytes)",
			e.Caps().MaxAM, n.size, hdr)
	}
	var err error
	if n.other, err = e.Attach(ce.RoleOther, "dist"); err != nil {
		return nil, err
	}
	n.spare.wake, n.spare.done = make(chan struct{}, 1), make(chan struct{})
	n.spare.ctx, n.spare.cancel = context.WithCancel(context.Background())
	if err := e.RegisterTag(ce.TagActivate, maxLen, n.onActivate); err != nil {
		return nil, err
	}
	if err := e.RegisterTag(ce.TagRemoteGet, 16, n.onGetDone); err != nil {
		return nil, err
	}
	if err := e.RegisterTag(ce.TagTermination, 4096, n.onTermination); err != nil {
		return nil, err
	}
	go n.spare.run(n)
	return n, nil
}

// Rank and Size are this rank and the number of ranks.
func (n *Node) Rank() int { return n.rank }
func (n *Node) Size() int { return n.size }

// Barrier returns once every rank has entered it (collective; not from a task body).
func (n *Node) Barrier(ctx context.Context) error { return n.other.Barrier(ctx) }

// Engine returns the communication engine.
func (n *Node) Engine() *ce.Engine { return n.e }

// RTOptions returns the options that make an rt.Context run as this rank (rt.Rank, with the
// Node as its Remote).
func (n *Node) RTOptions() []rt.Option {
	return []rt.Option{rt.Rank(n.rank, n.size, n)}
}

// Add adds tp to c (the Context created with RTOptions) and runs it as this rank's part of
// the job: every rank adds the same taskpools in the same order. Before that it counts the
// write-backs that other ranks will send to collection elements stored here and holds tp
// open until they have arrived; activations that arrived before Add are handled now.
func (n *Node) Add(c *rt.Context, tp *rt.Taskpool) error { return n.add(c, tp, nil) }

// add adds tp, a PTG taskpool (recv nil) or a task graph's (AddGraph).
func (n *Node) add(c *rt.Context, tp *rt.Taskpool, recv Receiver) error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return ErrClosed
	}
	if n.rtc == nil {
		n.rtc = c
		n.slots = make([]slot, c.Workers()+1)
		n.trc.Store(newTracing(c.Tracer()))
	} else if n.rtc != c {
		n.mu.Unlock()
		return fmt.Errorf("remote: Add with a second rt.Context; a Node serves one")
	}
	n.mu.Unlock()
	if n.size > 1 && recv == nil {
		if wb := n.countWriteBacks(tp); wb > 0 {
			rt.Impl.AddActions(tp, int(wb))
		}
	}
	// Tasks start sending as soon as Context.Add has queued them: the state must exist first.
	st := &tpState{tp: tp, recv: recv}
	n.mu.Lock()
	n.byTP[tp] = st
	n.mu.Unlock()
	if err := c.Add(tp); err != nil {
		n.mu.Lock()
		delete(n.byTP, tp)
		n.mu.Unlock()
		return err
	}
	n.mu.Lock()
	st.id = uint32(rt.Impl.TaskpoolID(tp))
	n.tps[st.id] = st
	n.nextID = max(n.nextID, st.id+1)
	parked := n.parked[st.id]
	delete(n.parked, st.id)
	for _, p := range parked {
		n.parkedBytes -= len(p.payload)
	}
	early := n.earlyFail[st.id]
	delete(n.earlyFail, st.id)
	lost := n.lost
	n.watchers.Add(1)
	n.mu.Unlock()
	go n.watch(st)
	switch {
	case early != nil:
		st.remote.Store(true)
		tp.Cancel(early)
	case lost != nil:
		st.remote.Store(true)
		tp.Cancel(lost)
	}
	var track *profile.Track
	if len(parked) > 0 && n.tr() != nil {
		track = n.tr().tr.NewTrack("comm", fmt.Sprintf("receive (before taskpool %d was added)", st.id))
	}
	for _, p := range parked {
		n.handle(n.other, p.src, p.payload, track)
	}
	return nil
}

// report keeps an error for Errors and logs it.
func (n *Node) report(err error) {
	n.mu.Lock()
	if len(n.errs) < 256 {
		n.errs = append(n.errs, err)
	}
	n.mu.Unlock()
	n.cfg.log.Warn("dist", "rank", n.rank, "err", err)
}

// Errors returns the problems that could not fail a taskpool (messages for taskpools that
// this rank does not know, failed reports), oldest first.
func (n *Node) Errors() []error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]error(nil), n.errs...)
}

// Close cancels the taskpools still running (ErrClosed), waits for their ends and returns
// the problems reported during the Node's life, messages kept for taskpools that were never
// added among them. It does not close the Engine (its owner does, after Close).
func (n *Node) Close() error {
	n.mu.Lock()
	n.closed = true
	var sts []*tpState
	for _, st := range n.tps {
		sts = append(sts, st)
	}
	for id, ps := range n.parked {
		n.errs = append(n.errs, fmt.Errorf("%w: %d messages for taskpool %d, never added on rank %d",
			ErrUnknownTaskpool, len(ps), id, n.rank))
	}
	n.parked = map[uint32][]parkedMsg{}
	n.mu.Unlock()
	for _, st := range sts {
		if st.tp.Err() == nil {
			select {
			case <-st.tp.Done():
			default:
				st.remote.Store(true)
				st.tp.Cancel(ErrClosed)
			}
		}
	}
	n.watchers.Wait()
	n.spare.cancel()
	<-n.spare.done
	return errors.Join(n.Errors()...)
}

// CallerStats sums the counters of the Callers this Node attached, by role.
func (n *Node) CallerStats() map[ce.Role]ce.CallerStats {
	out := map[ce.Role]ce.CallerStats{}
	add := func(c *ce.Caller) {
		if c == nil {
			return
		}
		s, t := c.Stats(), out[c.Role()]
		t.Direct += s.Direct
		t.Shifted += s.Shifted
		out[c.Role()] = t
	}
	n.mu.Lock()
	slots := n.slots
	n.mu.Unlock()
	for i := range slots {
		add(slots[i].worker.Load())
		add(slots[i].manager.Load())
	}
	add(n.other)
	return out
}

type arenaKey struct {
	typ  uint8
	size uint64
}

// newCopy returns a copy of wire type t and size bytes, with one reference, and its bytes.
// Received data lives in arenas, one per (type, size), so that its buffers are reused once
// the successors have released them.
func (n *Node) newCopy(t uint8, size uint64) (*rt.Copy, []byte, error) {
	if err := checkType(t, size); err != nil {
		return nil, nil, err
	}
	k := arenaKey{t, size}
	n.amu.Lock()
	a := n.arenas[k]
	if a == nil {
		if n.arenas == nil {
			n.arenas = map[arenaKey]*rt.Arena{}
		}
		a = rt.NewArenaOf(int(size), func() any { return newValue(t, size) })
		n.arenas[k] = a
	}
	n.amu.Unlock()
	c := a.Get()
	b, _, err := bytesOf(c.Value)
	return c, b, err
}

// tr returns the Node's tracing, nil without a trace (set by the first Add).
func (n *Node) tr() *tracing { return n.trc.Load() }
