package sim

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/jdf2go/jdf2go/rt/gpu/driver"
)

// Stream is an in-order queue of operations; it implements
// driver.Stream.
type Stream struct {
	dev  *Device
	name string

	mu       sync.Mutex
	cond     *sync.Cond
	ops      []op
	head     int
	enqueued uint64   // operations ever enqueued
	executed uint64   // operations ever run
	marks    []uint64 // per event slot: enqueued count when recorded
	failures []failure
	closed   bool
	records  uint64
	// With a latency: when each recent operation completes on the virtual
	// clock (ring indexed by operation number), and when the stream is free.
	doneAt    [latencyRing]time.Time
	busyUntil time.Time
}

// latencyRing bounds how far back completion times are kept; an event
// older than that many operations is complete by construction.
const latencyRing = 1024

type op struct {
	label string
	fn    func() error
}

type failure struct {
	at  uint64 // index of the failed operation
	err error
}

// enqueue appends an operation.
func (s *Stream) enqueue(label string, fn func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("%w: stream %s/%s is closed", driver.ErrClosed, s.dev.name, s.name)
	}
	s.ops = append(s.ops, op{label: label, fn: fn})
	s.enqueued++
	s.cond.Signal()
	return nil
}

// runOne runs op number idx outside the lock and records its outcome.
func (s *Stream) runOne(o op, idx uint64) {
	err := s.exec(o)
	s.mu.Lock()
	if err != nil {
		s.failures = append(s.failures, failure{at: idx, err: fmt.Errorf("%s on %s/%s: %w", o.label, s.dev.name, s.name, err)})
	}
	if lat := s.dev.latency; lat > 0 {
		now := time.Now()
		if s.busyUntil.Before(now) {
			s.busyUntil = now
		}
		s.busyUntil = s.busyUntil.Add(lat)
		s.doneAt[idx%latencyRing] = s.busyUntil
	}
	s.executed++
	s.mu.Unlock()
}

func (s *Stream) exec(o op) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	if f := s.dev.faults.Load(); f != nil {
		if f.Delay != nil {
			if dt := f.Delay(s.name, o.label); dt > 0 {
				time.Sleep(dt)
			}
		}
		if f.Exec != nil {
			if err := f.Exec(s.name, o.label); err != nil {
				return err
			}
		}
	}
	return o.fn()
}

// pop takes the next operation; the caller holds mu.
func (s *Stream) pop() (op, uint64, bool) {
	if s.head == len(s.ops) {
		return op{}, 0, false
	}
	o := s.ops[s.head]
	s.ops[s.head] = op{}
	idx := s.executed
	s.head++
	if s.head == len(s.ops) {
		s.ops, s.head = s.ops[:0], 0
	}
	return o, idx, true
}

// run is the goroutine of a free-running stream; the device's Close stops it.
func (s *Stream) run(ctx context.Context) {
	defer s.dev.wg.Done()
	s.mu.Lock()
	for {
		if ctx.Err() != nil || s.closed {
			s.mu.Unlock()
			return
		}
		o, idx, ok := s.pop()
		if !ok {
			s.cond.Wait()
			continue
		}
		s.mu.Unlock()
		s.runOne(o, idx)
		s.mu.Lock()
	}
}

// Step runs the next operation of a manual stream on the calling goroutine.
// It returns the operation's label, or false when the queue is empty.
func (s *Stream) Step() (string, bool) {
	s.mu.Lock()
	o, idx, ok := s.pop()
	s.mu.Unlock()
	if !ok {
		return "", false
	}
	s.runOne(o, idx)
	return o.label, true
}

// Drain runs every queued operation of a manual stream and returns how many
// ran.
func (s *Stream) Drain() int {
	n := 0
	for {
		if _, ok := s.Step(); !ok {
			return n
		}
		n++
	}
}

// Queued returns the labels of the operations waiting to run.
func (s *Stream) Queued() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.ops)-s.head)
	for _, o := range s.ops[s.head:] {
		out = append(out, o.label)
	}
	return out
}

// Executed returns the number of operations run so far.
func (s *Stream) Executed() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.executed
}

// Records returns the number of event records so far (quiescing markers
// included).
func (s *Stream) Records() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.records
}

