package rt

import "slices"

// prioQueue orders tasks by (high-priority class, priority), FIFO among equals. Tasks of equal
// rank share a bucket, a ring buffer; the buckets are kept sorted by rank, the best last. A
// push or pop is O(1) when it hits the best bucket or the last one pushed to (almost always:
// most DAGs use few distinct priorities at a time), O(log buckets) to find another bucket,
// plus a slice insertion when a rank appears. A binary heap was measured slower: with equal
// priorities every pop sifts through the whole depth of a large, cache-cold array.
// Buckets and rings are recycled, so a steady state allocates nothing.
type prioQueue struct {
	buckets []*bucket // sorted by increasing rank
	spare   []*bucket
	last    *bucket // bucket of the previous push
	n       int
}

// A bucket is written on every push and pop by the worker owning the queue, so it fills an
// aligned pair of cache lines of its own: 48 bytes would share lines with the buckets of other
// workers' queues, allocated next to them.
type bucket struct {
	rank uint64
	ring []*Task // len is a power of two
	head int
	n    int
	_    [80]byte
}

// rank packs the high-priority flag above the biased priority.
func rank(t *Task) uint64 {
	r := uint64(uint32(t.prio) ^ 0x80000000)
	if t.hi {
		r |= 1 << 32
	}
	return r
}

func (q *prioQueue) len() int { return q.n }

func (q *prioQueue) push(t *Task) {
	r := rank(t)
	b := q.last
	if b == nil || b.rank != r || b.n == 0 {
		b = q.find(r)
		q.last = b
	}
	if b.n == len(b.ring) {
		ring := make([]*Task, max(16, 2*len(b.ring)))
		for i := 0; i < b.n; i++ {
			ring[i] = b.ring[(b.head+i)&(len(b.ring)-1)]
		}
		b.ring, b.head = ring, 0
	}
	b.ring[(b.head+b.n)&(len(b.ring)-1)] = t
	b.n++
	q.n++
}

// find returns the bucket of rank r, inserting an empty one if needed.
func (q *prioQueue) find(r uint64) *bucket {
	bs := q.buckets
	lo, hi := 0, len(bs)
	if hi > 0 && bs[hi-1].rank <= r { // the common case: at or above the best
		lo = hi - 1
		if bs[lo].rank < r {
			lo = hi
		}
	} else {
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if bs[m].rank < r {
				lo = m + 1
			} else {
				hi = m
			}
		}
	}
	if lo < len(bs) && bs[lo].rank == r {
		return bs[lo]
	}
	var b *bucket
	if n := len(q.spare); n > 0 {
		b = q.spare[n-1]
		q.spare = q.spare[:n-1]
	} else {
		b = &bucket{}
	}
	b.rank, b.head, b.n = r, 0, 0
	if q.buckets == nil { // lines of their own, as for a bucket
		q.buckets, q.spare = make([]*bucket, 0, 16), make([]*bucket, 0, 16)
	}
	q.buckets = append(q.buckets, nil)
	copy(q.buckets[lo+1:], q.buckets[lo:])
	q.buckets[lo] = b
	return b
}

// peek returns the task pop would return, or nil.
func (q *prioQueue) peek() *Task {
	nb := len(q.buckets)
	if nb == 0 {
		return nil
	}
	b := q.buckets[nb-1]
	return b.ring[b.head]
}

func (q *prioQueue) pop() *Task {
	nb := len(q.buckets)
	if nb == 0 {
		return nil
	}
	b := q.buckets[nb-1]
	t := b.ring[b.head]
	b.ring[b.head] = nil
	b.head = (b.head + 1) & (len(b.ring) - 1)
	b.n--
	q.n--
	if b.n == 0 {
		q.buckets[nb-1] = nil
		q.buckets = q.buckets[:nb-1]
		q.spare = append(q.spare, b)
		if q.last == b {
			q.last = nil
		}
	}
	return t
}

