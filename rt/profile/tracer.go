package profile

import (
	"sync"
	"sync/atomic"
	"time"
)

// MaxArgs is the number of integer arguments a span can carry (the task parameters shown in
// its name). Extra arguments are dropped.
const MaxArgs = 6

// chunkEvents is the number of events per buffer chunk: large enough that appending a chunk is
// rare, small enough that an idle track costs little.
const chunkEvents = 4096

// Name identifies an interned span name. The zero Name is "?".
type Name uint32

// Tracer collects spans from many tracks. The zero Tracer is not usable; call New.
// A Tracer is safe for concurrent use; each Track it hands out has a single writer.
type Tracer struct {
	start time.Time

	mu     sync.Mutex
	names  []string
	byName map[string]Name
	tracks []*Track
}

// New returns a Tracer whose clock starts now.
func New() *Tracer {
	return &Tracer{start: time.Now(), names: []string{"?"}, byName: map[string]Name{"?": 0}}
}

// Start returns the wall-clock time at which the Tracer's clock started; traces written by
// WriteJSON record it (as jdf2goEpochNs), so that traces of several processes can be aligned.
func (tr *Tracer) Start() time.Time { return tr.start }

// Now returns the time in nanoseconds since the Tracer was created (monotonic).
func (tr *Tracer) Now() int64 {
	if tr == nil {
		return 0
	}
	return int64(time.Since(tr.start))
}

// Name interns s and returns its identifier. Interning the same string twice gives the same Name.
func (tr *Tracer) Name(s string) Name {
	if tr == nil {
		return 0
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if n, ok := tr.byName[s]; ok {
		return n
	}
	n := Name(len(tr.names))
	tr.names = append(tr.names, s)
	tr.byName[s] = n
	return n
}

// NewTrack registers a track named name inside group (a process row in the viewer). The
// caller becomes the track's only writer. A nil Tracer returns a nil Track, on which every
// method is a no-op, so callers need no "is tracing on" checks of their own.
func (tr *Tracer) NewTrack(group, name string) *Track {
	if tr == nil {
		return nil
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	t := &Track{tr: tr, group: group, name: name, id: len(tr.tracks)}
	tr.tracks = append(tr.tracks, t)
	return t
}

// Event is one recorded span or instant. Times are nanoseconds since the Tracer started.
type Event struct {
	Start, End int64
	Name       Name
	NArgs      int32
	Args       [MaxArgs]int64
	// Flow, when not zero, binds the span to a flow arrow (a message between ranks): the span
	// starts the arrow when FlowIn is false and ends it when FlowIn is true.
	Flow   uint64
	FlowIn bool
}

// Track is a sequence of events with a single writer. The zero Track is not usable; a nil
// *Track ignores every call.
//
// The writer fills the event at index n of the current chunk, then publishes n+1 with an
// atomic store; readers load n and read only published events, so they may run while the
// writer records. The mutex is taken only to install a new chunk (every chunkEvents events)
// and by readers.
type Track struct {
	tr    *Tracer
	group string
	name  string
	id    int

	mu     sync.Mutex
	chunks [][]Event // full chunks
	cur    []Event   // current chunk, len chunkEvents; changes only under mu
	n      atomic.Int64
}

// Span records an interval [start, end) named n with the given arguments.
func (t *Track) Span(n Name, start, end int64, args ...int64) { t.span(n, start, end, 0, false, args) }

func (t *Track) span(n Name, start, end int64, flow uint64, in bool, args []int64) {
	if t == nil {
		return
	}
	i := t.n.Load()
	if t.cur == nil || i == chunkEvents {
		t.mu.Lock()
		if t.cur != nil {
			t.chunks = append(t.chunks, t.cur)
		}
		t.cur = make([]Event, chunkEvents)
		t.n.Store(0)
		t.mu.Unlock()
		i = 0
	}
	e := &t.cur[i]
	e.Start, e.End, e.Name = start, end, n
	e.NArgs = int32(copy(e.Args[:], args))
	e.Flow, e.FlowIn = flow, in
	t.n.Store(i + 1)
}

// SpanFlow is Span for a span bound to flow arrow flow (unique in the job): the arrow goes
// from the span recorded with in false to the one recorded with in true, on any track of
// any rank's trace once the traces are merged.
func (t *Track) SpanFlow(n Name, start, end int64, flow uint64, in bool, args ...int64) {
	t.span(n, start, end, flow, in, args)
}

// Instant records a point event at time at.
func (t *Track) Instant(n Name, at int64, args ...int64) {
	t.Span(n, at, at, args...)
}

// view returns the published events: the full chunks and the filled part of the current one.
func (t *Track) view() ([][]Event, []Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cur := t.cur
	if cur != nil {
		cur = cur[:t.n.Load()]
	}
	return append([][]Event(nil), t.chunks...), cur
}

// Len returns the number of events recorded on the track.
func (t *Track) Len() int {
	if t == nil {
		return 0
	}
	chunks, cur := t.view()
	return len(chunks)*chunkEvents + len(cur)
}

// Events calls f for each published event in recording order. It may run while the writer
// records; events published after it started may be missed.
func (t *Track) Events(f func(*Event)) {
	if t == nil {
		return
	}
	chunks, cur := t.view()
	for _, c := range chunks {
		for i := range c {
			f(&c[i])
		}
	}
	for i := range cur {
		f(&cur[i])
	}
}

// Name returns the track's name and group.
func (t *Track) Name() (group, name string) {
	if t == nil {
		return "", ""
	}
	return t.group, t.name
}

// snapshot returns the names and tracks registered so far.
func (tr *Tracer) snapshot() ([]string, []*Track) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.names...), append([]*Track(nil), tr.tracks...)
}
