package remote

// The end of a taskpool across ranks.
//
// Actors:
//   - each rank's rt.Taskpool, which ends when its local tasks are done and its actions
//     (rt.Impl.AddActions) are zero;
//   - each rank's Node: Add counts the write-backs this rank will receive, the sending side
//     (send.go) and the pending Gets hold actions, watch waits for the taskpool's end;
//   - the peers' Nodes, which send activations, write-backs and failure reports
//     (ce.TagTermination) and pull offered data with Gets;
//   - each rank's ce.Engine, whose Close is collective (goodbyes and a barrier), and which
//     tells its Node of a lost peer (PeerLost) or of its own failure (EngineFailed).
//
// Normal end, counted with no message of its own:
//  1. Add walks the space once (countWriteBacks) and holds the taskpool open with one action
//     per write-back that other ranks will send here: one per (instance on another rank,
//     flow) with an output to a collection element stored here. A write-back is the one
//     arrival that no local task waits for; each one that arrives gives its action back
//     (recv.go).
//  2. A send holds one action until its local completion (send.go: sendCopy, post, and the
//     spare sender for a message it queues); data offered for a rendezvous holds one until the peer's Get notification (ce.TagRemoteGet) arrives
//     (addPending, pendingGet.end).
//  3. An activation that arrives feeds a local task, which the taskpool already counts: it
//     needs no hold.
//  4. When the taskpool ends, watch lets go of the offered data that no peer fetched
//     (dropPending) and forgets the taskpool.
//
// Invariants:
//   - a rank's taskpool does not end while a message it sends is in flight, while data it
//     offered may still be pulled, or while a write-back for one of its elements is due;
//   - a rank with no local task returns from Wait at once, or once its elements have arrived;
//   - what a finished rank may still be asked for (Gets it offered) is covered by its own
//     hold, and its transport stays up until every rank has entered the Engine's Close;
//   - a failure found on one rank (a task error, a malformed message, the Engine's failure)
//     reaches every other rank (broadcastFailure, onTermination) as a RemoteError, so no rank
//     waits for a message that will not come; a failure that came from a peer, or that every
//     rank learns of by itself (a lost peer: each Engine reports it), is not sent again;
//   - a report for a taskpool not added yet is kept (earlyFail) and fails it at Add; a lost
//     peer or a failed Engine fails every later taskpool as well (Node.lost).
//
// Rejected designs:
//   - a final "done" message or a termination-detection wave that counts the messages sent
//     and received by every rank: every arrival but a write-back feeds a counted local task,
//     write-backs are counted in advance, and the barrier in the Engine's Close is the one
//     collective step needed;
//   - counting write-backs as they arrive: a rank with no local task would end before its
//     elements were written;
//   - ending a stuck distributed taskpool by timeout (rt.StallTimeout is off across ranks): a
//     rank cannot tell a slow peer from a failed one, so failures are reported explicitly and
//     lost peers come from the Engine.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/ce"
)

// countWriteBacks returns how many write-back messages other ranks will send here for tp:
// one per (instance on another rank, flow) with an output to a collection element stored
// here. An instance without affinity runs on every rank, so every other rank sends it.
func (n *Node) countWriteBacks(tp *rt.Taskpool) int64 {
	var total int64
	v := &wbCounter{rank: n.rank}
	for _, tc := range tp.Classes() {
		if tc.Successors == nil || tc.Space == nil {
			continue
		}
		var l rt.Locals
		tc.Space(tp, &l, func(l *rt.Locals) bool {
			from := -1
			if tc.Affinity != nil {
				if coll, ix := tc.Affinity(tp, l); coll != nil {
					if from = coll.RankOf(ix); from == n.rank {
						return true
					}
				}
			}
			v.mask = 0
			rt.Impl.VisitSuccessors(tp, tc, l, v)
			k := int64(bits.OnesCount32(v.mask))
			if from < 0 {
				k *= int64(n.size - 1)
			}
			total += k
			return true
		})
	}
	return total
}

type wbCounter struct {
	rank int
	mask uint32
}

func (v *wbCounter) Task(flow, dep int, peer *rt.TaskClass, peerFlow int, l *rt.Locals) {}
func (v *wbCounter) Data(flow, dep int, c rt.Collection, ix rt.Index) {
	if c.RankOf(ix) == v.rank {
		v.mask |= 1 << uint(flow)
	}
}

// pendingGet is a datum that a peer will pull: the registration, the copy it keeps alive
// and the taskpool action that holds termination until the Get completes; done (may be nil)
// tells the sender that the copy is no longer read.
type pendingGet struct {
	st   *tpState
	reg  *ce.MemReg
	cp   *rt.Copy
	done func()
}

// addPending keeps reg and cp until the peer's Get completes, holding st's taskpool open.
func (n *Node) addPending(st *tpState, reg *ce.MemReg, cp *rt.Copy, done func()) uint64 {
	rt.Impl.Retain(cp)
	rt.Impl.AddActions(st.tp, 1)
	n.pmu.Lock()
	n.nextToken++
	t := n.nextToken
	n.pending[t] = &pendingGet{st: st, reg: reg, cp: cp, done: done}
	n.pmu.Unlock()
	return t
}

// takePending removes and returns the pending Get of token t.
func (n *Node) takePending(t uint64) *pendingGet {
	if t == 0 {
		return nil
	}
	n.pmu.Lock()
	defer n.pmu.Unlock()
	p := n.pending[t]
	delete(n.pending, t)
	return p
}

