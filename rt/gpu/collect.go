package gpu

import "fmt"

// Match is a batch-match callback: it decides, for one candidate of
// the stream's FIFO, whether it joins head's ring. It runs with the FIFO lock
// held: it must be short, must not block, and must not touch the FIFO or call
// CollectBatch (which would fail with ErrReentrantCollect).
type Match func(cand, head *Task, data any) Action

// CollectBatch moves compatible wrappers from the stream's FIFO to the tail
// of head's ring and returns the number of followers now attached.
//
// On a continuation of a committed ring (head not a singleton) it returns the
// follower count at once: no lock, no scan, no callback. Otherwise it returns
// 0 without calling match when batching is off for the device, the device
// type does not batch, or head's incarnation is not batch-capable on this
// device. It skips candidates whose incarnation is not batch-capable here.
// An Action other than Accept, Reject or Stop fails the collection with
// ErrInvalidAction: the followers accepted so far stay in the ring and the
// other candidates stay pending in their order. A hook that gets an error
// should return Error.
func (s *Stream) CollectBatch(head *Task, match Match, data any) (int, error) {
	if !head.IsSingleton() {
		return head.followers(), nil
	}
	if head.stream != s {
		// Collecting from another stream would move wrappers off the
		// stream their exec life is bound to (scenario 10).
		return 0, fmt.Errorf("%w: CollectBatch on %s for %v, which runs on another stream", ErrMisuse, s.name, head)
	}
	head.makeSingleton()
	d := s.dev
	if head.ec == nil || head.dev != d || !d.batching || !d.info.Batching ||
		head.inc == nil || !head.inc.Batch || !head.inc.runsOn(d) {
		return 0, nil
	}
	q := &s.fifo
	if q.collecting {
		// Only a callback running under this very scan can see the flag set:
		// the manager is the only other user of compute FIFOs and runs the
		// hook that called us.
		return 0, ErrReentrantCollect
	}
	q.mu.Lock()
	q.collecting = true
	head.collected = 1 // the ring's length while the scan runs (head is a singleton)
	defer func() {
		q.collecting = false
		head.collected = 0
		q.mu.Unlock()
	}()
	n := 0
	for c := q.first; c != nil; {
		next := c.qnext
		if c.inc == nil || !c.inc.Batch || !c.inc.runsOn(d) || c.dev != d {
			c = next
			continue
		}
		switch a := match(c, head, data); a {
		case Accept:
			q.unlink(c)
			c.state = StateExFollower
			head.appendRing(c)
			head.collected++
			n++
		case Reject:
		case Stop:
			return n, nil
		default:
			return n, fmt.Errorf("%w: %v from the callback for %v", ErrInvalidAction, a, c)
		}
		c = next
	}
	return n, nil
}

// RequeueFollowers disbands head's ring manually: it chops head out,
// makes it a singleton, and merges the followers back into this stream's
// FIFO with the priority policy. The followers keep their execution-interval
// state. A hook calls it outside any batch callback, then enqueues work for
// head alone and returns. It returns the number of followers requeued.
func (s *Stream) RequeueFollowers(head *Task) int {
	rest := head.chop()
	if rest == nil {
		return 0
	}
	n := rest.RingLen()
	s.fifo.mu.Lock()
	s.fifo.mergeRing(rest, StateExQ)
	s.fifo.mu.Unlock()
	return n
}

// BatchPolicy is the batch-match callback that generated code installs for a
// `batch = true` body (docs/language.md, "GPU bodies"): it rejects candidates of
// another incarnation (class and body) or device, stops once the ring holds
// Max wrappers (no bound when Max <= 0), and otherwise defers to User, or
// accepts.
type BatchPolicy struct {
	Max  int
	User func(cand, head *Task) Action
}

// Match is the policy as a Match callback; data is ignored.
func (p BatchPolicy) Match(cand, head *Task, _ any) Action {
	if cand.inc != head.inc || cand.dev != head.dev {
		return Reject
	}
	if p.Max > 0 && head.ringLen() >= p.Max {
		return Stop
	}
	if p.User != nil {
		return p.User(cand, head)
	}
	return Accept
}
