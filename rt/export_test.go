package rt

// What rt's external tests (package rt_test) reach beyond the API: accessors of internal
// state, and the knobs that only tests turn.

import (
	"io"
	"time"
)

// Key returns the datum's key in its collection.
func (d *Data) Key() uint64 { return d.key }

// Newest returns the copy with the highest version (the host copy on ties), or nil.
func (d *Data) Newest() *Copy {
	var best *Copy
	for i := range d.copies {
		if c := d.copies[i].Load(); c != nil && (best == nil || c.version.Load() > best.version.Load()) {
			best = c
		}
	}
	return best
}

// NewCopy returns a detached copy holding value (attach it with Data.Attach).
func NewCopy(value any) *Copy { return &Copy{Value: value} }

// Device returns the copy's device slot (0 = host).
func (c *Copy) Device() int { return c.device }

// CompareAndSwapState changes the state from old to new if it is old.
func (c *Copy) CompareAndSwapState(old, new Coherency) bool {
	return c.state.CompareAndSwap(uint32(old), uint32(new))
}

// Bytes returns the size given at creation.
func (a *Arena) Bytes() int { return a.bytes }

// RingLen returns the number of tasks in the ring that t heads.
func (t *Task) RingLen() int { return t.ringLen() }

// NewCopy returns a fresh copy from the arena registered under name.
func (tp *Taskpool) NewCopy(name string) (*Copy, error) { return tp.newCopy(name) }

// Remaining returns an estimate of the local tasks not yet done.
func (tp *Taskpool) Remaining() int64 { return tp.remaining() }

// VisitPredecessors is VisitSuccessors over input dependencies.
func (tp *Taskpool) VisitPredecessors(tc *TaskClass, l *Locals, v EdgeVisitor) bool {
	return tp.visitPredecessors(tc, l, v)
}

// Outside and NoInput are the drop hooks that hand-written successor and predecessor
// functions of the tests call where generated code goes through Instance and the input
// chains.
func (e *Edges) Outside(flow, dep int, peer *TaskClass, peerFlow int) {
	e.outside(flow, dep, peer, peerFlow)
}
func (e *Edges) NoInput(flow int) { e.noInput(flow) }

// Verify is (&Source{}).Verify(tp): a check without positions.
func Verify(tp *Taskpool) error { return (&Source{}).Verify(tp) }

// WriteDOT is (&Source{}).WriteDOT(w, tp).
func WriteDOT(w io.Writer, tp *Taskpool) error { return (&Source{}).WriteDOT(w, tp) }

// The options that only tests turn.
func KeepNextTask(on bool) Option         { return keepNextTask(on) }
func BindWorkers(mode string) Option      { return bindWorkers(mode) }
func StallTimeout(d time.Duration) Option { return stallTimeout(d) }
func DashboardPublic() Option             { return dashboardPublic() }
func BatchingFromEnv() bool               { return batchingFromEnv() }

const DefaultStallTimeout = defaultStallTimeout
