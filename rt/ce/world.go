package ce

import (
	"container/heap"
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// World is the in-process backend (docs/ce.md, "Backends"): n ranks in one process, each with its
// own Transport, so that tests and examples run many ranks without MPI. AMs are copied into the
// receiver's inbox; data transfers are matched like MPI's two-sided messages (an unmatched
// send waits for its receive) and copied between registered buffers. An idle rank blocks:
// the transport is wakeable, so its comm loop parks instead of spinning.
//
// Options emulate a thread level, check the OS thread of every transport call (StrictMode),
// delay and reorder completions (InjectDelay), and Kill fails everything involving a rank
// with ErrPeerLost.
type World struct {
	cfg   worldConfig
	ranks []*worldRank

	mu      sync.Mutex // data matching, barriers, the delay queue
	recvs   map[dataKey][]*dataOp
	sends   map[dataKey][]*dataOp
	barWait []barrierEntry
	rng     *rand.Rand
	lastDue map[fifoKey]int64
	tq      timedQueue
	tqWake  chan struct{}
	tqStop  chan struct{}
	tqDone  chan struct{}
	open    int // transports started and not closed
}

// WorldOption configures NewWorld.
type WorldOption func(*worldConfig)

type worldConfig struct {
	level              Level
	strict             bool
	minDelay, maxDelay time.Duration
	seed               uint64
	maxAM              int
	// holdAM, when set, gives each AM a time to stay in flight (tests only, through
	// export_test.go): a held AM's send completes at once, as an eager MPI send whose bytes
	// were copied does, and it arrives later, so that the sender's later AMs on other tags
	// (its FIN) overtake it, as they may over MPI.
	holdAM func(src, dst Rank, tag Tag) time.Duration
}

// EmulateLevel sets the thread level the ranks report (default LevelMultiple). With
// LevelFunneled every Caller but the comm goroutine shifts.
func EmulateLevel(l Level) WorldOption { return func(c *worldConfig) { c.level = l } }

// StrictMode wraps every rank's transport in a Strict checker: the comm goroutine is locked to
// its OS thread, and every transport call records the OS thread it came from.
func StrictMode() WorldOption { return func(c *worldConfig) { c.strict = true } }

// InjectDelay delays every AM delivery, send completion and data completion by a random
// duration in [lo, hi], which reorders completions (AMs of one sender and tag keep their
// order, as with MPI). Message bytes are read at delivery time, so a buffer the Engine
// released early would be caught.
func InjectDelay(lo, hi time.Duration) WorldOption {
	return func(c *worldConfig) { c.minDelay, c.maxDelay = lo, max(lo, hi) }
}

// WorldSeed seeds the delay generator (default 1), for reproducible reorderings.
func WorldSeed(seed uint64) WorldOption { return func(c *worldConfig) { c.seed = seed } }

// WorldMaxAM sets the largest AM payload (default 1 MiB).
func WorldMaxAM(n int) WorldOption { return func(c *worldConfig) { c.maxAM = n } }

// NewWorld returns a world of n ranks.
func NewWorld(n int, opts ...WorldOption) *World {
	cfg := worldConfig{level: LevelMultiple, seed: 1, maxAM: 1 << 20}
	for _, o := range opts {
		o(&cfg)
	}
	w := &World{
		cfg:     cfg,
		recvs:   make(map[dataKey][]*dataOp),
		sends:   make(map[dataKey][]*dataOp),
		rng:     rand.New(rand.NewPCG(cfg.seed, 0x6a646632676f)),
		lastDue: make(map[fifoKey]int64),
		tqWake:  make(chan struct{}, 1),
	}
	for i := range n {
		r := &worldRank{w: w, rank: Rank(i), wake: make(chan struct{}, 1), regs: make(map[LocalKey]Mem),
			data: make(map[OpID]*dataOp), amOut: make(map[*Msg]struct{})}
		w.ranks = append(w.ranks, r)
	}
	return w
}

// Size is the number of ranks.
func (w *World) Size() int { return len(w.ranks) }

// Transport returns rank r's transport (wrapped in a Strict checker under StrictMode).
func (w *World) Transport(r Rank) Transport {
	t := w.ranks[r]
	if w.cfg.strict {
		if t.strict == nil {
			t.strict = NewStrict(t)
		}
		return t.strict
	}
	return t
}

// Strict returns rank r's checker, or nil without StrictMode.
func (w *World) Strict(r Rank) *Strict {
	if !w.cfg.strict {
		return nil
	}
	w.Transport(r)
	return w.ranks[r].strict
}

// Engines creates one Engine per rank, with the same options. They still need Start.
func (w *World) Engines(opts ...Option) []*Engine {
	es := make([]*Engine, len(w.ranks))
	for i := range es {
		es[i] = New(w.Transport(Rank(i)), opts...)
	}
	return es
}

// WorldStats counts what happened on one rank's transport.
type WorldStats struct {
	AMsDelivered     int64 // AMs this rank received
	DataBytesWritten int64 // bytes written into this rank's registered memory
	DataBytesRead    int64 // bytes read from this rank's registered memory
	Registers        int64
	Unregisters      int64
}

// Stats returns rank r's counters.
func (w *World) Stats(r Rank) WorldStats {
	t := w.ranks[r]
	return WorldStats{
		AMsDelivered:     t.delivered.Load(),
		DataBytesWritten: t.written.Load(),
		DataBytesRead:    t.read.Load(),
		Registers:        t.nreg.Load(),
		Unregisters:      t.nunreg.Load(),
	}
}

// Kill makes rank r fail: every pending operation involving r, on any rank, completes with
// ErrPeerLost, the other ranks get an EventPeerLost for r and r gets one for each of them,
// and every later operation involving r fails the same way. It returns once all of that is
// queued for the comm goroutines, which then finish it in one loop iteration.
func (w *World) Kill(r Rank) {
	dead := w.ranks[r]
	w.mu.Lock()
	if dead.dead.Swap(true) {
		w.mu.Unlock()
		return
	}
	lost := fmt.Errorf("%w: rank %d killed", ErrPeerLost, r)
	var evs []rankEvent
	for _, t := range w.ranks {
		for id, op := range t.data {
			if t == dead || op.peer == r {
				w.unmatch(op)
				delete(t.data, id)
				evs = append(evs, rankEvent{t, Event{Kind: EventDataDone, ID: id, Err: lost}})
			}
		}
		for m := range t.amOut {
			if t == dead || m.dst == r {
				delete(t.amOut, m)
				evs = append(evs, rankEvent{t, Event{Kind: EventSendDone, Msg: m, Err: lost}})
			}
		}
	}
	for _, b := range w.barWait {
		evs = append(evs, rankEvent{b.r, Event{Kind: EventBarrierDone, ID: b.id, Err: lost}})
	}
	w.barWait = nil
	w.mu.Unlock()
	for _, re := range evs {
		re.r.push(re.ev, nil)
	}
	for _, t := range w.ranks {
		if t != dead {
			t.push(Event{Kind: EventPeerLost, Src: r}, nil)
			dead.push(Event{Kind: EventPeerLost, Src: t.rank}, nil)
		}
	}
}

type rankEvent struct {
	r  *worldRank
	ev Event
}

// dataKey matches a send with a receive: data from src to dst with one data tag.
type dataKey struct {
	dst, src Rank
	dtag     uint32
}

type fifoKey struct {
	src, dst Rank
	tag      Tag
}

// dataOp is one posted SendData or RecvData.
type dataOp struct {
	owner   *worldRank
	peer    Rank
	dtag    uint32
	buf     []byte
	id      OpID
	send    bool
	matched bool
}

type barrierEntry struct {
	r  *worldRank
	id OpID
}

// delay draws an injected delay; zero without InjectDelay. Caller holds w.mu.
func (w *World) delay() int64 {
	if w.cfg.maxDelay == 0 {
		return 0
	}
	d := w.cfg.minDelay
	if span := w.cfg.maxDelay - w.cfg.minDelay; span > 0 {
		d += time.Duration(w.rng.Int64N(int64(span) + 1))
	}
	return int64(d)
}

// later runs fn after d nanoseconds on the world's delay goroutine (w.mu held by the caller).
func (w *World) later(d int64, key *fifoKey, fn func()) {
	due := time.Now().UnixNano() + d
	if key != nil {
		due = max(due, w.lastDue[*key])
		w.lastDue[*key] = due
	}
	w.tq.seq++
	heap.Push(&w.tq, timed{due: due, seq: w.tq.seq, fn: fn})
	select {
	case w.tqWake <- struct{}{}:
	default:
	}
}

// runDelays is the delay goroutine, owned by the World: it runs while any transport is open.
func (w *World) runDelays(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		w.mu.Lock()
		var wait time.Duration = time.Hour
		var fn func()
		if len(w.tq.items) > 0 {
			now := time.Now().UnixNano()
			if top := w.tq.items[0]; top.due <= now {
				fn = heap.Pop(&w.tq).(timed).fn
			} else {
				wait = time.Duration(top.due - now)
			}
		}
		w.mu.Unlock()
		if fn != nil {
			fn()
			continue
		}
		timer.Reset(wait)
		select {
		case <-w.tqWake:
		case <-timer.C:
		case <-stop:
			return
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

type timed struct {
	due int64
	seq uint64
	fn  func()
}

type timedQueue struct {
	items []timed
	seq   uint64
}

func (q timedQueue) Len() int { return len(q.items) }
func (q timedQueue) Less(i, j int) bool {
	a, b := q.items[i], q.items[j]
	return a.due < b.due || a.due == b.due && a.seq < b.seq
}
func (q timedQueue) Swap(i, j int) { q.items[i], q.items[j] = q.items[j], q.items[i] }
func (q *timedQueue) Push(v any)   { q.items = append(q.items, v.(timed)) }
func (q *timedQueue) Pop() any {
	x := q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	return x
}

// worldRank is one rank's Transport.
type worldRank struct {
	w      *World
	rank   Rank
	strict *Strict

	dead    atomic.Bool
	closed  atomic.Bool
	started bool

	// Producer side of the event queue: any goroutine, under mu.
	mu   sync.Mutex
	evs  []worldEvent
	slab []byte
	wake chan struct{}

	// Consumer side: the comm goroutine's Poll.
	cevs  []worldEvent
	cslab []byte
	cpos  int

	regMu   sync.Mutex
	regs    map[LocalKey]Mem
	nextKey LocalKey

	// Under w.mu.
	data  map[OpID]*dataOp
	amOut map[*Msg]struct{} // AM sends whose delivery is delayed

	delivered, written, read, nreg, nunreg atomic.Int64
}

// worldEvent is an Event whose arrival payload lives in the queue's slab.
type worldEvent struct {
	ev     Event
	off, n int
}

// push queues an event (with payload bytes for an arrival) and wakes the comm loop when the
// queue was empty: the loop parks only after a Poll that found the queue empty.
func (t *worldRank) push(ev Event, payload []byte) {
	t.mu.Lock()
	wasEmpty := len(t.evs) == 0
	we := worldEvent{ev: ev}
	if ev.Kind == EventArrival {
		we.off, we.n = len(t.slab), len(payload)
		t.slab = append(t.slab, payload...)
	}
	t.evs = append(t.evs, we)
	t.mu.Unlock()
	if wasEmpty {
		select {
		case t.wake <- struct{}{}:
		default:
		}
	}
}

func (t *worldRank) Start(context.Context) (Rank, int, error) {
	w := t.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if t.started {
		return 0, 0, ErrStarted
	}
	t.started = true
	w.open++
	if (w.cfg.maxDelay > 0 || w.cfg.holdAM != nil) && w.tqStop == nil {
		w.tqStop, w.tqDone = make(chan struct{}), make(chan struct{})
		go w.runDelays(w.tqStop, w.tqDone)
	}
	return t.rank, len(w.ranks), nil
}

func (t *worldRank) Caps() Caps {
	return Caps{
		Level:      t.w.cfg.level,
		Wakeable:   true,
		MaxAM:      t.w.cfg.maxAM,
		DataTagMax: ^uint32(0),
	}
}

// Tags need no arming in-process: every arrival is delivered and the Engine checks its own
// table (reporting unknown tags).
func (t *worldRank) RegisterTag(Tag, int) error { return nil }
func (t *worldRank) UnregisterTag(Tag) error    { return nil }

func (t *worldRank) SendAM(tag Tag, dst Rank, m *Msg) error {
	if t.closed.Load() {
		return ErrClosed
	}
	w := t.w
	if int(dst) < 0 || int(dst) >= len(w.ranks) {
		return fmt.Errorf("%w: %d", ErrBadRank, dst)
	}
	d := w.ranks[dst]
	if w.cfg.holdAM != nil {
		if hold := w.cfg.holdAM(t.rank, dst, tag); hold > 0 {
			return t.sendHeld(d, tag, m, hold)
		}
	}
	if w.cfg.maxDelay == 0 {
		if err := t.deliverable(d); err != nil {
			t.push(Event{Kind: EventSendDone, Msg: m, Err: err}, nil)
			return nil
		}
		d.push(Event{Kind: EventArrival, Src: t.rank, Tag: tag}, m.Wire())
		d.delivered.Add(1)
		t.push(Event{Kind: EventSendDone, Msg: m}, nil)
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	t.amOut[m] = struct{}{}
	w.later(w.delay(), &fifoKey{t.rank, dst, tag}, func() {
		w.mu.Lock()
		_, ok := t.amOut[m]
		delete(t.amOut, m)
		w.mu.Unlock()
		if !ok {
			return // failed meanwhile (Kill, Close)
		}
		err := t.deliverable(d)
		if err == nil {
			// The bytes are read now, long after SendAM returned.
			d.push(Event{Kind: EventArrival, Src: t.rank, Tag: tag}, m.Wire())
			d.delivered.Add(1)
		}
		t.push(Event{Kind: EventSendDone, Msg: m, Err: err}, nil)
	})
	return nil
}

// sendHeld completes the send of m at once and delivers a copy of its bytes to d after hold
// (worldConfig.holdAM), on the delay goroutine; a copy that comes due after d closed is lost,
// as it would be over MPI.
func (t *worldRank) sendHeld(d *worldRank, tag Tag, m *Msg, hold time.Duration) error {
	w := t.w
	wire := append([]byte(nil), m.Wire()...)
	w.mu.Lock()
	w.later(int64(hold), nil, func() {
		if t.deliverable(d) == nil {
			d.push(Event{Kind: EventArrival, Src: t.rank, Tag: tag}, wire)
			d.delivered.Add(1)
		}
	})
	w.mu.Unlock()
	t.push(Event{Kind: EventSendDone, Msg: m}, nil)
	return nil
}

func (t *worldRank) deliverable(d *worldRank) error {
	switch {
	case t.dead.Load():
		return fmt.Errorf("%w: this rank was killed", ErrPeerLost)
	case d.dead.Load():
		return fmt.Errorf("%w: rank %d killed", ErrPeerLost, d.rank)
	case d.closed.Load():
		return fmt.Errorf("%w: rank %d closed", ErrPeerLost, d.rank)
	}
	return nil
}

func (t *worldRank) Register(m Mem) (LocalKey, error) {
	if m.IsDevice() {
		return 0, ErrDeviceMemory
	}
	t.regMu.Lock()
	defer t.regMu.Unlock()
	t.nextKey++
	t.regs[t.nextKey] = m
	t.nreg.Add(1)
	return t.nextKey, nil
}

func (t *worldRank) Unregister(k LocalKey) error {
	t.regMu.Lock()
	defer t.regMu.Unlock()
	if _, ok := t.regs[k]; !ok {
		return fmt.Errorf("%w: local key %d", ErrBadKey, k)
	}
	delete(t.regs, k)
	t.nunreg.Add(1)
	return nil
}

func (t *worldRank) region(k LocalKey, off, n int) ([]byte, error) {
	t.regMu.Lock()
	m, ok := t.regs[k]
	t.regMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: local key %d", ErrBadKey, k)
	}
	if off < 0 || n < 0 || off > len(m.Host)-n {
		return nil, fmt.Errorf("%w: %d bytes at %d of %d", ErrOutOfRange, n, off, len(m.Host))
	}
	return m.Host[off : off+n : off+n], nil
}

func (t *worldRank) SendData(dst Rank, dtag uint32, k LocalKey, off, n int, id OpID) error {
	return t.postData(true, dst, dtag, k, off, n, id)
}

func (t *worldRank) RecvData(src Rank, dtag uint32, k LocalKey, off, n int, id OpID) error {
	return t.postData(false, src, dtag, k, off, n, id)
}

func (t *worldRank) postData(send bool, peer Rank, dtag uint32, k LocalKey, off, n int, id OpID) error {
	if t.closed.Load() {
		return ErrClosed
	}
	w := t.w
	if int(peer) < 0 || int(peer) >= len(w.ranks) {
		return fmt.Errorf("%w: %d", ErrBadRank, peer)
	}
	buf, err := t.region(k, off, n)
	if err != nil {
		return err
	}
	op := &dataOp{owner: t, peer: peer, dtag: dtag, buf: buf, id: id, send: send}
	w.mu.Lock()
	if err := t.deliverable(w.ranks[peer]); err != nil {
		w.mu.Unlock()
		t.push(Event{Kind: EventDataDone, ID: id, Err: err}, nil)
		return nil
	}
	t.data[id] = op
	key := dataKey{dst: peer, src: t.rank, dtag: dtag}
	wait, other := w.recvs, w.sends
	if !send {
		key = dataKey{dst: t.rank, src: peer, dtag: dtag}
		wait, other = w.sends, w.recvs
	}
	if q := wait[key]; len(q) > 0 {
		peerOp := q[0]
		if len(q) == 1 {
			delete(wait, key)
		} else {
			wait[key] = q[1:]
		}
		s, r := op, peerOp
		if !send {
			s, r = peerOp, op
		}
		s.matched, r.matched = true, true
		w.transfer(s, r)
	} else {
		other[key] = append(other[key], op)
	}
	w.mu.Unlock()
	return nil
}

// transfer moves the bytes of a matched pair and completes both sides, now or after an
// injected delay (w.mu held).
func (w *World) transfer(s, r *dataOp) {
	run := func() {
		w.mu.Lock()
		_, sok := s.owner.data[s.id]
		_, rok := r.owner.data[r.id]
		delete(s.owner.data, s.id)
		delete(r.owner.data, r.id)
		var err error
		if !sok || !rok {
			err = fmt.Errorf("%w: the other side went away", ErrPeerLost)
		} else if len(s.buf) != len(r.buf) {
			err = fmt.Errorf("ce: data transfer of %d bytes into a %d-byte receive", len(s.buf), len(r.buf))
		} else {
			copy(r.buf, s.buf)
			s.owner.read.Add(int64(len(s.buf)))
			r.owner.written.Add(int64(len(r.buf)))
		}
		w.mu.Unlock()
		if sok {
			s.owner.push(Event{Kind: EventDataDone, ID: s.id, Err: err}, nil)
		}
		if rok {
			r.owner.push(Event{Kind: EventDataDone, ID: r.id, Err: err}, nil)
		}
	}
	if d := w.delay(); d > 0 {
		w.later(d, nil, run)
		return
	}
	// Run inline without the lock held by our caller: run takes it itself.
	w.mu.Unlock()
	run()
	w.mu.Lock()
}

// unmatch removes an unmatched op from the matching tables (w.mu held).
func (w *World) unmatch(op *dataOp) {
	if op.matched {
		return
	}
	key := dataKey{dst: op.peer, src: op.owner.rank, dtag: op.dtag}
	tab := w.sends
	if !op.send {
		key = dataKey{dst: op.owner.rank, src: op.peer, dtag: op.dtag}
		tab = w.recvs
	}
	q := tab[key]
	for i, o := range q {
		if o == op {
			q = append(q[:i:i], q[i+1:]...)
			break
		}
	}
	if len(q) == 0 {
		delete(tab, key)
	} else {
		tab[key] = q
	}
}

func (t *worldRank) Cancel(id OpID) error {
	w := t.w
	w.mu.Lock()
	op, ok := t.data[id]
	if !ok || op.matched || op.send {
		w.mu.Unlock()
		return nil // completed or matched: its completion comes normally
	}
	w.unmatch(op)
	delete(t.data, id)
	w.mu.Unlock()
	t.push(Event{Kind: EventDataDone, ID: id, Err: ErrCanceled}, nil)
	return nil
}

func (t *worldRank) Barrier(id OpID) error {
	if t.closed.Load() {
		return ErrClosed
	}
	w := t.w
	w.mu.Lock()
	for _, r := range w.ranks {
		if r.dead.Load() {
			w.mu.Unlock()
			t.push(Event{Kind: EventBarrierDone, ID: id, Err: fmt.Errorf("%w: rank %d killed", ErrPeerLost, r.rank)}, nil)
			return nil
		}
	}
	w.barWait = append(w.barWait, barrierEntry{t, id})
	var done []barrierEntry
	if len(w.barWait) == len(w.ranks) {
		done, w.barWait = w.barWait, nil
	}
	w.mu.Unlock()
	for _, b := range done {
		b.r.push(Event{Kind: EventBarrierDone, ID: b.id}, nil)
	}
	return nil
}

// Poll hands out queued events; arrival payloads point into the slab swapped out with them,
// which producers get back (and overwrite) only at the swap after next: valid until the next
// Poll, as the contract says.
func (t *worldRank) Poll(ev []Event) int {
	if t.cpos == len(t.cevs) {
		t.mu.Lock()
		if len(t.evs) == 0 {
			t.mu.Unlock()
			return 0
		}
		t.evs, t.cevs = t.cevs[:0], t.evs
		t.slab, t.cslab = t.cslab[:0], t.slab
		t.mu.Unlock()
		t.cpos = 0
	}
	n := 0
	for n < len(ev) && t.cpos < len(t.cevs) {
		we := &t.cevs[t.cpos]
		ev[n] = we.ev
		if we.ev.Kind == EventArrival {
			ev[n].Payload = t.cslab[we.off : we.off+we.n : we.off+we.n]
		}
		*we = worldEvent{}
		t.cpos++
		n++
	}
	return n
}

func (t *worldRank) Wake() <-chan struct{} { return t.wake }

// Close fails this rank's outstanding operations (their events come from the next Polls) and
// stops the world's delay goroutine once no rank is open.
func (t *worldRank) Close() error {
	if t.closed.Swap(true) {
		return nil
	}
	w := t.w
	var evs []Event
	w.mu.Lock()
	for id, op := range t.data {
		w.unmatch(op)
		delete(t.data, id)
		evs = append(evs, Event{Kind: EventDataDone, ID: id, Err: ErrClosed})
	}
	for m := range t.amOut {
		delete(t.amOut, m)
		evs = append(evs, Event{Kind: EventSendDone, Msg: m, Err: ErrClosed})
	}
	kept := w.barWait[:0]
	for _, b := range w.barWait {
		if b.r == t {
			evs = append(evs, Event{Kind: EventBarrierDone, ID: b.id, Err: ErrClosed})
		} else {
			kept = append(kept, b)
		}
	}
	w.barWait = kept
	var stop, done chan struct{}
	if t.started {
		w.open--
		if w.open == 0 && w.tqStop != nil {
			stop, done = w.tqStop, w.tqDone
			w.tqStop, w.tqDone = nil, nil
		}
	}
	w.mu.Unlock()
	for _, ev := range evs {
		t.push(ev, nil)
	}
	if stop != nil {
		close(stop)
		<-done
	}
	return nil
}
