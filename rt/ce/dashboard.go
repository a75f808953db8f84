package ce

import "github.com/jdf2go/jdf2go/dashboard"

// Fill adds the engine to a dashboard snapshot (rt.Dashboard): the shift queue's depth
// and, per peer, the active messages and bytes sent and received (transfer bytes included).
// Register it with rt.Impl.AddDashboardProvider. It reads atomics and takes the shift
// queue's lock for a moment; it is safe to call at any time after Start.
func (e *Engine) Fill(s *dashboard.Snapshot) {
	if e.state.Load() < stateRunning {
		return
	}
	ce := &dashboard.CE{Rank: int(e.rank), ShiftQueue: e.sq.depth()}
	for r := range e.peers {
		if r == int(e.rank) {
			continue
		}
		p := &e.peers[r]
		ce.Peers = append(ce.Peers, dashboard.Peer{Rank: r,
			MsgsOut: p.sent.Load(), BytesOut: p.sentBytes.Load() + p.xferOut.Load(),
			MsgsIn: p.recvMsgs.Load(), BytesIn: p.recvBytes.Load() + p.xferIn.Load()})
	}
	s.CE = ce
}
