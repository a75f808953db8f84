package rt

// Schedulers.
//
// Actors: workers push the tasks that become ready and pop the next one; the ext pseudo-worker
// (id -1) pushes on behalf of goroutines that are not workers. Every scheduler is reachable
// only through the scheduler interface; workers never look inside.
//
//   - lfq (default): one priority queue per worker behind its own mutex. A worker pushes to
//     and pops from its own heap; when it is empty it steals about half of a victim's best
//     tasks (victims visited round-robin from a random start), keeps one and pushes the rest
//     into its own heap. An atomic length per queue lets pop skip empty queues without
//     locking. External pushes go round-robin over the queues, and so do the full batches
//     of a release larger than one batch (pushAway).
//   - ap: one global priority queue: strict highest-priority-first, FIFO among equals. The workers'
//     next_task slots are disabled, since a private task would overtake the global order.
//   - gd: one global FIFO; priorities are ignored except that high_priority classes go to
//     the front. The simple baseline.
//
// Rejected: a lock-free Chase-Lev deque for lfq (it orders by push time, not by priority);
// a single global queue for lfq (one contended lock per task on 16 cores).

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// scheduler is the interface between workers and a scheduling policy. All methods are safe
// for concurrent use; w identifies the calling worker (w.id < 0 for the pseudo-worker).
type scheduler interface {
	name() string
	push(w *worker, t *Task)
	pushBatch(w *worker, ts []*Task)
	// pushAway queues a full batch of a large release where other workers find it first.
	pushAway(w *worker, ts []*Task)
	// pop returns a task for w, stealing if the policy does, or nil when none is visible.
	pop(w *worker) *Task
	// popIf pops the task at the head of a queue (the best one there) if ok accepts it, and
	// returns nil when no queue's head is accepted; for a helper (dynready.go), so it never
	// steals half a queue and never takes a task out of order.
	popIf(w *worker, ok func(*Task) bool) *Task
	// collect offers w.offer, best first and under the queue's lock, the tasks queued where w
	// pops first (its own queue for lfq, the global queue otherwise), removing those it
	// accepts, until it answers Stop or none is left (a CPU ring, batch.go).
	collect(w *worker)
	// backlog estimates the tasks waiting where w pushes (throttles the startup walk).
	backlog(w *worker) int
	// keepsNext reports whether workers may keep a private next_task.
	keepsNext() bool
}

func newScheduler(name string, workers int) (scheduler, error) {
	switch name {
	case "lfq":
		s := &lfq{qs: make([]localQueue, workers)}
		return s, nil
	case "ap":
		return &global{nm: "ap", q: &apQueue{}}, nil
	case "gd":
		return &global{nm: "gd", keep: true, q: &gdQueue{}}, nil
	}
	return nil, fmt.Errorf("%w: %q (want lfq, ap or gd)", ErrUnknownScheduler, name)
}

// lfq: per-worker priority queues with stealing.
type lfq struct {
	qs []localQueue
	rr atomic.Uint32
}

// localQueue is one worker's queue. Thieves poll n of every queue, so n lies in another
// aligned pair of cache lines than mu and h (processors fetch lines in pairs): a poll would
// otherwise pull the owner's lock away between its lock and its unlock.
type localQueue struct {
	mu sync.Mutex
	h  prioQueue
	_  [56]byte // mu and h take 72 bytes: n starts the second pair of lines
	n  atomic.Int32
	_  [124]byte // 256 bytes in all: neighbouring queues never share a pair of lines
}

func (s *lfq) name() string    { return "lfq" }
func (s *lfq) keepsNext() bool { return true }

func (s *lfq) home(w *worker) *localQueue {
	if w.id >= 0 {
		return &s.qs[w.id]
	}
	return &s.qs[int(s.rr.Add(1))%len(s.qs)]
}

func (s *lfq) push(w *worker, t *Task) {
	q := s.home(w)
	q.mu.Lock()
	q.h.push(t)
	q.n.Store(int32(q.h.len()))
	q.mu.Unlock()
}

func (s *lfq) pushBatch(w *worker, ts []*Task) { s.home(w).pushAll(ts) }

// pushAll queues ts under one lock.
func (q *localQueue) pushAll(ts []*Task) {
	q.mu.Lock()
	for _, t := range ts {
		q.h.push(t)
	}
	q.n.Store(int32(q.h.len()))
	q.mu.Unlock()
}

// pushAway queues ts on another worker's queue, the next one round-robin from w. One worker
// releasing thousands of tasks (a broadcast) would otherwise hold them all in its own queue,
// and every other worker would steal from that one queue, behind its one lock; spread, each
// finds its share in its own queue. Only full batches come here, so a release of a few tasks
// keeps them on the worker that made them ready.
func (s *lfq) pushAway(w *worker, ts []*Task) {
	n := len(s.qs)
	if w.id < 0 || n == 1 {
		s.pushBatch(w, ts)
		return
	}
	w.away++
	s.qs[(w.id+1+int(w.away%uint32(n-1)))%n].pushAll(ts)
}

func (s *lfq) backlog(w *worker) int { return int(s.home(w).n.Load()) }

// queued counts the tasks in every queue (each count read once, without locks).
func (s *lfq) queued() int {
	n := 0
	for i := range s.qs {
		n += int(s.qs[i].n.Load())
	}
	return n
}

func (s *lfq) pop(w *worker) *Task {
	if w.id >= 0 {
		if q := &s.qs[w.id]; q.n.Load() > 0 {
			q.mu.Lock()
			t := q.h.pop()
			q.n.Store(int32(q.h.len()))
			q.mu.Unlock()
			if t != nil {
				return t
			}
		}
	}
	return s.stealFor(w)
}

