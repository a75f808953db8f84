package remote

// The sending side: activations and write-backs of a completing task's flows.
//
// Actors: the worker (or device manager) completing the producer, which calls Activate and
// WriteBack during its release walk (rt's deps.go); rt's local successors of the producer,
// which share its buffer; the comm goroutine; and the peer rank, which receives the message
// and, for a value above the eager size, pulls the bytes later with a Get from this rank's
// memory (rendezvous), then notifies (ce.TagRemoteGet, pendingGet.end).
//
// Invariant: a peer receives the producer's values of the version it was sent, whatever the
// local successors do to the buffer meanwhile.
//  1. An eager value is copied into the message before the call returns.
//  2. rt makes a local arrival at a writing flow (RW, WRITE) only once every Remote call of
//     the release has returned (rt's deps.go, "Local writers in a distributed run"), so no
//     local writer runs during these calls.
//  3. A rendezvous value that a local task writes, as a successor of the producer or of a
//     local reader that passes the buffer on (localWriter, cached per producer and flow in
//     the worker's slot), is copied into a buffer from the Node's arenas (snapshot),
//     which the offer holds until the peer's Get ends; a value with no local writer is
//     offered in place, and its readers, which never change it, run meanwhile.
// The receiving side keeps the same invariant for what it forwards down a broadcast tree
// (deliver, recv.go): it copies the value before handing it to a local writer.
//
// Device copies: rt/remote never reads one. In a run on several ranks a device writes every
// written flow back to the host before the producer's release (rt/gpu, hostreads.go), and
// the flow sent is that host copy. A local device writer of the version stages the host copy
// in and changes the host buffer only at its own stage-out, after it started, hence after
// step 3's copy.
//
// Rejected designs:
//   - copying every rendezvous value: it doubles the memory traffic of large sends that no
//     local task writes, the common case;
//   - making the local writer wait for the peer's Get (a pin on the copy that the writer's
//     readiness depends on): the writer would wait a network round trip, and rt would need a
//     wait list on each copy; one local copy frees it at once;
//   - telling JDF authors to order the writer after the readers, or to keep such values under
//     the eager size: a silent wrong result is not a performance trade-off.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/ce"
)

// Activate implements rt.Remote: flow of src feeds a successor on rank. One message goes
// per (completed task, flow, destination rank), whatever the number of successors there:
// the receiver recomputes src's successors and delivers one copy to all of its local ones.
// With the binomial tree the first call for (src, flow) sends to the tree's first level and
// covers every destination rank.
func (n *Node) Activate(w rt.Worker, src *rt.Task, flow int, peer *rt.TaskClass, peerFlow int, l *rt.Locals, rank int) error {
	s := n.slotOf(w, src)
	if s.seen(kindActivate, flow, rank) {
		return nil
	}
	if n.cfg.tree == Star {
		s.mark(kindActivate, flow, rank)
		n.stats.activations.Add(1)
		return n.send(n.callerOf(s, w, src), s, w, src, kindActivate, flow, rank, nil)
	}
	dests := n.destinations(src, flow)
	tree := make([]int32, 1, len(dests)+1)
	tree[0] = int32(n.rank)
	for _, r := range dests {
		s.mark(kindActivate, flow, r)
		tree = append(tree, int32(r))
	}
	if !s.seen(kindActivate, flow, rank) { // guards disagreeing between two walks
		return fmt.Errorf("remote: %s: rank %d is a destination of flow %s but not in its broadcast tree",
			src, rank, src.Class().Flows[flow].Name)
	}
	c := n.callerOf(s, w, src)
	for _, ch := range children(0, len(tree)) {
		n.stats.activations.Add(1)
		if err := n.send(c, s, w, src, kindActivate, flow, int(tree[ch]), tree); err != nil {
			return err
		}
	}
	return nil
}

// WriteBack implements rt.Remote: flow of src is the final value of an element of a
// collection stored on rank. One message per (src, flow, rank) serves every element there.
func (n *Node) WriteBack(w rt.Worker, src *rt.Task, flow int, coll rt.Collection, ix rt.Index, rank int) error {
	s := n.slotOf(w, src)
	if s.seen(kindWriteBack, flow, rank) {
		return nil
	}
	s.mark(kindWriteBack, flow, rank)
	n.stats.writeBacks.Add(1)
	return n.send(n.callerOf(s, w, src), s, w, src, kindWriteBack, flow, rank, nil)
}

// destinations returns the ranks other than this one where flow of src has successors, in
// increasing order.
func (n *Node) destinations(src *rt.Task, flow int) []int {
	v := &rankSet{tp: src.Taskpool(), flow: flow, self: n.rank}
	rt.Impl.VisitSuccessors(src.Taskpool(), src.Class(), src.Locals(), v)
	return v.ranks
}

