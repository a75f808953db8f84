package rt

import "fmt"

// rt's calls to the Remote (implementer.go).

func (w *worker) activateRemote(src *Task, flow int, peer *TaskClass, peerFlow int, l *Locals, rank int) error {
	r := w.c.cfg.remote
	if r == nil {
		return fmt.Errorf("activation of %s on rank %d: no Remote registered (Rank)", taskName(peer, l), rank)
	}
	return r.Activate(w, src, flow, peer, peerFlow, l, rank)
}

func (w *worker) writeBackRemote(src *Task, flow int, coll Collection, ix Index, rank int) error {
	r := w.c.cfg.remote
	if r == nil {
		return fmt.Errorf("flow %s: write-back to %v on rank %d: no Remote registered (Rank)",
			src.cs.tc.Flows[flow].Name, ix, rank)
	}
	return r.WriteBack(w, src, flow, coll, ix, rank)
}
