package gpu

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jdf2go/jdf2go/rt/gpu/driver"
)

// Device is one accelerator shared by all CPU workers of the process
// (docs/gpu.md, "The manager"). Workers hand it wrappers with Submit; the worker
// whose submission moves the outstanding counter from 0 to 1 becomes the
// manager until the counter drains (manager.go).
type Device struct {
	index int
	name  string
	info  DeviceInfo
	be    driver.Backend

	streams []*Stream // 0 stage-in, 1 stage-out, 2.. compute
	in, out *Stream
	compute []*Stream

	// Fields that every submitting worker writes, then those that the manager writes, then
	// those that every submission reads, then those that both write, each group on cache
	// lines of its own: on a shared line, every submission would cost the manager a cache
	// miss on its next read of its own fields, and each of the manager's writes would wait
	// for the line to leave the caches of the workers that read it.
	_           linePad
	outstanding atomic.Int32
	allocated   atomic.Int64 // wrappers allocated
	pending     pendingQueue // its producers' fields, then (padded) its manager's
	// The manager's pending changes of backlog (backlog.go): taken and released wrappers.
	takenRun, releasedRun backlogRun
	released              atomic.Int64  // wrappers released; live = allocated - released
	epoch                 atomic.Uint64 // moved by releases of memory: most tasks' ends
	_                     linePad
	closed                atomic.Bool
	abandoned             atomic.Bool
	_                     linePad
	backlog               backlog // outstanding kernel wrappers by priority (LoadAbove)
	_                     linePad

	mem       memory // the manager's alone
	_         linePad
	dir       directory // what submitters and linked devices read of the memory (peer.go)
	_         linePad
	pool      sync.Pool // *wrapperBatch of released wrappers
	empties   sync.Pool // *wrapperBatch, drained
	takenPool sync.Pool // *[]*Task: a manager's buffer for device.pending (manager.go)

	sched Scheduler
	comp  Completer
	prof  Profiler
	log   *slog.Logger

	skipEmpty    bool
	batching     bool
	pendingDrain int
	queueLimit   int32
	retryLimit   int32
	cancel       Canceller
	// orphans counts the managers that went on in a goroutine of their own
	// after a body ended theirs (runtime.Goexit); Close waits for them.
	orphans       sync.WaitGroup
	backoff       func(idle int)
	counterUpdate func(delta int32)

	stats deviceStats
	// created is the device clock's origin; cost is a moving average of the
	// device time per logical task, in ns, for load estimates; progress is the
	// device clock (ns) at the last exec completion or at the start of the
	// current episode, whichever is later.
	created  time.Time
	cost     atomic.Int64
	progress atomic.Int64

	kmu     sync.RWMutex
	kernels map[string]driver.Kernel
	// invert is InvertLower's kernel once loadInvert has loaded it; until
	// then, and on a device that cannot load it, InvertLower solves.
	invert     atomic.Pointer[driver.Kernel]
	invertDone chan struct{}
}

type deviceStats struct {
	executed, episodes, reservations, evictions, writeBacks, decrements atomic.Uint64
	peerCopies, d2dDirect, d2dCommands, stageOuts, early, recalled      atomic.Uint64
	memUsed, peerPins                                                   atomic.Int64
	stageIns, bytesIn, bytesOut, batches, batched                       atomic.Int64
	busy                                                                atomic.Int64 // ns
}

// Option configures a Device.
type Option func(*config)

type config struct {
	index         int
	compute       int
	events        int
	skipEmpty     bool
	sorted        bool
	batching      bool
	memLimit      int64
	drain         int
	queue         int
	retries       int32
	sched         Scheduler
	comp          Completer
	prof          Profiler
	log           *slog.Logger
	backoff       func(idle int)
	counterUpdate func(delta int32)
}

// withIndex sets the device's index among the process's devices (its name
// in traces is "gpu<index>").
func withIndex(i int) Option { return func(c *config) { c.index = i } }

// WithComputeStreams sets the number of compute streams (default 4).
func WithComputeStreams(n int) Option { return func(c *config) { c.compute = n } }

// WithEvents sets the number of event slots per stream (default 4).
func WithEvents(n int) Option { return func(c *config) { c.events = n } }

// withSkipEmptyEvents sets whether a stage-in or stage-out that queued no
// copy completes at once instead of recording an event (default true).
// Compute streams always record.
func withSkipEmptyEvents(on bool) Option { return func(c *config) { c.skipEmpty = on } }