type rankSet struct {
	tp         *rt.Taskpool
	flow, self int
	ranks      []int
}

func (v *rankSet) Task(flow, dep int, peer *rt.TaskClass, peerFlow int, l *rt.Locals) {
	if flow != v.flow || peer.Affinity == nil {
		return
	}
	if coll, ix := peer.Affinity(v.tp, l); coll != nil {
		if r := coll.RankOf(ix); r != v.self && !slices.Contains(v.ranks, r) {
			i, _ := slices.BinarySearch(v.ranks, r)
			v.ranks = slices.Insert(v.ranks, i, r)
		}
	}
}
func (v *rankSet) Data(flow, dep int, c rt.Collection, ix rt.Index) {}

// children returns the positions of the children of position i in a binomial tree over n
// positions rooted at 0: i + 2^k for every 2^k > i.
func children(i, n int) []int {
	var out []int
	for k := 1; k < n; k <<= 1 {
		if k > i && i+k < n {
			out = append(out, i+k)
		}
	}
	return out
}

// slotOf returns the sending state of worker w, reset when src is a new task.
func (n *Node) slotOf(w rt.Worker, src *rt.Task) *slot {
	i := w.ID() + 1
	if i < 0 || i >= len(n.slots) {
		i = 0
	}
	s := &n.slots[i]
	id := srcID{src.Taskpool(), src.Class().ID, rt.Impl.Key(src)}
	if s.cur != id {
		s.cur, s.sent = id, s.sent[:0]
		s.checked, s.writers = 0, 0
	}
	return s
}

func sentKey(kind uint8, flow, rank int) uint64 {
	return uint64(kind)<<56 | uint64(flow)<<40 | uint64(uint32(rank))
}

func (s *slot) seen(kind uint8, flow, rank int) bool {
	k := sentKey(kind, flow, rank)
	for _, x := range s.sent {
		if x == k {
			return true
		}
	}
	return false
}

func (s *slot) mark(kind uint8, flow, rank int) { s.sent = append(s.sent, sentKey(kind, flow, rank)) }

// callerOf returns the Caller for the goroutine completing src on w: the device-manager one
// when src ran a device incarnation (its completion runs in the device's manager, which
// must never touch the transport), the worker one otherwise. rt's pseudo-worker serves
// goroutines that are not workers, which get RoleOther.
func (n *Node) callerOf(s *slot, w rt.Worker, src *rt.Task) *ce.Caller {
	dm := false
	if inc := rt.Impl.Incarnation(src); inc >= 0 && inc < len(src.Class().Incarnations) {
		dm = src.Class().Incarnations[inc].Kind != rt.CPU
	}
	p, role := &s.worker, ce.RoleWorker
	if dm {
		p, role = &s.manager, ce.RoleDeviceManager
	} else if w.ID() < 0 {
		role = ce.RoleOther
	}
	if c := p.Load(); c != nil {
		return c
	}
	c, err := n.e.Attach(role, fmt.Sprintf("remote %s of worker %d", role, w.ID()))
	if err != nil {
		return n.other // closed engine: sends through it fail with the engine's error
	}
	p.Store(c)
	return c
}

// send sends flow of src (its data, if any) to rank, with the broadcast tree (nil: direct).
func (n *Node) send(c *ce.Caller, s *slot, w rt.Worker, src *rt.Task, kind uint8, flow, rank int, tree []int32) error {
	start := n.tr().now()
	tp := src.Taskpool()
	st := n.state(tp)
	tc := src.Class()
	h := header{kind: kind, flow: uint8(flow), class: uint16(tc.ID), tp: uint32(rt.Impl.TaskpoolID(tp)),
		nparams: uint8(len(tc.Params)), root: uint32(n.rank), tree: tree, prio: src.Priority()}
	l := src.Locals()
	for i, slot := range tc.Params {
		h.params[i] = int64(l[slot])
	}
	var cp *rt.Copy
	if tc.Flows[flow].Access != rt.CTL {
		cp = src.Flow(flow)
	}
	var err error
	if cp != nil && n.rendezvous(cp) && s.localWriter(n.rank, src, flow) {
		cp, err = n.snapshot(cp)
		if err == nil {
			defer rt.Impl.Release(cp) // the offer holds its own reference (addPending)
			n.stats.snapshots.Add(1)
		}
	}
	if err == nil {
		err = n.sendCopy(c, st, tp, &h, cp, rank, nil)
	}
	if t := n.tr(); t != nil {
		name := t.send
		if kind == kindWriteBack {
			name = t.wbk
		}
		t.sendTrack(s, w.ID()).SpanFlow(name, start, t.now(), h.trace, false, int64(rank), int64(tc.ID), int64(flow))
	}
	if err != nil {
		return fmt.Errorf("remote: sending flow %s to rank %d: %w", tc.Flows[flow].Name, rank, err)
	}
	return nil
}

