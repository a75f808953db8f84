package gpu

// The GPU manager (docs/gpu.md, "The manager").
//
// Actors. CPU workers call Device.Submit with a wrapper. The device has
// an outstanding counter, a device-wide pending queue, and streams (stage-in,
// stage-out, compute), each with a priority FIFO and a ring of event slots.
//
// Election. Submit loops { v := counter; if v < 0 wait (another device
// holds the idle lock); CAS v -> v+1 }. The worker whose CAS moved 0 -> 1 is
// the manager; any other pushes its wrapper on device.pending *after* its
// increment and returns at once, keeping its next_task. Increment-before-
// enqueue makes the hand-off safe: the manager leaves only when its own
// decrement brings the counter to 0, so no counted wrapper can be on its
// way to the queue at that moment.
//
// Design choice. The manager is the elected worker goroutine, not a
// long-lived goroutine per device: it keeps next_task observable (
// scenarios 34 and 35), and a device without work costs no goroutine. For
// the episode the backend is made current on the goroutine's thread, and a
// ThreadBound backend (CUDA) has the goroutine locked to that thread;
// LockOSThread nests, so a worker pinned for affinity stays pinned. The
// simulated device is not thread-bound: a locked goroutine that yields
// costs two OS thread switches, which made the idle loop 20x slower. Everything the manager keeps across episodes lives on
// streams, and is handed over through the counter (an atomic, so the
// previous manager's writes happen before the next manager's reads).
// Per-episode state lives in an episode value on the manager's stack:
// after the final decrement nothing of the device may be touched, because a
// new manager may already run.
//
// Episode (transition 1). Flush the worker's next_task, emit the
// "own" start, then loop; each iteration (transition 13) is
//   1. the stage-in pass, with the wrapper just taken (if any) inserted in
//      the stage-in FIFO, its output going to this iteration's compute
//      stream (round robin, restarted at each election);
//   2. the compute pass on that stream;
//   3. the stage-out pass;
//   4. a non-blocking pop of device.pending for the next iteration: up to
//      WithPendingDrain wrappers (DefaultPendingDrain) at once, not one. With one
//      pop per iteration a submission reaches a compute FIFO only when the
//      previous one was launched, so whenever a launch costs the host more
//      than the device needs to run it (tiny kernels) the compute streams
//      never fill, nothing waits in their FIFOs, and every batch is a
//      singleton. Taking what is
//      waiting lets the stage-in pass move every wrapper that has nothing
//      to copy into this iteration's compute FIFO, where the collector
//      finds them. The bound keeps an iteration short, so that event
//      completions are still consumed promptly.
// A pass consumes at most one event completion (only the oldest slot is
// queried, so completions are consumed in record order), handles a parked
// continuation before anything else, then starts FIFO wrappers while the
// stream has room. The manager completes each task exactly once, flushes its
// next_task after each completion, and leaves when a release brings the
// counter to 0, emitting the "own" end.
//
// Hook results are handled by commitExec, event completions of
// compute streams by execDone, terminal failures by terminate
// (quiesce, clean out, release every member, one counter update).
//
// No progress. A ring whose hook keeps returning AGAIN or NEXT fails with
// ErrNoProgress after WithRetryLimit results in a row. The count is the
// head's; it restarts when the device released a wrapper since the head's
// last result, or when an event slot holds work that moves the device
// forward (a copy, a DONE ring). A parked retry (an AGAIN ring, a stage-in
// waiting for memory) is not such work. Rejected: restarting on any occupied
// slot, because two rings returning AGAIN each see the other parked, restart
// each other's count, and spin forever; a device-wide count, because one
// ring's retries would then fail a ring that just arrived.
// D2D_COMPLETE commands from linked devices (peer.go) go from device.pending
// straight to the stage-out FIFO, where the manager does their bookkeeping
// and releases them (transitions 2 and 11); so do RECALL requests, whose
// write-backs run there (recall.go).

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"time"
)

// Submit hands the wrapper t to the device. It returns nil once the device
// owns t: at once when another worker manages the device, or at the end of
// the management episode that t's submission started. In the latter case it
// returns an error wrapping ErrTaskFailed or ErrDeviceDisabled when a task
// failed terminally during the episode (the failed tasks were already
// cleaned out through the Completer), and the context's error when ctx was
// cancelled, which abandons the device.
//
// w is the calling worker (nil for a goroutine that has no next_task). A
// wrapper is submitted once; after Submit it belongs to the device until its
// release function runs.
func (d *Device) Submit(ctx context.Context, w Worker, t *Task) error {
	if t.dev != d || t.state != StateNew || !t.IsSingleton() {
		return fmt.Errorf("%w: submit of %v, which is not a new wrapper of %s", ErrMisuse, t, d.name)
	}
	if t.kind == KindKernel && (t.inc == nil || t.inc.Submit == nil || t.ec == nil) {
		return fmt.Errorf("%w: wrapper without a logical task or a submit hook", ErrMisuse)
	}
	t.resetFlowState()
	d.hintCopies(t)
	return d.enqueue(ctx, w, []*Task{t})
}

