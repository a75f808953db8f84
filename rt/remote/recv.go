package remote

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/ce"
	"github.com/jdf2go/jdf2go/rt/profile"
)

// onActivate handles TagActivate on the comm goroutine.
func (n *Node) onActivate(c *ce.Caller, src ce.Rank, p []byte) {
	recv, _ := n.tr().commTracks(c)
	n.handle(c, src, p, recv)
}

// handle decodes and carries out one activation or write-back. Messages for a taskpool not
// added yet are kept (copied) until Add. The receive span goes on track (nil: none).
func (n *Node) handle(c *ce.Caller, src ce.Rank, p []byte, track *profile.Track) {
	n.stats.received.Add(1)
	r := newInbound()
	h := &r.h
	rest, err := h.decode(p)
	if err != nil {
		r.recycle()
		n.report(fmt.Errorf("remote: message from rank %d: %w", src, err))
		return
	}
	st := n.lookup(h.tp, src, p)
	if st == nil {
		r.recycle()
		return
	}
	r.n, r.st, r.src = n, st, src
	trace, class, flow := h.trace, h.class, h.flow // r may belong to a Get's callback after carryOut
	start := n.tr().now()
	kept, err := n.carryOut(c, r, rest)
	if !kept {
		r.recycle()
	}
	if err != nil {
		n.fail(st, fmt.Errorf("remote: rank %d, message from rank %d: %w", n.rank, src, err))
	}
	if track != nil {
		track.SpanFlow(n.tr().recv, start, n.tr().now(), trace, true, int64(src), int64(class), int64(flow))
	}
}

// The receive record.
//
// Actors: the comm goroutine, which runs handle for every message on TagActivate (Add runs
// it too, on its own goroutine, for the messages kept before the taskpool existed); the CE,
// which runs the callback of a Get on the comm goroutine.
//
// Invariant: one inbound record serves one message from its decoding to its end, and only
// one goroutine touches it at a time. handle takes it from inboundPool and gives it back when
// it returns, unless the message needs a Get: fetch then hands the record to the Get's
// callback and reports so (kept), and handle no longer touches it; the callback gives it
// back after the arrival. So a hop allocates no header,
// Locals or successor list on the receiving side; what the record holds (the header's tree,
// the successors) is read only while it is held, and Deliver copies the locals it keeps.
//
// Rejected design: sending the successors' instances in the message, so that the receiver
// need not walk the successors again. The receiver must still check that each named
// instance is a successor of the sender's task (a forged or stale message would otherwise
// satisfy an arbitrary dependency), and that check is the same walk.

// inbound is the receive record of one message.
type inbound struct {
	h   header
	l   rt.Locals // the sending task's instance (activations, write-backs)
	v   collector // its successors or collection elements on this rank
	tc  *rt.TaskClass
	n   *Node
	st  *tpState
	src ce.Rank

	// The Get in flight (fetch), read by getDone.
	reg    *ce.MemReg
	cp     *rt.Copy
	buf    []byte
	issued int64
	note   [8]byte
	done   ce.Done // r.getDone, bound once per record
}

var inboundPool sync.Pool

func init() {
	inboundPool.New = func() any {
		r := new(inbound)
		r.done = r.getDone
		return r
	}
}

func newInbound() *inbound {
	r := inboundPool.Get().(*inbound)
	r.h = header{tree: r.h.tree[:0]}
	return r
}

// recycle drops what r points to, so that a pooled record keeps no taskpool or datum alive.
func (r *inbound) recycle() {
	clear(r.v.elems)
	if cap(r.v.tasks) > 64 || cap(r.v.elems) > 64 {
		r.v.tasks, r.v.elems = nil, nil
	}
	r.v = collector{tasks: r.v.tasks[:0], elems: r.v.elems[:0]}
	r.tc, r.n, r.st, r.reg, r.cp, r.buf = nil, nil, nil, nil, nil, nil
	if cap(r.h.tree) > 64 {
		r.h.tree = nil
	}
	inboundPool.Put(r)
}

// what names the datum that r announces, for errors.
func (r *inbound) what() string {
	h := &r.h
	if h.kind == kindData {
		return fmt.Sprintf("datum %d version %d of taskpool %s", uint64(h.params[0]), uint64(h.params[1]), r.st.tp.Name())
	}
	return fmt.Sprintf("%s flow %s", instName{r.tc, h}, r.tc.Flows[h.flow].Name)
}

