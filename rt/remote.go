package rt

import "fmt"

// Remote carries dependencies between ranks; rt/remote implements it over rt/ce and registers
// it with Rank. Without one, a dependency that crosses ranks fails the taskpool.
//
// rt calls Activate when task src, completing on worker w, releases flow of src to flow
// peerFlow of the instance of peer whose locals are in l and whose affinity places it on rank;
// WriteBack when src writes flow back to element ix of collection coll owned by rank. w is the
// ext pseudo-worker (ID -1) when the completion came from a goroutine that is not a worker.
// Both run on rt's hot path: they must queue the work and return. src's copies are valid
// only during the call: keep one with Copy.Retain (and Copy.Release it when sent). Until the
// sends are done, hold the taskpool open with Taskpool.AddActions. The receiving side calls
// Taskpool.Deliver.
type Remote interface {
	Activate(w *Worker, src *Task, flow int, peer *TaskClass, peerFlow int, l *Locals, rank int) error
	WriteBack(w *Worker, src *Task, flow int, coll Collection, ix Index, rank int) error
}

func (w *Worker) activateRemote(src *Task, flow int, peer *TaskClass, peerFlow int, l *Locals, rank int) error {
	r := w.c.cfg.remote
	if r == nil {
		return fmt.Errorf("activation of %s on rank %d: no Remote registered (Rank)", taskName(peer, l), rank)
	}
	return r.Activate(w, src, flow, peer, peerFlow, l, rank)
}

func (w *Worker) writeBackRemote(src *Task, flow int, coll Collection, ix Index, rank int) error {
	r := w.c.cfg.remote
	if r == nil {
		return fmt.Errorf("flow %s: write-back to %v on rank %d: no Remote registered (Rank)",
			src.cs.tc.Flows[flow].Name, ix, rank)
	}
	return r.WriteBack(w, src, flow, coll, ix, rank)
}

// Deliver is an arrival from another rank: flow peerFlow of the local instance of peer whose
// parameter slots are set in l receives c (nil for CTL). The instance's derived locals are
// computed here. It is safe from any goroutine (rt/ce's communication goroutine calls it). An
// inconsistent arrival fails the taskpool and is returned.
func (tp *Taskpool) Deliver(peer *TaskClass, peerFlow int, l *Locals, c *Copy) error {
	if !tp.added.Load() {
		return ErrNotAdded
	}
	if err := tp.Err(); err != nil {
		return err
	}
	ll := *l
	if !peer.Complete(tp, &ll) {
		err := fmt.Errorf("%w: remote arrival for %s", ErrOutsideSpace, taskName(peer, &ll))
		tp.fail(err)
		return err
	}
	ctx := tp.ctx
	ctx.extMu.Lock()
	err := ctx.ext.arrive(tp, c, peer, peerFlow, &ll)
	ctx.ext.flushReady()
	ctx.extMu.Unlock()
	if err != nil {
		tp.fail(fmt.Errorf("rt: taskpool %s: remote arrival: %w", tp.name, err))
	}
	return err
}

// AddActions adds delta to the runtime actions (communications in flight) that keep the
// taskpool from finishing: +1 when one starts, -1 when it ends. Counted termination then
// waits for both the local tasks and the actions. Actions added before Context.Add hold the
// taskpool from its start (a remote layer expecting arrivals that no local task waits for).
func (tp *Taskpool) AddActions(delta int) {
	tp.actions.Add(int64(delta))
	tp.countDone(-int64(delta))
}

// ID returns the taskpool's sequence number in its Context (0 for the first one added), the
// same on every rank when every rank adds its taskpools in the same order.
func (tp *Taskpool) ID() int { return tp.id }
