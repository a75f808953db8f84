package gpu

// The in-memory trace recorder of the tests: a Profiler that keeps every
// record and writes them as Chrome/Perfetto JSON.

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

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
// tracer takes its place inside a program.
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