// enqueue counts the new wrappers ts in one step and hands them to the
// device: when the count started from 0, the caller manages the device with
// the first one, and the others go to device.pending. When it fails before
// counting, the wrappers are still the caller's (not counted).
func (d *Device) enqueue(ctx context.Context, w Worker, ts []*Task) error {
	won, err := d.enter(ctx, int32(len(ts)))
	if err != nil {
		return err
	}
	first := ts[0]
	if won {
		ts = ts[1:]
	}
	for _, t := range ts {
		t.counted = true
		t.state = StateDevPending
		d.pending.push(t)
	}
	if !won {
		return nil
	}
	first.counted = true
	first.state = StateSubmitting
	return d.manage(ctx, w, first)
}

// enter adds n wrappers to the counter, waiting while another device holds
// the idle lock, and reports whether the addition started from 0: then the
// caller is the manager.
func (d *Device) enter(ctx context.Context, n int32) (bool, error) {
	for spins := 0; ; spins++ {
		if d.closed.Load() || d.abandoned.Load() {
			return false, fmt.Errorf("%w: %s", ErrClosed, d.name)
		}
		v := d.outstanding.Load()
		if v < 0 {
			if err := ctx.Err(); err != nil {
				return false, err
			}
			defaultBackoff(spins)
			continue
		}
		if d.outstanding.CompareAndSwap(v, v+n) {
			return v == 0, nil
		}
	}
}

// episode is one management episode. It lives on the manager's stack.
type episode struct {
	d    *Device
	ctx  context.Context
	w    Worker
	rr   int  // compute-stream rotation, local to the episode
	left bool // the counter reached 0: touch nothing more
	err  error
	// While deferring, releases add to owed instead of updating the counter;
	// settle subtracts them in one step (k wrappers released at once),
	// so a stage-out pass that completes many tasks touches the counter,
	// which every submitting worker also updates, once.
	deferring bool
	owed      int32
	warmed    uint64        // the sum warm computes; nothing reads it
	freed     *wrapperBatch // released wrappers not yet back in the pool (free)
	staged    []*Task       // stage-ins completed in this pass (stageInDone)
	executed  uint64        // tasks completed and not yet in the device's count (countExecuted)
}

