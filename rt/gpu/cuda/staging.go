package cuda

import (
	"github.com/jdf2go/jdf2go/rt/gpu/driver"
)

// ring is a circular allocator of byte ranges in a buffer of size bytes
// (pinned host memory for staging, device memory for pointer arrays).
// Ranges are released in allocation order, when the stream work that uses
// them has completed, so the ring only tracks how many bytes are in use: an
// allocation that does not fit before the end of the buffer skips the tail
// and starts again at 0, and the skipped tail counts as part of it.
type ring struct {
	size, head, used int64
}

// alloc reserves n bytes aligned to align (a power of two). It returns the
// offset of the range and the number of bytes the reservation consumed (to
// pass to release), or ok false when the ring lacks room now.
func (r *ring) alloc(n, align int64) (off, consumed int64, ok bool) {
	if n <= 0 || n > r.size {
		return 0, 0, false
	}
	if r.used == 0 {
		r.head = 0
	}
	start := (r.head + align - 1) &^ (align - 1)
	if start+n > r.size {
		start = 0
		consumed = r.size - r.head + n
	} else {
		consumed = start + n - r.head
	}
	if r.used+consumed > r.size {
		return 0, 0, false
	}
	r.head = start + n
	r.used += consumed
	return start, consumed, true
}

// release gives back consumed bytes of the oldest reservations.
func (r *ring) release(consumed int64) {
	r.used -= consumed
	if r.used < 0 {
		panic("cuda: staging ring released more than it reserved")
	}
}

// deferred is host-side work owed to stream work that was enqueued before
// record number epoch+1 of the stream: it runs once an event recorded at
// or after that record has completed (or the stream was synchronized). It
// releases staging space, copies staged device-to-host data into its Go
// destination, checks a factorization's status word, and frees scratch
// device memory whose last user was that work.
type deferred struct {
	epoch uint64
	// bytes to release from the stream's rings
	bulk, meta, dmeta int64
	// copy-out of a staged device-to-host transfer
	dst, src []byte
	// status word of a Dpotrf of order n (info nil: none)
	info  *int32
	order int
	// scratch device memory to free (0: none)
	free driver.Ptr
}

// deferredQueue is a FIFO of deferred items, reusing its array.
type deferredQueue struct {
	items []deferred
	head  int
}

func (q *deferredQueue) push(d deferred) { q.items = append(q.items, d) }

func (q *deferredQueue) len() int { return len(q.items) - q.head }

// front returns the oldest item, or nil.
func (q *deferredQueue) front() *deferred {
	if q.head == len(q.items) {
		return nil
	}
	return &q.items[q.head]
}

func (q *deferredQueue) pop() {
	q.items[q.head] = deferred{}
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
}

// failure is an error found by deferred work of an epoch; it is reported by
// the first query of an event recorded after that work.
type failure struct {
	epoch uint64
	err   error
}