// Record implements driver.Stream.
func (s *Stream) Record(slot int) error {
	if f := s.dev.faults.Load(); f != nil && f.Record != nil {
		if err := f.Record(s.name, slot); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if slot < 0 || slot >= len(s.marks) {
		return fmt.Errorf("%w: event slot %d of %d", driver.ErrBadArgument, slot, len(s.marks))
	}
	s.marks[slot] = s.enqueued
	s.records++
	return nil
}

// Query implements driver.Stream.
func (s *Stream) Query(slot int) (bool, error) {
	if f := s.dev.faults.Load(); f != nil && f.Query != nil {
		if err := f.Query(s.name, slot); err != nil {
			return false, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if slot < 0 || slot >= len(s.marks) {
		return false, fmt.Errorf("%w: event slot %d of %d", driver.ErrBadArgument, slot, len(s.marks))
	}
	mark := s.marks[slot]
	if s.executed < mark {
		return false, nil
	}
	if s.dev.latency > 0 && mark > 0 && s.executed-mark < latencyRing && time.Now().Before(s.doneAt[(mark-1)%latencyRing]) {
		return false, nil
	}
	for i, f := range s.failures {
		if f.at < mark {
			s.failures = append(s.failures[:i], s.failures[i+1:]...)
			return false, f.err
		}
	}
	return true, nil
}

// Close implements driver.Stream.
func (s *Stream) Close() error {
	s.mu.Lock()
	s.closed = true
	s.cond.Broadcast()
	s.mu.Unlock()
	return nil
}

func (s *Stream) copyFault(kind CopyKind) error {
	if f := s.dev.faults.Load(); f != nil && f.Copy != nil {
		return f.Copy(s.name, kind)
	}
	return nil
}

// CopyHtoD implements driver.Stream.
func (s *Stream) CopyHtoD(dst driver.Ptr, src []byte) error {
	if err := s.copyFault(HtoD); err != nil {
		return err
	}
	mem, err := s.dev.resolve(dst, int64(len(src)))
	if err != nil {
		return err
	}
	return s.enqueue("h2d", func() error { copy(mem, src); return nil })
}

// CopyDtoH implements driver.Stream.
func (s *Stream) CopyDtoH(dst []byte, src driver.Ptr) error {
	if err := s.copyFault(DtoH); err != nil {
		return err
	}
	mem, err := s.dev.resolve(src, int64(len(dst)))
	if err != nil {
		return err
	}
	return s.enqueue("d2h", func() error { copy(dst, mem); return nil })
}

// CopyDtoD implements driver.Stream.
func (s *Stream) CopyDtoD(dst, src driver.Ptr, n int64) error {
	if err := s.copyFault(DtoD); err != nil {
		return err
	}
	to, err := s.dev.resolve(dst, n)
	if err != nil {
		return err
	}
	from, err := s.dev.resolve(src, n)
	if err != nil {
		return err
	}
	return s.enqueue("d2d", func() error { copy(to[:n], from[:n]); return nil })
}

// CopyPeer implements driver.PeerStream: a copy from the memory of another
// simulated device (linked with EnablePeer) into this stream's device.
func (s *Stream) CopyPeer(dst driver.Ptr, from driver.Backend, src driver.Ptr, n int64) error {
	if err := s.copyFault(Peer); err != nil {
		return err
	}
	fd, ok := from.(*Device)
	if !ok {
		return fmt.Errorf("%w: peer copy from %T, not a simulated device", driver.ErrBadArgument, from)
	}
	to, err := s.dev.resolve(dst, n)
	if err != nil {
		return err
	}
	fromMem, err := fd.resolve(src, n)
	if err != nil {
		return err
	}
	return s.enqueue("peer", func() error { copy(to[:n], fromMem[:n]); return nil })
}

// Launch implements driver.Stream: the kernel's Host function runs when
// the stream reaches it.
func (s *Stream) Launch(k driver.Kernel, grid, block driver.Dim3, shared int, args []any) error {
	kk, ok := k.(kernel)
	if !ok {
		return fmt.Errorf("%w: kernel %s was not resolved by a simulated device", driver.ErrBadArgument, k.Name())
	}
	args = append([]any(nil), args...)
	return s.enqueue("kernel:"+kk.spec.Name, func() error { return kk.spec.Host(s.dev, grid, block, args) })
}

// Enqueue appends an arbitrary operation, for tests that need device work
// with a label of their own.
func (s *Stream) Enqueue(label string, fn func() error) error { return s.enqueue(label, fn) }
