package gpu

import (
	"sort"
	"sync"
)

// fifo is a stream's pending FIFO: a locked, intrusive, doubly-linked
// list of singleton wrappers. With ordering on it is sorted by descending
// priority snapshot and stable: an insertion goes after every element of
// equal priority, so the members of an inserted ring keep their ring order
// among equals. Only the manager and hooks running under it touch a
// stream FIFO; the lock exists because the batch collector runs user
// callbacks while holding it, and because of direct-style collection.
//
// An insertion finds its place through the last element of each priority
// present (tails, sorted by descending priority), so it costs O(log P) for P
// distinct priorities, however long the FIFO grows.
type fifo struct {
	mu          sync.Mutex
	first, last *Task
	n           int
	sorted      bool
	tails       []tail
	// collecting is set while CollectBatch scans this FIFO, so a re-entrant
	// call is detected instead of deadlocking.
	collecting bool
}

// tail is the last element of one priority in a sorted FIFO.
type tail struct {
	prio int32
	last *Task
}

// find returns the index of the first tail whose priority is <= p.
func (q *fifo) find(p int32) int {
	return sort.Search(len(q.tails), func(i int) bool { return q.tails[i].prio <= p })
}

// insert puts the singleton t at its place. The caller holds mu. The
// priority snapshot is refreshed from the logical task first.
func (q *fifo) insert(t *Task) {
	if t.ec != nil {
		t.priority = t.ec.Priority()
	}
	t.queue = q
	q.n++
	after := q.last
	if n := len(q.tails); q.sorted && (n == 0 || t.priority <= q.tails[n-1].prio) {
		// At the end, the common case (one priority, or a lower one): no
		// search.
		if n > 0 && q.tails[n-1].prio == t.priority {
			q.tails[n-1].last = t
		} else {
			q.tails = append(q.tails, tail{prio: t.priority, last: t})
		}
	} else if q.sorted {
		i := q.find(t.priority)
		switch {
		case i < len(q.tails) && q.tails[i].prio == t.priority:
			after = q.tails[i].last
			q.tails[i].last = t
		default:
			// A new priority: after the last element of the next higher one.
			after = nil
			if i > 0 {
				after = q.tails[i-1].last
			}
			q.tails = append(q.tails, tail{})
			copy(q.tails[i+1:], q.tails[i:])
			q.tails[i] = tail{prio: t.priority, last: t}
		}
	}
	if after == nil {
		t.qprev, t.qnext = nil, q.first
		if q.first != nil {
			q.first.qprev = t
		} else {
			q.last = t
		}
		q.first = t
		return
	}
	t.qprev, t.qnext = after, after.qnext
	if after.qnext != nil {
		after.qnext.qprev = t
	} else {
		q.last = t
	}
	after.qnext = t
}

// mergeRing inserts every member of the ring headed by head, in ring order,
// each as a singleton. The caller holds mu.
func (q *fifo) mergeRing(head *Task, state State) {
	forEachChopped(head, func(x *Task) {
		x.state = state
		q.insert(x)
	})
}

// unlink removes t. The caller holds mu.
func (q *fifo) unlink(t *Task) {
	if q.sorted {
		i := 0 // the first wrapper has the highest priority: no search
		if t != q.first {
			i = q.find(t.priority)
		}
		if i < len(q.tails) && q.tails[i].last == t {
			if p := t.qprev; p != nil && p.priority == t.priority {
				q.tails[i].last = p
			} else {
				q.tails = append(q.tails[:i], q.tails[i+1:]...)
			}
		}
	}
	if t.qprev != nil {
		t.qprev.qnext = t.qnext
	} else {
		q.first = t.qnext
	}
	if t.qnext != nil {
		t.qnext.qprev = t.qprev
	} else {
		q.last = t.qprev
	}
	t.qprev, t.qnext, t.queue = nil, nil, nil
	q.n--
}

// push inserts t under the lock.
func (q *fifo) push(t *Task, state State) {
	q.mu.Lock()
	t.state = state
	q.insert(t)
	q.mu.Unlock()
}

// pop removes and returns the best wrapper, or nil.
func (q *fifo) pop() *Task {
	q.mu.Lock()
	t := q.first
	if t != nil {
		q.unlink(t)
	}
	q.mu.Unlock()
	return t
}

// snapshot returns the wrappers in FIFO order.
func (q *fifo) snapshot() []*Task {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]*Task, 0, q.n)
	for t := q.first; t != nil; t = t.qnext {
		out = append(out, t)
	}
	return out
}

func (q *fifo) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}
