package dynamic

// Where the newest version of a datum is, between the host and the devices.
//
// A GPU task leaves what it wrote on its device (gpu.DataFlow.KeepOnDevice): the device
// copy is the newest version (rt.Owned in the rt.Data slot the device mirrors it into) and
// the host copy is stale, though its version was bumped at release (gpu.go, "Versions").
// The value comes back to the host only when someone needs it there, as in the MSI
// protocol of StarPU:
//
//   - a task about to run on a CPU worker (a CPU body, or the CPU body of a class with a GPU
//     body too) whose data a device owns: its hook asks those devices for them
//     (gpu.RTDevice.Recall) and returns rt.Async; the last callback reschedules it to its
//     CPU incarnation, whose hook then finds every copy on the host;
//   - a task about to run on device X whose data another device Y owns: X's Submit calls
//     the incarnation's Before hook (deviceBefore), which recalls them from Y in the same
//     way and reschedules the task to its device incarnation once they landed. A read on X
//     of a datum Y owns needs no recall when X and Y are linked: X's stage-in copies it
//     from Y's memory (rt/gpu's peer copies);
//   - Wait: once every task is done, every datum a GPU task wrote comes back (recallAll);
//     Flush on one rank inserts a reader on the CPU per such datum (FLUSH), which recalls
//     it like any CPU task;
//   - a device short of memory writes its dirty copies back before it evicts them (rt/gpu's
//     w2r), never dropping one.
//
// Invariants: at most one device owns a datum, and its copy is the newest version (a
// writer anywhere else recalls it first, so no device keeps an older dirty copy that a
// late write-back could copy over a newer host copy); a task never reads a stale copy: the
// host's is brought up to date before a CPU body runs, a device's is staged in from the
// host or from the owner; after Wait, every datum's host copy is its newest version.
// Dependencies keep writers out meanwhile: a task asks for its data only once its
// predecessors are done, and its successors wait for it.
//
// Devices are found by their mirrors: device index i mirrors its copies into rt.Data slot
// i+1. When the context's devices do not have distinct indices that fit rt.MaxDevices (a
// program that opened devices one by one), a dirty copy could go unseen, so the graph
// falls back to writing every GPU task's written data back when the task ends.
//
// Rejected: recalling on the releasing worker before a successor is made ready (a GPU
// successor on the same device, the common case, would wait for a transfer it does not
// need); pinning each GPU task to the device that owns its written data (rt.Incarnation's
// Select would turn off rt's choice between devices and CPU workers for every task).

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/gpu"
)

// coherence is a graph's view of its devices. devs and keep are set by New; written is
// under Graph.mu.
type coherence struct {
	keep    bool            // GPU tasks leave written data on their device
	devs    []*gpu.RTDevice // by device index: the device whose copies rt.Data slot i+1 mirrors
	written map[*datum]struct{}

	mu  sync.Mutex
	err error // the first failed recall of Wait, which later calls return too
}

// init finds the context's rt/gpu devices by index, and turns keeping data on devices on
// when each has its own mirror slot.
func (h *coherence) init(c *rt.Context) {
	h.keep = true
	for _, d := range c.Devices() {
		r, ok := d.(*gpu.RTDevice)
		if !ok {
			continue
		}
		i := r.Device().Index()
		if i < 0 || i+1 >= rt.MaxDevices {
			h.keep = false
			continue
		}
		for len(h.devs) <= i {
			h.devs = append(h.devs, nil)
		}
		if h.devs[i] != nil {
			h.keep = false
		}
		h.devs[i] = r
	}
	if !h.keep {
		h.devs = nil
	}
}

// noteWrite records that a GPU task writes d, for Wait and Flush; Graph.mu is held.
func (h *coherence) noteWrite(d *datum) {
	if !h.keep {
		return
	}
	if h.written == nil {
		h.written = map[*datum]struct{}{}
	}
	h.written[d] = struct{}{}
}

// owner returns the device whose copy of d is newer than the host's, or nil.
func (h *coherence) owner(d *rt.Data) *gpu.RTDevice {
	host := d.Host()
	if host == nil {
		return nil
	}
	for i, r := range h.devs {
		c := rt.Impl.DeviceCopy(d, i+1)
		// An owned copy older than the host's cannot exist (see the top of the file); the
		// version test keeps such a copy from making a task recall it forever.
		if r != nil && c != nil && rt.Impl.State(c) == rt.Owned && rt.Impl.Version(c) >= rt.Impl.Version(host) {
			return r
		}
	}
	return nil
}

