package ce

import (
	"fmt"
	"time"
)

// Heartbeats (docs/ce.md, "Lost peers"). A transport with Caps.SilentLoss never says that a
// peer died: with MPI a killed rank's messages simply stop, and a survivor waiting for one
// would wait forever. The Engine then watches its peers itself. Actors: the comm goroutine of
// every rank, alone; no worker and no timer goroutine takes part, so a rank whose workers are
// all busy in long task bodies still sends its heartbeats.
//
//  1. Every interval (a tick, checked by the loop every 64 iterations and whenever it idles,
//     and bounding how long it parks) the comm goroutine sends each watched peer a heartbeat
//     on the internal tag tagBeat: an empty message, one per peer, reused, never more than one
//     in the transport, outside the buffer budget and outside the goodbye count (so FIN's
//     count stays the count of real messages).
//  2. Any arrival from a peer, heartbeat or not, sets its heard flag; the tick folds the flag
//     into lastHeard, so the arrival path reads no clock.
//  3. At a tick, a watched peer with nothing heard for longer than the timeout is declared
//     lost: the transport abandons what is outstanding with it (PeerAbandoner) and reports
//     those completions and then EventPeerLost, which the loop handles as any other lost peer
//     (ErrPeerLost for everything involving it, OnPeerLost). A transport that cannot abandon
//     leaves the Engine to fail the peer at once.
//  4. Heartbeats stop once this rank sent its FIN, and a peer stops watching this rank when
//     that FIN arrives: the heartbeats before it arrive before it (one communicator, in
//     order), so no peer sees silence it still watches. A peer that keeps computing for long
//     after this rank entered Close is still watched here, and still beats.
//
// Rejected: heartbeats from a goroutine of their own (it would need the transport, which only
// the comm goroutine touches under FUNNELED); heartbeats as ordinary messages from the pool
// (they would move the message counts and buffer statistics that callers and tests read, and
// one stuck to a dead rank would hold Close's drain); a heartbeat only on request, when
// something waits on the peer (a rank waiting for an activation has nothing in flight).

// heartbeat runs one tick if one is due (comm goroutine).
func (e *Engine) heartbeat(now time.Time) {
	if now.Before(e.hbNext) {
		return
	}
	e.hbNext = now.Add(e.cfg.hbInterval)
	for r := range e.peers {
		p := &e.peers[r]
		if Rank(r) == e.rank || p.dead || p.silent || p.finSeen {
			continue
		}
		if p.heard {
			p.heard, p.lastHeard = false, now
		} else if quiet := now.Sub(p.lastHeard); quiet > e.cfg.hbTimeout {
			e.declareSilent(Rank(r), quiet)
			continue
		}
		if e.phase < phaseFin && !p.beatOut {
			e.sendBeat(Rank(r))
		}
	}
}

// sendBeat hands peer r its heartbeat.
func (e *Engine) sendBeat(r Rank) {
	p := &e.peers[r]
	if p.beat == nil {
		p.beat = &Msg{beat: true, tag: tagBeat, dst: r}
	}
	if err := e.t.SendAM(tagBeat, r, p.beat); err != nil {
		// A transport that refuses (a peer it gave up on, a closed transport) says so again
		// at the next tick; the timeout decides, not this error.
		return
	}
	p.beatOut = true
	e.stats.beatsSent.Add(1)
}

// beatDone records the completion of a heartbeat send; a failed one changes nothing, since
// only silence from the peer declares it lost.
func (e *Engine) beatDone(m *Msg) {
	if int(m.dst) >= 0 && int(m.dst) < len(e.peers) {
		e.peers[m.dst].beatOut = false
	}
}

// declareSilent declares r lost after quiet without a message from it.
func (e *Engine) declareSilent(r Rank, quiet time.Duration) {
	e.peers[r].silent = true
	e.stats.timedOut.Add(1)
	err := fmt.Errorf("%w: rank %d: nothing heard from it for %v (heartbeat timeout %v)",
		ErrPeerLost, r, quiet.Round(time.Millisecond), e.cfg.hbTimeout)
	e.report(err)
	if a, ok := e.t.(PeerAbandoner); ok && a.AbandonPeer(r) {
		return // the completions and EventPeerLost come with the next Poll
	}
	e.peerLost(r, err)
}

// untilBeat bounds how long the loop may park without missing a tick.
func (e *Engine) untilBeat(now time.Time) time.Duration {
	return max(e.hbNext.Sub(now), 0)
}
