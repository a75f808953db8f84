package profile

import (
	"sync"
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
}

// Track is a sequence of events with a single writer. The zero Track is not usable; a nil
// *Track ignores every call.
type Track struct {
	tr    *Tracer
	group string
	name  string
	id    int

	chunks [][]Event
	cur    []Event
}

// Span records an interval [start, end) named n with the given arguments.
func (t *Track) Span(n Name, start, end int64, args ...int64) {
	if t == nil {
		return
	}
	e := t.next()
	e.Start, e.End, e.Name = start, end, n
	e.NArgs = int32(copy(e.Args[:], args))
}

// Instant records a point event at time at.
func (t *Track) Instant(n Name, at int64, args ...int64) {
	t.Span(n, at, at, args...)
}

// next returns a pointer to a fresh event slot, appending a chunk when the current one is full.
func (t *Track) next() *Event {
	if len(t.cur) == cap(t.cur) {
		if t.cur != nil {
			t.chunks = append(t.chunks, t.cur)
		}
		t.cur = make([]Event, 0, chunkEvents)
	}
	t.cur = t.cur[:len(t.cur)+1]
	return &t.cur[len(t.cur)-1]
}

// Len returns the number of events recorded on the track.
func (t *Track) Len() int {
	if t == nil {
		return 0
	}
	n := len(t.cur)
	for _, c := range t.chunks {
		n += len(c)
	}
	return n
}

// Events calls f for each recorded event in recording order. Read only after the writer stopped.
func (t *Track) Events(f func(*Event)) {
	if t == nil {
		return
	}
	for _, c := range t.chunks {
		for i := range c {
			f(&c[i])
		}
	}
	for i := range t.cur {
		f(&t.cur[i])
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
