package gpu

// Device flows of tasks whose data are named per task (Incarnation.Data).
//
// A class of a .jdf program declares its flows, and RTDevice reads them with the copies
// rt bound to the task. A task inserted at run time (rt/dynamic) has a class shared by
// tasks that access different data in different modes, so its incarnation lists them per
// task instead. Such a wrapper differs from a PTG one in three ways:
//
//   - no successor walk can tell whether a later insertion will read the host copy (a
//     CPU body, another device, the program), so the implementer decides per flow: a
//     written flow goes back to the host at stage-out unless it is KeepOnDevice, and then
//     the implementer brings it back with Recall before any host reader runs; nothing is
//     Late;
//   - the versions of the host copies are bumped by the implementer when the task
//     completes, as rt does for a PTG task's written flows (hostCopy.SetHostVersion is a
//     no-op), so a CPU writer makes every device copy stale in the same way;
//   - a scratch datum (Access 0) gets device memory of its host copy's size, under a key
//     of its own (scratchCopy): it is never staged in, never written back, never mirrored
//     into the rt.Data, and never shares memory with the device copy of the datum itself,
//     whose readers must not see the scratch writes.
//
// Rejected: giving each inserted task's class the flows of its first task (tasks of one
// name differ in data and modes); one rt class per access signature (the dashboard and
// traces would show one name several times for what the program calls one class).

import (
	"fmt"

	"github.com/jdf2go/jdf2go/rt"
)

// DataFlow is one datum of a task whose class declares no flows (Incarnation.Data).
type DataFlow struct {
	// Copy is the datum's host copy; its Value is a []float64, []float32, []int64, []int32
	// or []byte.
	Copy *rt.Copy
	// Access is Read, Write or ReadWrite; 0 makes the flow device scratch of the host
	// copy's size, with no transfer either way.
	Access Access
	// KeepOnDevice leaves a written datum's value on the device at stage-out
	// (Flow.KeepOnDevice): the implementer then brings it back (RTDevice.Recall)
	// before anything reads the host copy.
	KeepOnDevice bool
}

// addDataFlows gives wt the flows that gi.Data lists for t.
func (r *RTDevice) addDataFlows(wt *Task, t *rt.Task, gi *Incarnation) error {
	var buf [8]DataFlow
	for i, df := range gi.Data(t, buf[:0]) {
		if df.Copy == nil {
			_ = r.d.discard(wt)
			return fmt.Errorf("%w: datum %d of %v has no host copy", ErrBadArgument, i, t)
		}
		hc := hostCopy{df.Copy}
		elem, ok := hc.elem()
		if !ok {
			_ = r.d.discard(wt)
			return fmt.Errorf("%w: datum %d of %v holds %T; device flows hold []float64, []float32, []int64, []int32 or []byte",
				ErrBadArgument, i, t, df.Copy.Value)
		}
		f := Flow{Data: hc, Elem: elem, Access: df.Access, KeepOnDevice: df.KeepOnDevice && df.Access&Write != 0}
		switch df.Access {
		case Read, Write, ReadWrite:
		case 0:
			f.Data = scratchCopy(hc)
		default:
			_ = r.d.discard(wt)
			return fmt.Errorf("%w: datum %d of %v has access %d", ErrBadArgument, i, t, df.Access)
		}
		if gi.Size != nil {
			f.Size = gi.Size(t, i)
		}
		wt.addFlow(f)
	}
	return nil
}

// scratchCopy is the device scratch of a datum: a Data of its own, keyed apart from the
// datum's device copy, whose content no one trusts (it is never made valid).
type scratchCopy hostCopy

// HostBytes implements Data: the host copy sizes the scratch.
func (s scratchCopy) HostBytes() []byte { return hostCopy(s).HostBytes() }

// HostVersion implements Data.
func (scratchCopy) HostVersion() uint64 { return 0 }

// SetHostVersion implements Data; nothing is ever written back.
func (scratchCopy) SetHostVersion(uint64) {}