// collect offers w.offer the queued tasks best first, FIFO among equals, and removes those it
// accepts, until it answers Stop or none is left; the others keep their order. The bucket
// being scanned is compacted by a deferred call, so that a callback calling runtime.Goexit
// leaves the queue consistent with the ring.
func (q *prioQueue) collect(w *worker) {
	var s bucketScan
	defer s.finish(q)
	for i := len(q.buckets) - 1; i >= 0; i-- {
		s = bucketScan{b: q.buckets[i], at: i}
		stop := s.run(w)
		s.finish(q)
		if stop {
			return
		}
	}
}

// bucketScan is prioQueue.collect over one bucket: entries [0, kept) of the ring are those
// kept among the scanned ones [0, i), compacted in place.
type bucketScan struct {
	b       *bucket
	at      int // index of b in the queue's buckets
	kept, i int
}

// run offers the bucket's tasks in order; it reports whether w answered Stop.
func (s *bucketScan) run(w *worker) bool {
	b := s.b
	mask := len(b.ring) - 1
	for s.i < b.n {
		t := b.ring[(b.head+s.i)&mask]
		a := w.offer(t)
		if a == Stop {
			return true
		}
		if a != Accept {
			if s.kept != s.i {
				b.ring[(b.head+s.kept)&mask] = t
			}
			s.kept++
		}
		s.i++
	}
	return false
}

// finish closes the gap that the taken entries left between the kept ones [0, kept) and the
// unscanned tail [i, n), moving whichever side is shorter (a ring taken from the front of a
// long bucket moves only the few entries it rejected), and drops the bucket if it is empty.
func (s *bucketScan) finish(q *prioQueue) {
	b := s.b
	if b == nil {
		return
	}
	s.b = nil
	if gap := s.i - s.kept; gap > 0 {
		mask := len(b.ring) - 1
		if s.kept <= b.n-s.i {
			for j := s.kept - 1; j >= 0; j-- { // the kept entries move up to the tail
				b.ring[(b.head+gap+j)&mask] = b.ring[(b.head+j)&mask]
			}
			for j := 0; j < gap; j++ {
				b.ring[(b.head+j)&mask] = nil
			}
			b.head = (b.head + gap) & mask
		} else {
			for j := s.i; j < b.n; j++ { // the tail moves down to the kept entries
				b.ring[(b.head+j-gap)&mask] = b.ring[(b.head+j)&mask]
			}
			for j := b.n - gap; j < b.n; j++ {
				b.ring[(b.head+j)&mask] = nil
			}
		}
		q.n -= gap
		b.n -= gap
	}
	if b.n == 0 {
		q.buckets = slices.Delete(q.buckets, s.at, s.at+1)
		q.spare = append(q.spare, b)
		if q.last == b {
			q.last = nil
		}
	}
}

// fifo is an intrusive FIFO of tasks linked through Task.next.
type fifo struct {
	head, tail *Task
	n          int
}

func (q *fifo) pushBack(t *Task) {
	t.next = nil
	if q.tail == nil {
		q.head = t
	} else {
		q.tail.next = t
	}
	q.tail = t
	q.n++
}

func (q *fifo) pushFront(t *Task) {
	t.next = q.head
	q.head = t
	if q.tail == nil {
		q.tail = t
	}
	q.n++
}

// collect offers w.offer the queued tasks in order and unlinks those it accepts, until it
// answers Stop or none is left.
func (q *fifo) collect(w *worker) {
	var prev *Task
	for t := q.head; t != nil; {
		next := t.next // an accepted task's next becomes its ring link
		switch w.offer(t) {
		case Accept:
			if prev == nil {
				q.head = next
			} else {
				prev.next = next
			}
			if q.tail == t {
				q.tail = prev
			}
			q.n--
		case Stop:
			return
		default:
			prev = t
		}
		t = next
	}
}

// peek returns the task pop would return, or nil.
func (q *fifo) peek() *Task { return q.head }

func (q *fifo) pop() *Task {
	t := q.head
	if t == nil {
		return nil
	}
	q.head = t.next
	if q.head == nil {
		q.tail = nil
	}
	t.next = nil
	q.n--
	return t
}
