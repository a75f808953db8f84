package rt

// Workers (execution streams).
//
// Actors: N workers, each a goroutine owned by the Context (locked to its OS thread, and the
// thread to a CPU, for its whole life with bindWorkers); a scheduler shared by all of them;
// goroutines that are not workers (Async bodies, device callbacks) which go through the
// Context's ext pseudo-worker under a mutex.
//
// One turn of a worker:
//  1. Take the private next_task slot if it holds a task, else pop from the scheduler (which
//     steals under lfq). Nothing found: apply the arrival credit (deps.go) and look again,
//     then flush the done count and park (below).
//  2. Drop the task if its taskpool failed. Otherwise prepare its memory inputs once, then try
//     its incarnations in order: a CPU hook runs here (panics recovered in callHook, the one
//     place rt recovers); a device incarnation is handed to Device.Submit.
//  3. On success, release: the class's Successors visits every output dependency through the
//     worker's Edges; arrivals update the dependency table (deps.go), tasks whose inputs are
//     all there become ready. The best ready successor goes into the next_task slot (unless the
//     scheduler is strict), the others to the scheduler in one batch. Past fanInline arrivals,
//     a release defers the rest to other workers (fanout.go).
//  4. Count the task done in a worker-local batch (flushed every doneBatch tasks, when the
//     worker changes taskpool and before it parks), so that no counter is touched per task by
//     every worker. The taskpool finishes when its pending count reaches zero.
//
// Parking. A worker that finds nothing tries a couple of stealing rounds (yielding in between,
// never spinning; each round also pulls an inserting goroutine's batch, dynready.go; it
// counts itself in Context.nsearch meanwhile), then appends itself to Context.idle and increments Context.nidle under
// idleMu, pops once more, and only then blocks on its wake channel. A pusher first publishes
// the task (queue mutex, or an atomic length), then loads nidle; if it is non-zero it wakes the
// most recently parked worker. Both sides use sequentially consistent operations in opposite
// orders (publish then check, announce then re-check), so either the pusher sees the sleeper
// or the sleeper's re-check sees the task: no wake-up is lost. A worker that finds work in its
// re-check removes itself from idle; a token left in its channel only causes one spurious turn.
//
// Waiting for another rank. In a run on several ranks (Rank), a worker that ran dry often gets
// its next task from the comm goroutine a network round trip later: a chain whose tasks
// alternate between ranks has each rank idle between two of its tasks. A parked worker costs
// every such arrival a wake-up (a futex, microseconds), longer than the in-process hop
// itself. So one worker per Context, at most (Context.spinner), keeps polling the scheduler,
// yielding between polls, for up to remoteSpin before it parks. An arrival (Impl.Deliver)
// pushes the task and loads nidle as any pusher; the spinner is not in idle, so no wake-up is
// sent, and the spinner's next poll takes the task. The spinner leaves the spin before it
// announces itself in idle, so the parking protocol above is unchanged.
//
// Rejected designs: a mutex and a condition variable signalled on every push (a lock per task
// even with nobody asleep); spinning idle workers in a run on one rank (CI has 2 cores shared
// with the compiler, and no arrival comes from outside), or every idle worker of a rank (one
// poller takes an arrival as well as many, and the others' cores stay free); a goroutine per
// task (the baseline we beat).

import (
	"context"
	"fmt"
	"math/bits"
	"runtime"
	"runtime/debug"
	"runtime/trace"
	"sync/atomic"
	"time"

	"github.com/jdf2go/jdf2go/rt/profile"
)

const (
	doneBatch   = 256 // tasks counted locally before touching the taskpool's counter
	readyBatch  = 64  // ready tasks buffered before one push to the scheduler
	stealRounds = 2   // stealing rounds before parking

	// remoteSpin bounds how long the spinner of a run on several ranks polls before parking
	// ("Waiting for another rank"): the comm goroutine's own window on wakeable transports
	// (rt/ce, IdleSpin), so that neither side of an in-process hop parks while the other
	// answers.
	remoteSpin = 50 * time.Microsecond
)