// lookup returns the state of taskpool id, or keeps p for later when the taskpool may still
// be added here, or reports it.
func (n *Node) lookup(id uint32, src ce.Rank, p []byte) *tpState {
	n.mu.Lock()
	defer n.mu.Unlock()
	if st := n.tps[id]; st != nil {
		return st
	}
	if !n.closed && id >= n.nextID && n.parkedBytes+len(p) <= n.cfg.parkLimit {
		n.parked[id] = append(n.parked[id], parkedMsg{src: src, payload: append([]byte(nil), p...)})
		n.parkedBytes += len(p)
		return nil
	}
	err := malformed(ErrUnknownTaskpool, "taskpool %d in a message from rank %d", id, src)
	if len(n.errs) < 256 {
		n.errs = append(n.errs, err)
	}
	return nil
}

// target is a local successor of a received flow.
type target struct {
	peer     *rt.TaskClass
	peerFlow int
	l        rt.Locals
}

// collector gathers the local successors (or local collection elements) of one flow.
type collector struct {
	tp    *rt.Taskpool
	flow  int
	rank  int
	tasks []target
	elems []*rt.Data
	bad   error
}

func (v *collector) Task(flow, dep int, peer *rt.TaskClass, peerFlow int, l *rt.Locals) {
	if flow != v.flow || peer.Affinity == nil {
		return
	}
	if coll, ix := peer.Affinity(v.tp, l); coll != nil && coll.RankOf(ix) == v.rank {
		v.tasks = append(v.tasks, target{peer, peerFlow, *l})
	}
}

func (v *collector) Data(flow, dep int, c rt.Collection, ix rt.Index) {
	if flow != v.flow || c.RankOf(ix) != v.rank {
		return
	}
	if d := c.DataOf(ix); d != nil && d.Host() != nil {
		v.elems = append(v.elems, d)
	} else if v.bad == nil {
		v.bad = fmt.Errorf("collection element %v is not stored on rank %d", ix, v.rank)
	}
}

// carryOut validates r's header against its taskpool and delivers its data; kept reports
// that a Get's callback owns r now.
func (n *Node) carryOut(c *ce.Caller, r *inbound, rest []byte) (kept bool, err error) {
	st, h := r.st, &r.h
	tp := st.tp
	if tp.Err() != nil {
		return false, nil // failed already: nothing more to do
	}
	if h.kind == kindData {
		return n.carryData(c, r, rest)
	}
	classes := tp.Classes()
	if int(h.class) >= len(classes) {
		return false, malformed(ErrUnknownClass, "class %d in taskpool %s of %d classes", h.class, tp.Name(), len(classes))
	}
	tc := classes[h.class]
	r.tc = tc
	if int(h.flow) >= len(tc.Flows) {
		return false, malformed(ErrUnknownFlow, "flow %d of %s, which has %d", h.flow, tc.Name, len(tc.Flows))
	}
	if int(h.nparams) != len(tc.Params) {
		return false, malformed(ErrOutsideSpace, "%d parameters for %s, which has %d", h.nparams, tc.Name, len(tc.Params))
	}
	r.l = rt.Locals{}
	for i, s := range tc.Params {
		r.l[s] = int(h.params[i])
	}
	name := instName{tc, h} // formatted only into errors, while h is valid
	flowName := tc.Flows[h.flow].Name
	v := &r.v
	v.tp, v.flow, v.rank = tp, int(h.flow), n.rank
	// The walk checks the instance against the space (Complete) before it visits.
	if !rt.Impl.VisitSuccessors(tp, tc, &r.l, v) {
		return false, malformed(ErrOutsideSpace, "%s", name)
	}
	if v.bad != nil {
		return false, fmt.Errorf("%w: write-back of %s flow %s: %v", ErrMalformed, name, flowName, v.bad)
	}
	switch {
	case h.kind == kindActivate && len(v.tasks) == 0:
		return false, malformed(ErrNoSuccessor, "%s flow %s has no successor on rank %d", name, flowName, n.rank)
	case h.kind == kindWriteBack && len(v.elems) == 0:
		return false, malformed(ErrNoSuccessor, "%s flow %s writes no collection element stored on rank %d", name, flowName, n.rank)
	case h.kind != kindActivate && h.kind != kindWriteBack:
		return false, malformed(ErrUnknownFlow, "message kind %d on the activation tag", h.kind)
	}
	if h.data == dataNone {
		if h.kind == kindWriteBack {
			rt.Impl.AddActions(tp, -1)
			return false, nil
		}
		return false, n.deliver(c, st, h, v.tasks, nil, nil)
	}
	if err := checkType(h.typ, h.size); err != nil {
		return false, fmt.Errorf("%s flow %s: %w", name, flowName, err)
	}
	if f := n.cfg.expect; f != nil && h.kind == kindActivate {
		for _, t := range v.tasks {
			typ, size := f(tp, t.peer, t.peerFlow)
			if typ != "" && typ != typeName(h.typ) {
				return false, malformed(ErrTypeMismatch, "%s flow %s sends %s, %s flow %s expects %s",
					name, flowName, typeName(h.typ), t.peer.Name, t.peer.Flows[t.peerFlow].Name, typ)
			}
			if size >= 0 && uint64(size) != h.size {
				return false, malformed(ErrSizeMismatch, "%s flow %s sends %d bytes, %s flow %s expects %d",
					name, flowName, h.size, t.peer.Name, t.peer.Flows[t.peerFlow].Name, size)
			}
		}
	}
	return n.fetch(c, r, rest)
}