func (d *Device) manage(ctx context.Context, w Worker, first *Task) error {
	ep := &episode{d: d, ctx: ctx, w: w}
	d.stats.episodes.Add(1)
	d.progress.Store(int64(time.Since(d.created)))
	if w != nil {
		w.FlushNextTask()
	}
	var ownStart int64
	if d.prof != nil {
		ownStart = d.prof.Now()
	}
	if d.info.ThreadBound {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	ep.setCurrent()
	if !ep.loop(first) {
		return ep.err
	}
	if d.prof != nil {
		// On the worker's own track: the device's tracks may already have
		// a new manager writing them.
		d.prof.Own(w, d, ownStart, d.prof.Now())
	}
	return ep.err
}

// setCurrent makes the backend current on the manager's thread.
func (ep *episode) setCurrent() {
	d := ep.d
	if err := d.be.SetCurrent(); err != nil {
		// Every backend call of the episode will fail in turn and fail its
		// wrapper; nothing is stranded.
		ep.setErr(fmt.Errorf("%w: set current device %s: %w", ErrTaskFailed, d.name, err))
	}
}

// loop runs manager iterations, starting with first (if not nil), until the
// episode is over (true) or ctx ended and the device was abandoned (false).
func (ep *episode) loop(first *Task) bool {
	d, ctx := ep.d, ep.ctx
	// The buffer for what each iteration takes from device.pending comes
	// from a pool: episodes can be short and many (the counter drains
	// whenever submissions pause), and the pool is safe to use after the
	// final decrement, when nothing of the device may be touched.
	buf := d.takenPool.Get().(*[]*Task)
	defer d.takenPool.Put(buf)
	next := (*buf)[:0]
	if first != nil {
		next = append(next, first)
	}
	defer func() { *buf = next[:0] }()
	for idle, polls := 0, 0; ; {
		start := time.Now()
		progress := ep.iterate(next)
		if progress {
			// An atomic: safe to add to after the final decrement too.
			d.stats.busy.Add(int64(time.Since(start)))
		}
		clear(next)
		if ep.left {
			ep.flushFreed()
			break
		}
		next = d.pending.tryPopN(next[:0], d.pendingDrain)
		if len(next) > 0 || progress {
			idle = 0
			continue
		}
		// Nothing to do now: the wrappers released so far go back to the
		// pool, where the submitting workers can reuse them meanwhile.
		ep.flushFreed()
		if err := ctx.Err(); err != nil {
			d.abandoned.Store(true)
			ep.setErr(err)
			d.log.Error("gpu: manager abandoned the device", "device", d.name, "outstanding", d.outstanding.Load(), "err", err)
			return false
		}
		// With events in flight a completion is due soon: keep polling, as
		// a GPU manager does, and count idleness only when nothing is in
		// flight (then the device waits for submissions or memory). A
		// thread-bound manager yields only every boundPollsPerYield-th poll:
		// its goroutine is locked to its thread, so a yield puts the thread
		// to sleep and wakes it again, which takes longer than most waits
		// for an event, and the yields of busy workers queue it behind them.
		if d.inFlight() > 0 {
			if polls++; !d.info.ThreadBound || polls%boundPollsPerYield == 0 {
				d.backoff(0)
			}
			continue
		}
		d.backoff(idle)
		idle++
	}
	return true
}

// boundPollsPerYield is how many polls of in-flight events a thread-bound
// manager makes per yield: enough to make the yields' cost small against the
// polls, few enough that a goroutine waiting for the manager's processor
// still gets it soon.
const boundPollsPerYield = 64

func (ep *episode) setErr(err error) {
	if ep.err == nil {
		ep.err = err
	}
}

// iterate runs one manager iteration (transition 13) with the wrappers
// taken from device.pending since the last one, and reports whether anything
// changed.
func (ep *episode) iterate(taken []*Task) bool {
	d := ep.d
	exec := d.compute[ep.rr]
	ep.rr = (ep.rr + 1) % len(d.compute)
	progress := len(taken) > 0
	ep.warm(taken)
	epoch := d.epoch.Load()
	in := &d.in.fifo
	in.mu.Lock() // once for all: only the manager and its hooks take it
	for _, nw := range taken {
		// transition 2: re-singleton, force one reservation attempt. A
		// D2D_COMPLETE command skips to the stage-out FIFO.
		nw.makeSingleton()
		if nw.kind == KindD2DComplete || nw.kind == KindRecall {
			d.out.fifo.push(nw, StateOutQ)
			continue
		}
		if nw.kind == KindKernel {
			nw.inBacklog, nw.backlogPrio = true, nw.priority
			d.takenRun.add(&d.backlog, nw.priority, 1)
		}
		nw.dataEpoch = epoch - 1
		nw.lastStatus, nw.continuation = Done, false
		nw.state = StateInQ
		in.insert(nw)
	}
	in.mu.Unlock()
	d.takenRun.flush(&d.backlog)
	if ep.stageInPass(exec) {
		progress = true
	}
	if ep.left {
		return progress
	}
	if ep.computePass(exec) {
		progress = true
	}
	if ep.left {
		return progress
	}
	if ep.stageOutPass() {
		progress = true
	}
	if !ep.left {
		ep.countExecuted()
	}
	return progress
}

// countExecuted adds the tasks completed since the last call to the
// device's count: once per pass and before each counter update rather than
// an atomic addition per task.
func (ep *episode) countExecuted() {
	if ep.executed > 0 {
		ep.d.stats.executed.Add(ep.executed)
		ep.executed = 0
	}
}

// warm loads, for every wrapper taken from device.pending, what its stage-in
// reads first: its flows and flow states, its logical task's priority, each
// datum's host version and the device copy its submitter looked up. Workers
// on other cores wrote most of it, and the device copy was last used long
// ago, so nearly every load misses the manager's caches. Made here, in one
// loop whose loads do not depend on one another from wrapper to wrapper, the
// misses overlap; otherwise each pass pays them one after another as it
// reaches each wrapper.
func (ep *episode) warm(taken []*Task) {
	var sum uint64
	for _, t := range taken {
		if t.ec != nil {
			t.ec.Priority()
		}
		for i := range t.fs {
			if data := t.flows[i].Data; data != nil {
				sum += data.HostVersion()
			}
			if c := t.fs[i].hint; c != nil {
				sum += c.version
			}
		}
	}
	// Stored, so that the compiler keeps the loads.
	ep.warmed += sum
}

// ---------------------------------------------------------------- stage-in

func (ep *episode) stageInPass(exec *Stream) bool {
	progress := ep.stageInWork(exec)
	ep.flushStaged(exec)
	return progress
}

// flushStaged queues the wrappers whose stage-in completed during the pass
// on exec's FIFO, under one lock. Counted wrappers: while there are any,
// the episode is not over, so this never touches a device that was left.
func (ep *episode) flushStaged(exec *Stream) {
	if len(ep.staged) == 0 {
		return
	}
	q := &exec.fifo
	q.mu.Lock()
	for _, w := range ep.staged {
		w.state = StateExQ
		q.insert(w)
	}
	q.mu.Unlock()
	clear(ep.staged)
	ep.staged = ep.staged[:0]
}

func (ep *episode) stageInWork(exec *Stream) bool {
	s := ep.d.in
	progress := false
	if w, err := s.poll(); w != nil {
		progress = true
		switch {
		case err != nil:
			ep.terminate(nil, w, Error, err, false)
		case w.lastStatus == Again:
			// IN_PARKED: the same wrapper retries before other FIFO work.
			progress = ep.stageIn(s, w, exec)
		default:
			ep.stageInDone(w, exec)
		}
		if ep.left {
			return progress
		}
	}
	for s.hasRoom() {
		w := s.fifo.pop()
		if w == nil {
			break
		}
		progress = true
		ep.stageIn(s, w, exec)
		if ep.left || w.lastStatus == Next {
			break
		}
	}
	return progress
}

// stageIn attempts the stage-in of w (transition 3). It reports false
// when nothing changed: a retry blocked on an unchanged epoch.
func (ep *episode) stageIn(s *Stream, w *Task, exec *Stream) bool {
	d := ep.d
	var (
		n   int
		r   Result
		err error
	)
	progress := true
	if w.dataEpoch == d.epoch.Load() {
		r, progress = Again, false
	} else {
		at := d.epoch.Load()
		n, r, err = ep.reserveAndStage(s, w)
		if r == Again || r == Next {
			w.dataEpoch = at
		}
	}
	w.lastStatus = r
	switch r {
	case Again:
		w.state = StateInParked
		if rerr := s.record(w); rerr != nil {
			ep.terminate(s, w, Error, rerr, true)
		}
	case Done:
		if n == 0 && d.skipEmpty {
			ep.stageInDone(w, exec)
			return progress
		}
		w.state = StateInFlight
		if n > 0 {
			s.BeginStage(w, SpanStageIn)
		}
		if rerr := s.record(w); rerr != nil {
			ep.terminate(s, w, Error, rerr, true)
		}
	case Next:
		// Back to IN_Q; escalate to the eviction path (transition 3).
		s.fifo.push(w, StateInQ)
		if wb := d.newWriteBack(); wb != nil {
			d.out.fifo.push(wb, StateOutQ)
		}
	case Async:
		d.unpinAll(w)
		ep.release(w, StateReleased)
	default:
		// ERROR, and DISABLE too: terminal here, never the eviction branch.
		ep.terminate(s, w, r, err, true)
	}
	return progress
}

// reserveAndStage runs the reservation and the transfers of a stage-in.
func (ep *episode) reserveAndStage(s *Stream, w *Task) (int, Result, error) {
	d := ep.d
	if w.kind == KindPrefetch && d.prefetchSatisfied(w) {
		return 0, Async, nil
	}
	r, err := d.reserve(w)
	if r != Done {
		return 0, r, err
	}
	if w.inc != nil && w.inc.StageIn != nil {
		n, r := w.inc.StageIn(d, w, s)
		if r = r.normalize(); r != Done {
			return n, r, fmt.Errorf("custom stage-in of %v returned %v", w, r)
		}
		return n, r, nil
	}
	return d.stageInTransfers(w, s)
}

// stageInDone is the stage-in completion (transition 4).
func (ep *episode) stageInDone(w *Task, exec *Stream) {
	d := ep.d
	ep.endStage(w)
	if err := d.stageInComplete(w); err != nil {
		ep.terminate(nil, w, Error, err, false)
		return
	}
	if w.kind == KindPrefetch {
		d.unpinAll(w)
		ep.release(w, StateReleased)
		return
	}
	w.lastStatus, w.continuation = Done, false
	w.stream = exec
	ep.staged = append(ep.staged, w) // flushStaged queues it at the end of the pass
}

// ---------------------------------------------------------------- compute

func (ep *episode) computePass(s *Stream) bool {
	progress := false
	if head, err := s.poll(); head != nil {
		progress = true
		switch {
		case err != nil:
			ep.terminate(nil, head, Error, err, false)
		case head.lastStatus == Again:
			// EX_PARKED: the same ring re-enters the hook before any FIFO
			// wrapper is considered (transition 6, scenario 13). A stage
			// interval due at this event ends here; execution intervals
			// stay open.
			for x := range head.Ring() {
				ep.endStage(x)
			}
			if err := ep.cancelled(head); err != nil {
				ep.closeExec(s, head)
				ep.terminate(nil, head, Error, err, false)
				break
			}
			head.continuation = true
			ep.commitExec(s, head, ep.callHook(s, head))
		default:
			ep.execDone(s, head)
		}
		if ep.left {
			return progress
		}
	}
	for s.hasRoom() {
		w := s.fifo.pop()
		if w == nil {
			break
		}
		progress = true
		w.makeSingleton()
		w.continuation = false
		w.lastStatus = Done
		if err := ep.cancelled(w); err != nil {
			ep.terminate(nil, w, Error, err, false)
			if ep.left {
				break
			}
			continue
		}
		if stop := ep.commitExec(s, w, ep.callHook(s, w)); stop || ep.left {
			break
		}
	}
	return progress
}

// callHook runs the submit hook of head. A panicking body is an ERROR of the
// ring; the panic value and its stack (which goes through the body's source
// lines, the .jdf ones for generated code) become the cause of the cleanout.
//
// A body that calls runtime.Goexit ends the manager's goroutine (a worker,
// which rt replaces). The episode carries on in a new goroutine, without the
// worker: the ring fails with ErrGoexit there and the loop goes on.
func (ep *episode) callHook(s *Stream, head *Task) (r Result) {
	returned := false
	defer func() {
		if returned {
			return
		}
		if p := recover(); p != nil {
			head.cause = errors.Join(head.cause, fmt.Errorf("panic: %v\n%s", p, debug.Stack()))
			r = Error
			return
		}
		head.cause = errors.Join(head.cause, ErrGoexit)
		ep.w = nil
		ep.d.orphans.Add(1)
		go ep.resume(s, head)
	}()
	r = head.inc.Submit(ep.d, head, s)
	returned = true
	return r
}

// resume continues an episode whose goroutine a body ended with
// runtime.Goexit while it ran the hook of head on s.
func (ep *episode) resume(s *Stream, head *Task) {
	d := ep.d
	defer d.orphans.Done()
	d.log.Error("gpu: a body called runtime.Goexit; the manager goes on in a new goroutine", "device", d.name, "task", head.String())
	if d.info.ThreadBound {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	ep.setCurrent()
	ep.commitExec(s, head, Error)
	if !ep.left {
		ep.loop(nil)
	}
}

// cancelled returns why the owner gave up every member of the ring headed by
// head (Canceller), or nil while one member is still wanted.
func (ep *episode) cancelled(head *Task) error {
	c := ep.d.cancel
	if c == nil {
		return nil
	}
	var cause error
	for x := range head.Ring() {
		if x.kind != KindKernel {
			return nil
		}
		err := c.Cancelled(x)
		if err == nil {
			return nil
		}
		if cause == nil {
			cause = fmt.Errorf("%w: %w", ErrCancelled, err)
		}
	}
	return cause
}

// stuck counts one more AGAIN or NEXT of head and reports whether it passed
// the retry limit: the count restarts whenever the device released a wrapper
// since the last one, or has work in flight that is not a parked retry (that
// work may be what the hook waits for).
func (ep *episode) stuck(head *Task) bool {
	d := ep.d
	if d.retryLimit <= 0 {
		return false
	}
	if mark := d.stats.decrements.Load(); mark != head.retryMark || ep.working() {
		head.retryMark, head.retries = mark, 0
	}
	head.retries++
	return head.retries > d.retryLimit
}

// working reports whether an event slot holds work that moves the device
// forward: a copy or a Done ring. A parked retry (an Again ring or a stage-in
// waiting for memory) does not count: it comes back as the same retry, so
// two rings returning Again forever would otherwise keep restarting each
// other's count, and neither would ever fail.
func (ep *episode) working() bool {
	for _, s := range ep.d.streams {
		if s.inFlight.Load() == 0 {
			continue
		}
		for _, x := range s.slots {
			if x != nil && x.lastStatus != Again {
				return true
			}
		}
	}
	return false
}

// commitExec handles a hook result. It reports whether the compute
// pass must stop starting wrappers (NEXT).
func (ep *episode) commitExec(s *Stream, head *Task, r Result) bool {
	d := ep.d
	raw := r
	if r = r.normalize(); (r == Again || r == Next) && ep.stuck(head) {
		err := fmt.Errorf("%w: %v returned %v %d times in a row", ErrNoProgress, head, r, head.retries)
		if r == Next {
			// Nothing was enqueued for the ring: the followers go back to the FIFO
			// as NEXT would send them, and only the head fails.
			if rest := head.chop(); rest != nil {
				s.fifo.mu.Lock()
				s.fifo.mergeRing(rest, StateExQ)
				s.fifo.mu.Unlock()
			}
		}
		ep.closeExec(s, head)
		ep.terminate(s, head, Error, err, true)
		return false
	}
	if r == Done {
		head.retries = 0
	}
	switch r {
	case Done, Again:
		// One start per PENDING member at each commit, on the ring's lane.
		lane := -1
		for x := range head.Ring() {
			if x.exec == ExecOpen && x.execStream == s {
				lane = x.execLane
				break
			}
		}
		for x := range head.Ring() {
			if x.exec == ExecPending {
				if lane < 0 {
					lane = s.freeLane()
				}
				x.exec = ExecOpen
				s.beginExec(x, lane)
			}
			x.state = StateExFollower
		}
		head.lastStatus = r
		if head.execStart == 0 {
			head.execStart = time.Since(d.created)
		}
		if r == Again {
			head.state = StateExParked
		} else {
			head.state = StateExFlight
		}
		if err := s.record(head); err != nil {
			ep.terminate(s, head, Error, err, true)
		}
	case Next:
		// Followers back in one locked merge, then the head alone.
		rest := head.chop()
		s.fifo.mu.Lock()
		if rest != nil {
			s.fifo.mergeRing(rest, StateExQ)
		}
		head.lastStatus = Next
		head.state = StateExQ
		s.fifo.insert(head)
		s.fifo.mu.Unlock()
		return true
	case Async:
		ep.closeExec(s, head)
		for x := range head.Ring() {
			d.unpinAll(x)
		}
		ep.releaseRing(head, StateHandedOff)
	default:
		var cause error
		for x := range head.Ring() {
			if x.cause != nil {
				cause = errors.Join(cause, x.cause)
			}
		}
		if raw != r && raw < 0 {
			cause = errors.Join(cause, fmt.Errorf("the submit hook returned %v, which is no result", raw))
		}
		ep.terminate(s, head, r, cause, true)
	}
	return false
}

// execDone is the event completion of a DONE ring (transition 7).
func (ep *episode) execDone(s *Stream, head *Task) {
	d := ep.d
	r := Done
	if fn := head.completeStage; fn != nil {
		head.completeStage = nil
		r = ep.callComplete(fn, s, head)
	}
	switch r {
	case Done:
		// Stage ends first, then execution ends: the stage end due at this
		// event is never skipped (docs/gpu.md, "Profiling").
		n := 0
		for x := range head.Ring() {
			ep.endStage(x)
			n++
		}
		d.observeCost(head, n)
		d.stats.batches.Add(1)
		d.stats.batched.Add(int64(n))
		ep.closeExec(s, head)
		for x := range head.Ring() {
			x.refreshPushout()
			x.lastStatus = Done
			if x.lateOnly() && x.inc.StageOut == nil {
				ep.completeEarly(x)
			}
		}
		d.out.fifo.mu.Lock()
		d.out.fifo.mergeRing(head, StateOutQ)
		d.out.fifo.mu.Unlock()
	case Async:
		// complete_stage took the logical tasks.
		ep.closeExec(s, head)
		for x := range head.Ring() {
			d.unpinAll(x)
		}
		ep.releaseRing(head, StateHandedOff)
	case Next:
		// Give up on this device for every member (Go port).
		ep.closeExec(s, head)
		for x := range head.Ring() {
			if i := x.deviceOnlyInput(); i >= 0 {
				// Its input exists only here (kept on the device for it,
				// Flow.KeepOnDevice): off the device it would read a stale
				// host copy.
				err := fmt.Errorf("%w: %v cannot leave %s: the input of its flow %d is newer on the device than on the host",
					ErrTaskFailed, x, d.name, i)
				ep.setErr(err)
				d.cleanout(x)
				if d.comp != nil {
					d.comp.Cleanout(x, err)
				}
				continue
			}
			d.cleanout(x)
			if d.sched == nil {
				ep.setErr(fmt.Errorf("%w: NEXT from complete_stage of %v and no scheduler to take it", ErrTaskFailed, x))
				if d.comp != nil {
					d.comp.Cleanout(x, ep.err)
				}
			} else if err := d.sched.Reschedule(x); err != nil {
				ep.setErr(fmt.Errorf("%w: reschedule %v: %w", ErrTaskFailed, x, err))
			}
		}
		ep.releaseRing(head, StateHandedOff)
	default:
		ep.terminate(nil, head, r, fmt.Errorf("complete_stage of %v returned %v", head, r), false)
	}
}

func (ep *episode) callComplete(fn CompleteFn, s *Stream, head *Task) (r Result) {
	defer func() {
		if p := recover(); p != nil {
			ep.setErr(fmt.Errorf("%w: complete_stage of %v panicked: %v\n%s", ErrTaskFailed, head, p, debug.Stack()))
			r = Error
		}
	}()
	r = fn(ep.d, head, s)
	if r == Again {
		// AGAIN has no meaning at an event completion.
		return Error
	}
	return r.normalize()
}

// ---------------------------------------------------------------- stage-out

func (ep *episode) stageOutPass() bool {
	ep.deferring = true
	defer ep.settle()
	d, s := ep.d, ep.d.out
	progress := false
	if w, err := s.poll(); w != nil {
		progress = true
		ep.endStage(w)
		switch {
		case w.kind == KindWriteBack:
			if err != nil {
				d.log.Warn("gpu: write-back failed; the copies stay dirty", "device", d.name, "err", err)
			}
			d.writeBackDone(w, err == nil)
			ep.free(w, StateReleased)
		case w.kind == KindRecall:
			ep.recallLanded(w, err)
		case err != nil:
			ep.terminate(nil, w, Error, err, false)
		default:
			ep.complete(w)
		}
		if ep.left {
			return progress
		}
	}
	for s.hasRoom() {
		w := s.fifo.pop()
		if w == nil {
			break
		}
		progress = true
		var (
			n   int
			r   = Done
			err error
		)
		switch {
		case w.kind == KindD2DComplete:
			// transition 11: the bookkeeping of a linked device's peer copy.
			d.peerReleased(w.peer, w.peerCounted)
		case w.kind == KindWriteBack:
			if n, err = d.writeBackTransfers(w, s); err != nil {
				d.log.Warn("gpu: write-back failed; the copies stay dirty", "device", d.name, "err", err)
				d.writeBackDone(w, false)
				ep.free(w, StateReleased)
				continue
			}
		case w.kind == KindRecall:
			// Straight from device.pending, like a D2D_COMPLETE command (recall.go).
			if n, err = d.recallTransfers(w, s); err != nil || n == 0 {
				d.writeBackDone(w, false)
				ep.recallEnd(w, err)
				continue
			}
		case w.inc != nil && w.inc.StageOut != nil:
			for i := range w.flows {
				if w.flows[i].Access&Write != 0 && w.fs[i].copy != nil {
					d.markWritten(&w.flows[i], w.fs[i].copy)
				}
			}
			n, r = w.inc.StageOut(d, w, s)
			if r = r.normalize(); r != Done {
				err = fmt.Errorf("custom stage-out of %v returned %v", w, r)
			}
		default:
			n, r, err = d.stageOutTransfers(w, s)
		}
		if r != Done {
			ep.terminate(s, w, r, err, true)
			if ep.left {
				return progress
			}
			continue
		}
		if n == 0 && d.skipEmpty {
			ep.complete(w)
			if ep.left {
				return progress
			}
			continue
		}
		w.state = StateOutFlight
		if n > 0 {
			s.BeginStage(w, SpanStageOut)
		}
		if rerr := s.record(w); rerr != nil {
			ep.terminate(s, w, Error, rerr, true)
			if ep.left {
				return progress
			}
		}
	}
	return progress
}

// completeEarly completes w's logical task at the end of its exec stage, before
// its write-backs, all Late, are even queued: its successors read the device
// copies, so they need not wait for the host's. The written copies get their
// new version now, and those due for the host are marked as being copied out,
// which keeps writers off them until the copy has landed. The Holder's hold
// keeps w's owner from finishing until complete releases it then.
func (ep *episode) completeEarly(w *Task) {
	d := ep.d
	h, ok := d.comp.(Holder)
	if !ok {
		return
	}
	for i := range w.flows {
		if c := w.fs[i].copy; c != nil && w.flows[i].Access&Write != 0 {
			d.markWritten(&w.flows[i], c)
			if w.pushout&(1<<i) != 0 {
				c.transfer = xferOut
			}
		}
	}
	w.hold = h.Hold(w)
	w.earlyID = w.traceID()
	if err := d.comp.Complete(ep.w, w); err != nil {
		ep.setErr(fmt.Errorf("%w: completion of %v: %w", ErrTaskFailed, w.earlyID, err))
	}
	w.early, w.ec = true, nil
	if ep.w != nil {
		ep.w.FlushNextTask()
	}
	ep.executed++
	d.stats.early.Add(1)
}

// complete is COMPLETING (transition 10): epilog, completion exactly
// once, next_task flush, release. A D2D_COMPLETE command has no logical task:
// it is only released (transition 11).
func (ep *episode) complete(w *Task) {
	d := ep.d
	if w.kind == KindD2DComplete {
		ep.release(w, StateReleased)
		return
	}
	w.state = StateCompleting
	d.epilog(w)
	if w.early {
		w.hold.Release(nil)
		ep.release(w, StateReleased)
		return
	}
	if d.comp != nil {
		if err := d.comp.Complete(ep.w, w); err != nil {
			ep.setErr(fmt.Errorf("%w: completion of %v: %w", ErrTaskFailed, w, err))
		}
	}
	if ep.w != nil {
		ep.w.FlushNextTask()
	}
	ep.executed++
	ep.release(w, StateReleased)
}

// ---------------------------------------------------------------- failures

// terminate is the terminal path for the ring headed by head, which
// failed with r on stream s: quiesce s when the failure happened while
// submitting, clean out every kernel member, release every member with one
// counter update. s is nil when the failure was seen at an event completion.
func (ep *episode) terminate(s *Stream, head *Task, r Result, cause error, quiesce bool) {
	d := ep.d
	if r != Disable {
		r = Error
	}
	head.lastStatus = r
	if quiesce && s != nil {
		if err := ep.quiesce(s); err != nil {
			r = Error
			cause = errors.Join(cause, err)
		}
	}
	sentinel := ErrTaskFailed
	if r == Disable {
		sentinel = ErrDeviceDisabled
	}
	var err error
	if cause != nil {
		err = fmt.Errorf("%w: %v on %s: %w", sentinel, head, d.name, cause)
	} else {
		err = fmt.Errorf("%w: %v on %s returned %v", sentinel, head, d.name, r)
	}
	ep.setErr(err)
	for x := range head.Ring() {
		ep.endStage(x)
		if x.exec == ExecOpen {
			x.exec = ExecClosed
			endExec(x)
		}
		if x.kind == KindWriteBack {
			d.writeBackDone(x, false)
			continue
		}
		if x.kind == KindRecall {
			d.writeBackDone(x, false)
			done := x.recalled
			x.recalled = nil
			done(err)
			continue
		}
		d.cleanout(x)
		switch {
		case x.early:
			// Completed already: its owner learns that the result never
			// reached the host.
			x.hold.Release(err)
		case d.comp != nil && x.kind == KindKernel:
			d.comp.Cleanout(x, err)
		}
	}
	ep.releaseRing(head, StateFailed)
}

// quiesce waits until everything enqueued on s so far has run (terminal path, step 2).
func (ep *episode) quiesce(s *Stream) error {
	slot := s.quiesceSlot()
	if err := s.be.Record(slot); err != nil {
		return fmt.Errorf("gpu: quiesce %s: %w", s.name, err)
	}
	for idle := 0; ; idle++ {
		done, err := s.be.Query(slot)
		if err != nil {
			return fmt.Errorf("gpu: quiesce %s: %w", s.name, err)
		}
		if done {
			return nil
		}
		if err := ep.ctx.Err(); err != nil {
			return err
		}
		ep.d.backoff(idle)
	}
}

// ---------------------------------------------------------------- profiling

// endStage emits the end of w's pending stage interval, if any.
func (ep *episode) endStage(w *Task) {
	if !w.stage.pending {
		return
	}
	w.stage.pending = false
	s := w.stage.stream
	s.laneOpen[w.stage.lane]--
	ep.d.prof.End(s.tracks[w.stage.lane], w.stage.name, w)
}

// closeExec emits one end for every OPEN member of the ring.
func (ep *episode) closeExec(s *Stream, head *Task) {
	for x := range head.Ring() {
		if x.exec == ExecOpen {
			x.exec = ExecClosed
			endExec(x)
		}
	}
}

// traceID names the wrapper's task in trace records and errors.
func (t *Task) traceID() TraceID {
	if t.early {
		return t.earlyID
	}
	if tr, ok := t.ec.(Traced); ok {
		return tr.TraceID()
	}
	if t.ec != nil {
		return TraceID{Class: fmt.Sprint(t.ec)}
	}
	return TraceID{Class: t.kind.String(), Event: uint64(t.dev.index)}
}

// ---------------------------------------------------------------- release

// release gives one wrapper back (transition 10).
func (ep *episode) release(w *Task, final State) {
	counted := w.counted
	ep.free(w, final)
	switch {
	case !counted:
	case ep.deferring:
		ep.owed++
	default:
		ep.decrement(1)
	}
}

// free releases w (Device.releaseTask) and gathers it with the wrappers the
// episode released before it, which go back to the pool together.
func (ep *episode) free(w *Task, final State) {
	d := ep.d
	d.releaseTask(w, final)
	if ep.freed == nil {
		ep.freed = d.emptyBatch()
	}
	if ep.freed.ts = append(ep.freed.ts, w); len(ep.freed.ts) == wrapperBatchLen {
		ep.flushFreed()
	}
}

// flushFreed returns the wrappers gathered by free to the pool. It is safe
// after the final decrement: the pool is safe for concurrent use, and the
// wrappers are already counted released.
func (ep *episode) flushFreed() {
	if ep.freed != nil {
		ep.d.pool.Put(ep.freed)
		ep.freed = nil
	}
}

// settle subtracts the releases owed since deferring started, and stops
// deferring; the episode may be over afterwards (ep.left).
func (ep *episode) settle() {
	n := ep.owed
	ep.deferring, ep.owed = false, 0
	ep.decrement(n)
}

// releaseRing gives every member of a ring back and subtracts their number
// from the counter in one step (ASYNC, ERROR, DISABLE).
func (ep *episode) releaseRing(head *Task, final State) {
	var n int32
	forEachChopped(head, func(x *Task) {
		if x.counted {
			n++
		}
		ep.free(x, final)
	})
	ep.decrement(n)
}

// decrement subtracts n released wrappers from the counter. When that
// empties it, the episode is over: the caller must return without touching
// the device.
func (ep *episode) decrement(n int32) {
	d := ep.d
	ep.countExecuted()
	d.releasedRun.flush(&d.backlog)
	if n == 0 {
		return
	}
	d.stats.decrements.Add(1)
	if d.counterUpdate != nil {
		d.counterUpdate(-n)
	}
	if prev := d.outstanding.Add(-n) + n; prev == n {
		ep.left = true
	} else if prev < n {
		panic(fmt.Sprintf("gpu: outstanding counter of %s went below zero (%d - %d)", d.name, prev, n))
	}
}
