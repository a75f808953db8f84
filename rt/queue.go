package rt

// prioHeap is a binary max-heap of tasks ordered by (high-priority class, priority, FIFO
// among equals). The sort key is precomputed so sifting never dereferences a task.
type prioHeap struct {
	e   []heapEntry
	seq uint32
}

type heapEntry struct {
	key uint64
	t   *Task
}

// sortKey packs bit 63: high-priority class; bits 62..31: priority (biased); bits 30..0: the
// complement of a push sequence number, so that among equals the earliest push is largest.
// The sequence wraps after 2^31 pushes, which only perturbs the order of equal tasks.
func (h *prioHeap) sortKey(t *Task) uint64 {
	h.seq++
	k := uint64(uint32(t.prio)^0x80000000)<<31 | uint64(^h.seq&0x7fffffff)
	if t.class != nil && t.class.HighPriority {
		k |= 1 << 63
	}
	return k
}

func (h *prioHeap) len() int { return len(h.e) }

func (h *prioHeap) push(t *Task) {
	h.e = append(h.e, heapEntry{h.sortKey(t), t})
	e := h.e
	i := len(e) - 1
	x := e[i]
	for i > 0 {
		p := (i - 1) / 2
		if e[p].key >= x.key {
			break
		}
		e[i] = e[p]
		i = p
	}
	e[i] = x
}

func (h *prioHeap) pop() *Task {
	e := h.e
	n := len(e)
	if n == 0 {
		return nil
	}
	top := e[0].t
	n--
	x := e[n]
	e[n] = heapEntry{}
	e = e[:n]
	h.e = e
	if n == 0 {
		return top
	}
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && e[c+1].key > e[c].key {
			c++
		}
		if x.key >= e[c].key {
			break
		}
		e[i] = e[c]
		i = c
	}
	e[i] = x
	return top
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
