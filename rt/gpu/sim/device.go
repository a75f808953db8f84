package sim

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/jdf2go/jdf2go/rt/gpu/driver"
)

func init() {
	driver.Register("sim", simDriver{})
}

// simDriver opens simulated devices by index.
type simDriver struct{}

// Count is 1: the simulated family has no natural count, and sim:N says how
// many.
func (simDriver) Count() (int, error) { return 1, nil }

func (simDriver) Open(i int) (driver.Backend, error) {
	return New(WithName(fmt.Sprintf("sim%d", i))), nil
}

// DefaultMemory is the capacity of a simulated device unless WithMemory says
// otherwise. It is only an accounting limit: host memory is taken per
// allocation.
const DefaultMemory = 2 << 30

// Option configures a simulated device.
type Option func(*Device)

// Manual puts the device in manual mode: operations run only when the test
// calls Step or Drain.
func Manual() Option { return func(d *Device) { d.manual = true } }

// WithMemory sets the device capacity in bytes.
func WithMemory(n int64) Option { return func(d *Device) { d.capacity = n } }

// WithName sets the device name.
func WithName(name string) Option { return func(d *Device) { d.name = name } }

// WithLatency gives every operation a virtual duration in free-running
// mode: a stream is busy for d per operation, and an event completes only
// once the stream's virtual clock passed the operations before it. Nothing
// burns CPU meanwhile, so this models the launch cost of a real device
// (microseconds per kernel) on a shared machine.
func WithLatency(d time.Duration) Option { return func(dev *Device) { dev.latency = d } }

// NoBatching makes the device report a type that does not support batch
// collection.
func NoBatching() Option { return func(d *Device) { d.noBatch = true } }

// WithFaults installs fault injection from the start.
func WithFaults(f *Faults) Option { return func(d *Device) { d.faults.Store(f) } }

// Device is a simulated accelerator; it implements driver.Backend.
type Device struct {
	name     string
	manual   bool
	latency  time.Duration
	noBatch  bool
	capacity int64

	mu      sync.RWMutex // guards the allocation table
	allocs  []*alloc     // sorted by base; freed ones stay until compact
	freed   int          // freed allocations still in allocs
	nextPtr driver.Ptr
	used    int64

	smu     sync.Mutex
	streams map[string]*Stream

	faults  atomic.Pointer[Faults]
	current atomic.Int64 // SetCurrent calls, for tests

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type alloc struct {
	base  driver.Ptr
	size  int64
	words []uint64 // 8-byte aligned backing store
	freed bool
}

func (a *alloc) bytes() []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&a.words[0])), a.size)
}

// New returns a simulated device.
func New(opts ...Option) *Device {
	d := &Device{name: "sim", capacity: DefaultMemory, nextPtr: 1 << 32, streams: make(map[string]*Stream)}
	for _, o := range opts {
		o(d)
	}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	return d
}

// Info implements driver.Backend.
func (d *Device) Info() driver.DeviceInfo {
	return driver.DeviceInfo{Name: d.name, Type: driver.TypeSim, Batching: !d.noBatch}
}

// SetCurrent implements driver.Backend; it only counts the calls.
func (d *Device) SetCurrent() error {
	d.current.Add(1)
	return nil
}

// SetCurrentCalls returns how many times SetCurrent was called.
func (d *Device) SetCurrentCalls() int64 { return d.current.Load() }

// SetFaults replaces the fault injection (nil: none).
func (d *Device) SetFaults(f *Faults) { d.faults.Store(f) }

// EnablePeer implements driver.PeerBackend: simulated devices read each other's
// memory (the process's).
func (d *Device) EnablePeer(other driver.Backend) (bool, error) {
	_, ok := other.(*Device)
	return ok, nil
}

var _ driver.PeerBackend = (*Device)(nil)

// MemInfo implements driver.Backend.
func (d *Device) MemInfo() (free, total int64, err error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.capacity - d.used, d.capacity, nil
}

// Used returns the bytes currently allocated.
func (d *Device) Used() int64 {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.used
}

// Allocations returns the number of live allocations.
func (d *Device) Allocations() int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return len(d.allocs) - d.freed
}

// Alloc implements driver.Backend.
func (d *Device) Alloc(n int64) (driver.Ptr, error) {
	if n <= 0 {
		return 0, fmt.Errorf("%w: alloc of %d bytes", driver.ErrBadArgument, n)
	}
	size := (n + 255) &^ 255
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.used+size > d.capacity {
		return 0, fmt.Errorf("%w: %s: %d bytes requested, %d of %d used", driver.ErrOutOfMemory, d.name, n, d.used, d.capacity)
	}
	a := &alloc{base: d.nextPtr, size: n, words: make([]uint64, (n+7)/8)}
	// A gap after every allocation makes an overrun land outside any of them.
	d.nextPtr += driver.Ptr(size + 4096)
	d.allocs = append(d.allocs, a) // bases grow, so the table stays sorted
	d.used += size
	return a.base, nil
}