// worker is one execution stream; Devices and the Remote see it as a Worker.
type worker struct {
	id       int
	c        *Context
	keepNext bool

	next *Task   // private next_task slot
	cand *Task   // best ready successor of the current release, bound for next
	buf  []*Task // other ready tasks, pushed in batches

	free []*Task // free task stack (freelist.go)

	edges Edges
	// fanL holds the locals of a deferred arrival, fanning is set while a fanout runs, and
	// one is a batch of one for the scheduler (fanout.go).
	fanL    Locals
	fanning bool
	one     [1]*Task

	doneTP *Taskpool
	doneN  int64
	// While a progress bar is drawn, the unpublished doneN of doneTP (progress.go).
	shownTP atomic.Pointer[Taskpool]
	shown   atomic.Int64

	wake      chan struct{}
	seenLocal uint64
	seen      atomic.Uint64
	parked    atomic.Bool

	// cur is the taskpool of the task this worker runs or ran last (nil inside a device's
	// Submit), so that Wait after a failure waits only for workers of its own taskpool.
	// curLocal is its unsynchronised copy, to store only on change.
	cur      atomic.Pointer[Taskpool]
	curLocal *Taskpool
	// running is the task whose user code (hook, Prepare, Evaluate) runs now, and walk the
	// startup pseudo-task being walked, with deferred the startup tasks it set aside: what
	// a body calling runtime.Goexit leaves behind (goexited).
	running  *Task
	walk     *Task
	deferred []*Task
	// walkAt is the instance the walk has reached, in walk order, and walkEnd the end of its
	// slice (handOffWalk).
	walkAt, walkEnd int64

	track *profile.Track
	lane  *lane // nil when the dashboard is off
	seq   uint32
	rng   uint32
	away  uint32 // full release batches queued on other workers (lfq.pushAway)
	// handed counts the tasks this worker handed to a device or an Async body, less those it
	// took back (completed, failed or rescheduled, whoever handed them off): Context.away.
	handed atomic.Int64
	steal  []*Task

	// batch is the ring collection running on this worker, ringN the followers of the head
	// whose batch-capable hook runs (batch.go): read after the hook, when an Async body may
	// already own the head.
	batch collection
	ringN int32

	// scratch is the memory that Task.Scratch hands to the CPU bodies this worker runs, one
	// at a time (scratch.go).
	scratch []float64

	cred arrivalCredit // gathered CTL arrivals (deps.go)
	// credTP is the taskpool of cred's record while the worker holds one: a Wait after a
	// failure scrubs the taskpool's records only once no worker holds a credit on one.
	credTP atomic.Pointer[Taskpool]
}

func newWorker(c *Context, id int) *worker {
	w := &worker{id: id, c: c, keepNext: c.cfg.keepNext, wake: make(chan struct{}, 1),
		buf: make([]*Task, 0, readyBatch), free: make([]*Task, 0, freeKeep*freeBatch), rng: uint32(id)*2654435761 + 1}
	w.edges.w = w
	if c.tracer != nil && id >= 0 {
		w.track = c.tracer.NewTrack("workers", fmt.Sprintf("worker %d", id))
	}
	if c.dash != nil && id >= 0 {
		w.lane = &lane{}
	}
	return w
}

// ID returns the worker's index in [0, Context.Workers()); -1 for the pseudo-worker that
// serves goroutines which are not workers.
func (w *worker) ID() int { return w.id }

// Context returns the worker's Context.
func (w *worker) Context() *Context { return w.c }

// Track returns the worker's profiling track (nil when profiling is off; nil tracks ignore
// calls), for spans such as a device manager's "own GPU" interval.
func (w *worker) Track() *profile.Track { return w.track }

// FlushNextTask moves the task in the private next_task slot, if any, to the shared scheduler
// so that other workers can run it, and hands off the rest of a startup walk that the worker
// is in (handOffWalk). rt/gpu calls it when this worker becomes a device manager and after
// each completion inside the manager loop (docs/gpu.md, "next_task").
func (w *worker) FlushNextTask() {
	w.handOffWalk()
	w.settleCredit()
	if t := w.next; t != nil {
		w.next = nil
		w.pushOne(t)
	}
}

// Complete finishes task t on this worker: it releases t's successors (keeping the best one
// in the next_task slot), writes back collection outputs and counts t done. For a task whose
// hook returned Async or that a device owns.
func (w *worker) Complete(t *Task) {
	w.handed.Add(-1)
	// A device manager completes tasks of every taskpool: while it releases t's successors
	// it counts as running a task of t's taskpool (quiesce).
	prev := w.curLocal
	w.setCur(t.cs.tp)
	w.complete(t)
	w.setCur(prev)
}

// Reschedule puts t, which a device or an Async body owns, back into the scheduler to try
// its incarnations from index inc on.
func (w *worker) Reschedule(t *Task, inc int) {
	w.handed.Add(-1)
	t.inc = int32(inc)
	t.next, t.ring = nil, 0 // a member or head of a ring handed to an Async body
	if _, ok := t.aux.(*worker); ok {
		t.aux = nil // a dynamic task keeps its payload
	}
	w.pushOne(t)
}

