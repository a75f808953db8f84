package cuda

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/jdf2go/jdf2go/rt/gpu/driver"
)

// EnvMemFraction sets the fraction of a device's free memory (at open) that
// its pool may use, in (0, 1]; 0.9 by default. The manager keeps data
// copies in 90% of the pool; the rest holds scratch memory (cuSOLVER
// workspaces, pointer arrays).
const EnvMemFraction = "JDF2GO_CUDA_MEMFRAC"

// EnvStagingMB sets the size in MiB of each stream's pinned staging ring,
// the bounce buffer for copies from or to host memory that is not pinned
// (64 by default).
const EnvStagingMB = "JDF2GO_CUDA_STAGING_MB"

// Defaults of the backend options.
const (
	DefaultMemFraction  = 0.9
	DefaultStagingBytes = 64 << 20
	DefaultChunkBytes   = 1 << 30
)

// Sizes of the per-stream rings for pointer arrays and status words.
const (
	metaBytes  = 1 << 20
	dmetaBytes = 1 << 20
)

func init() {
	driver.Register("cuda", cudaDriver{})
}

// cudaDriver opens CUDA devices by ordinal.
type cudaDriver struct{}

func (cudaDriver) Count() (int, error) { return countOrReason() }

func (cudaDriver) Open(i int) (driver.Backend, error) { return OpenDevice(i) }

// Count returns the number of CUDA devices, 0 when CUDA is not available
// (no driver, no device): the "cuda" family then simply has no device.
func Count() (int, error) {
	if err := Init(); err != nil {
		if errors.Is(err, ErrUnavailable) {
			return 0, nil
		}
		return 0, err
	}
	return DeviceCount()
}

// countOrReason is the family's Count for gpu.Open: it returns why CUDA is not available (a
// library or an entry point missing, the driver's own error), so that a program that asks
// for CUDA explicitly can fail with the reason.
func countOrReason() (int, error) {
	if err := Init(); err != nil {
		return 0, err
	}
	return DeviceCount()
}

// Option configures a backend opened with OpenDevice.
type Option func(*config)

type config struct {
	memFraction float64
	staging     int
	chunk       int64
	warm        int // order of the warm-up products of compute streams (warmN; tests use less)
}

// MemFraction sets the fraction of free device memory the pool may use
// (overrides JDF2GO_CUDA_MEMFRAC).
func MemFraction(f float64) Option { return func(c *config) { c.memFraction = f } }

// StagingBytes sets the size of each stream's staging ring (overrides
// JDF2GO_CUDA_STAGING_MB).
func StagingBytes(n int) Option { return func(c *config) { c.staging = n } }

// ChunkBytes sets the size of the chunks the pool takes from the driver
// (1 GiB by default).
func ChunkBytes(n int64) Option { return func(c *config) { c.chunk = n } }

// configFromEnv reads the environment defaults.
func configFromEnv() (config, error) {
	c := config{memFraction: DefaultMemFraction, staging: DefaultStagingBytes, chunk: DefaultChunkBytes, warm: warmN}
	if v := strings.TrimSpace(os.Getenv(EnvMemFraction)); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return c, fmt.Errorf("%w: %s=%q is not a number", ErrBadArgument, EnvMemFraction, v)
		}
		c.memFraction = f
	}
	if v := strings.TrimSpace(os.Getenv(EnvStagingMB)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1<<20 {
			return c, fmt.Errorf("%w: %s=%q: want a size in MiB", ErrBadArgument, EnvStagingMB, v)
		}
		c.staging = n << 20
	}
	return c, nil
}

func (c *config) check() error {
	if !(c.memFraction > 0 && c.memFraction <= 1) {
		return fmt.Errorf("%w: memory fraction %v, want 0 < f <= 1", ErrBadArgument, c.memFraction)
	}
	if c.staging < 1<<16 {
		return fmt.Errorf("%w: staging ring of %d bytes, want at least 64 KiB", ErrBadArgument, c.staging)
	}
	return nil
}

