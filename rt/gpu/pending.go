package gpu

import "sync/atomic"

// pendingQueue is device.pending: the multi-producer FIFO of wrappers
// submitted by workers that lost the election. Producers push after their
// counter increment; only the manager pops, without blocking.
//
// It is an intrusive queue linked through Task.pendingNext, with a stub
// wrapper so that it is never empty of nodes (D. Vyukov's multi-producer,
// single-consumer queue). A push is one atomic swap of head and one store:
// no lock that every submitting worker and the manager would queue on. The
// manager pops from tail, oldest first, touching only the wrappers it takes.
// A push caught between its swap and its link hides the wrappers behind it
// for that moment; the manager finds them at a later iteration (they are
// counted, so the episode cannot end before).
type pendingQueue struct {
	head atomic.Pointer[Task] // the newest wrapper, or the stub
	n    atomic.Int32         // pushed and not yet taken
	_    linePad
	tail *Task // manager only: the oldest wrapper, or the stub
	stub Task
}

func (p *pendingQueue) init() {
	p.head.Store(&p.stub)
	p.tail = &p.stub
}

func (p *pendingQueue) push(t *Task) {
	// Counted first, so that len never goes below zero.
	p.n.Add(1)
	p.link(t)
}

func (p *pendingQueue) link(t *Task) {
	t.pendingNext.Store(nil)
	p.head.Swap(t).pendingNext.Store(t)
}

// pop returns the oldest wrapper, or nil when there is none the manager
// can take now.
func (p *pendingQueue) pop() *Task {
	tail := p.tail
	next := tail.pendingNext.Load()
	if tail == &p.stub {
		if next == nil {
			return nil
		}
		p.tail, tail = next, next
		next = next.pendingNext.Load()
	}
	if next == nil {
		if tail != p.head.Load() {
			return nil // a push is between its swap and its link
		}
		// tail is the only wrapper: put the stub behind it, so that taking
		// it leaves a node.
		p.link(&p.stub)
		if next = tail.pendingNext.Load(); next == nil {
			return nil
		}
	}
	p.tail = next
	tail.pendingNext.Store(nil)
	return tail
}

// tryPopN appends up to max of the oldest wrappers to dst, in arrival
// order, and returns it; it appends nothing when the queue is empty.
func (p *pendingQueue) tryPopN(dst []*Task, max int) []*Task {
	n := 0
	for ; n < max; n++ {
		t := p.pop()
		if t == nil {
			break
		}
		dst = append(dst, t)
	}
	if n > 0 {
		p.n.Add(int32(-n))
	}
	return dst
}

// len returns the number of wrappers pushed and not yet taken by the manager.
func (p *pendingQueue) len() int { return int(max(p.n.Load(), 0)) }