func (s *lfq) popIf(w *worker, ok func(*Task) bool) *Task {
	n := len(s.qs)
	start := int(s.rr.Add(1)) % n
	for i := 0; i < n; i++ {
		q := &s.qs[(start+i)%n]
		if q.n.Load() == 0 {
			continue
		}
		q.mu.Lock()
		var t *Task
		if h := q.h.peek(); h != nil && ok(h) {
			t = q.h.pop()
			q.n.Store(int32(q.h.len()))
		}
		q.mu.Unlock()
		if t != nil {
			return t
		}
	}
	return nil
}

// collect scans w's own queue only: a ring takes no task that a thief could run meanwhile.
func (s *lfq) collect(w *worker) {
	if w.id < 0 {
		return
	}
	q := &s.qs[w.id]
	collectLocked(&q.mu, &q.n, &q.h, w)
}

// collectLocked runs q.collect(w) under mu and then publishes q's length in n; deferred,
// since the scan runs user callbacks and one may call runtime.Goexit.
func collectLocked(mu *sync.Mutex, n *atomic.Int32, q interface {
	len() int
	collect(w *worker)
}, w *worker) {
	if n.Load() == 0 {
		return
	}
	mu.Lock()
	defer func() {
		n.Store(int32(q.len()))
		mu.Unlock()
	}()
	q.collect(w)
}

// stealFor takes about half of the first non-empty victim's best tasks.
func (s *lfq) stealFor(w *worker) *Task {
	n := len(s.qs)
	if n == 1 && w.id >= 0 {
		return nil
	}
	w.rng ^= w.rng << 13
	w.rng ^= w.rng >> 17
	w.rng ^= w.rng << 5
	start := int(w.rng % uint32(n))
	for i := 0; i < n; i++ {
		v := (start + i) % n
		if v == w.id {
			continue
		}
		q := &s.qs[v]
		if q.n.Load() == 0 {
			continue
		}
		q.mu.Lock()
		k := min((q.h.len()+1)/2, 32)
		if w.id < 0 {
			k = min(k, 1)
		}
		for j := 0; j < k; j++ {
			w.steal = append(w.steal, q.h.pop())
		}
		q.n.Store(int32(q.h.len()))
		q.mu.Unlock()
		if len(w.steal) == 0 {
			continue
		}
		t := w.steal[0]
		if len(w.steal) > 1 {
			s.pushBatch(w, w.steal[1:])
		}
		// The thief runs one task; the rest of its steal, what the victim (busy) still holds
		// and what other thieves queued would wait for the next push, a whole task away,
		// while workers stay parked: a POTRF that releases its column's TRSMs would see them
		// start a few at a time. So every steal wakes a parked worker per task queued
		// anywhere; counting them all, not only this steal's, means that a woken worker
		// which steals from elsewhere leaves no task without one.
		if w.c.nidle.Load() > 0 {
			w.c.wake(s.queued())
		}
		clear(w.steal)
		w.steal = w.steal[:0]
		return t
	}
	return nil
}

// globalQueue is the order behind one of the global schedulers.
type globalQueue interface {
	add(t *Task)
	pop() *Task
	peek() *Task
	len() int
	collect(w *worker)
}

// global is a scheduler with one queue shared by every worker (ap and gd). The atomic length
// lets idle workers look without locking.
type global struct {
	nm   string
	keep bool
	mu   sync.Mutex
	q    globalQueue
	n    atomic.Int32
}

func (s *global) name() string          { return s.nm }
func (s *global) keepsNext() bool       { return s.keep }
func (s *global) backlog(w *worker) int { return int(s.n.Load()) }

func (s *global) push(w *worker, t *Task) {
	s.mu.Lock()
	s.q.add(t)
	s.n.Store(int32(s.q.len()))
	s.mu.Unlock()
}

func (s *global) pushBatch(w *worker, ts []*Task) {
	s.mu.Lock()
	for _, t := range ts {
		s.q.add(t)
	}
	s.n.Store(int32(s.q.len()))
	s.mu.Unlock()
}

func (s *global) pushAway(w *worker, ts []*Task) { s.pushBatch(w, ts) }

func (s *global) pop(w *worker) *Task {
	if s.n.Load() == 0 {
		return nil
	}
	s.mu.Lock()
	t := s.q.pop()
	left := s.q.len()
	s.n.Store(int32(left))
	s.mu.Unlock()
	if t != nil {
		// As in lfq.stealFor: one parked worker per task left.
		w.c.wake(left)
	}
	return t
}

func (s *global) popIf(w *worker, ok func(*Task) bool) *Task {
	if s.n.Load() == 0 {
		return nil
	}
	s.mu.Lock()
	var t *Task
	if h := s.q.peek(); h != nil && ok(h) {
		t = s.q.pop()
		s.n.Store(int32(s.q.len()))
	}
	s.mu.Unlock()
	return t
}

func (s *global) collect(w *worker) { collectLocked(&s.mu, &s.n, s.q, w) }

// apQueue: strict priority order, FIFO among equals.
type apQueue struct{ prioQueue }

func (q *apQueue) add(t *Task) { q.push(t) }

// gdQueue: FIFO; high_priority classes go to the front.
type gdQueue struct{ fifo }

func (q *gdQueue) add(t *Task) {
	if t.hi {
		q.pushFront(t)
	} else {
		q.pushBack(t)
	}
}

func (q *gdQueue) len() int { return q.n }
