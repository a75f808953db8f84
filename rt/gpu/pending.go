package gpu

import "sync"

// pendingQueue is device.pending: the multi-producer FIFO of wrappers
// submitted by workers that lost the election. Producers push after their
// counter increment; only the manager pops, without blocking.
type pendingQueue struct {
	mu   sync.Mutex
	buf  []*Task
	head int
}

func (p *pendingQueue) push(t *Task) {
	p.mu.Lock()
	p.buf = append(p.buf, t)
	p.mu.Unlock()
}

// tryPopN appends up to max of the oldest wrappers to dst, in arrival
// order, and returns it; it appends nothing when the queue is empty.
func (p *pendingQueue) tryPopN(dst []*Task, max int) []*Task {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := min(len(p.buf)-p.head, max)
	dst = append(dst, p.buf[p.head:p.head+n]...)
	clear(p.buf[p.head : p.head+n])
	p.head += n
	if p.head == len(p.buf) {
		p.buf, p.head = p.buf[:0], 0
	}
	return dst
}

func (p *pendingQueue) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.buf) - p.head
}