// loop is the worker goroutine.
func (w *worker) loop() {
	normal := false
	defer func() {
		if !normal {
			w.goexited() // starts the replacement, which takes over the WaitGroup count
			return
		}
		w.parked.Store(true)
		w.c.wg.Done()
	}()
	w.serve()
	w.settleCredit() // the Context closed: every taskpool failed, so this only drops it
	normal = true
}

// serve runs tasks until the Context closes.
func (w *worker) serve() {
	c := w.c
	switch c.cfg.bind {
	case "thread":
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	case "cpu":
		runtime.LockOSThread() // never unlocked: the bound thread exits with the worker
		cpus, err := allowedCPUs()
		if err == nil && len(cpus) > 0 {
			err = pinThread(cpus[w.id%len(cpus)])
		}
		if err != nil {
			c.log.Warn("rt: worker not bound to a CPU", "worker", w.id, "err", err)
		}
	}
	for !c.closed.Load() {
		t := w.take()
		if t == nil && w.cred.t != nil {
			w.settleCredit()
			t = w.take()
		}
		if t == nil {
			w.flushDone()
			if t = w.idle(); t == nil {
				return
			}
		}
		w.run(t)
	}
}

// take returns the next task visible to this worker without blocking, or nil.
func (w *worker) take() *Task {
	if t := w.next; t != nil {
		w.next = nil
		return t
	}
	return w.c.sched.pop(w)
}

// idle looks for work and parks until some is pushed; nil when the Context closes.
func (w *worker) idle() *Task {
	c := w.c
	for {
		c.nsearch.Add(1)
		for i := 0; i < stealRounds; i++ {
			if c.closed.Load() {
				c.nsearch.Add(-1)
				return nil
			}
			if t := c.sched.pop(w); t != nil {
				w.endSearch()
				return t
			}
			if t := w.pullReady(); t != nil {
				c.nsearch.Add(-1)
				return t
			}
			gosched()
		}
		if t := w.spin(); t != nil {
			w.endSearch() // the spinner was still counted as searching
			return t
		}
		c.idleMu.Lock()
		c.idle = append(c.idle, w)
		c.nidle.Add(1)
		c.idleMu.Unlock()
		c.nsearch.Add(-1) // after nidle: a producer that sees no searcher sees w parked
		t := c.sched.pop(w)
		if t == nil {
			t = w.pullReady() // after nidle: a producer's batch (dynready.go)
		}
		if t != nil {
			w.unpark()
			return t
		}
		w.parked.Store(true)
		w.setCur(nil) // a parked worker runs no taskpool, and keeps none alive
		if !w.sleep() {
			return nil
		}
		// The token may be stale: sent by a wakeOne that delisted w after w had found work on
		// its own, and read only now, with w listed again. Left listed, w would be counted
		// idle twice, and a later wakeOne would wake it instead of a parked worker.
		w.unpark()
		w.parked.Store(false)
	}
}

// endSearch ends w's stealing rounds after it found a task in the scheduler. A producer skips
// the wake-up of a parked worker while a worker searches, since the searcher will take its
// batch; w found other work instead, so if it was the last searcher and a batch waits, it
// wakes a parked worker for it. Both sides are sequentially consistent in opposite orders
// (the producer publishes its batch then reads nsearch; w decrements nsearch then reads the
// batches), so one of them sees the other.
func (w *worker) endSearch() {
	c := w.c
	if c.nsearch.Add(-1) == 0 && c.nidle.Load() > 0 && c.producersHold() {
		c.wake(1)
	}
}

// spin polls for work for up to remoteSpin when w's Context runs on several ranks and no
// other worker of it is spinning ("Waiting for another rank"); it returns the task found, or
// nil once the window has passed.
func (w *worker) spin() *Task {
	c := w.c
	if c.cfg.nranks <= 1 || !c.spinner.CompareAndSwap(false, true) {
		return nil
	}
	defer c.spinner.Store(false)
	var start time.Time
	for i := 0; ; i++ {
		if c.closed.Load() {
			return nil
		}
		if t := c.sched.pop(w); t != nil {
			return t
		}
		if t := w.pullReady(); t != nil {
			return t
		}
		// The clock is read every 16 polls: on some machines (VMs) it costs as much as one.
		if i&15 == 0 {
			if now := time.Now(); start.IsZero() {
				start = now
			} else if now.Sub(start) > remoteSpin {
				return nil
			}
		}
		gosched()
	}
}

