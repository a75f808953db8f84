package gpu

import (
	"fmt"
	"sync/atomic"

	"github.com/jdf2go/jdf2go/rt/gpu/driver"
)

// Role is what a stream is used for.
type Role uint8

// Stream roles.
const (
	RoleStageIn  Role = iota // index 0: H2D, runs runtime code
	RoleStageOut             // index 1: D2H, runs runtime code
	RoleCompute              // indices 2..: runs submit hooks
)

func (r Role) String() string {
	switch r {
	case RoleStageIn:
		return "stage-in"
	case RoleStageOut:
		return "stage-out"
	}
	return "compute"
}

// Stream is one execution stream of a device: an in-order backend
// queue, a pending FIFO and a fixed ring of event slots. A hook receives the
// compute stream it runs on and enqueues its device work there through the
// body API (Memcpy, the BLAS subset, Launch).
type Stream struct {
	dev   *Device
	index int
	name  string
	role  Role
	be    driver.Stream
	track int // the first of tracks

	// Trace lanes (profile.go): profiler tracks of this stream, each with the
	// number of spans open on it. Touched only by the manager.
	tracks   []int
	laneOpen []int32

	fifo fifo

	// scratch is the stream's temporary memory for bodies (Scratch);
	// touched only by the manager.
	scratch Buffer

	// Event slots, touched only by the manager: slots[start] empty
	// means room; only slots[end] is queried.
	slots      []*Task
	start, end int
	inFlight   atomic.Int32
	records    atomic.Uint64
	executed   atomic.Uint64
}

// slot marks a slot as occupied by a wrapper that is not in flight; the
// wrapper is kept in the slot until its event completes.
func (s *Stream) hasRoom() bool { return s.slots[s.start] == nil }

// record places head (a wrapper or a ring) in the next slot behind an event
// recorded after everything enqueued so far. The caller checked hasRoom.
func (s *Stream) record(head *Task) error {
	slot := s.start
	if err := s.be.Record(slot); err != nil {
		return fmt.Errorf("gpu: record event on %s: %w", s.name, err)
	}
	s.records.Add(1)
	s.slots[slot] = head
	s.start = (slot + 1) % len(s.slots)
	s.inFlight.Add(1)
	return nil
}

// poll queries the oldest slot. It returns the wrapper recorded there when its
// event completed (or failed, with the error), and frees the slot; it returns
// nil, nil while the event is pending or no slot is in flight.
func (s *Stream) poll() (*Task, error) {
	head := s.slots[s.end]
	if head == nil {
		return nil, nil
	}
	done, err := s.be.Query(s.end)
	if err == nil && !done {
		return nil, nil
	}
	s.slots[s.end] = nil
	s.end = (s.end + 1) % len(s.slots)
	s.inFlight.Add(-1)
	if err != nil {
		return head, fmt.Errorf("gpu: query event on %s: %w", s.name, err)
	}
	s.executed.Add(1)
	return head, nil
}

// quiesceSlot is the backend event slot reserved for quiescing markers.
func (s *Stream) quiesceSlot() int { return len(s.slots) }

// Scratch returns device memory for n float64s that belongs to the stream,
// for the temporaries of a body: the result of a product that cannot be
// computed in place, say. Every body on the stream gets the same memory
// back, which is safe because a stream runs its work in order: what one body
// enqueued has run before the next body's work starts. A body must not let
// the memory reach work on another stream. A larger request replaces it; the
// memory counts against the device's limit until the device closes.
func (s *Stream) Scratch(n int) (Buffer, error) {
	if n < 0 {
		return Buffer{}, fmt.Errorf("%w: Scratch(%d)", ErrBadArgument, n)
	}
	if n > s.scratch.Len {
		d, size := s.dev, int64(n)*8
		m := &d.mem
		if !d.makeRoom(size) {
			return Buffer{}, fmt.Errorf("%w: scratch of %d bytes on %s: %d of %d bytes are in use",
				ErrOutOfMemory, size, s.name, m.used, m.limit)
		}
		p, err := d.be.Alloc(size)
		if err != nil {
			return Buffer{}, fmt.Errorf("gpu: scratch of %d bytes on %s: %w", size, s.name, err)
		}
		// The memory it replaces stays allocated, since work already queued may use
		// it, until the backend closes: requests only grow, so that is at most a
		// few buffers.
		m.limit -= size
		s.scratch = Buffer{Ptr: p, Len: n, Elem: Float64}
	}
	return Buffer{Ptr: s.scratch.Ptr, Len: n, Elem: Float64}, nil
}

// Name returns the stream's name ("in", "out", "exec0", ...).
func (s *Stream) Name() string { return s.name }

// Device returns the stream's device.
func (s *Stream) Device() *Device { return s.dev }

// Backend returns the backend queue, for bodies that need an operation the
// body API lacks.
func (s *Stream) Backend() driver.Stream { return s.be }

// Records returns the number of events recorded on the stream so far,
// quiescing markers excluded.
func (s *Stream) Records() uint64 { return s.records.Load() }

// BeginStage opens a stage interval for t on one of this stream's tracks
// that the manager closes at t's next event completion. At the final DONE
// event the stage end is emitted before the execution ends, never instead of
// it.
func (s *Stream) BeginStage(t *Task, name string) {
	d := s.dev
	if d.prof == nil || t.stage.pending {
		return
	}
	lane := s.freeLane()
	t.stage = stageSpan{name: name, stream: s, lane: lane, pending: true}
	s.laneOpen[lane]++
	d.prof.Begin(s.tracks[lane], name, t)
}