// rendezvous reports whether cp's value goes by Get rather than inside the message.
func (n *Node) rendezvous(cp *rt.Copy) bool {
	b, _, err := bytesOf(cp.Value)
	return err == nil && len(b) > n.eagerMax
}

// snapshot returns a copy of cp's value in a buffer of the Node's arenas, with one reference.
func (n *Node) snapshot(cp *rt.Copy) (*rt.Copy, error) {
	b, typ, err := bytesOf(cp.Value)
	if err != nil {
		return nil, err
	}
	snap, buf, err := n.newCopy(typ, uint64(len(b)))
	if err != nil {
		return nil, err
	}
	copy(buf, b)
	return snap, nil
}

// localWriter reports whether flow of src (the slot's current task) reaches a task on rank
// self that receives it at a writing flow, directly or through local readers that pass it
// on (they share the buffer); the answer is kept in the slot for the task's other sends.
func (s *slot) localWriter(self int, src *rt.Task, flow int) bool {
	bit := uint32(1) << uint(flow)
	if s.checked&bit == 0 {
		s.checked |= bit
		if findWriter(src.Taskpool(), src.Class(), src.Locals(), flow, self) {
			s.writers |= bit
		}
	}
	return s.writers&bit != 0
}

// maxWriterWalk bounds the instances findWriter visits; past it, it answers yes, which
// costs a copy and is always correct.
const maxWriterWalk = 4096

// findWriter reports whether flow of the instance of tc at l reaches a local writer.
func findWriter(tp *rt.Taskpool, tc *rt.TaskClass, l *rt.Locals, flow, self int) bool {
	v := &writerFinder{tp: tp, flow: flow, self: self}
	rt.Impl.VisitSuccessors(tp, tc, l, v)
	return v.walk()
}

// walk follows the readers found so far and reports whether a writer was found.
func (v *writerFinder) walk() bool {
	tp := v.tp
	for n := 1; !v.found && len(v.readers) > 0; n++ {
		if n >= maxWriterWalk {
			return true
		}
		r := v.readers[len(v.readers)-1]
		v.readers = v.readers[:len(v.readers)-1]
		v.flow = r.peerFlow
		rt.Impl.VisitSuccessors(tp, r.peer, &r.l, v)
	}
	return v.found
}

// writerFinder collects the local successors of one flow: it stops at the first that writes
// it, and keeps the readers, whose own successors share the buffer. A successor is local as
// rt's Edges.Task decides: no affinity, or an affinity on rank self.
type writerFinder struct {
	tp         *rt.Taskpool
	flow, self int
	found      bool
	readers    []target
}

func (v *writerFinder) Task(flow, dep int, peer *rt.TaskClass, peerFlow int, l *rt.Locals) {
	if flow != v.flow || v.found || peerFlow < 0 || peerFlow >= len(peer.Flows) {
		return
	}
	if peer.Affinity != nil {
		if coll, ix := peer.Affinity(v.tp, l); coll != nil && coll.RankOf(ix) != v.self {
			return
		}
	}
	switch peer.Flows[peerFlow].Access {
	case rt.RW, rt.Write:
		v.found = true
	case rt.Read:
		v.readers = append(v.readers, target{peer, peerFlow, *l})
	}
}
func (v *writerFinder) Data(flow, dep int, c rt.Collection, ix rt.Index) {}

// sendCopy sends header h with the data of cp (nil: none) to rank, eager or for a Get. For a
// Get, done (if not nil) is called once the offer ends (pendingGet.end): cp is no longer read.
func (n *Node) sendCopy(c *ce.Caller, st *tpState, tp *rt.Taskpool, h *header, cp *rt.Copy, rank int, done func()) error {
	var body []byte
	h.data = dataNone
	if cp != nil && cp.Value != nil {
		b, typ, err := bytesOf(cp.Value)
		if err != nil {
			return err
		}
		body, h.typ, h.size = b, typ, uint64(len(b))
		h.data = dataEager
		if len(b) > n.eagerMax {
			h.data = dataGet
		}
	}
	h.trace = n.tr().flowID(n.rank)
	var token uint64
	if h.data == dataGet {
		reg, err := c.Register(ce.HostMem(body))
		if err != nil {
			return err
		}
		token = n.addPending(st, reg, cp, done)
		h.key, h.token = reg.Key(), token
		n.stats.gets.Add(1)
		n.stats.getBytes.Add(int64(len(body)))
		body = nil
	} else if h.data == dataEager {
		n.stats.eager.Add(1)
		n.stats.eagerBytes.Add(int64(len(body)))
	}
	size := h.len() + len(body)
	fill := func(b []byte) { copy(b[len(h.encode(b[:0])):], body) }
	m, err := c.NewMsg(context.Background(), size)
	if errors.Is(err, ce.ErrNoBuffers) {
		// Device managers and the comm goroutine never wait for message buffers: the bytes
		// go to the spare sender, which waits for them instead.
		p := make([]byte, size)
		fill(p)
		rt.Impl.AddActions(tp, 1)
		n.stats.spared.Add(1)
		n.spare.push(spareSend{st: st, rank: rank, token: token, payload: p, tp: h.tp})
		return nil
	}
	if err != nil {
		n.cancelPending(token)
		return err
	}
	fill(m.Bytes())
	rt.Impl.AddActions(tp, 1)
	return n.post(c, st, rank, token, m, h.tp)
}

