package rt

// CPU rings: batched CPU bodies (docs/language.md, "Batched bodies").
//
// Actors: the worker running the hook of a batch-capable CPU incarnation (Incarnation.Batch)
// and that hook, which calls Task.CollectBatch (generated code does it for batch = true, the
// body for batch = manual); the scheduler's queue the worker pops from first.
//
// Collection. Under the queue's lock, CollectBatch offers the queued tasks to the match
// callback best first (the order in which the worker would pop them): tasks of the head's
// class and taskpool waiting for the head's incarnation (or for device incarnations before
// it that no device of the Context accepts, which they would skip) are asked; the others are
// skipped without a call. Accept unlinks the candidate from the queue and links it to the
// ring's tail (through Task.next, which a running task does not use otherwise), Reject leaves
// it in place, Stop ends the scan. At most collectScan tasks are examined, so the lock is
// held for a bounded time whatever the queue holds. A panic or runtime.Goexit in the callback
// unwinds through the queue's deferred calls, which unlock it consistent with the ring (the
// taken tasks out, the others in order). Then, without the lock, each newcomer gets
// what the worker would have done before running it: Prepare (memory inputs), the
// incarnation's Evaluate (a refusal sends it back to the scheduler for its next incarnation)
// and the incarnation's Admit (flow value types); a failure there fails that task.
//
// After the hook. nil completes every member, head first, each releasing its successors and
// counted done as if it had run alone; Next sends the followers back to the scheduler for their
// next incarnation while the head goes on to its own; Again sends every member back; Async
// hands every member to the body, which completes or fails each one; an error (or a panic)
// fails the taskpool with a TaskError naming the head and the ring's size, and drops every
// member.
//
// Profiling: one span per ring, named and parametrised after the head; the dashboard lane
// shows one interval; a class that shares work with devices observes the ring's time divided
// by its size as its CPU time per task.
//
// Rejected: collecting in the worker before the hook (batch = manual could not choose
// whether and when to collect); stealing candidates from other workers' queues (a ring would
// take the work that idle thieves are about to run, and hold their locks for user callbacks);
// a ring as a slice owned by the worker (an Async body would still read it while the worker
// reuses it for the next ring).

import (
	"fmt"
	"iter"
	"runtime/debug"
	"strconv"
)

// collectScan bounds the queued tasks that one collection examines, and so how long it holds
// the queue's lock.
const collectScan = 1024

// BatchAction is what a batch-match callback answers for one candidate of a ring (a CPU
// ring here; rt/gpu calls it gpu.Action). Any other value makes the collection fail with
// ErrInvalidAction.
type BatchAction int32

// Batch-match actions.
const (
	// Accept takes the candidate out of the queue and appends it to the head's ring.
	Accept BatchAction = 0
	// Reject leaves the candidate queued; the scan goes on.
	Reject BatchAction = 1
	// Stop ends the scan; the candidate and every later one stay queued.
	Stop BatchAction = 2
)

func (a BatchAction) String() string {
	switch a {
	case Accept:
		return "ACCEPT"
	case Reject:
		return "REJECT"
	case Stop:
		return "STOP"
	}
	return "BatchAction(" + strconv.Itoa(int(a)) + ")"
}

// BatchPolicy is the batch-match callback that generated code builds for a batch-capable CPU
// body (batch_max, batch_match): it stops once the ring holds Max tasks (no bound when
// Max <= 0), and otherwise defers to User, or accepts. The collector has already skipped the
// candidates of another class, taskpool or incarnation.
type BatchPolicy struct {
	Max  int
	User func(cand, head *Task) BatchAction
}

// Match is the policy as a CollectBatch callback. A method value (p.Match) costs an
// allocation per collection; generated code passes a function that builds the policy and
// calls Match instead.
func (p BatchPolicy) Match(cand, head *Task) BatchAction {
	if p.Max > 0 && head.ringLen() >= p.Max {
		return Stop
	}
	if p.User != nil {
		return p.User(cand, head)
	}
	return Accept
}

// ringLen returns the number of tasks in the ring that t heads, t included (1 for a task that
// heads no ring). O(1).
func (t *Task) ringLen() int { return 1 + int(t.ring) }

// Ring iterates over the ring that t heads: t first, then the followers in the order they
// were collected. A batched body walks it with `for t := range task.Ring()`. The ring is valid
// while the hook runs: a body that returns Async copies the members it keeps.
func (t *Task) Ring() iter.Seq[*Task] {
	return func(yield func(*Task) bool) {
		m := t
		for n := t.ringLen(); n > 0 && m != nil; n-- {
			next := m.next
			if !yield(m) {
				return
			}
			m = next
		}
	}
}

// CollectBatch adds to t's ring ready tasks of t's class and taskpool, asking match for each
// candidate (nil accepts them all), and returns the number of followers the ring now has.
// It must be called from the hook of a batch-capable CPU incarnation (Incarnation.Batch) that
// runs t, on the hook's goroutine: otherwise it fails with ErrNotBatched, and called from
// inside match with ErrReentrantCollect. With batching off (Batching(false),
// JDF2GO_BATCHING=off) it collects nothing.
//
// match runs with the queue's lock held: it must be short, must not block and must not call
// CollectBatch. It sees each candidate's definitions and the flows its predecessors fed;
// memory inputs (collections, NEW) are bound after it accepted. A panic in match, or an
// answer other than Accept, Reject or Stop, ends the scan with an error; the tasks accepted
// until then stay in the ring. A second call collects more.
func (t *Task) CollectBatch(match func(cand, head *Task) BatchAction) (int, error) {
	w, _ := t.aux.(*worker)
	switch {
	case w == nil || w.running != t || !t.cs.tc.Incarnations[t.inc].Batch:
		return int(t.ring), fmt.Errorf("%w: %v", ErrNotBatched, t)
	case w.batch.on:
		return int(t.ring), ErrReentrantCollect
	case !w.c.cfg.batching:
		return int(t.ring), nil
	}
	return w.collect(t, match)
}