// Backend is one CUDA device as rt/gpu drives it (driver.Backend): its primary
// context, a memory pool, non-blocking streams with timing-free events, and
// the kernels it loaded. Open it with OpenDevice, or let gpu.Open open
// every device (the "cuda" family registers itself when this package is
// imported).
//
// The device is ThreadBound: the manager locks its goroutine to its OS
// thread for a management episode and calls SetCurrent there. The few calls
// that can come from outside an episode (stream and backend creation and
// closing, the write-backs of gpu.Device.Close) bind the calling thread
// themselves.
type Backend struct {
	ops     ops
	ordinal int
	dev     Device
	name    string
	arch    string // NVRTC architecture, "sm_90"
	ctx     Context
	release func() error // gives the primary context back
	pool    *pool
	staging int
	warm    int

	mu      sync.Mutex
	streams []*DeviceStream
	kernels map[string]*kernel
	modules []Module
	closed  bool
}

var (
	_ driver.Backend     = (*Backend)(nil)
	_ driver.PeerBackend = (*Backend)(nil)
)

// OpenDevice opens device ordinal: it retains its primary context and sizes
// the memory pool from the free memory. It fails with an error wrapping
// ErrUnavailable without CUDA.
func OpenDevice(ordinal int, opts ...Option) (*Backend, error) {
	cfg, err := configFromEnv()
	if err != nil {
		return nil, err
	}
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if err := Init(); err != nil {
		return nil, err
	}
	dev, err := GetDevice(ordinal)
	if err != nil {
		return nil, err
	}
	name, err := dev.Name()
	if err != nil {
		return nil, err
	}
	major, minor, err := dev.ComputeCapability()
	if err != nil {
		return nil, err
	}
	ctx, err := dev.PrimaryCtxRetain()
	if err != nil {
		return nil, err
	}
	b, err := newBackend(realOps{}, ordinal, fmt.Sprintf("cuda%d %s", ordinal, name), fmt.Sprintf("sm_%d%d", major, minor), ctx, cfg)
	if err != nil {
		return nil, errors.Join(err, dev.PrimaryCtxRelease())
	}
	b.release = dev.PrimaryCtxRelease
	b.dev = dev
	return b, nil
}

func newBackend(o ops, ordinal int, name, arch string, ctx Context, cfg config) (*Backend, error) {
	b := &Backend{ops: o, ordinal: ordinal, dev: Device(ordinal), name: name, arch: arch, ctx: ctx, staging: cfg.staging, warm: cfg.warm,
		kernels: make(map[string]*kernel)}
	if err := b.bind(); err != nil {
		return nil, err
	}
	defer b.unbind()
	free, _, err := o.memGetInfo()
	if err != nil {
		return nil, fmt.Errorf("cuda: memory info of %s: %w", name, err)
	}
	capacity := int64(float64(free)*cfg.memFraction) &^ (poolAlign - 1)
	b.pool = newPool(capacity, cfg.chunk, b.chunkAlloc, b.chunkFree)
	return b, nil
}

// bind locks the calling goroutine to its thread and makes the device's
// context current there; unbind undoes the lock. Inside a management
// episode (already locked, context current) the pair only nests.
func (b *Backend) bind() error {
	runtime.LockOSThread()
	if err := b.ops.setCurrent(b.ctx); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("cuda: make the context of %s current: %w", b.name, err)
	}
	return nil
}

func (b *Backend) unbind() { runtime.UnlockOSThread() }

func (b *Backend) chunkAlloc(n int64) (DevicePtr, error) {
	if err := b.bind(); err != nil {
		return 0, err
	}
	defer b.unbind()
	return b.ops.memAlloc(int(n))
}

func (b *Backend) chunkFree(p DevicePtr) error {
	if err := b.bind(); err != nil {
		return err
	}
	defer b.unbind()
	return b.ops.memFree(p)
}

// Info implements driver.Backend.
func (b *Backend) Info() driver.DeviceInfo {
	return driver.DeviceInfo{Name: b.name, Type: driver.TypeCUDA, Batching: true, ThreadBound: true}
}

// SetCurrent implements driver.Backend: it makes the primary context current
// on the calling thread, which the manager has locked.
func (b *Backend) SetCurrent() error { return b.ops.setCurrent(b.ctx) }

// Context returns the device's primary context.
func (b *Backend) Context() Context { return b.ctx }

// Ordinal returns the device's ordinal.
func (b *Backend) Ordinal() int { return b.ordinal }

// Arch returns the architecture kernels are compiled for ("sm_90").
func (b *Backend) Arch() string { return b.arch }

