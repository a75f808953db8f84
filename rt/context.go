package rt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jdf2go/jdf2go/rt/profile"
)

// Context owns the workers, the scheduler, the devices' registration and the profiler. New
// starts the workers; Close stops them and is the single join point. A Context runs any number
// of taskpools at once; it is safe for concurrent use. The zero Context is not usable.
type Context struct {
	cfg     config
	sched   scheduler
	workers []*worker
	byKind  [CUDA + 1][]Device
	tracer  *profile.Tracer
	log     *slog.Logger

	wg        sync.WaitGroup
	quit      chan struct{}
	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error

	// Parking (worker.go, "Parking"). nsearch counts the workers in their stealing rounds,
	// awake and about to look at the producers' batches (dynready.go).
	nidle   atomic.Int32
	nsearch atomic.Int32
	idleMu  sync.Mutex
	idle    []*worker
	spinner atomic.Bool // a worker polls for another rank's arrival (worker.go, "Waiting for another rank")

	// Quiescence after a failure (Taskpool.Wait).
	epoch atomic.Uint64

	// parks counts the times a worker parked: unchanged between two looks with every
	// worker parked, nothing ran in between.
	parks atomic.Uint64

	// Completions and reschedules from goroutines that are not workers go through ext.
	extMu sync.Mutex
	ext   *worker

	depot depot

	// Inserting goroutines (dynready.go): their batches of ready tasks, and the helpers that
	// run tasks while an inserter waits.
	producers producers
	helpers   helpers

	// Dense dependency tables of taskpools that finished, for later ones (deps.go).
	denseMu   sync.Mutex
	denseFree []*denseTable

	mu     sync.Mutex
	tps    map[*Taskpool]struct{}
	nextTP int

	tracking     bool // a progress bar reads the workers' unpublished done counts
	progressStop chan struct{}
	progressDone chan struct{}
	progressKick chan chan struct{} // Wait asks the bar to draw now (flushProgress)

	dash *dash // nil when the dashboard is off (dashboard.go)
}

// New starts a Context with its workers. Options override JDF2GO_WORKERS, JDF2GO_SCHED and
// JDF2GO_TRACE. It fails with ErrBadOption or ErrUnknownScheduler and then starts nothing.
func New(opts ...Option) (*Context, error) {
	cfg := defaultConfig()
	if err := cfg.fromEnv(); err != nil {
		return nil, err
	}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	sched, err := newScheduler(cfg.sched, cfg.workers)
	if err != nil {
		return nil, err
	}
	c := &Context{cfg: cfg, sched: sched, log: cfg.log, quit: make(chan struct{}),
		tps: map[*Taskpool]struct{}{}, tracking: cfg.progress != nil}
	if !sched.keepsNext() {
		c.cfg.keepNext = false
	}
	for _, d := range cfg.devices {
		for k := GPU; k <= CUDA; k++ {
			if d.Accepts(k) {
				c.byKind[k] = append(c.byKind[k], d)
			}
		}
	}
	if cfg.trace != "" || cfg.profiling {
		c.tracer = profile.New()
	}
	if cfg.dashboard != "" {
		if c.dash, err = startDashboard(c); err != nil {
			return nil, err
		}
	}
	c.workers = make([]*worker, cfg.workers)
	for i := range c.workers {
		c.workers[i] = newWorker(c, i)
	}
	c.ext = newWorker(c, -1)
	c.ext.keepNext = false
	c.wg.Add(len(c.workers))
	for _, w := range c.workers {
		go w.loop()
	}
	if cfg.progress != nil {
		c.progressStop, c.progressDone = make(chan struct{}), make(chan struct{})
		c.progressKick = make(chan chan struct{})
		go c.progress(cfg.progress)
	}
	if c.dash != nil {
		for _, w := range c.workers {
			c.dash.lanes = append(c.dash.lanes, w.lane)
		}
		go c.dash.run()
	}
	return c, nil
}

// Workers returns the number of workers.
func (c *Context) Workers() int { return len(c.workers) }

// away returns the number of tasks that a device or an Async body owns (handed off, not yet
// completed, failed or rescheduled); stall detection (stall.go) needs it at zero. Each worker
// counts what it hands off and what it takes back, on its own cache line: one counter for the
// Context would be written by every submitting worker and by every device manager, for every
// task. Helpers (dynready.go) count too. The sum is exact when every worker is parked, which
// is when stall detection reads it.
func (c *Context) away() int64 {
	n := c.ext.handed.Load()
	for _, w := range c.workers {
		n += w.handed.Load()
	}
	c.helpers.each(func(w *worker) { n += w.handed.Load() })
	return n
}

// SchedulerName returns the name of the scheduler in use.
func (c *Context) SchedulerName() string { return c.sched.name() }

// Devices returns the registered devices.
func (c *Context) Devices() []Device { return c.cfg.devices }

// Tracer returns the profiler, or nil when neither Trace nor Profiling is set. Its Summary
// aggregates the recorded spans per name (per task class): count, total, mean and max time,
// nil without profiling, exact only while no taskpool is running. Devices register their
// own tracks on it (Tracer.NewTrack).
func (c *Context) Tracer() *profile.Tracer { return c.tracer }