// unpark removes w from the idle list after it found work on its own.
func (w *worker) unpark() {
	c := w.c
	c.idleMu.Lock()
	for i, x := range c.idle {
		if x == w {
			c.idle = append(c.idle[:i], c.idle[i+1:]...)
			c.nidle.Add(-1)
			break
		}
	}
	c.idleMu.Unlock()
}

// goexited runs when the worker goroutine is ending without returning: a body called
// runtime.Goexit. It fails the task that was running with ErrGoexit (and the taskpool whose
// startup walk it interrupted), requeues the startup tasks the walk had set aside, and starts a
// new goroutine on the same Worker, so the Context keeps its number of workers.
func (w *worker) goexited() {
	if t := w.running; t != nil {
		w.running = nil
		w.c.log.Error("rt: a body called runtime.Goexit; its worker is replaced", "task", t.String(), "worker", w.id)
		w.failRing(t, ErrGoexit)
	}
	if st := w.walk; st != nil {
		w.walk = nil
		tp := st.cs.tp
		tp.fail(&TaskError{Taskpool: tp.name, Task: st.String(),
			Err: fmt.Errorf("startup walk interrupted by a body of another task: %w", ErrGoexit)})
		w.freeTask(st)
	}
	w.flushReady()
	for _, t := range w.deferred {
		w.pushOne(t)
	}
	w.deferred = nil
	w.flushDone()
	w.setCur(nil)
	go w.loop()
}

// setCur records the taskpool whose task the worker runs (quiesce reads it).
func (w *worker) setCur(tp *Taskpool) {
	if w.curLocal != tp {
		w.curLocal = tp
		w.cur.Store(tp)
	}
}

// run executes one task taken from the slot or the scheduler.
func (w *worker) run(t *Task) {
	tp := t.cs.tp
	if e := w.c.epoch.Load(); e != w.seenLocal {
		w.seenLocal = e
		w.seen.Store(e)
	}
	// Published before the failed check: a Wait that set failed and then reads cur either
	// sees this worker on tp, or this worker sees the failure and drops t.
	w.setCur(tp)
	if w.doneTP != tp && w.doneTP != nil {
		w.flushDone()
	}
	if w.cred.t != nil && w.cred.src != t.cs {
		w.settleCredit()
	}
	if tp.failed.Load() {
		w.discard(t)
		return
	}
	switch t.kind {
	case kindStartup:
		w.startup(t)
		return
	case kindFanout:
		w.runFanout(t)
		return
	}
	var region *trace.Region
	if trace.IsEnabled() {
		region = trace.StartRegion(context.Background(), t.cs.tc.Name)
	}
	w.execute(t) // t may be recycled from here on
	if region != nil {
		region.End()
	}
}

