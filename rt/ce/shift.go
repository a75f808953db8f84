package ce

import (
	"sync"
	"sync/atomic"
)

// opKind names what a shifted op asks the comm goroutine to do.
type opKind uint8

const (
	opSendAM     opKind = iota + 1 // hand msg to the transport
	opFailAM                       // msg failed on a direct path: complete it with err here
	opXfer                         // admit a get/put into the window
	opXferFail                     // a direct start failed after the transport saw it: cancel
	opRegister                     // register reg with the transport
	opUnregister                   // reg's last reference is gone: unregister it
	opArmTag                       // arm a tag registered after Start
	opBarrier                      // start a barrier
)

// op is one entry of the shift queue. Ops are values, so shifting allocates nothing beyond
// what the operation itself needs.
type op struct {
	kind   opKind
	msg    *Msg
	err    error
	x      *xfer
	reg    *MemReg
	bar    *barrier
	tag    Tag
	maxLen int
}

// shiftQueue is the fire-and-forget hand-off from Callers to the comm goroutine: a mutex and
// a double-buffered slice. Producers append; the comm goroutine swaps the whole slice out, so
// neither side waits for the other beyond one short critical section (docs/ce.md, "The comm
// goroutine": "the hot path is one atomic and a slice append").
type shiftQueue struct {
	mu     sync.Mutex
	ops    []op
	spare  []op
	bytes  int64 // message bytes queued (never more than the buffer budget)
	hwm    int64 // high-water mark of bytes
	sealed bool  // Close has drained it for the last time

	pending atomic.Bool // ops is non-empty
}

// push appends o; it fails only once the queue is sealed at shutdown.
func (q *shiftQueue) push(o op) bool {
	q.mu.Lock()
	if q.sealed {
		q.mu.Unlock()
		return false
	}
	q.ops = append(q.ops, o)
	if o.kind == opSendAM {
		q.bytes += int64(o.msg.n)
		q.hwm = max(q.hwm, q.bytes)
	}
	q.pending.Store(true)
	q.mu.Unlock()
	return true
}

// swap hands the queued ops to the comm goroutine. The returned slice stays valid until the
// next swap.
func (q *shiftQueue) swap(seal bool) []op {
	q.mu.Lock()
	ops := q.ops
	q.ops = q.spare[:0]
	q.spare = ops
	q.bytes = 0
	q.pending.Store(false)
	if seal {
		q.sealed = true
	}
	q.mu.Unlock()
	return ops
}

// depth returns the number of ops waiting for the comm goroutine.
func (q *shiftQueue) depth() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.ops)
}

func (q *shiftQueue) highWater() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.hwm
}
