package rt

// Inserting goroutines: batches of ready tasks, and running tasks while the inserter waits.
//
// Actors: one inserting goroutine per Producer at a time (the implementer serialises its calls,
// rt/dynamic under its insertion lock); workers, which pull a producer's batch when they run
// out of work; a waiting inserter, which runs ready tasks of its taskpool through Help.
//
// Batches. Impl.Schedule takes the ext lock and a queue lock for every task. A Producer
// instead fills tasks from a free stack of its own into a batch, and pushes the batch to the
// scheduler in one call when it holds readyBatch tasks, when the implementer flushes it, or
// when a worker is parked and none is searching (Context.nsearch: a searching worker takes the
// batch itself, or wakes a parked one for it when it finds other work, worker.endSearch). A
// batch that is not full stays in the producer while every worker is busy, and workers find
// it there: a worker that finds nothing in the scheduler pulls the
// batches of the Context's producers (pullReady) in each stealing round and once more after it
// announced itself idle, before it blocks. The producer publishes its length (n) before it
// reads nidle; the worker increments nidle before it reads n: with both sequentially
// consistent, either the producer sees the parked worker and pushes, or that worker sees the
// batch and takes it. So a ready task never waits in a batch while a worker sleeps, however
// long the inserting goroutine stays away (a body that waits for it cannot starve), and while
// every worker is busy the inserter pays neither a queue lock nor a wake-up per task.
//
// Helping. An inserting goroutine that must wait (rt/dynamic's full window) may run ready
// tasks meanwhile with Impl.Help, on a pseudo-worker of its own (a helper, id -1) that the Context
// counts as a worker for quiescence and for the tasks it hands to Async bodies. A helper takes
// only what it can run without becoming something else: tasks of its taskpool, made by
// Impl.Schedule or Impl.Ready, whose remaining incarnations are all CPU hooks (a device's Submit
// could keep it as the device's manager), found at the head of a scheduler queue (popIf; it
// never takes another worker's next_task slot, and never reorders a queue). Like a worker, it
// keeps the best successor of a release in a next_task slot of its own and runs it next; when
// Help returns, that slot goes to the scheduler, so nothing of the taskpool stays with the
// helper. The caller must hold no lock that a body may take, and
// must not call Help from a body.
//
// Rejected designs: a timer that flushes a producer's batch after some microseconds (a task
// ready at insertion would wait for it whenever the inserter turned to other work; and a
// timer per batch); pushing every task and waking a worker per task (the cost measured
// before); a helper that pops any task and puts back those it cannot run (it reorders the
// queues, and can pop the same task forever); letting a helper run tasks of other taskpools
// (their bodies could wait for the inserter's own graph).

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Producer makes tasks of classes added with AddClass ready in batches, for an inserting
// goroutine that is not a worker (the protocol at the top of rt/dynready.go). Its methods
// must not be called concurrently; Close it when nothing more will be inserted.
type Producer struct {
	tp *Taskpool
	mu sync.Mutex // guards w and ts against a worker pulling the batch
	w  *worker    // a free stack of its own
	ts []*Task
	n  atomic.Int32 // len(ts), published for idle workers

	// The class of the previous Ready and its state: programs insert runs of one class.
	lastTC *TaskClass
	lastCS *classState
}

// producers is a Context's set of open producers; copied on write, read by idle workers
// without a lock.
type producers struct {
	mu   sync.Mutex
	list atomic.Pointer[[]*Producer]
}

// newProducer returns a Producer for tp's classes added at run time.
func (tp *Taskpool) newProducer() *Producer {
	c := tp.ctx
	p := &Producer{tp: tp, w: newWorker(c, -1), ts: make([]*Task, 0, readyBatch)}
	p.w.keepNext = false
	ps := &c.producers
	ps.mu.Lock()
	var list []*Producer
	if l := ps.list.Load(); l != nil {
		list = *l
	}
	next := append(list[:len(list):len(list)], p)
	ps.list.Store(&next)
	ps.mu.Unlock()
	return p
}

// Ready makes a task of tc ready as Schedule does, in the producer's batch. It returns the
// taskpool's error once the taskpool has failed, and the task is then dropped.
func (p *Producer) Ready(tc *TaskClass, l *Locals, prio int32, payload any) error {
	tp := p.tp
	cs := p.lastCS
	if tc != p.lastTC || cs == nil {
		var err error
		if cs, err = tp.readyState(tc); err != nil {
			return err
		}
		p.lastTC, p.lastCS = tc, cs
	} else if tp.failed.Load() {
		if err := tp.Err(); err != nil {
			return err
		}
	}
	c := tp.ctx
	p.mu.Lock()
	t := p.w.newTask()
	t.fillDynamic(cs, l, prio, payload)
	p.ts = append(p.ts, t)
	n := len(p.ts)
	p.n.Store(int32(n))
	// A parked worker is woken only when no worker searches: a searcher takes the batch
	// itself (pullReady), or wakes a parked worker for it if it finds other work
	// (worker.endSearch). Waking one per task while a single worker keeps up with the
	// inserter would cost a futex call per task, and the woken worker would find nothing.
	if n >= readyBatch || c.nidle.Load() > 0 && c.nsearch.Load() == 0 {
		p.pushLocked()
	}
	p.mu.Unlock()
	return nil
}

