package gpu

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/gpu/driver"
	"github.com/jdf2go/jdf2go/rt/profile"
)

// RTDevice makes a Device usable as rt's device (rt.Device): register it
// with rt.Devices. It accepts incarnations of kind rt.GPU, and rt.CUDA
// on a CUDA backend; the incarnation's Device field must hold the body's
// *Incarnation (generated code fills it).
//
// Submitting an rt task wraps it with its flows: flow i of the class is
// flow i of the wrapper (CTL and absent flows are NULL), keyed by its host
// rt.Copy; a written flow is written back to the host when a host reader
// may see its value (a collection, a CPU task, another device or rank:
// hostreads.go) and otherwise stays on the device for its successors; the
// device's copies are mirrored into the rt.Data slot of the device (slot
// index+1). Completion goes through rt.Worker.Complete on
// the manager's worker (so successors reach its next_task slot, flushed
// right after), failures through rt.Task.Fail, and NEXT from a
// complete-stage callback through rt.Task.Reschedule to the following
// incarnation. Trace spans go to rt's tracer: a track per device stream,
// and the manager's "own" episodes on the worker's track.
type RTDevice struct {
	d      *Device
	prof   *rtProfiler
	reads  hostReads
	ctx    context.Context
	cancel context.CancelFunc
}

var (
	_ rt.Device         = (*RTDevice)(nil)
	_ rt.Estimator      = (*RTDevice)(nil)
	_ rt.PriorityLoader = (*RTDevice)(nil)
)

// newRTDevice wraps be into a Device set up for rt; opts may add device
// options (streams, events, memory limit, logger).
func newRTDevice(be driver.Backend, opts ...Option) (*RTDevice, error) {
	r := &RTDevice{prof: &rtProfiler{}}
	host := rtHost{}
	base := []Option{WithCompleter(host), WithScheduler(host), withProfiler(r.prof)}
	d, err := newDevice(be, append(base, opts...)...)
	if err != nil {
		return nil, err
	}
	r.d = d
	r.ctx, r.cancel = context.WithCancel(context.Background())
	return r, nil
}

// RTDevices converts devices for rt.Devices.
func RTDevices(devs []*RTDevice) []rt.Device {
	out := make([]rt.Device, len(devs))
	for i, d := range devs {
		out[i] = d
	}
	return out
}

// Describe lists devices for people: "gpu0 (sim0), gpu1 (sim1)", or "none".
func Describe(devs []*RTDevice) string {
	if len(devs) == 0 {
		return "none"
	}
	names := make([]string, len(devs))
	for i, d := range devs {
		names[i] = d.d.name + " (" + d.Name() + ")"
	}
	return strings.Join(names, ", ")
}

// Device returns the wrapped device.
func (r *RTDevice) Device() *Device { return r.d }

// Name implements rt.Device.
func (r *RTDevice) Name() string {
	if n := r.d.info.Name; n != "" {
		return n
	}
	return r.d.name
}

// Accepts implements rt.Device.
func (r *RTDevice) Accepts(k rt.DeviceKind) bool {
	return k == rt.GPU || (k == rt.CUDA && r.d.info.Type == TypeCUDA)
}

// Load implements rt.Device.
func (r *RTDevice) Load() int64 { return r.d.Load() }

// LoadAbove implements rt.PriorityLoader (Device.LoadAbove).
func (r *RTDevice) LoadAbove(p int32) int64 { return r.d.loadAbove(p) }

// Estimate implements rt.Estimator: the device's measured time per task
// (Device.Cost), the same for every class.
func (r *RTDevice) Estimate(*rt.Task, *rt.Incarnation) int64 { return r.d.timePerTask() }

// Close closes the device (after the rt Context is closed): it fails with
// ErrLeak while work is outstanding.
func (r *RTDevice) Close() error {
	err := r.d.Close()
	if err == nil {
		r.cancel()
	}
	return err
}

