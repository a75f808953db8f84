package rt

import (
	"log/slog"
	"testing"
	"time"
)

// A lane merges close bodies of one class, keeps classes apart once a segment is laneMin
// long, lumps short bodies of any class together, and bounds what it keeps between samples.
func TestLaneSegments(t *testing.T) {
	ms := int64(time.Millisecond)
	var l lane
	body := func(label string, from, to int64) { l.begin(label, from); l.end(to) }
	body("A", 0, 3*ms)
	body("A", 3*ms+ms/10, 6*ms) // close, same class: merged
	body("B", 6*ms, 9*ms)       // other class after a long segment: new segment
	body("B", 20*ms, 23*ms)     // same class after a gap: new segment
	body("C", 23*ms, 23*ms+ms/10)
	body("D", 23*ms+ms/5, 23*ms+ms/2) // short and close: lumped with C
	if label, _ := l.running(); label != "" {
		t.Fatalf("running %q after the last body ended", label)
	}
	l.begin("E", 30*ms)
	if label, from := l.running(); label != "E" || from != 30*ms {
		t.Fatalf("running %q from %d, want E from 30 ms", label, from)
	}
	l.end(31 * ms)
	got := l.drain(nil)
	want := []laneSeg{{"A", 0, 6 * ms}, {"B", 6 * ms, 9 * ms}, {"B", 20 * ms, 23 * ms},
		{"C", 23 * ms, 23*ms + ms/2}, {"E", 30 * ms, 31 * ms}}
	if len(got) != len(want) {
		t.Fatalf("segments %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("segment %d: %v, want %v", i, got[i], want[i])
		}
	}
	if rest := l.drain(nil); len(rest) != 0 {
		t.Fatalf("a second drain returned %v", rest)
	}
	for i := range int64(10 * laneMaxSegs) {
		body("X", i*10*ms, i*10*ms+3*ms)
	}
	if n := len(l.drain(nil)); n > laneMaxSegs+1 {
		t.Fatalf("%d segments kept between two samples, want at most %d", n, laneMaxSegs+1)
	}
}

// BenchmarkDashboardSample: one snapshot of a Context with 2 workers (each with a lane
// segment per laneMin of a busy sample interval) after a taskpool of 4 classes, encoded
// and published.
func BenchmarkDashboardSample(b *testing.B) {
	c, err := New(Workers(2), Dashboard("localhost:0"), Logger(slog.New(slog.DiscardHandler)))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	classes := make([]classState, 4)
	for i := range classes {
		classes[i].tc = &TaskClass{Name: string(rune('A' + i))}
		classes[i].total = 1000
	}
	tp := &Taskpool{name: "tp", cs: classes, done: make(chan struct{})}
	c.dash.addPool(tp)
	for b.Loop() {
		for _, l := range c.dash.lanes {
			for k := range int64(dashEvery / time.Duration(laneMin)) {
				l.begin(classes[k%4].tc.Name, k*laneMin)
				l.end(k*laneMin + laneMin - 1)
			}
		}
		c.dash.sample(false)
	}
}