// EnablePeer implements driver.PeerBackend: when cuDeviceCanAccessPeer says
// this device can map other's memory, it enables that access for this
// device's primary context (cuCtxEnablePeerAccess), so that peer copies
// (DeviceStream.CopyPeer) go device to device. It reports false for a
// backend of another family and for a pair without peer access.
func (b *Backend) EnablePeer(other driver.Backend) (bool, error) {
	o, ok := other.(*Backend)
	if !ok || o == b {
		return false, nil
	}
	can, err := b.ops.canAccessPeer(b.dev, o.dev)
	if err != nil || !can {
		return false, err
	}
	if err := b.bind(); err != nil {
		return false, err
	}
	defer b.unbind()
	if err := b.ops.enablePeerAccess(o.ctx); err != nil && !errors.Is(err, ErrPeerAccessAlreadyEnabled) {
		return false, fmt.Errorf("cuda: enable access from %s to %s: %w", b.name, o.name, err)
	}
	return true, nil
}

// MemInfo implements driver.Backend: the pool's free bytes and capacity.
func (b *Backend) MemInfo() (free, total int64, err error) {
	free, total = b.pool.Info()
	return free, total, nil
}

// Alloc implements driver.Backend; it fails with an error wrapping
// driver.ErrOutOfMemory when the pool is full.
func (b *Backend) Alloc(n int64) (driver.Ptr, error) { return b.pool.Alloc(n) }

// Free implements driver.Backend.
func (b *Backend) Free(p driver.Ptr) error { return b.pool.Free(p) }

// PoolStats describes the device memory pool.
func (b *Backend) PoolStats() PoolStats { return b.pool.stats() }

// NewStream implements driver.Backend: a non-blocking stream with events+1
// events, timing disabled.
func (b *Backend) NewStream(name string, events int) (driver.Stream, error) {
	if events < 1 {
		return nil, fmt.Errorf("%w: stream %s with %d events", ErrBadArgument, name, events)
	}
	if err := b.bind(); err != nil {
		return nil, err
	}
	defer b.unbind()
	s := &DeviceStream{b: b, name: name, slotRec: make([]uint64, events+1), lwork: make(map[potrfKey]int)}
	var err error
	if s.s, err = b.ops.streamCreate(); err != nil {
		return nil, err
	}
	for range events + 1 {
		e, err := b.ops.eventCreate()
		if err != nil {
			return nil, errors.Join(err, s.destroy())
		}
		s.events = append(s.events, e)
	}
	b.mu.Lock()
	b.streams = append(b.streams, s)
	b.mu.Unlock()
	return s, nil
}

// StreamStats sums the statistics of the device's streams.
func (b *Backend) StreamStats() StreamStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	var t StreamStats
	for _, s := range b.streams {
		t.add(s.stats.snapshot())
	}
	return t
}

// kernel is a named kernel loaded on one device.
type kernel struct {
	b    *Backend
	name string
	fn   Function
}

func (k *kernel) Name() string { return k.name }

// Kernel implements driver.Backend: the registered kernel's CUDA source is
// compiled with NVRTC for the device's architecture (once per process and
// architecture) and loaded into the device's context (once per device).
func (b *Backend) Kernel(name string) (driver.Kernel, error) {
	spec, err := driver.LookupKernel(name)
	if err != nil {
		return nil, err
	}
	if spec.CUDA == "" {
		return nil, fmt.Errorf("%w: %q has no CUDA source", driver.ErrUnknownKernel, name)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if k := b.kernels[name]; k != nil {
		return k, nil
	}
	if err := b.bind(); err != nil {
		return nil, err
	}
	defer b.unbind()
	fn, mod, err := b.ops.kernel(spec, b.arch)
	if err != nil {
		return nil, err
	}
	k := &kernel{b: b, name: name, fn: fn}
	b.kernels[name] = k
	b.modules = append(b.modules, mod)
	return k, nil
}

// Close implements driver.Backend: it closes the streams still open, unloads
// the kernels, frees the pool and releases the primary context.
func (b *Backend) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	streams := b.streams
	mods := b.modules
	b.modules = nil
	clear(b.kernels)
	b.mu.Unlock()
	if err := b.bind(); err != nil {
		return err
	}
	defer b.unbind()
	var errs []error
	for _, s := range streams {
		errs = append(errs, s.Close())
	}
	for _, m := range mods {
		errs = append(errs, b.ops.moduleUnload(m))
	}
	errs = append(errs, b.pool.close())
	if b.release != nil {
		errs = append(errs, b.release())
	}
	return errors.Join(errs...)
}