// recallFor asks the devices that own data of t, other than dev (nil: t runs on a CPU
// worker), to bring them back to the host; it reports whether it asked any, in which case
// the task belongs to the recall: rtask is rescheduled to incarnation inc once every datum
// landed, or failed with the first error.
func (g *Graph) recallFor(t *task, rtask *rt.Task, dev *gpu.RTDevice, inc int) bool {
	h := &g.coh
	var reqs map[*gpu.RTDevice][]*rt.Copy
	for _, u := range t.uses {
		if u.mode == ScratchMode {
			continue
		}
		y := h.owner(u.d.d)
		if y == nil || y == dev || (dev != nil && u.mode == ReadMode && linked(dev, y)) {
			continue
		}
		if reqs == nil {
			reqs = map[*gpu.RTDevice][]*rt.Copy{}
		}
		reqs[y] = append(reqs[y], u.d.d.Host())
	}
	if reqs == nil {
		return false
	}
	w := &recallWait{}
	w.left.Store(int32(len(reqs)))
	w.end = func(err error) {
		if err != nil {
			rtask.Fail(fmt.Errorf("bringing the data of %s back from a device: %w", t.Name(), err))
			return
		}
		rtask.Reschedule(inc)
	}
	for y, cs := range reqs {
		if err := y.Recall(cs, w.done); err != nil {
			w.done(err)
		}
	}
	return true
}

// linked reports whether device a copies from b's memory.
func linked(a, b *gpu.RTDevice) bool {
	for _, p := range a.Device().Peers() {
		if p == b.Device() {
			return true
		}
	}
	return false
}

// recallWait counts the recalls of one request; the last callback calls end with the
// first error.
type recallWait struct {
	left  atomic.Int32
	first atomic.Pointer[error]
	end   func(error)
}

func (w *recallWait) done(err error) {
	if err != nil {
		w.first.CompareAndSwap(nil, &err)
	}
	if w.left.Add(-1) != 0 {
		return
	}
	var e error
	if p := w.first.Load(); p != nil {
		e = *p
	}
	w.end(e)
}

// deviceBefore is gpu.Incarnation.Before of the graph's device incarnations: a task whose
// data another device owns waits for them on the host first (see the top of the file).
func (g *Graph) deviceBefore(r *gpu.RTDevice, ec gpu.EC) bool {
	rtask := ec.(*rt.Task)
	return g.recallFor(rt.Impl.Payload(rtask).(*task), rtask, r, rt.Impl.Incarnation(rtask))
}

// recallAll brings every datum a GPU task of the graph wrote back to the host, and waits
// for it; Wait calls it once every task is done.
func (g *Graph) recallAll(ctx context.Context) error {
	h := &g.coh
	g.mu.Lock()
	reqs := map[*gpu.RTDevice][]*rt.Copy{}
	for d := range h.written {
		if y := h.owner(d.d); y != nil {
			reqs[y] = append(reqs[y], d.d.Host())
		}
	}
	g.mu.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil || len(reqs) == 0 {
		return h.err
	}
	ch := make(chan error, 1)
	w := &recallWait{end: func(err error) { ch <- err }}
	w.left.Store(int32(len(reqs)))
	for y, cs := range reqs {
		if err := y.Recall(cs, w.done); err != nil {
			w.done(err)
		}
	}
	select {
	case err := <-ch:
		if err != nil {
			h.err = fmt.Errorf("bringing the graph's data back from the devices: %w", err)
		}
		return h.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// flushDevices inserts, for every datum a GPU task wrote, a task that reads it on a CPU
// worker: its hook brings the newest version back to the host (Flush on one rank).
func (g *Graph) flushDevices() error {
	if !g.coh.keep {
		return nil
	}
	g.mu.Lock()
	ds := make([]*datum, 0, len(g.coh.written))
	for d := range g.coh.written {
		ds = append(ds, d)
	}
	g.mu.Unlock()
	slices.SortFunc(ds, func(a, b *datum) int { return cmp.Compare(a.id, b.id) })
	for _, d := range ds {
		if err := g.insert("FLUSH", flushBody, []Arg{readArg{d}}, false); err != nil {
			return err
		}
	}
	return nil
}

// flushBody is the body of a FLUSH task: its hook did the work.
func flushBody(*Task) error { return nil }