// fetch receives the datum that r's header announces: the eager bytes in rest, or a Get from
// the sender's memory, straight into a copy from the Node's arenas, which becomes the value
// the successors receive (no further copy). It hands the copy to r's arrival (on the comm
// goroutine, at once or when the Get completes) and releases it after: the arrival takes its
// own references. An error of the Get fails the taskpool. kept reports that the Get's
// callback owns r.
func (n *Node) fetch(c *ce.Caller, r *inbound, rest []byte) (kept bool, err error) {
	h := &r.h
	cp, buf, err := n.newCopy(h.typ, h.size)
	if err != nil {
		return false, fmt.Errorf("%s: %w", r.what(), err)
	}
	switch h.data {
	case dataEager:
		defer rt.Impl.Release(cp) // ours; the successors took their own references
		if uint64(len(rest)) != h.size {
			return false, malformed(ErrSizeMismatch, "%s declares %d bytes and carries %d", r.what(), h.size, len(rest))
		}
		copy(buf, rest)
		return false, n.arrival(c, r, cp, buf)
	default: // dataGet
		if uint64(h.key.Len()) != h.size || h.key.Rank() != r.src {
			rt.Impl.Release(cp)
			return false, malformed(ErrSizeMismatch, "%s declares %d bytes and offers %d on rank %d",
				r.what(), h.size, h.key.Len(), h.key.Rank())
		}
		reg, err := c.Register(ce.HostMem(buf))
		if err != nil {
			rt.Impl.Release(cp)
			return false, err
		}
		binary.LittleEndian.PutUint64(r.note[:], h.token)
		r.reg, r.cp, r.buf, r.issued = reg, cp, buf, n.tr().now()
		err = c.Get(ce.Transfer{Local: reg, Remote: h.key, Len: int(h.size), Notify: ce.TagRemoteGet, Note: r.note[:],
			Prio: h.prio, Taskpool: ce.TaskpoolID(h.tp + 1)}, r.done)
		if err != nil {
			r.reg, r.cp, r.buf = nil, nil, nil
			_ = reg.Release()
			rt.Impl.Release(cp)
			return false, err
		}
		return true, nil // the callback owns r from here
	}
}

// getDone is the callback of r's Get (comm goroutine): it hands the datum to its arrival and
// gives r back.
func (r *inbound) getDone(c *ce.Caller, err error) {
	n, st, src := r.n, r.st, r.src
	_ = r.reg.Release()
	defer r.recycle()
	defer rt.Impl.Release(r.cp)
	if _, gt := n.tr().commTracks(c); gt != nil {
		gt.Span(n.tr().get, r.issued, n.tr().now(), int64(src), int64(r.h.size))
	}
	if err == nil {
		n.stats.fetched.Add(1)
		err = n.arrival(c, r, r.cp, r.buf)
	}
	if err != nil {
		n.fail(st, fmt.Errorf("remote: rank %d, %s from rank %d: %w", n.rank, r.what(), src, err))
	}
}