// withPriorityOrder sets the FIFO ordering policy: sorted by
// descending priority and stable (default), or plain arrival order.
func withPriorityOrder(on bool) Option { return func(c *config) { c.sorted = on } }

// WithBatching enables or disables batch collection on the device (default:
// on, unless JDF2GO_BATCHING is off, 0 or false).
func WithBatching(on bool) Option { return func(c *config) { c.batching = on } }

// WithMemoryLimit caps the device memory used for data copies, in bytes
// (default: 90% of the total reported by the backend).
func WithMemoryLimit(n int64) Option { return func(c *config) { c.memLimit = n } }

// WithPendingDrain sets how many submissions the manager takes from
// device.pending per iteration (DefaultPendingDrain; see manager.go).
func WithPendingDrain(n int) Option { return func(c *config) { c.drain = n } }

// DefaultQueueLimit is the default of WithQueueLimit: 16 rings of DefaultPendingDrain
// tasks, one for each event slot of the default four compute streams.
const DefaultQueueLimit = 16 * DefaultPendingDrain

// WithQueueLimit sets how many accepted wrappers make the device saturated
// (RTDevice.Saturated, DefaultQueueLimit): rt then pauses startup walks that
// feed it. n <= 0 means never saturated.
func WithQueueLimit(n int) Option { return func(c *config) { c.queue = n } }

// DefaultRetryLimit is the default of WithRetryLimit.
const DefaultRetryLimit = 10000

// WithRetryLimit sets how many times in a row a submit hook may return AGAIN
// or NEXT while the device makes no other progress (no wrapper released,
// nothing in flight but parked retries: the AGAIN steps of other rings count
// as retries, not progress) before its wrapper fails with ErrNoProgress
// (DefaultRetryLimit); n <= 0 means no limit.
func WithRetryLimit(n int) Option {
	return func(c *config) { c.retries = int32(min(n, 1<<30)) }
}

// WithScheduler sets who takes tasks back from the device.
func WithScheduler(s Scheduler) Option { return func(c *config) { c.sched = s } }

// WithCompleter sets who completes and cleans out logical tasks.
func WithCompleter(cp Completer) Option { return func(c *config) { c.comp = cp } }

// withProfiler sets where trace records go (none by default).
func withProfiler(p Profiler) Option { return func(c *config) { c.prof = p } }

// WithLogger sets the logger for diagnostics (slog.Default by default).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// withBackoff replaces what the manager does when an iteration made no
// progress; idle counts consecutive idle iterations with no event in flight
// (it stays 0 while the manager polls events, and a ThreadBound device's
// manager then calls fn only every 64th poll). The default yields with
// runtime.Gosched, then sleeps up to 50µs. Tests use it to run the manager in
// lockstep with a manual simulated device.
func withBackoff(fn func(idle int)) Option { return func(c *config) { c.backoff = fn } }

// withCounterObserver calls fn after each release step with the (negative)
// amount subtracted from the outstanding counter, from the manager's
// goroutine. It is a diagnostic hook for tests.
func withCounterObserver(fn func(delta int32)) Option {
	return func(c *config) { c.counterUpdate = fn }
}

// DefaultPendingDrain is how many submissions the manager takes from
// device.pending per iteration unless WithPendingDrain says otherwise. A
// batched body collects what one iteration moved to its stream, so this is
// also the usual largest ring when submissions outpace the device: a larger
// drain spreads the host cost of one batched BLAS call over more tasks.
const DefaultPendingDrain = 256

// defaultBackoff is the manager's idle policy: yield the processor for the
// first idle iterations, then sleep a little longer each time, up to 50µs.
func defaultBackoff(idle int) {
	if idle < 64 {
		runtime.Gosched()
		return
	}
	time.Sleep(time.Duration(min(idle-63, 50)) * time.Microsecond)
}