// Saturated implements rt.Saturator: the device holds at least its queue limit
// (WithQueueLimit) of accepted wrappers. A closed or abandoned device runs
// nothing more, so waiting for it would never end: it is not saturated.
func (r *RTDevice) Saturated() bool {
	d := r.d
	n := d.queueLimit
	return n > 0 && d.outstanding.Load() >= n && !d.closed.Load() && !d.abandoned.Load()
}

// Submit implements rt.Device.
func (r *RTDevice) Submit(w rt.Worker, t *rt.Task, inc *rt.Incarnation) error {
	gi, ok := inc.Device.(*Incarnation)
	if !ok || gi == nil || gi.Submit == nil {
		return fmt.Errorf("%w: incarnation %v of %v has no *gpu.Incarnation with a submit hook", ErrMisuse, inc.Kind, t)
	}
	if w != nil {
		r.prof.bind(w.Context().Tracer(), r.d)
	}
	if gi.Before != nil && gi.Before(r, t) {
		return nil
	}
	wt := r.d.NewTask(t, gi)
	if inc.NoTrace {
		wt.exec = ExecDisabled
	}
	if gi.Data != nil {
		if err := r.addDataFlows(wt, t, gi); err != nil {
			return err
		}
		return r.submit(w, wt)
	}
	flows := t.Class().Flows
	var written uint64
	for i := range flows {
		if a := flows[i].Access; i < 64 && (a == rt.Write || a == rt.RW) && t.Flow(i) != nil {
			written |= 1 << i
		}
	}
	toHost, late := r.hostFlows(t, gi, written)
	for i := range flows {
		c := t.Flow(i)
		if c == nil || flows[i].Access == rt.CTL {
			wt.addFlow(Flow{})
			continue
		}
		hc := hostCopy{c}
		elem, ok := hc.elem()
		if !ok {
			_ = r.d.discard(wt)
			return fmt.Errorf("%w: flow %s of %v holds %T; device flows hold []float64, []float32, []int64, []int32 or []byte",
				ErrBadArgument, flows[i].Name, t, c.Value)
		}
		f := Flow{Data: hc, Elem: elem}
		switch flows[i].Access {
		case rt.Read:
			f.Access = Read
		case rt.Write:
			f.Access = Write
		default:
			f.Access = ReadWrite
			if rt.Impl.Unwritten(c) {
				f.Access = Write // a NEW input: nothing to copy in
			}
		}
		if gi.Size != nil {
			f.Size = gi.Size(t, i)
		}
		f.KeepOnDevice = written&^toHost&(1<<i) != 0
		f.Late = late&(1<<i) != 0
		wt.addFlow(f)
	}
	return r.submit(w, wt)
}

// submit hands the wrapper of an rt task to the device.
func (r *RTDevice) submit(w rt.Worker, wt *Task) error {
	var gw Worker
	if w != nil {
		gw = w
	}
	err := r.d.Submit(r.ctx, gw, wt)
	if errors.Is(err, ErrTaskFailed) || errors.Is(err, ErrDeviceDisabled) {
		// The device owned the task: every failure of the episode (this
		// task's or another's) already reached rt through Cleanout. rt must
		// not fail t a second time; it may even be recycled already.
		return nil
	}
	return err
}

// Prefetch stages the host copies of data in on the device (Device.Prefetch),
// so that the tasks that read them find current device copies: a program's
// "data already resident" start. On an idle device the calling goroutine
// manages the device until the copies have landed; on a busy one the
// transfers are queued and Prefetch returns at once. Pass many data in one
// call: their transfers then overlap.
func (r *RTDevice) Prefetch(ctx context.Context, data ...*rt.Data) error {
	hcs := make([]Data, len(data))
	for i, x := range data {
		if x == nil {
			return fmt.Errorf("%w: prefetch of a nil datum (argument %d)", ErrBadArgument, i)
		}
		c := x.Host()
		if c == nil {
			return fmt.Errorf("%w: prefetch of a datum without a host copy (argument %d)", ErrBadArgument, i)
		}
		hc := hostCopy{c}
		if _, ok := hc.elem(); !ok {
			return fmt.Errorf("%w: prefetch of %T; device flows hold []float64, []float32, []int64, []int32 or []byte",
				ErrBadArgument, c.Value)
		}
		hcs[i] = hc
	}
	return r.d.prefetchData(ctx, nil, hcs...)
}