// collection is the state of the ring collection running on a worker, which the scheduler's
// queue reaches through Worker.offer.
type collection struct {
	on    bool // a scan runs (re-entrancy)
	head  *Task
	tail  *Task
	match func(cand, head *Task) BatchAction
	lo    int32 // lowest incarnation a candidate may wait for
	seen  int   // candidates examined
	err   error
}

// collect scans the scheduler for followers of head, then admits the newcomers.
func (w *worker) collect(head *Task, match func(cand, head *Task) BatchAction) (int, error) {
	incs := head.cs.tc.Incarnations
	lo := head.inc
	for lo > 0 && incs[lo-1].Kind != CPU && len(w.c.byKind[incs[lo-1].Kind]) == 0 {
		lo-- // a task waiting there skips to head.inc: no device runs that incarnation
	}
	tail := head
	for i := int32(0); i < head.ring; i++ {
		tail = tail.next
	}
	b := &w.batch
	*b = collection{on: true, head: head, tail: tail, match: match, lo: lo}
	w.scan()
	err := b.err
	*b = collection{}

	inc := &incs[head.inc]
	prev := tail
	for f := tail.next; f != nil; {
		next := f.next
		requeue, ferr := w.admit(head, inc, f)
		if !requeue && ferr == nil {
			prev = f
			f = next
			continue
		}
		prev.next = next
		f.next = nil
		head.ring--
		w.ringN--
		if ferr != nil {
			w.failTask(f, ferr)
		} else {
			w.pushOne(f)
		}
		f = next
	}
	return int(head.ring), err
}

// scan runs the collection over the scheduler's queue. A panic in the match callback ends it
// with an error: the queue's own deferred calls have left it consistent with the ring by then
// (one recover per collection, not one per candidate). The flag is cleared however it ends.
func (w *worker) scan() {
	returned := false // not recover's value: panic(nil) under GODEBUG=panicnil=1 (worker.go)
	defer func() {
		w.batch.on = false
		if !returned {
			w.batch.err = fmt.Errorf("panic in batch_match: %v\n%s", recover(), debug.Stack())
		}
	}()
	w.c.sched.collect(w)
	returned = true
}

// offer is asked by the scheduler's queue, under its lock, about each queued task c in pop
// order: Accept takes c out of the queue into the ring of the collection running on w.
func (w *worker) offer(c *Task) BatchAction {
	b := &w.batch
	if b.seen++; b.seen > collectScan {
		return Stop
	}
	h := b.head
	if c.kind != kindTask || c.cs != h.cs || c.inc < b.lo || c.inc > h.inc {
		return Reject
	}
	a := Accept
	if b.match != nil {
		a = b.match(c, h)
	}
	switch a {
	case Accept:
		b.tail.next = c
		c.next = nil
		b.tail = c
		h.ring++
		w.ringN++
		return Accept
	case Reject, Stop:
		return a
	}
	b.err = fmt.Errorf("%w: %v from the callback for %v", ErrInvalidAction, a, c)
	return Stop
}

// admit prepares a newcomer f of head's ring for incarnation inc: it runs what the worker
// would have run before the hook (Prepare, Evaluate) and the incarnation's Admit. requeue
// means that Evaluate refused it (its next incarnation is set); an error fails it.
func (w *worker) admit(head *Task, inc *Incarnation, f *Task) (requeue bool, err error) {
	f.inc = head.inc
	if !f.prepared {
		f.prepared = true
		if tc := f.cs.tc; tc.hasPrepare() {
			if err := callPrepare(tc, f); err != nil {
				return false, err
			}
		}
	}
	if inc.Evaluate != nil {
		ok, err := callEvaluate(inc.Evaluate, f)
		if err != nil {
			return false, err
		}
		if !ok {
			f.inc++
			return true, nil
		}
	}
	if inc.Admit != nil {
		if err := callHook(inc.Admit, f); err != nil {
			return false, err
		}
	}
	return false, nil
}

// unring detaches t's followers and returns the first one; the followers stay linked to one
// another.
func unring(t *Task) *Task {
	f := t.next
	t.next, t.ring = nil, 0
	return f
}

// completeRing completes t and then each of its followers.
func (w *worker) completeRing(t *Task) {
	f := unring(t)
	w.complete(t)
	for f != nil {
		next := f.next
		f.next = nil
		w.complete(f)
		f = next
	}
}

// requeueRing sends t's followers back to the scheduler to try incarnation inc next.
func (w *worker) requeueRing(t *Task, inc int32) {
	for f := unring(t); f != nil; {
		next := f.next
		f.next = nil
		f.inc = inc
		w.pushOne(f)
		f = next
	}
}

// failRing fails t's taskpool with a TaskError naming t (and the size of its ring), and
// drops every member.
func (w *worker) failRing(t *Task, err error) {
	if t.ring == 0 {
		w.failTask(t, err)
		return
	}
	tp := t.cs.tp
	tp.fail(&TaskError{Taskpool: tp.name, Task: fmt.Sprintf("%v (ring of %d)", t, t.ringLen()), Err: err})
	f := unring(t)
	w.discard(t)
	for f != nil {
		next := f.next
		w.discard(f)
		f = next
	}
}