// Flush pushes the batch to the scheduler.
func (p *Producer) Flush() {
	if p.n.Load() == 0 {
		return
	}
	p.mu.Lock()
	p.pushLocked()
	p.mu.Unlock()
}

// pushLocked pushes the batch and wakes a worker; p.mu is held.
func (p *Producer) pushLocked() {
	if len(p.ts) == 0 {
		return
	}
	c := p.tp.ctx
	c.sched.pushBatch(p.w, p.ts)
	clear(p.ts)
	p.ts = p.ts[:0]
	p.n.Store(0)
	c.notify()
}

// Close pushes what is left in the batch and removes the producer from its Context.
func (p *Producer) Close() {
	p.Flush()
	ps := &p.tp.ctx.producers
	ps.mu.Lock()
	if l := ps.list.Load(); l != nil {
		next := make([]*Producer, 0, len(*l))
		for _, q := range *l {
			if q != p {
				next = append(next, q)
			}
		}
		ps.list.Store(&next)
	}
	ps.mu.Unlock()
}

// producersHold reports whether a producer's batch holds tasks.
func (c *Context) producersHold() bool {
	if l := c.producers.list.Load(); l != nil {
		for _, p := range *l {
			if p.n.Load() > 0 {
				return true
			}
		}
	}
	return false
}

// pullReady takes the batch of a producer, if one holds tasks: it returns the first task and
// queues the others on w, waking parked workers for them.
func (w *worker) pullReady() *Task {
	l := w.c.producers.list.Load()
	if l == nil {
		return nil
	}
	for _, p := range *l {
		if p.n.Load() == 0 {
			continue
		}
		p.mu.Lock()
		ts := p.ts
		if len(ts) == 0 {
			p.mu.Unlock()
			continue
		}
		t := ts[0]
		if len(ts) > 1 {
			w.c.sched.pushBatch(w, ts[1:])
		}
		clear(ts)
		p.ts = ts[:0]
		p.n.Store(0)
		p.mu.Unlock()
		if len(ts) > 1 {
			w.c.wake(len(ts) - 1)
		}
		return t
	}
	return nil
}

// helpers is a Context's set of helper pseudo-workers, those helping now and the idle ones.
type helpers struct {
	mu   sync.Mutex
	all  []*worker
	free []*worker
}

// each calls f for every helper.
func (h *helpers) each(f func(w *worker)) {
	h.mu.Lock()
	all := h.all
	h.mu.Unlock()
	for _, w := range all {
		f(w)
	}
}

// help runs ready tasks of tp on the calling goroutine, which is not a worker, until stop
// reports true, tp has finished or failed, or no task it may run is ready at the head of a
// scheduler queue (the protocol at the top of rt/dynready.go). It returns the number of
// tasks it ran. The caller holds no lock that a body may take, and is not itself running a
// body. stop is called before each task.
func (tp *Taskpool) help(stop func() bool) int {
	c := tp.ctx
	hs := &c.helpers
	hs.mu.Lock()
	var w *worker
	if n := len(hs.free); n > 0 {
		w = hs.free[n-1]
		hs.free = hs.free[:n-1]
	} else {
		w = newWorker(c, -1) // with a next_task slot, as the scheduler allows
		w.parked.Store(true)
		if c.tracer != nil {
			w.track = c.tracer.NewTrack("workers", fmt.Sprintf("inserter %d", len(hs.all)))
		}
		hs.all = append(hs.all[:len(hs.all):len(hs.all)], w)
	}
	hs.mu.Unlock()

	ran := 0
	normal := false
	defer func() {
		if !normal { // a body called runtime.Goexit on the caller's goroutine
			if t := w.running; t != nil {
				w.running = nil
				w.failRing(t, ErrGoexit)
			}
			w.flushReady()
		}
		if t := w.next; t != nil { // nothing of the taskpool stays with the helper
			w.next = nil
			w.pushOne(t)
		}
		w.flushDone()
		w.setCur(nil)
		w.parked.Store(true)
		hs.mu.Lock()
		hs.free = append(hs.free, w)
		hs.mu.Unlock()
	}()
	w.parked.Store(false)
	ok := func(t *Task) bool { return helpable(t, tp) }
	for !tp.isDone() && !stop() {
		t := w.next
		if t != nil {
			w.next = nil
			if !ok(t) {
				w.pushOne(t)
				t = nil
			}
		}
		if t == nil {
			if t = c.sched.popIf(w, ok); t == nil {
				break
			}
		}
		w.run(t)
		ran++
	}
	normal = true
	return ran
}

// helpable reports whether a helper of tp may run t: a task of tp made by Schedule or
// Impl.Ready whose incarnations from its current one on are CPU hooks.
func helpable(t *Task, tp *Taskpool) bool {
	if t.kind != kindTask || t.cs.tp != tp || tp.dynState(t.cs.tc) == nil {
		return false
	}
	for _, inc := range t.cs.tc.Incarnations[t.inc:] {
		if inc.Kind != CPU || inc.Batch {
			return false
		}
	}
	return true
}