// newDevice wraps a backend into a device with its streams. The device owns
// the backend: Close closes it.
func newDevice(be driver.Backend, opts ...Option) (*Device, error) {
	cfg := config{compute: 4, events: 4, skipEmpty: true, sorted: true, batching: batchingFromEnv(), drain: DefaultPendingDrain,
		queue:   DefaultQueueLimit,
		retries: DefaultRetryLimit}
	for _, o := range opts {
		o(&cfg)
	}

	if cfg.compute < 1 || cfg.events < 1 || cfg.drain < 1 {
		return nil, fmt.Errorf("%w: %d compute streams, %d events per stream, %d submissions per iteration",
			ErrBadArgument, cfg.compute, cfg.events, cfg.drain)
	}
	d := &Device{
		index:         cfg.index,
		name:          fmt.Sprintf("gpu%d", cfg.index),
		info:          be.Info(),
		be:            be,
		sched:         cfg.sched,
		comp:          cfg.comp,
		prof:          cfg.prof,
		log:           cfg.log,
		skipEmpty:     cfg.skipEmpty,
		batching:      cfg.batching,
		pendingDrain:  cfg.drain,
		queueLimit:    int32(min(cfg.queue, 1<<30)),
		retryLimit:    cfg.retries,
		backoff:       cfg.backoff,
		counterUpdate: cfg.counterUpdate,
	}
	d.pending.init()
	if d.log == nil {
		d.log = slog.Default()
	}
	if c, ok := d.comp.(Canceller); ok {
		d.cancel = c
	}
	if d.backoff == nil {
		d.backoff = defaultBackoff
	}
	d.dir.copies = make(map[Data]*devCopy)
	d.mem.limit = cfg.memLimit
	if d.mem.limit <= 0 {
		_, total, err := be.MemInfo()
		if err != nil {
			return nil, fmt.Errorf("gpu: memory info of %s: %w", d.name, err)
		}
		d.mem.limit = total / 10 * 9
	}
	d.epoch.Store(1)
	d.created = time.Now()
	d.cost.Store(int64(10 * time.Microsecond))
	names := make([]string, 0, 2+cfg.compute)
	names = append(names, "in", "out")
	for k := range cfg.compute {
		names = append(names, fmt.Sprintf("exec%d", k))
	}
	for i, name := range names {
		bs, err := be.NewStream(name, cfg.events)
		if err != nil {
			d.closeStreams()
			return nil, fmt.Errorf("gpu: create stream %s on %s: %w", name, d.name, err)
		}
		s := &Stream{dev: d, index: i, name: name, be: bs, slots: make([]*Task, cfg.events)}
		s.fifo.sorted = cfg.sorted
		switch i {
		case 0:
			s.role = RoleStageIn
		case 1:
			s.role = RoleStageOut
		default:
			s.role = RoleCompute
		}
		if err := prepare(bs, s.role); err != nil {
			d.log.Debug("gpu: stream sets up on first use", "device", d.name, "stream", name, "err", err)
		}
		if d.prof != nil {
			s.track = d.prof.Track(d.name + "/" + name)
			s.tracks, s.laneOpen = []int{s.track}, []int32{0}
		}
		d.streams = append(d.streams, s)
	}
	d.in, d.out, d.compute = d.streams[0], d.streams[1], d.streams[2:]
	d.takenPool.New = func() any { b := make([]*Task, 0, d.pendingDrain); return &b }
	d.invertDone = make(chan struct{})
	go d.loadInvert()
	return d, nil
}