// post sends m (holding one action of st's taskpool, given back when the send completes).
func (n *Node) post(c *ce.Caller, st *tpState, rank int, token uint64, m *ce.Msg, id uint32) error {
	m.SetTaskpool(ce.TaskpoolID(id + 1))
	d := sentPool.Get().(*sent)
	d.n, d.st, d.rank, d.token = n, st, rank, token
	err := c.SendAM(ce.Rank(rank), ce.TagActivate, m, d.done)
	if err != nil {
		d.free()
		rt.Impl.AddActions(st.tp, -1)
		n.cancelPending(token)
	}
	return err
}

// sent is what the completion of one send of post needs, recycled through sentPool so
// that a send allocates no callback: the CE calls done exactly once when SendAM returned
// nil, and never when it returned an error (post then frees it).
type sent struct {
	n     *Node
	st    *tpState
	rank  int
	token uint64
	done  ce.Done // d.complete, bound once per record
}

var sentPool sync.Pool

func init() {
	sentPool.New = func() any {
		d := new(sent)
		d.done = d.complete
		return d
	}
}

func (d *sent) free() {
	d.n, d.st = nil, nil
	sentPool.Put(d)
}

// complete ends the send (comm goroutine): a failure fails the taskpool and withdraws the
// offer; the action goes back either way.
func (d *sent) complete(_ *ce.Caller, err error) {
	n, st, rank, token := d.n, d.st, d.rank, d.token
	d.free()
	if err != nil {
		n.fail(st, fmt.Errorf("remote: message to rank %d: %w", rank, err))
		n.cancelPending(token)
	}
	rt.Impl.AddActions(st.tp, -1)
}

// spareSend is a message that a caller which may not wait for buffers left to the spare
// sender.
type spareSend struct {
	st      *tpState
	rank    int
	token   uint64
	payload []byte
	tp      uint32
}

// spare is the Node's spare sender: one goroutine, started by New and stopped by Close, that
// waits for message buffers on behalf of device managers and the comm goroutine.
type spare struct {
	mu     sync.Mutex
	q      []spareSend
	wake   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

func (s *spare) push(x spareSend) {
	s.mu.Lock()
	s.q = append(s.q, x)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// run sends the queued messages through n.other until ctx ends; what is left then fails.
func (s *spare) run(n *Node) {
	defer close(s.done)
	for {
		s.mu.Lock()
		q := s.q
		s.q = nil
		s.mu.Unlock()
		for i, x := range q {
			m, err := n.other.NewMsg(s.ctx, len(x.payload))
			if err != nil {
				s.drop(n, q[i:], err)
				return
			}
			copy(m.Bytes(), x.payload)
			if err := n.post(n.other, x.st, x.rank, x.token, m, x.tp); err != nil {
				n.fail(x.st, fmt.Errorf("remote: message to rank %d: %w", x.rank, err))
			}
		}
		select {
		case <-s.wake:
		case <-s.ctx.Done():
			s.mu.Lock()
			q := s.q
			s.q = nil
			s.mu.Unlock()
			s.drop(n, q, ErrClosed)
			return
		}
	}
}

// drop fails the messages in q with err.
func (s *spare) drop(n *Node, q []spareSend, err error) {
	for _, x := range q {
		n.fail(x.st, fmt.Errorf("remote: message to rank %d: %w", x.rank, err))
		n.cancelPending(x.token)
		rt.Impl.AddActions(x.st.tp, -1)
	}
}

// state returns the Node's record of tp.
func (n *Node) state(tp *rt.Taskpool) *tpState {
	n.mu.Lock()
	defer n.mu.Unlock()
	if st := n.byTP[tp]; st != nil {
		return st
	}
	return &tpState{tp: tp} // finished and forgotten: only its errors matter now

}