// Free implements driver.Backend.
func (d *Device) Free(p driver.Ptr) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	i := sort.Search(len(d.allocs), func(i int) bool { return d.allocs[i].base >= p })
	if i == len(d.allocs) || d.allocs[i].base != p || d.allocs[i].freed {
		return fmt.Errorf("%w: free of %#x, which is not an allocation of %s", driver.ErrBadArgument, uintptr(p), d.name)
	}
	a := d.allocs[i]
	d.used -= (a.size + 255) &^ 255
	// Marked, not removed: managers free in about the order they allocated,
	// so removing would move the whole table at every free. Addresses are
	// never reused, so a freed entry cannot hide a live one.
	a.freed, a.words = true, nil
	if d.freed++; d.freed > len(d.allocs)/2 {
		d.compact()
	}
	return nil
}

// compact drops the freed allocations from the table. The caller holds mu.
func (d *Device) compact() {
	live := d.allocs[:0]
	for _, a := range d.allocs {
		if !a.freed {
			live = append(live, a)
		}
	}
	clear(d.allocs[len(live):])
	d.allocs, d.freed = live, 0
}

// resolve returns the device memory from p to the end of its allocation,
// which must hold at least n bytes.
func (d *Device) resolve(p driver.Ptr, n int64) ([]byte, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	i := sort.Search(len(d.allocs), func(i int) bool { return d.allocs[i].base > p }) - 1
	if i < 0 || d.allocs[i].freed {
		return nil, fmt.Errorf("%w: %#x is not device memory of %s", driver.ErrBadArgument, uintptr(p), d.name)
	}
	a := d.allocs[i]
	off := int64(p - a.base)
	if off >= a.size || off+n > a.size {
		return nil, fmt.Errorf("%w: [%#x, +%d) is outside the allocations of %s", driver.ErrBadArgument, uintptr(p), n, d.name)
	}
	return a.bytes()[off:], nil
}

func (d *Device) float64s(p driver.Ptr) ([]float64, error) {
	raw, err := d.resolve(p, 0)
	if err != nil {
		return nil, err
	}
	return driver.BytesAsFloat64s(raw[:len(raw)&^7])
}

// Bytes implements driver.HostMemory: it resolves a buffer for host kernels.
func (d *Device) Bytes(b driver.Buffer) ([]byte, error) {
	raw, err := d.resolve(b.Ptr, b.Bytes())
	if err != nil {
		return nil, err
	}
	return raw[:b.Bytes()], nil
}

// Peek copies n bytes of device memory at p into a new slice, for tests.
func (d *Device) Peek(p driver.Ptr, n int64) ([]byte, error) {
	raw, err := d.resolve(p, n)
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), raw[:n]...), nil
}

// NewStream implements driver.Backend.
func (d *Device) NewStream(name string, events int) (driver.Stream, error) {
	d.smu.Lock()
	defer d.smu.Unlock()
	if _, dup := d.streams[name]; dup {
		return nil, fmt.Errorf("%w: stream %q exists on %s", driver.ErrBadArgument, name, d.name)
	}
	s := &Stream{dev: d, name: name, marks: make([]uint64, events+1)}
	s.cond = sync.NewCond(&s.mu)
	d.streams[name] = s
	if !d.manual {
		d.wg.Add(1)
		go s.run(d.ctx)
	}
	return s, nil
}

// Stream returns the stream of that name, or nil.
func (d *Device) Stream(name string) *Stream {
	d.smu.Lock()
	defer d.smu.Unlock()
	return d.streams[name]
}

// Kernel implements driver.Backend: it resolves a registered kernel that has a
// Host implementation.
func (d *Device) Kernel(name string) (driver.Kernel, error) {
	spec, err := driver.LookupKernel(name)
	if err != nil {
		return nil, err
	}
	if spec.Host == nil {
		return nil, fmt.Errorf("%w: %q has no Host implementation for the simulated device", driver.ErrUnknownKernel, name)
	}
	return kernel{spec}, nil
}

type kernel struct{ spec driver.KernelSpec }

func (k kernel) Name() string { return k.spec.Name }

// Close implements driver.Backend: it stops the stream goroutines and drops all
// memory. Operations still queued are discarded.
func (d *Device) Close() error {
	d.cancel()
	d.smu.Lock()
	for _, s := range d.streams {
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	}
	d.smu.Unlock()
	d.wg.Wait()
	d.mu.Lock()
	d.allocs, d.freed, d.used = nil, 0, 0
	d.mu.Unlock()
	return nil
}