// rtHost completes, fails and reschedules rt tasks for the manager.
type rtHost struct{}

func (rtHost) Complete(w Worker, t *Task) error {
	task := t.ec.(*rt.Task)
	if rw, ok := w.(rt.Worker); ok && rw != nil {
		rw.Complete(task)
	} else {
		task.Complete()
	}
	return nil
}

func (rtHost) Cleanout(t *Task, cause error) { t.ec.(*rt.Task).Fail(cause) }

// Hold implements Holder: the task's taskpool counts the late write-backs as
// actions in flight, so that it finishes only once they have landed.
func (rtHost) Hold(t *Task) Hold {
	tp := t.ec.(*rt.Task).Taskpool()
	rt.Impl.AddActions(tp, 1)
	return taskpoolHold{tp}
}

// taskpoolHold is one late write-back of a taskpool's task.
type taskpoolHold struct{ tp *rt.Taskpool }

func (h taskpoolHold) Release(err error) {
	if err != nil {
		h.tp.Cancel(fmt.Errorf("the write-back of a completed task's result failed: %w", err))
	}
	rt.Impl.AddActions(h.tp, -1)
}

// Cancelled implements Canceller: a task of a failed or cancelled taskpool
// is dropped.
func (rtHost) Cancelled(t *Task) error {
	if task, ok := t.ec.(*rt.Task); ok {
		return task.Taskpool().Err()
	}
	return nil
}

func (rtHost) Reschedule(t *Task) error {
	task := t.ec.(*rt.Task)
	task.Reschedule(rt.Impl.Incarnation(task) + 1)
	return nil
}

// hostCopy is an rt host copy as the device sees it. It is pointer-shaped,
// so storing it in a Flow allocates nothing, and it compares by the copy.
type hostCopy struct{ c *rt.Copy }

func (h hostCopy) elem() (Elem, bool) {
	switch h.c.Value.(type) {
	case []float64:
		return Float64, true
	case []float32:
		return Float32, true
	case []int64:
		return Int64, true
	case []int32:
		return Int32, true
	case []byte:
		return Bytes, true
	}
	return Bytes, false
}

// HostBytes implements Data: the host slice seen as bytes.
func (h hostCopy) HostBytes() []byte {
	switch v := h.c.Value.(type) {
	case []float64:
		return sliceBytes(v)
	case []float32:
		return sliceBytes(v)
	case []int64:
		return sliceBytes(v)
	case []int32:
		return sliceBytes(v)
	case []byte:
		return v
	}
	return nil
}

func sliceBytes[E float64 | float32 | int64 | int32](v []E) []byte {
	if len(v) == 0 {
		return nil
	}
	var e E
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*int(unsafe.Sizeof(e)))
}

// HostVersion implements Data.
func (h hostCopy) HostVersion() uint64 { return rt.Impl.Version(h.c) }

// SetHostVersion implements Data. The write-back of a task's flow is
// followed by the task's completion, where rt bumps the host copy's version
// by one, to the version of the device copy: setting it here too would make
// the device copy look stale.
func (h hostCopy) SetHostVersion(uint64) {}