func (p *pendingGet) end() {
	_ = p.reg.Release()
	rt.Impl.Release(p.cp)
	if p.done != nil {
		p.done()
	}
	rt.Impl.AddActions(p.st.tp, -1)
}

// cancelPending ends the pending Get of token t, which will not happen.
func (n *Node) cancelPending(t uint64) {
	if p := n.takePending(t); p != nil {
		p.end()
	}
}

// dropPending ends the pending Gets of a finished taskpool.
func (n *Node) dropPending(st *tpState) {
	n.pmu.Lock()
	var ps []*pendingGet
	for t, p := range n.pending {
		if p.st == st {
			ps = append(ps, p)
			delete(n.pending, t)
		}
	}
	n.pmu.Unlock()
	for _, p := range ps {
		p.end()
	}
}

// watch waits for tp to end; a failure that started here is reported to every other rank,
// and the data that peers did not fetch is let go.
func (n *Node) watch(st *tpState) {
	defer n.watchers.Done()
	<-st.tp.Done()
	if err := st.tp.Err(); err != nil && !st.remote.Load() {
		n.broadcastFailure(st, err)
	}
	n.dropPending(st)
	n.mu.Lock()
	delete(n.byTP, st.tp)
	n.mu.Unlock()
}

func (n *Node) broadcastFailure(st *tpState, err error) {
	n.reported.Store(true)
	text := err.Error()
	if len(text) > 3000 {
		text = text[:3000] + "…"
	}
	b := []byte{kindFail, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(b[1:], st.id)
	binary.LittleEndian.PutUint32(b[5:], uint32(n.rank))
	b = append(b, text...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	// Wait (briefly) until the reports are out, so that a launcher that then ends this rank
	// does not drop them.
	var sent sync.WaitGroup
	defer func() {
		done := make(chan struct{})
		go func() { sent.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
		}
	}()
	for r := 0; r < n.size; r++ {
		if r == n.rank {
			continue
		}
		m, err := n.other.NewMsg(ctx, len(b))
		if err != nil {
			n.report(fmt.Errorf("remote: reporting the failure of taskpool %s to rank %d: %w", st.tp.Name(), r, err))
			continue
		}
		copy(m.Bytes(), b)
		sent.Add(1)
		if err := n.other.SendAM(ce.Rank(r), ce.TagTermination, m, func(*ce.Caller, error) { sent.Done() }); err != nil {
			sent.Done()
			if !errors.Is(err, ce.ErrPeerLost) {
				n.report(fmt.Errorf("remote: reporting the failure of taskpool %s to rank %d: %w", st.tp.Name(), r, err))
			}
		}
	}
}

// PeerLost fails every running taskpool with ce.ErrPeerLost naming rank r, and every
// taskpool added later. Launchers wire it to the Engine with ce.OnPeerLost.
func (n *Node) PeerLost(r ce.Rank) {
	// Every rank hears of the loss from its own Engine, so nobody needs to be told.
	n.failAll(fmt.Errorf("remote: rank %d: %w", r, ce.ErrPeerLost), true)
}

// EngineFailed fails every running taskpool with err, the Engine's failure (a handler or a
// done callback panicked, ce.ErrHandlerPanic), and every taskpool added later: an arrival
// may have been lost with the panic, so a task here could wait for it forever. The peers
// are told as for a task failure. Launchers wire it to the Engine with ce.OnFailure.
func (n *Node) EngineFailed(err error) {
	n.failAll(fmt.Errorf("remote: rank %d: communication engine failed: %w", n.rank, err), false)
}

// failAll fails every running taskpool, and every taskpool added later, with err; known
// says whether every rank learns of the cause by itself (no failure report is sent then).
func (n *Node) failAll(err error, known bool) {
	n.mu.Lock()
	if n.lost == nil {
		n.lost = err
	}
	sts := make([]*tpState, 0, len(n.tps))
	for _, st := range n.tps {
		sts = append(sts, st)
	}
	n.mu.Unlock()
	for _, st := range sts {
		if known {
			st.remote.Store(true)
		}
		st.tp.Cancel(err)
	}
}

// fail fails st's taskpool with err (a failure found on this rank, so peers hear of it).
func (n *Node) fail(st *tpState, err error) {
	if st == nil {
		n.report(err)
		return
	}
	st.tp.Cancel(err)
}

// onTermination handles TagTermination: failure reports and Gather keys.
func (n *Node) onTermination(c *ce.Caller, src ce.Rank, p []byte) {
	if len(p) == 0 {
		return
	}
	switch p[0] {
	case kindFail:
		if len(p) < 9 {
			n.report(malformed(ErrSizeMismatch, "failure report of %d bytes from rank %d", len(p), src))
			return
		}
		id := binary.LittleEndian.Uint32(p[1:])
		err := &RemoteError{Rank: int(binary.LittleEndian.Uint32(p[5:])), Cause: string(p[9:])}
		n.mu.Lock()
		st := n.tps[id]
		if st == nil && id >= n.nextID {
			if n.earlyFail[id] == nil {
				n.earlyFail[id] = err
			}
		}
		n.mu.Unlock()
		if st != nil {
			st.remote.Store(true)
			st.tp.Cancel(err)
		}
	case kindGather:
		n.onGather(src, p)
	default:
		n.report(malformed(ErrUnknownFlow, "message kind %d on the termination tag from rank %d", p[0], src))
	}
}