// arrival hands the datum of r to whom it is for: the task graph's Receiver (kindData), or
// the local successors or collection elements (arrived).
func (n *Node) arrival(c *ce.Caller, r *inbound, cp *rt.Copy, buf []byte) error {
	if r.h.kind == kindData {
		return r.st.recv.Receive(int(r.src), DataKey{Datum: uint64(r.h.params[0]), Version: uint64(r.h.params[1])}, cp)
	}
	return n.arrived(c, r.st, &r.h, &r.v, cp, buf)
}

// arrived hands the received value to its local successors or collection elements.
func (n *Node) arrived(c *ce.Caller, st *tpState, h *header, v *collector, cp *rt.Copy, buf []byte) error {
	if h.kind == kindWriteBack {
		defer rt.Impl.AddActions(st.tp, -1)
		for _, d := range v.elems {
			dst := d.Host()
			b, typ, err := bytesOf(dst.Value)
			if err != nil {
				return err
			}
			if typ != h.typ {
				return malformed(ErrTypeMismatch, "write-back of %s into an element of %s", typeName(h.typ), typeName(typ))
			}
			if len(b) != len(buf) {
				return malformed(ErrSizeMismatch, "write-back of %d bytes into an element of %d", len(buf), len(b))
			}
			copy(b, buf)
			rt.Impl.BumpVersion(dst)
		}
		return nil
	}
	return n.deliver(c, st, h, v.tasks, cp, buf)
}

// deliver forwards the activation down the broadcast tree, then hands the value to the local
// successors.
func (n *Node) deliver(c *ce.Caller, st *tpState, h *header, ts []target, cp *rt.Copy, buf []byte) error {
	if len(h.tree) > 0 {
		me := -1
		for i, r := range h.tree {
			if int(r) == n.rank {
				me = i
				break
			}
		}
		if me < 0 {
			return malformed(ErrNoSuccessor, "rank %d is not in the broadcast tree %v", n.rank, h.tree)
		}
		if kids := children(me, len(h.tree)); len(kids) > 0 {
			fwd := cp
			if cp != nil && writes(st.tp, ts, n.rank) {
				// Local writers may change the value while children fetch it.
				f, b2, err := n.newCopy(h.typ, h.size)
				if err != nil {
					return err
				}
				defer rt.Impl.Release(f)
				copy(b2, buf)
				fwd = f
			}
			for _, k := range kids {
				hh := *h
				n.stats.activations.Add(1)
				n.stats.forwards.Add(1)
				start := n.tr().now()
				if err := n.sendCopy(c, st, st.tp, &hh, fwd, int(h.tree[k]), nil); err != nil {
					return fmt.Errorf("forwarding to rank %d: %w", h.tree[k], err)
				}
				if rt, _ := n.tr().commTracks(c); rt != nil {
					rt.SpanFlow(n.tr().fwd, start, n.tr().now(), hh.trace, false, int64(h.tree[k]))
				}
			}
		}
	}
	for i := range ts {
		t := &ts[i]
		if err := rt.Impl.Deliver(st.tp, t.peer, t.peerFlow, &t.l, cp); err != nil {
			return nil // Deliver failed the taskpool with the error
		}
	}
	return nil
}

// writes reports whether a successor modifies the flow it receives, or passes it on to a
// local task that does (findWriter).
func writes(tp *rt.Taskpool, ts []target, self int) bool {
	v := &writerFinder{tp: tp, self: self}
	for _, t := range ts {
		switch t.peer.Flows[t.peerFlow].Access {
		case rt.RW, rt.Write:
			return true
		case rt.Read:
			v.readers = append(v.readers, t)
		}
	}
	return v.walk()
}

// instName prints as instanceName when an error is formatted.
type instName struct {
	tc *rt.TaskClass
	h  *header
}

func (x instName) String() string { return instanceName(x.tc, x.h) }

func instanceName(tc *rt.TaskClass, h *header) string {
	s := tc.Name + "("
	for i := 0; i < int(h.nparams); i++ {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprint(h.params[i])
	}
	return s + ")"
}

// onGetDone handles TagRemoteGet: a peer finished pulling a datum offered here.
func (n *Node) onGetDone(c *ce.Caller, src ce.Rank, p []byte) {
	if len(p) != 8 {
		n.report(malformed(ErrSizeMismatch, "Get notification of %d bytes from rank %d", len(p), src))
		return
	}
	if pg := n.takePending(binary.LittleEndian.Uint64(p)); pg != nil {
		pg.end()
	}
}
