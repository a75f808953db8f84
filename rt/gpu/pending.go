package gpu

import (
	"slices"
	"sync/atomic"
)

// pendingQueue is device.pending: the multi-producer FIFO of wrappers
// submitted by workers that lost the election. Producers push after their
// counter increment; only the manager pops, without blocking.
//
// Producers push onto a lock-free stack (one compare-and-swap, no lock that
// every submitting worker and the manager would queue on); the manager takes
// the whole stack at once and hands it out oldest first. The stack's head
// and the count share a cache line, so a push writes one line.
type pendingQueue struct {
	head atomic.Pointer[Task] // newest first, linked through Task.pendingNext
	n    atomic.Int32         // pushed and not yet handed out
	_    linePad
	// Manager only: the wrappers taken from head, oldest first, and how many
	// of them were handed out. Empty between episodes: every pushed wrapper
	// is counted, so an episode cannot end while one waits here.
	taken []*Task
	next  int
}

func (p *pendingQueue) push(t *Task) {
	// Counted first, so that len never goes below zero.
	p.n.Add(1)
	for {
		h := p.head.Load()
		t.pendingNext = h
		if p.head.CompareAndSwap(h, t) {
			return
		}
	}
}

// tryPopN appends up to max of the oldest wrappers to dst, in arrival
// order, and returns it; it appends nothing when the queue is empty.
func (p *pendingQueue) tryPopN(dst []*Task, max int) []*Task {
	if p.next == len(p.taken) {
		p.taken, p.next = p.taken[:0], 0
		if p.head.Load() == nil {
			return dst
		}
		for t := p.head.Swap(nil); t != nil; {
			p.taken = append(p.taken, t)
			t, t.pendingNext = t.pendingNext, nil
		}
		slices.Reverse(p.taken)
	}
	n := min(len(p.taken)-p.next, max)
	dst = append(dst, p.taken[p.next:p.next+n]...)
	clear(p.taken[p.next : p.next+n])
	p.next += n
	p.n.Add(int32(-n))
	return dst
}

// len returns the number of wrappers pushed and not yet taken by the manager.
func (p *pendingQueue) len() int { return int(p.n.Load()) }
