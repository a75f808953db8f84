package gpu

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

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
	// once per stream in NewDevice, and again from its manager for each
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

// TraceEvent is one record kept by a TraceRecorder.
type TraceEvent struct {
	Begin bool
	Track int
	Name  string
	ID    TraceID
	At    time.Duration // since the recorder was created
}

// TraceRecorder is a Profiler that keeps every record in memory and writes
// them as Chrome/Perfetto JSON (async events, one thread per track). The rt
// tracer takes its place inside a full program; the recorder serves tests and
// standalone use of a device.
type TraceRecorder struct {
	mu     sync.Mutex
	t0     time.Time
	tracks []string
	events []TraceEvent
}

// NewTraceRecorder returns an empty recorder.
func NewTraceRecorder() *TraceRecorder { return &TraceRecorder{t0: time.Now()} }

// Track implements Profiler.
func (r *TraceRecorder) Track(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, n := range r.tracks {
		if n == name {
			return i
		}
	}
	r.tracks = append(r.tracks, name)
	return len(r.tracks) - 1
}

// Begin implements Profiler.
func (r *TraceRecorder) Begin(track int, name string, t *Task) {
	r.add(true, track, name, t.traceID(), time.Since(r.t0))
}

// End implements Profiler.
func (r *TraceRecorder) End(track int, name string, t *Task) {
	r.add(false, track, name, t.traceID(), time.Since(r.t0))
}

// Now implements Profiler.
func (r *TraceRecorder) Now() int64 { return int64(time.Since(r.t0)) }

// Own implements Profiler: the episode goes on the device's "manager" track.
func (r *TraceRecorder) Own(_ Worker, d *Device, start, end int64) {
	track := r.Track(d.Name() + "/manager")
	id := TraceID{Class: d.Name()}
	r.add(true, track, SpanOwn, id, time.Duration(start))
	r.add(false, track, SpanOwn, id, time.Duration(end))
}

func (r *TraceRecorder) add(begin bool, track int, name string, id TraceID, at time.Duration) {
	r.mu.Lock()
	r.events = append(r.events, TraceEvent{Begin: begin, Track: track, Name: name, ID: id, At: at})
	r.mu.Unlock()
}

// Events returns a copy of the records so far.
func (r *TraceRecorder) Events() []TraceEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]TraceEvent(nil), r.events...)
}

// TrackName returns the name of a track id.
func (r *TraceRecorder) TrackName(track int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if track < 0 || track >= len(r.tracks) {
		return ""
	}
	return r.tracks[track]
}

// chromeEvent is one entry of the Chrome trace-event JSON format.
type chromeEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat"`
	Ph   string         `json:"ph"`
	TS   float64        `json:"ts"`
	PID  int            `json:"pid"`
	TID  int            `json:"tid"`
	ID   string         `json:"id,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

// WriteJSON writes the records as a Chrome trace-event JSON object that
// Perfetto opens: spans are async events ("b"/"e") paired by id, and tracks
// are named threads.
func (r *TraceRecorder) WriteJSON(w io.Writer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]chromeEvent, 0, len(r.events)+len(r.tracks))
	for i, name := range r.tracks {
		out = append(out, chromeEvent{Name: "thread_name", Ph: "M", PID: 1, TID: i, Args: map[string]any{"name": name}})
	}
	for _, e := range r.events {
		ph := "e"
		if e.Begin {
			ph = "b"
		}
		out = append(out, chromeEvent{
			Name: e.Name,
			Cat:  "gpu",
			Ph:   ph,
			TS:   float64(e.At.Nanoseconds()) / 1e3,
			PID:  1,
			TID:  e.Track,
			ID:   fmt.Sprintf("%s/%s/%d/%d", e.Name, e.ID.Class, e.ID.Taskpool, e.ID.Event),
			Args: map[string]any{"class": e.ID.Class, "event": e.ID.Event, "taskpool": e.ID.Taskpool},
		})
	}
	enc := json.NewEncoder(w)
	return enc.Encode(map[string]any{"traceEvents": out, "displayTimeUnit": "ns"})
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