// execute prepares t and tries its incarnations. t must not be touched after a hook returned
// Async or a device accepted it.
func (w *worker) execute(t *Task) {
	tc := t.cs.tc
	if !t.prepared {
		t.prepared = true
		if tc.hasPrepare() {
			w.running = t
			err := callPrepare(tc, t)
			w.running = nil
			if err != nil {
				w.failTask(t, err)
				return
			}
		}
	}
	incs := tc.Incarnations
	for int(t.inc) < len(incs) {
		inc := &incs[t.inc]
		if inc.Evaluate != nil {
			w.running = t
			ok, err := callEvaluate(inc.Evaluate, t)
			w.running = nil
			if err != nil {
				w.failTask(t, err)
				return
			}
			if !ok {
				t.inc++
				continue
			}
		}
		var res error
		n := int64(1) // tasks the incarnation ran: the ring's size for a batched CPU body
		if inc.Kind == CPU {
			// The span is recorded before the task is completed and counted, so that once
			// Wait returns every span of the taskpool is on its track.
			// With Async another goroutine may complete and recycle t before the hook
			// returns, so the span's name and parameters are read before the call.
			traced := w.track != nil && !tc.NoTrace && !inc.NoTrace
			var args [profile.MaxArgs]int64
			var nargs int
			var start int64
			if traced {
				nargs = min(len(tc.Params), profile.MaxArgs)
				for i := 0; i < nargs; i++ {
					args[i] = int64(t.l[tc.Params[i]])
				}
				start = w.c.tracer.Now()
			}
			name := t.cs.trace
			cs := t.cs
			var began time.Time
			if cs.shared {
				began = time.Now()
			}
			w.running = t
			// While the hook runs, aux names the worker for the incarnations that call
			// Scratch or CollectBatch, unless it carries the payload of a task inserted at
			// run time.
			own := (inc.Batch || inc.Scratch) && t.aux == nil
			if own {
				t.aux = w
			}
			if inc.Batch {
				w.ringN = 0
			}
			if l := w.lane; l != nil {
				l.begin(tc.Name, w.c.dash.now())
			}
			res = callHook(inc.Hook, t)
			if l := w.lane; l != nil {
				l.end(w.c.dash.now())
			}
			w.running = nil
			if inc.Batch {
				n += int64(w.ringN)
			}
			if own && res != Async {
				t.aux = nil // after Async, Reschedule or recycling clears it
			}
			if cs.shared {
				// cs, not t: after the hook t may already be recycled (Async).
				if res == nil {
					cs.observeCPU(int64(time.Since(began)) / n)
				}
				if cs.measuring.Load() { // a load: a store per task would bounce the line between cores
					cs.measuring.Store(false)
				}
			}
			if traced && res != Next {
				w.track.Span(name, start, w.c.tracer.Now(), args[:nargs]...)
			}
		} else {
			dev := w.c.choose(t, inc, int(t.inc))
			if dev == nil {
				t.inc++
				continue
			}
			// A device manager runs bodies of every taskpool for as long as its episode
			// lasts: Wait does not wait for it (device-owned tasks are excepted).
			w.setCur(nil)
			w.handed.Add(1)
			if l := w.lane; l != nil {
				l.begin(w.c.dash.devLabel[dev], w.c.dash.now())
			}
			res = dev.Submit(w, t, inc)
			if l := w.lane; l != nil {
				l.end(w.c.dash.now())
			}
			if res == nil {
				return
			}
			w.handed.Add(-1)
		}
		if n > 1 {
			switch res {
			case nil:
				w.completeRing(t)
				return
			case Next:
				w.requeueRing(t, t.inc+1)
				t.inc++
				continue
			case Again:
				w.requeueRing(t, t.inc)
				w.pushOne(t)
				return
			case Async:
				w.handed.Add(n)
				return
			}
			w.failRing(t, res)
			return
		}
		switch res {
		case nil:
			w.complete(t)
			return
		case Next:
			t.inc++
		case Again:
			w.pushOne(t)
			return
		case Async:
			w.handed.Add(1)
			return
		default:
			w.failTask(t, res)
			return
		}
	}
	w.failTask(t, ErrNoIncarnation)
}

// complete bumps the versions of written copies, releases the successors, drops t's
// references, counts it and recycles it.
func (w *worker) complete(t *Task) {
	tc, tp := t.cs.tc, t.cs.tp
	if tp.failed.Load() {
		w.discard(t)
		return
	}
	for h := t.held; h != 0; h &= h - 1 {
		if i := bits.TrailingZeros32(h); tc.Flows[i].Access.writes() {
			t.flows[i].bumpVersion()
		}
	}
	if tc.Successors != nil {
		e := &w.edges
		e.tp, e.src, e.err, e.n = tp, t, nil, 0
		callSuccessors(tc.Successors, t, e)
		e.endFanout()
		e.endLate()
		e.tp, e.src = nil, nil // nothing of a finished taskpool stays reachable from w
		if e.err != nil {
			err := e.err
			e.err = nil
			w.flushReady()
			w.failTask(t, err)
			return
		}
	}
	w.flushReady()
	if w.c.dash != nil {
		t.cs.done.Add(1)
	}
	w.countDone(tp)
	w.freeTask(t)
}

// failTask fails t's taskpool with a TaskError naming t, and drops t.
func (w *worker) failTask(t *Task, err error) {
	tp := t.cs.tp
	tp.fail(&TaskError{Taskpool: tp.name, Task: t.String(), Err: err})
	w.discard(t)
}

// discard drops a task of a failed taskpool (or a failed task) without counting it.
func (w *worker) discard(t *Task) { w.freeTask(t) }

// countDone counts one completed task of tp in the worker-local batch.
func (w *worker) countDone(tp *Taskpool) {
	if w.doneTP != tp {
		w.flushDone()
		w.doneTP = tp
		if w.c.tracking {
			w.shownTP.Store(tp)
		}
	}
	w.doneN++
	if w.doneN >= doneBatch || w.id < 0 {
		w.flushDone()
	} else if w.c.tracking {
		w.shown.Store(w.doneN)
	}
}

