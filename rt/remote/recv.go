package remote

import (
	"encoding/binary"
	"fmt"

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
	var h header
	rest, err := h.decode(p)
	if err != nil {
		n.report(fmt.Errorf("remote: message from rank %d: %w", src, err))
		return
	}
	st := n.lookup(h.tp, src, p)
	if st == nil {
		return
	}
	start := n.tr().now()
	if err := n.carryOut(c, st, src, &h, rest); err != nil {
		n.fail(st, fmt.Errorf("remote: rank %d, message from rank %d: %w", n.rank, src, err))
	}
	if track != nil {
		track.SpanFlow(n.tr().recv, start, n.tr().now(), h.trace, true, int64(src), int64(h.class), int64(h.flow))
	}
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

// carryOut validates h against taskpool st and delivers its data.
func (n *Node) carryOut(c *ce.Caller, st *tpState, src ce.Rank, h *header, rest []byte) error {
	tp := st.tp
	if tp.Err() != nil {
		return nil // failed already: nothing more to do
	}
	if h.kind == kindData {
		return n.carryData(c, st, src, h, rest)
	}
	classes := tp.Classes()
	if int(h.class) >= len(classes) {
		return malformed(ErrUnknownClass, "class %d in taskpool %s of %d classes", h.class, tp.Name(), len(classes))
	}
	tc := classes[h.class]
	if int(h.flow) >= len(tc.Flows) {
		return malformed(ErrUnknownFlow, "flow %d of %s, which has %d", h.flow, tc.Name, len(tc.Flows))
	}
	if int(h.nparams) != len(tc.Params) {
		return malformed(ErrOutsideSpace, "%d parameters for %s, which has %d", h.nparams, tc.Name, len(tc.Params))
	}
	var l rt.Locals
	for i, s := range tc.Params {
		l[s] = int(h.params[i])
	}
	name := instName{tc, h} // formatted only into errors, while h is valid
	if !tc.Complete(tp, &l) {
		return malformed(ErrOutsideSpace, "%s", name)
	}
	flowName := tc.Flows[h.flow].Name
	v := &collector{tp: tp, flow: int(h.flow), rank: n.rank}
	rt.Impl.VisitSuccessors(tp, tc, &l, v)
	if v.bad != nil {
		return fmt.Errorf("%w: write-back of %s flow %s: %v", ErrMalformed, name, flowName, v.bad)
	}
	switch {
	case h.kind == kindActivate && len(v.tasks) == 0:
		return malformed(ErrNoSuccessor, "%s flow %s has no successor on rank %d", name, flowName, n.rank)
	case h.kind == kindWriteBack && len(v.elems) == 0:
		return malformed(ErrNoSuccessor, "%s flow %s writes no collection element stored on rank %d", name, flowName, n.rank)
	case h.kind != kindActivate && h.kind != kindWriteBack:
		return malformed(ErrUnknownFlow, "message kind %d on the activation tag", h.kind)
	}
	if h.data == dataNone {
		if h.kind == kindWriteBack {
			rt.Impl.AddActions(tp, -1)
			return nil
		}
		return n.deliver(c, st, h, v.tasks, nil, nil)
	}
	if err := checkType(h.typ, h.size); err != nil {
		return fmt.Errorf("%s flow %s: %w", name, flowName, err)
	}
	if f := n.cfg.expect; f != nil && h.kind == kindActivate {
		for _, t := range v.tasks {
			typ, size := f(tp, t.peer, t.peerFlow)
			if typ != "" && typ != typeName(h.typ) {
				return malformed(ErrTypeMismatch, "%s flow %s sends %s, %s flow %s expects %s",
					name, flowName, typeName(h.typ), t.peer.Name, t.peer.Flows[t.peerFlow].Name, typ)
			}
			if size >= 0 && uint64(size) != h.size {
				return malformed(ErrSizeMismatch, "%s flow %s sends %d bytes, %s flow %s expects %d",
					name, flowName, h.size, t.peer.Name, t.peer.Flows[t.peerFlow].Name, size)
			}
		}
	}
	what := func() string { return fmt.Sprintf("%s flow %s", instName{tc, h}, flowName) }
	return n.fetch(c, st, src, h, rest, what, func(c *ce.Caller, h *header, cp *rt.Copy, buf []byte) error {
		return n.arrived(c, st, h, v, cp, buf)
	})
}

// fetch receives the datum that h announces: the eager bytes in rest, or a Get from the
// sender's memory, into a copy from the Node's arenas, which it hands to arrived (on the comm
// goroutine, at once or when the Get completes) and releases after it: arrived takes its own
// references. what names the datum in errors. An error of the Get fails st's taskpool.
func (n *Node) fetch(c *ce.Caller, st *tpState, src ce.Rank, h *header, rest []byte, what func() string,
	arrived func(c *ce.Caller, h *header, cp *rt.Copy, buf []byte) error) error {
	cp, buf, err := n.newCopy(h.typ, h.size)
	if err != nil {
		return fmt.Errorf("%s: %w", what(), err)
	}
	defer func() {
		if cp != nil {
			rt.Impl.Release(cp) // ours; the successors took their own references
		}
	}()
	switch h.data {
	case dataEager:
		if uint64(len(rest)) != h.size {
			return malformed(ErrSizeMismatch, "%s declares %d bytes and carries %d", what(), h.size, len(rest))
		}
		copy(buf, rest)
		return arrived(c, h, cp, buf)
	default: // dataGet
		if uint64(h.key.Len()) != h.size || h.key.Rank() != src {
			return malformed(ErrSizeMismatch, "%s declares %d bytes and offers %d on rank %d",
				what(), h.size, h.key.Len(), h.key.Rank())
		}
		reg, err := c.Register(ce.HostMem(buf))
		if err != nil {
			return err
		}
		mine := cp
		cp = nil // released by the Get's callback
		note := binary.LittleEndian.AppendUint64(nil, h.token)
		hh := *h
		issued := n.tr().now()
		err = c.Get(ce.Transfer{Local: reg, Remote: h.key, Len: int(h.size), Notify: ce.TagRemoteGet, Note: note,
			Prio: h.prio, Taskpool: ce.TaskpoolID(h.tp + 1)}, func(c *ce.Caller, err error) {
			_ = reg.Release()
			defer rt.Impl.Release(mine)
			if _, gt := n.tr().commTracks(c); gt != nil {
				gt.Span(n.tr().get, issued, n.tr().now(), int64(src), int64(hh.size))
			}
			if err == nil {
				n.stats.fetched.Add(1)
				err = arrived(c, &hh, mine, buf)
			}
			if err != nil {
				n.fail(st, fmt.Errorf("remote: rank %d, %s from rank %d: %w", n.rank, what(), src, err))
			}
		})
		if err != nil {
			_ = reg.Release()
			rt.Impl.Release(mine)
		}
		return err
	}
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
