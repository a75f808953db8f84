package gpu

import "fmt"

// TraceID names a logical task in trace records: the end key (task class),
// the event id (a hash of its parameters) and its taskpool.
type TraceID struct {
	Class    string
	Event    uint64
	Taskpool uint32
}

func (id TraceID) String() string {
	return fmt.Sprintf("%s#%d", id.Class, id.Event)
}

// Span names used by the manager. Custom stage spans opened with
// Stream.BeginStage use the name the body gives.
const (
	SpanOwn      = "own"       // a worker's management episode
	SpanStageIn  = "stage_in"  // queued H2D copies of one wrapper
	SpanStageOut = "stage_out" // queued D2H copies of one wrapper
	SpanExec     = "exec"      // one logical member's execution
)

// Profiler receives the device's trace records, all on the manager's
// goroutine. Begin and End of one span carry the same track, name and
// wrapper; spans of one track may overlap (the members of a batch execute
// together), so a writer pairs them by (name, wrapper), not by nesting. A
// device's tracks are written by one manager at a time (the counter hands
// them over), but several devices share a profiler.
type Profiler interface {
	// Track returns the id of a named track ("gpu0/exec1"); a device asks
	// once per stream when the device opens, and again from its manager for each
	// further trace lane of a stream (see freeLane).
	Track(name string) int
	// Begin and End open and close a span of the wrapper's logical task.
	Begin(track int, name string, t *Task)
	End(track int, name string, t *Task)
	// Now reads the profiler's clock.
	Now() int64
	// Own records a management episode of worker w on d between two Now
	// readings, on the worker's profiling stream. It is called after
	// the episode's final decrement, when d's tracks may already belong to
	// the next manager.
	Own(w Worker, d *Device, start, end int64)
}

// Trace lanes. A stream has a wrapper or a ring in flight in each of its
// event slots, so their stage and execution intervals overlap without
// nesting, and viewers draw overlapping slices of one track badly. Each
// stream therefore records its intervals on lanes: its own track, plus tracks
// ("gpu0/in #2") registered the first time every existing lane has an open
// interval. A stage interval takes a free lane. The members of a ring share
// one: their intervals end together, at the ring's final event, and a member
// collected by a later continuation starts later, so they nest. A lane is
// free again once its last interval has closed. Lanes are the manager's.

// freeLane returns a lane of s with no open interval, registering a new one
// when every lane is busy.
func (s *Stream) freeLane() int {
	for i, n := range s.laneOpen {
		if n == 0 {
			return i
		}
	}
	d := s.dev
	s.tracks = append(s.tracks, d.prof.Track(fmt.Sprintf("%s/%s #%d", d.name, s.name, len(s.tracks)+1)))
	s.laneOpen = append(s.laneOpen, 0)
	return len(s.tracks) - 1
}

// beginExec opens x's execution interval on a lane of s.
func (s *Stream) beginExec(x *Task, lane int) {
	x.execStream, x.execLane = s, lane
	s.laneOpen[lane]++
	s.dev.prof.Begin(s.tracks[lane], SpanExec, x)
}

// endExec closes x's execution interval on the lane where it was opened.
func endExec(x *Task) {
	s := x.execStream
	s.laneOpen[x.execLane]--
	s.dev.prof.End(s.tracks[x.execLane], SpanExec, x)
}