// Ready waits until the device has loaded the runtime's own kernels, which
// the device starts loading when it opens, or until ctx ends. Until then
// the operations that use them (InvertLower) take a slower path, so a
// benchmark calls Ready before it starts the clock.
func (d *Device) Ready(ctx context.Context) error {
	select {
	case <-d.invertDone:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// loadInvert loads InvertLower's kernel. It runs in a goroutine of its own,
// which Close waits for, because on CUDA the kernel is compiled (NVRTC): a
// device is usable at once, and a task does not wait for the compiler.
func (d *Device) loadInvert() {
	defer close(d.invertDone)
	k, err := d.kernel(invertKernel)
	if err != nil {
		d.log.Debug("gpu: InvertLower solves instead", "device", d.name, "err", err)
		return
	}
	d.invert.Store(&k)
}

func (d *Device) closeStreams() {
	for _, s := range d.streams {
		if err := s.be.Close(); err != nil {
			d.log.Warn("gpu: close stream", "device", d.name, "stream", s.name, "err", err)
		}
	}
}

// prepare lets a backend stream set up what its role needs now
// (ComputePreparer, TransferPreparer), when the device opens.
func prepare(bs driver.Stream, role Role) error {
	if role == RoleCompute {
		if p, ok := bs.(driver.ComputePreparer); ok {
			return p.PrepareCompute()
		}
		return nil
	}
	if p, ok := bs.(driver.TransferPreparer); ok {
		return p.PrepareTransfers()
	}
	return nil
}

// Close shuts the device down. It fails with ErrLeak, and leaves the device
// usable, while wrappers are outstanding or alive (a leak, or a Close before
// the work drained). Otherwise it writes every dirty device copy back to its
// host copy (no result is lost to KeepOnDevice), frees device memory, and
// closes the streams and the backend. A second Close returns nil. It first
// waits for the managers that went on in a goroutine of their own after a
// body called runtime.Goexit: they end with the work they hold.
func (d *Device) Close() error {
	if d.closed.Load() {
		return nil
	}
	<-d.invertDone
	d.orphans.Wait()
	// The idle lock keeps managers out: the streams are ours from here.
	if !d.outstanding.CompareAndSwap(0, -1) {
		return fmt.Errorf("%w: %s has outstanding counter %d and %d live wrappers", ErrLeak, d.name, d.outstanding.Load(), d.live())
	}
	if err := d.settleWriteBacks(); err != nil {
		d.outstanding.Store(0)
		return err
	}
	if live := d.live(); live != 0 {
		d.outstanding.Store(0)
		return fmt.Errorf("%w: %s has %d live wrappers", ErrLeak, d.name, live)
	}
	if n := d.stats.peerPins.Load(); n != 0 {
		d.outstanding.Store(0)
		return fmt.Errorf("%w: linked devices are still copying %d of the copies of %s", ErrLeak, n, d.name)
	}
	d.closed.Store(true)
	errs := []error{d.releaseMemory()}
	for _, s := range d.streams {
		errs = append(errs, s.be.Close())
	}
	errs = append(errs, d.be.Close())
	return errors.Join(errs...)
}

// settleWriteBacks finishes the uncounted write-backs a leaving manager left
// on the stage-out stream, then writes back every remaining dirty copy.
func (d *Device) settleWriteBacks() error {
	s := d.out
	var inFlight []*Task
	for i, t := range s.slots {
		if t != nil {
			if t.kind != KindWriteBack {
				return fmt.Errorf("%w: %v still in flight on %s/%s", ErrLeak, t, d.name, s.name)
			}
			inFlight = append(inFlight, t)
			s.slots[i] = nil
			s.inFlight.Add(-1)
		}
	}
	s.start, s.end = 0, 0
	for t := s.fifo.pop(); t != nil; t = s.fifo.pop() {
		if t.kind != KindWriteBack {
			s.fifo.push(t, t.state)
			return fmt.Errorf("%w: %v still queued on %s/%s", ErrLeak, t, d.name, s.name)
		}
		d.writeBackDone(t, false) // never started: the copies stay dirty
		d.freeTask(t, StateReleased)
	}
	final := d.newWriteBack()
	if final != nil {
		if _, err := d.writeBackTransfers(final, s); err != nil {
			return err
		}
		inFlight = append(inFlight, final)
	}
	if len(inFlight) == 0 {
		return nil
	}
	err := d.drain(s)
	for _, t := range inFlight {
		d.writeBackDone(t, err == nil)
		d.freeTask(t, StateReleased)
	}
	if err != nil {
		return fmt.Errorf("gpu: write back dirty copies of %s: %w", d.name, err)
	}
	return nil
}

// drain waits, for at most 10 s, until everything enqueued on s has run.
func (d *Device) drain(s *Stream) error {
	slot := s.quiesceSlot()
	if err := s.be.Record(slot); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for idle := 0; ; idle++ {
		done, err := s.be.Query(slot)
		if err != nil || done {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("gpu: stream %s/%s does not drain", d.name, s.name)
		}
		defaultBackoff(idle)
	}
}

// Released wrappers go back to the pool in batches. The manager releases
// every task of the device: with one pool operation per wrapper, each
// allocation on another core would take its wrapper from the manager's
// processor's share of the pool, a cache line that the manager and the
// workers would pass back and forth at every task. A worker takes a whole
// batch instead, and keeps it in its own processor's share while it draws
// wrappers from it.
type wrapperBatch struct{ ts []*Task }

// wrapperBatchLen is how many released wrappers a manager gathers before it
// gives them back to the pool.
const wrapperBatchLen = 32

// allocTask takes a wrapper from the pool, or makes one. A released wrapper
// is reset here, by the submitting worker, not at its release: the release
// runs on the manager, whose time bounds the device's rate of small tasks.
func (d *Device) allocTask() *Task {
	d.allocated.Add(1)
	b, _ := d.pool.Get().(*wrapperBatch)
	if b == nil {
		t := &Task{dev: d, state: StateNew}
		t.makeSingleton()
		return t
	}
	n := len(b.ts) - 1
	t := b.ts[n]
	b.ts[n] = nil
	b.ts = b.ts[:n]
	if n > 0 {
		d.pool.Put(b)
	} else {
		d.empties.Put(b)
	}
	t.reset()
	t.state = StateNew
	return t
}

// emptyBatch returns a drained wrapper batch to fill.
func (d *Device) emptyBatch() *wrapperBatch {
	if b, _ := d.empties.Get().(*wrapperBatch); b != nil {
		return b
	}
	return &wrapperBatch{ts: make([]*Task, 0, wrapperBatchLen)}
}

// freeTask releases t (releaseTask) and returns it to the pool alone; a
// manager gathers the wrappers it releases (episode.free).
func (d *Device) freeTask(t *Task, final State) {
	d.releaseTask(t, final)
	b := d.emptyBatch()
	b.ts = append(b.ts, t)
	d.pool.Put(b)
}

// releaseTask calls the owner's release function and counts t released. The
// caller returns it to the pool.
func (d *Device) releaseTask(t *Task, final State) {
	if t.state == StateReleased {
		panic("gpu: wrapper released twice: " + t.String())
	}
	if t.exec == ExecOpen {
		panic("gpu: wrapper released while its execution interval is open: " + t.String())
	}
	t.state = final
	if t.inBacklog {
		// Only a manager releases a submitted wrapper; decrement applies the run.
		d.releasedRun.add(&d.backlog, t.backlogPrio, -1)
	}
	if fn := t.onRelease; fn != nil {
		fn(t)
	}
	// The pool keeps what the wrapper points to reachable until allocTask
	// resets it, or a garbage collection empties the pool.
	t.state = StateReleased
	d.released.Add(1)
}

// Discard returns a wrapper that was never submitted (state NEW).
func (d *Device) discard(t *Task) error {
	if t.dev != d || t.state != StateNew {
		return fmt.Errorf("%w: Discard of a submitted wrapper %v", ErrMisuse, t)
	}
	d.freeTask(t, StateReleased)
	return nil
}

func (d *Device) bumpEpoch() { d.epoch.Add(1) }

// live returns the number of wrappers allocated and not released, counted or not.
func (d *Device) live() int64 {
	r := d.released.Load() // first: a release follows its allocation, so live is never negative
	return d.allocated.Load() - r
}

// linePad is a cache line (64 bytes on x86-64 and on most arm64 cores): fields before and
// after it never share one.
type linePad [64]byte

// Name returns "gpu<index>".
func (d *Device) Name() string { return d.name }

// Index returns the device's index.
func (d *Device) Index() int { return d.index }

// Info returns the backend's description.
func (d *Device) Info() DeviceInfo { return d.info }

// Streams returns every stream: stage-in, stage-out, then compute.
func (d *Device) Streams() []*Stream { return d.streams }

// StageIn returns the stage-in stream.
func (d *Device) StageIn() *Stream { return d.in }

// Compute returns compute stream k.
func (d *Device) Compute(k int) *Stream { return d.compute[k] }

// NumCompute returns the number of compute streams.
func (d *Device) NumCompute() int { return len(d.compute) }

// Outstanding returns the outstanding counter: wrappers accepted and
// not released, or -1 while another device holds the idle lock.
func (d *Device) Outstanding() int32 { return d.outstanding.Load() }

// Pending returns the number of wrappers in device.pending.
func (d *Device) pendingLen() int { return d.pending.len() }

// observeCost folds the device time of a completed ring, per member, into
// the moving average of the device time per task. The time of a ring is the
// interval since the previous exec completion, or since the ring's first
// commit when the device was idle in between: while the device is busy that
// is the inverse of its throughput, which is what the queue behind a new
// task costs it, whatever the number of rings in flight on its streams.
func (d *Device) observeCost(head *Task, n int) {
	if head.execStart == 0 {
		return
	}
	now := time.Since(d.created)
	from := max(time.Duration(d.progress.Load()), head.execStart)
	d.progress.Store(int64(now))
	per := max(int64(now-from)/int64(n), 1)
	old := d.cost.Load()
	// At most 4 times the mean per sample (see rt's choice.go): a manager that was
	// descheduled must not make the device look slow for long; a device that really is
	// slow looks so at once through Cost's stall term.
	d.cost.Store(old + (min(per, 4*old)-old)/8)
}

// Load estimates the work accepted by the device and not finished, in ns:
// outstanding wrappers times the device time per task (Cost).
func (d *Device) Load() int64 {
	n := int64(max(d.outstanding.Load(), 0))
	if n == 0 {
		return 0
	}
	return n * d.timePerTask()
}

// Cost returns the device's estimated time per task in ns: its running mean
// of the interval between completions (it starts at 10µs), or, when the
// device has been busy longer than that without completing anything, the
// time since its last completion. So a slow device looks slow before its
// first completion, not only after.
func (d *Device) timePerTask() int64 {
	c := d.cost.Load()
	if d.outstanding.Load() > 0 {
		c = max(c, int64(time.Since(d.created))-d.progress.Load())
	}
	return c
}

// inFlight returns the number of occupied event slots on all streams.
func (d *Device) inFlight() int {
	n := 0
	for _, s := range d.streams {
		n += int(s.inFlight.Load())
	}
	return n
}

// Stats is a snapshot of a device's counters.
type Stats struct {
	Outstanding  int32
	Live         int64  // wrappers allocated and not released
	Executed     uint64 // logical tasks completed by the device
	Episodes     uint64 // management episodes started
	Reservations uint64 // stage-in memory reservations attempted
	Evictions    uint64 // clean copies evicted
	WriteBacks   uint64 // w2r wrappers created
	StageOuts    uint64 // written flows copied to the host by the default stage-out
	Recalled     uint64 // dirty copies written back on request (RTDevice.Recall)
	Early        uint64 // tasks completed before their write-backs landed (Flow.Late)
	Decrements   uint64 // release steps that changed the counter
	MemUsed      int64
	MemLimit     int64
	Epoch        uint64
	// Device-to-device transfers (peer.go): copies this device made from linked
	// devices' memory; releases of peer readers of its own copies done directly under
	// its idle lock and through D2D_COMPLETE commands; peer copies reading its copies now.
	PeerCopies  uint64
	D2DDirect   uint64
	D2DCommands uint64
	PeerPins    int64
	// Transfers: copies staged in (from the host or a linked device) and their bytes; bytes
	// copied to the host (stage-outs and write-backs).
	StageIns, BytesIn, BytesOut int64
	// Hook calls that completed, and the wrappers they ran: Batched/Batches is the mean
	// batch size.
	Batches, Batched int64
	// Busy is the time managers spent in iterations that changed something, not polling
	// or waiting: Busy/Executed is the host time the manager costs per task, and a Busy
	// close to the run's time says that the manager, not the device, bounds the rate.
	Busy time.Duration
}

// Stats returns a snapshot of the device's counters.
func (d *Device) Stats() Stats {
	return Stats{
		Outstanding:  d.outstanding.Load(),
		Live:         d.live(),
		Executed:     d.stats.executed.Load(),
		Episodes:     d.stats.episodes.Load(),
		Reservations: d.stats.reservations.Load(),
		Evictions:    d.stats.evictions.Load(),
		WriteBacks:   d.stats.writeBacks.Load(),
		StageOuts:    d.stats.stageOuts.Load(),
		Recalled:     d.stats.recalled.Load(),
		Early:        d.stats.early.Load(),
		Decrements:   d.stats.decrements.Load(),
		MemUsed:      d.stats.memUsed.Load(),
		MemLimit:     d.mem.limit,
		Epoch:        d.epoch.Load(),
		PeerCopies:   d.stats.peerCopies.Load(),
		D2DDirect:    d.stats.d2dDirect.Load(),
		D2DCommands:  d.stats.d2dCommands.Load(),
		PeerPins:     d.stats.peerPins.Load(),
		StageIns:     d.stats.stageIns.Load(),
		BytesIn:      d.stats.bytesIn.Load(),
		BytesOut:     d.stats.bytesOut.Load(),
		Batches:      d.stats.batches.Load(),
		Batched:      d.stats.batched.Load(),
		Busy:         time.Duration(d.stats.busy.Load()),
	}
}

// kernel resolves a named kernel once per device; lookups after the first
// are a map read under a read lock.
func (d *Device) kernel(name string) (driver.Kernel, error) {
	d.kmu.RLock()
	k, ok := d.kernels[name]
	d.kmu.RUnlock()
	if ok {
		return k, nil
	}
	k, err := d.be.Kernel(name)
	if err != nil {
		return nil, err
	}
	d.kmu.Lock()
	if d.kernels == nil {
		d.kernels = make(map[string]driver.Kernel)
	}
	d.kernels[name] = k
	d.kmu.Unlock()
	return k, nil
}
