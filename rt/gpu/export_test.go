package gpu

import (
	"context"

	"github.com/jdf2go/jdf2go/rt/gpu/driver"
)

// What the external tests of this package reach beyond the public API: the
// constructors under Open, the test options, and the probes of the manager's
// state that scenarios assert on.

// NewDevice wraps be into a bare Device (no rt), as a test harness drives it.
func NewDevice(be driver.Backend, opts ...Option) (*Device, error) { return newDevice(be, opts...) }

// NewRTDevice wraps be into a device set up for rt.
func NewRTDevice(be driver.Backend, opts ...Option) (*RTDevice, error) {
	return newRTDevice(be, opts...)
}

// OpenDevices opens the devices of spec as bare, linked Devices.
func OpenDevices(spec string, opts ...Option) ([]*Device, error) {
	s, err := parseSpec(spec)
	if err != nil {
		return nil, err
	}
	devs, err := openEach(s, opts, newDevice, (*Device).Close)
	if err != nil {
		return nil, err
	}
	if err := link(devs...); err != nil {
		return nil, err
	}
	return devs, nil
}

// ParseSpec parses a device specification and gives it back in its
// canonical form ("none", "auto", "sim:2", "cuda").
func ParseSpec(s string) (string, error) {
	v, err := parseSpec(s)
	return v.String(), err
}

var (
	Link                = link
	DefaultBackoff      = defaultBackoff
	WithIndex           = withIndex
	WithBackoff         = withBackoff
	WithCounterObserver = withCounterObserver
	WithProfiler        = withProfiler
	WithSkipEmptyEvents = withSkipEmptyEvents
	WithPriorityOrder   = withPriorityOrder
)

func (d *Device) Cost() int64             { return d.timePerTask() }
func (d *Device) Discard(t *Task) error   { return d.discard(t) }
func (d *Device) Epoch() uint64           { return d.epoch.Load() }
func (d *Device) LoadAbove(p int32) int64 { return d.loadAbove(p) }
func (d *Device) Pending() int            { return d.pendingLen() }
func (d *Device) StageOut() *Stream       { return d.out }
func (d *Device) TryLockIdle() bool       { return d.outstanding.CompareAndSwap(0, -1) }
func (s *Stream) Executed() uint64        { return s.executed.Load() }
func (s *Stream) InFlight() int           { return int(s.inFlight.Load()) }
func (s *Stream) Index() int              { return s.index }
func (s *Stream) Queue() []*Task          { return s.fifo.snapshot() }
func (s *Stream) QueueLen() int           { return s.fifo.len() }
func (s *Stream) Role() Role              { return s.role }
func (t *Task) AddFlow(f Flow)            { t.addFlow(f) }
func (t *Task) Chop() *Task               { return t.chop() }
func (t *Task) Continuation() bool        { return t.continuation }
func (t *Task) ExecState() ExecState      { return t.exec }
func (t *Task) Followers() int            { return t.followers() }
func (t *Task) Kind() Kind                { return t.kind }
func (t *Task) NumFlows() int             { return len(t.flows) }
func (t *Task) OnRelease(fn func(*Task))  { t.onRelease = fn }
func (t *Task) Priority() int32           { return t.priority }
func (t *Task) State() State              { return t.state }

func (d *Device) Prefetch(ctx context.Context, w Worker, data ...Data) error {
	return d.prefetchData(ctx, w, data...)
}

// FIFOLocked reports whether the stream's FIFO lock is held.
func (s *Stream) FIFOLocked() bool {
	if s.fifo.mu.TryLock() {
		s.fifo.mu.Unlock()
		return false
	}
	return true
}

// UnlockIdle releases the lock taken by TryLockIdle.
func (d *Device) UnlockIdle() {
	if !d.outstanding.CompareAndSwap(-1, 0) {
		panic("gpu: UnlockIdle without the idle lock")
	}
}

// Recall is RTDevice.Recall on a bare device, for the harness's Data.
func (d *Device) Recall(data []Data, done func(error)) error {
	return d.recall(context.Background(), nil, data, done)
}