// flushDone publishes the local done count.
func (w *worker) flushDone() {
	if w.doneN > 0 {
		n := w.doneN
		w.doneN = 0
		if w.c.tracking {
			w.shown.Store(0) // before the publication: the bar may undercount, never overcount
		}
		w.doneTP.countDone(n)
	}
	if w.c.tracking && w.doneTP != nil {
		w.shownTP.Store(nil)
	}
	w.doneTP = nil
}

// makeReady takes a task whose inputs have all arrived: the best one of a release is kept for
// the next_task slot, the others are buffered for the scheduler.
func (w *worker) makeReady(t *Task) {
	if w.keepNext {
		if w.cand == nil {
			w.cand = t
			return
		}
		if better(t, w.cand) {
			t, w.cand = w.cand, t
		}
	}
	w.buf = append(w.buf, t)
	if len(w.buf) < cap(w.buf) {
		return
	}
	if w.fanning { // a fanout: its tasks are already spread
		w.pushBuf()
		return
	}
	// A large release: its full batches go to other workers.
	w.c.sched.pushAway(w, w.buf)
	clear(w.buf)
	w.buf = w.buf[:0]
	w.c.notify()
}

// flushReady ends a release: the candidate goes into the slot (a task already there that
// ranks lower goes to the scheduler), the buffer to the scheduler.
func (w *worker) flushReady() {
	if t := w.cand; t != nil {
		w.cand = nil
		if old := w.next; old != nil {
			if better(old, t) {
				t, old = old, t
			}
			w.buf = append(w.buf, old)
		}
		w.next = t
	}
	w.pushBuf()
}

// pushBuf hands the buffered ready tasks to the scheduler and wakes a parked worker.
func (w *worker) pushBuf() {
	if len(w.buf) == 0 {
		return
	}
	w.c.sched.pushBatch(w, w.buf)
	clear(w.buf)
	w.buf = w.buf[:0]
	w.c.notify()
}

// pushOne hands one task to the scheduler and wakes a parked worker.
func (w *worker) pushOne(t *Task) {
	w.c.sched.push(w, t)
	w.c.notify()
}

// better orders ready tasks: high-priority classes first, then higher priority.
func better(a, b *Task) bool {
	ah, bh := a.hi, b.hi
	if ah != bh {
		return ah
	}
	return a.prio > b.prio
}

// The call* functions below run user code and turn a panic into an error carrying the
// stack. Each decides by a flag set after the call returned, not by recover's value: under
// GODEBUG=panicnil=1, panic(nil) recovers as nil, and a caller that looked only at the value
// would take the panic for a normal return (and count the task done). A call that ended in
// runtime.Goexit also arrives with the flag unset; its goroutine ends anyway (goexited).

// callHook runs a CPU hook; a panic becomes an error carrying the stack.
func callHook(h func(*Task) error, t *Task) (err error) {
	returned := false
	defer func() {
		if !returned {
			err = fmt.Errorf("panic: %v\n%s", recover(), debug.Stack())
		}
	}()
	err = h(t)
	returned = true
	return err
}

// callSuccessors runs the generated successor iteration, which evaluates user guards; a
// panic there fails the taskpool like a panic in a body.
func callSuccessors(f func(*Taskpool, *Locals, FlowMask, *Edges), t *Task, e *Edges) {
	returned := false
	defer func() {
		if !returned {
			e.err = fmt.Errorf("panic releasing successors: %v\n%s", recover(), debug.Stack())
		}
	}()
	f(t.cs.tp, &t.l, AllFlows, e)
	returned = true
}

// callPrepare runs the input preparation of t's class, which evaluates user guards and can
// panic.
func callPrepare(tc *TaskClass, t *Task) (err error) {
	returned := false
	defer func() {
		if !returned {
			err = fmt.Errorf("panic: %v\n%s", recover(), debug.Stack())
		}
	}()
	err = tc.prepare(t)
	returned = true
	return err
}

// callEvaluate runs an incarnation's evaluate function: ok when it accepts the task, an
// error (its own, or its panic's) when it fails it.
func callEvaluate(f func(*Task) error, t *Task) (ok bool, err error) {
	returned := false
	defer func() {
		if !returned {
			err = fmt.Errorf("panic in evaluate: %v\n%s", recover(), debug.Stack())
		}
	}()
	err = f(t)
	returned = true
	switch err {
	case nil:
		return true, nil
	case Next:
		return false, nil
	default:
		return false, fmt.Errorf("evaluate: %w", err)
	}
}