// Close cancels the running taskpools (their Wait returns an error wrapping ErrClosed), stops
// the workers and waits for them, then writes the trace if Trace was given. A body that
// never returns keeps Close waiting. Close is idempotent and returns the trace write error.
func (c *Context) Close() error {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		c.mu.Lock()
		tps := make([]*Taskpool, 0, len(c.tps))
		for tp := range c.tps {
			tps = append(tps, tp)
		}
		c.mu.Unlock()
		for _, tp := range tps {
			tp.fail(fmt.Errorf("rt: taskpool %s: %w", tp.name, ErrClosed))
		}
		close(c.quit)
		c.wg.Wait()
		if c.progressStop != nil {
			close(c.progressStop)
			<-c.progressDone
		}
		if c.dash != nil {
			if err := c.dash.close(); err != nil {
				c.log.Warn("rt: closing the dashboard", "err", err)
			}
		}
		if c.cfg.trace != "" {
			if err := c.tracer.WriteFile(c.cfg.trace); err != nil {
				c.closeErr = fmt.Errorf("rt: writing trace: %w", err)
			}
		}
	})
	return c.closeErr
}

// forget removes a finished taskpool from the running set.
func (c *Context) forget(tp *Taskpool) {
	c.mu.Lock()
	delete(c.tps, tp)
	c.mu.Unlock()
}

// Add validates tp, enumerates its classes' execution spaces (counting the local tasks and
// measuring the parameter ranges for the keys), and schedules its startup. Errors in the
// descriptors, or a panic in generated or user code during enumeration, are returned here.
//
// Enumeration takes time in proportion to the spaces' sizes (billions of instances take
// seconds). It stops as soon as the taskpool is cancelled from another goroutine
// (Taskpool.Cancel, or a Wait whose context ends) or the Context closes, and Add then returns
// that error. To bound Add by a context:
//
//	stop := context.AfterFunc(ctx, func() { tp.Cancel(context.Cause(ctx)) })
//	err := c.Add(tp)
//	stop()
func (c *Context) Add(tp *Taskpool) error {
	if tp == nil {
		return ErrNilTaskpool
	}
	if tp.done == nil {
		return ErrZeroTaskpool
	}
	if c.closed.Load() {
		return ErrClosed
	}
	if !tp.added.CompareAndSwap(false, true) {
		return ErrAlreadyAdded
	}
	tp.ctx, tp.start = c, time.Now()
	tp.owner.Store(c)
	if err := tp.enumerate(); err != nil {
		if errors.Is(err, errWalkStopped) {
			tp.fail(fmt.Errorf("rt: taskpool %s: %w", tp.name, ErrClosed)) // unless cancelled
			<-tp.done
			return tp.err
		}
		tp.finish(err)
		return err
	}
	// Before the look at failed below: a Wait that fails tp and then finds counted unset
	// skips the scrub, and then this Add sees the failure and queues nothing.
	tp.counted.Store(true)
	if c.dash != nil {
		c.dash.addPool(tp)
	}
	c.mu.Lock()
	if c.closed.Load() {
		c.mu.Unlock()
		tp.finish(ErrClosed)
		return ErrClosed
	}
	if tp.failed.Load() {
		// Cancelled after the last look of the enumeration: fail forgot it already (under
		// c.mu), so it must not be registered now.
		c.mu.Unlock()
		<-tp.done
		return tp.err
	}
	c.tps[tp] = struct{}{}
	if tp.local {
		tp.id = -1
	} else {
		tp.id = c.nextTP
		c.nextTP++
	}
	c.mu.Unlock()
	// Add, not Store: actions added before Add (Impl.AddActions) keep holding it.
	tp.pending.Add(tp.total + 1) // the extra one is held until startup tasks are queued
	c.extMu.Lock()
	for i := range tp.cs {
		cs := &tp.cs[i]
		if cs.tc.NoStartup || cs.total == 0 {
			continue
		}
		// The parts go round-robin over the workers' queues (lfq).
		parts := int64(startupParts(cs.all, len(c.workers)))
		for part := range parts {
			c.ext.pushOne(c.ext.startupTask(cs, cs.all*part/parts, cs.all*(part+1)/parts, false))
		}
	}
	c.extMu.Unlock()
	tp.countDone(1)
	return nil
}

// quiesce returns true once no worker runs a body or a completion of tp (tp has failed, so
// none starts one): every worker that was running a task of tp when this call began has been
// seen between two tasks, parked or stopped since, and no worker holds an arrival credit on
// a record of tp; the same for helpers (dynready.go). Workers busy with other taskpools are
// not waited for. It gives up,
// returning false, when ctx ends.
func (c *Context) quiesce(ctx context.Context, tp *Taskpool) bool {
	e := c.epoch.Add(1)
	ok := true
	wait := func(w *worker) {
		for ok && (w.cur.Load() == tp && w.seen.Load() < e && !w.parked.Load() || w.credTP.Load() == tp) {
			if ctx.Err() != nil {
				ok = false
				return
			}
			time.Sleep(20 * time.Microsecond)
		}
	}
	for _, w := range c.workers {
		wait(w)
	}
	c.helpers.each(wait)
	return ok
}

// notify follows every push: it wakes a parked worker, if any. One is enough, and keeps the
// releasing worker's cost (it may be a device's manager) to one wake-up: a worker that finds
// its task by stealing wakes one parked worker per task still queued (lfq.stealFor).
func (c *Context) notify() { c.wake(1) }

// wake wakes up to n parked workers.
func (c *Context) wake(n int) {
	for ; n > 0 && c.nidle.Load() > 0; n-- {
		c.wakeOne()
	}
}

// wakeOne unparks one idle worker, if any.
func (c *Context) wakeOne() {
	c.idleMu.Lock()
	n := len(c.idle)
	if n == 0 {
		c.idleMu.Unlock()
		return
	}
	w := c.idle[n-1]
	c.idle = c.idle[:n-1]
	c.nidle.Add(-1)
	c.idleMu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// gosched yields the processor between stealing rounds.
var gosched = runtime.Gosched
