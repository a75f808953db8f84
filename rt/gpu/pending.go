package gpu

import "sync"

// pendingQueue is device.pending (§1.1): the multi-producer FIFO of wrappers
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

// tryPop returns the oldest wrapper, or nil when the queue is empty.
func (p *pendingQueue) tryPop() *Task {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.head == len(p.buf) {
		return nil
	}
	t := p.buf[p.head]
	p.buf[p.head] = nil
	p.head++
	if p.head == len(p.buf) {
		// Reuse the array once drained, so a steady flow does not grow it.
		p.buf, p.head = p.buf[:0], 0
	}
	return t
}

func (p *pendingQueue) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.buf) - p.head
}
