package gpu

// Which written flows of an rt task go back to the host at stage-out.
//
// rt hands every flow between tasks as its host copy, and a CPU body reads
// that copy, so a value written on a device must reach the host before a CPU
// task (or a collection, or another rank) reads it. Writing back every
// written flow is always correct, but it puts one device-to-host copy of
// every task's output on the single stage-out stream, and every successor
// waits for it: a tiled Cholesky at N=32768, NB=2048 moves 26 GB back for
// 4.4 GB of final tiles, and the stage-out stream, not the compute streams,
// sets the pace (docs/gpu.md, "Data on devices", has the figures).
//
// So RTDevice keeps a written flow on the device (Flow.KeepOnDevice) when no
// host reader can see that value: it walks the task's successors
// (rt.Impl.VisitSuccessors, guards evaluated) and writes the flow back
// when
//
//   - it goes to a collection element (the final value of a datum, which the
//     program reads, or rt copies into another element);
//   - the program runs on several ranks (a remote successor is sent the host
//     copy);
//   - a successor task may read the host copy: its class has a CPU
//     incarnation that rt may pick (one before any device incarnation, one
//     after an incarnation with an Evaluate that may refuse the task, or one
//     after a device incarnation of a class whose tasks rt shares with the
//     CPU workers by estimated time); or its device incarnation is one that
//     this device cannot hand its copy to: another device accepts it too
//     (see below), the body has a custom stage_in (which copies from the
//     host), or its *Incarnation is missing or targets another device type.
//
// The value then stays dirty on the device: the successor, which runs on
// the same device, uses the device copy, and the copy is written back when
// memory runs short (w2r) or when the device closes. A copy whose host copy
// has moved on since (an arena buffer recycled for another datum, a later
// version written elsewhere) is obsolete and never written back
// (newWriteBack).
//
// A final value that only the program reads, once the taskpool is over, need
// not delay the successors either: when every class of the taskpool runs only
// on this device, the flow is Late, the task completes when its kernels are
// done, and its taskpool waits for the copy as an action in flight (rtHost's
// Hold). The value must be the element's own host copy, written in place: a
// value that rt copies into the element at completion must be there first.
//
// Only one accepting device: with two, rt picks by load, the other device
// would read the copy from ours (a peer copy, when linked) and write the
// datum there, and our older dirty copy could then be written back over the
// newer host copy by an eviction already in flight. Keeping every writer of
// a datum on one device is what makes skipping write-backs safe; programs
// that pin tasks with device = expr can do that themselves with stage_out.
//
// Whether rt shares device classes' tasks with its CPU workers is an option
// of rt.Context (rt.ShareWork); the context reports it when it implements
// workSharer. Without that, RTDevice assumes it does, which writes back the
// flows of every shared class (correct, and what it did before).
//
// NEXT from a complete_stage callback reschedules a task to its next
// incarnation, which may be a CPU body: rtHost.Reschedule fails the task
// instead when one of its inputs exists only on a device.

import (
	"sync"

	"github.com/jdf2go/jdf2go/rt"
)

// contextShares reports whether c may run the tasks of a class with a device
// and a CPU incarnation on its CPU workers.
func contextShares(c *rt.Context) bool { return rt.Impl.SharesWork(c) }

// hostReads caches, per context and task class, whether a task of the class
// may read the host copy of its inputs when this device produced them.
type hostReads struct {
	m sync.Map // hostReadKey -> bool
}

type hostReadKey struct {
	ctx *rt.Context
	tc  *rt.TaskClass
}

// of reports whether a task of tc, run in ctx, may read the host copy of a
// value that r's device wrote (see the top of the file).
func (h *hostReads) of(r *RTDevice, ctx *rt.Context, tc *rt.TaskClass) bool {
	key := hostReadKey{ctx, tc}
	if v, ok := h.m.Load(key); ok {
		return v.(bool)
	}
	v := h.decide(r, ctx, tc)
	h.m.Store(key, v)
	return v
}

func (h *hostReads) decide(r *RTDevice, ctx *rt.Context, tc *rt.TaskClass) bool {
	if ctx == nil {
		return true
	}
	for i := range tc.Incarnations {
		inc := &tc.Incarnations[i]
		if inc.Kind == rt.CPU {
			return true
		}
		var accepting []rt.Device
		for _, d := range ctx.Devices() {
			if d.Accepts(inc.Kind) {
				accepting = append(accepting, d)
			}
		}
		if len(accepting) == 0 {
			continue // rt skips it
		}
		gi, ok := inc.Device.(*Incarnation)
		if !ok || gi == nil || gi.StageIn != nil || len(accepting) > 1 || accepting[0] != rt.Device(r) || !gi.runsOn(r.d) {
			return true
		}
		if inc.Evaluate != nil {
			continue // it may refuse the task: what follows may run it
		}
		return inc.Select == nil && contextShares(ctx) && cpuAfter(tc, i)
	}
	return false // no incarnation runs it: rt fails the taskpool
}

// cpuAfter reports whether an incarnation after index i of tc is a CPU one.
func cpuAfter(tc *rt.TaskClass, i int) bool {
	for j := i + 1; j < len(tc.Incarnations); j++ {
		if tc.Incarnations[j].Kind == rt.CPU {
			return true
		}
	}
	return false
}

// hostNeeds collects the written flows of one task that a host reader may
// need (bit i: flow i), as an rt.EdgeVisitor over its successors. A flow
// that only goes to a collection element, whose host copy is the flow's own
// (written in place, not copied at completion), is marked final instead.
type hostNeeds struct {
	r     *RTDevice
	ctx   *rt.Context
	t     *rt.Task
	need  uint64
	final uint64
}

func (v *hostNeeds) Task(flow, _ int, peer *rt.TaskClass, _ int, _ *rt.Locals) {
	if flow < 0 || flow >= 64 || v.need&(1<<flow) != 0 {
		return
	}
	if v.r.reads.of(v.r, v.ctx, peer) {
		v.need |= 1 << flow
	}
}

func (v *hostNeeds) Data(flow, _ int, c rt.Collection, ix rt.Index) {
	if flow < 0 || flow >= 64 {
		return
	}
	if d := c.DataOf(ix); d != nil && d.Host() == v.t.Flow(flow) {
		v.final |= 1 << flow
	} else {
		v.need |= 1 << flow
	}
}

// hostFlows returns the flows of t whose written value may be read from the
// host (bit i: flow i), and among them those that may reach it after t
// completes (Flow.Late); written is the set of written data flows. A task
// whose body has a custom stage_out decides its transfers itself, so it is
// not walked.
//
// A late flow is the final value of a collection element, written in place,
// in a taskpool whose tasks all run on this device: none of them reads a
// host copy, so the only host reader is the program once the taskpool has
// finished, and the Hold of the early completion makes it wait for that.
func (r *RTDevice) hostFlows(t *rt.Task, gi *Incarnation, written uint64) (toHost, late uint64) {
	if written == 0 || gi.StageOut != nil {
		return written, 0
	}
	tp := t.Taskpool()
	ctx := tp.Context()
	if ctx == nil || rt.Impl.Ranks(ctx) > 1 {
		return written, 0
	}
	v := &hostNeeds{r: r, ctx: ctx, t: t}
	rt.Impl.VisitSuccessors(tp, t.Class(), t.Locals(), v)
	toHost = (v.need | v.final) & written
	if v.final&^v.need&written == 0 {
		return toHost, 0
	}
	for _, tc := range tp.Classes() {
		if r.reads.of(r, ctx, tc) {
			return toHost, 0
		}
	}
	return toHost, v.final &^ v.need & written
}