// MirrorCopy implements CopyMirror: the device copy appears in the rt.Data
// slot of the device, as rec, attached at the first report.
func (h hostCopy) MirrorCopy(dev int, rec *rt.Copy, b Buffer, version uint64, state CopyState) {
	if rt.Impl.CopyData(rec) == nil {
		data, slot := rt.Impl.CopyData(h.c), dev+1
		if data == nil || slot >= rt.MaxDevices {
			return
		}
		rec.Value = b
		if err := rt.Impl.Attach(data, slot, rec); err != nil {
			return // another device index collides; mirroring is informative
		}
	}
	rt.Impl.SetVersion(rec, version)
	s := rt.Invalid
	switch state {
	case CopyOwned:
		s = rt.Owned
	case CopyShared:
		s = rt.Shared
	}
	// Most writes leave the state as it was: a load costs less than the
	// atomic exchange of a store.
	if rt.Impl.State(rec) != s {
		rt.Impl.SetState(rec, s)
	}
}

// DropCopy implements CopyMirror.
func (h hostCopy) DropCopy(dev int, rec *rt.Copy) {
	if data := rt.Impl.CopyData(rec); data != nil {
		rt.Impl.Detach(data, dev+1, rec)
	}
}

// rtProfiler writes a device's spans into rt's tracer. Tracks are named
// before the tracer is known (when the device opens) and created at the first Submit;
// from then on each is written by the device's manager only.
type rtProfiler struct {
	once   sync.Once
	tr     *profile.Tracer
	group  string // the device's name: the tracks' group
	names  []string
	tracks []*profile.Track
	open   []map[rtSpan]openSpan // per track: the open spans
	byName map[string]profile.Name
	own    profile.Name
}

type rtSpan struct {
	name string
	t    *Task
}

// openSpan is a span begun and not yet ended. Its label and arguments are
// taken at the beginning: a stage-out can end after its task completed
// (Flow.Late), when the rt task may already be reused.
type openSpan struct {
	start int64
	label profile.Name
	n     int
	args  [profile.MaxArgs]int64
}

func (p *rtProfiler) bind(tr *profile.Tracer, d *Device) {
	p.once.Do(func() {
		if tr == nil {
			return
		}
		p.tr, p.group = tr, d.name
		p.byName = make(map[string]profile.Name)
		p.own = tr.Name("gpu own " + d.name)
		for _, n := range p.names {
			p.tracks = append(p.tracks, tr.NewTrack(d.name, n))
			p.open = append(p.open, make(map[rtSpan]openSpan))
		}
	})
}

func (p *rtProfiler) Track(name string) int {
	p.names = append(p.names, name)
	if p.tr != nil { // a lane added by the manager after bind
		p.tracks = append(p.tracks, p.tr.NewTrack(p.group, name))
		p.open = append(p.open, make(map[rtSpan]openSpan))
	}
	return len(p.names) - 1
}

func (p *rtProfiler) Now() int64 { return p.tr.Now() }

func (p *rtProfiler) Begin(track int, name string, t *Task) {
	if p.tr == nil {
		return
	}
	o := openSpan{start: p.tr.Now()}
	label := name
	if task, ok := t.ec.(*rt.Task); ok {
		tc := task.Class()
		if name == SpanExec {
			label = tc.Name
		} else {
			label = name + " " + tc.Name
		}
		for _, s := range tc.Params {
			if o.n == len(o.args) {
				break
			}
			o.args[o.n] = int64(task.Locals()[s])
			o.n++
		}
	}
	id, ok := p.byName[label]
	if !ok {
		id = p.tr.Name(label)
		p.byName[label] = id
	}
	o.label = id
	p.open[track][rtSpan{name, t}] = o
}

func (p *rtProfiler) End(track int, name string, t *Task) {
	if p.tr == nil {
		return
	}
	key := rtSpan{name, t}
	o, ok := p.open[track][key]
	if !ok {
		return
	}
	delete(p.open[track], key)
	p.tracks[track].Span(o.label, o.start, p.tr.Now(), o.args[:o.n]...)
}

func (p *rtProfiler) Own(w Worker, d *Device, start, end int64) {
	if rw, ok := w.(rt.Worker); ok && rw != nil && p.tr != nil {
		rw.Track().Span(p.own, start, end)
	}
}
