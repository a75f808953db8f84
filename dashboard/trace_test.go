package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt/profile"
)

const traceHead = `{"traceEvents":[
{"ph":"M","name":"process_name","pid":1,"args":{"name":"workers"}},
{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"worker 0"}},
{"ph":"X","name":"T(0)","pid":1,"tid":1,"ts":0,"dur":5},`

// A span whose time is out of range or not a number (a timestamp of 1e308 microseconds, one
// beyond float64, a string, a NaN; a negative duration) is refused with an error naming the
// event, rather than becoming snapshots that cannot be encoded as JSON.
func TestFromTraceRefusesTimesOutOfRange(t *testing.T) {
	named := []string{"bad.json", "event 3", `"T(1)"`}
	for _, tc := range []struct {
		bad  string
		want []string
	}{
		{`{"ph":"X","name":"T(1)","pid":1,"tid":1,"ts":1e308,"dur":5}`, named},
		{`{"ph":"X","name":"T(1)","pid":1,"tid":1,"ts":10,"dur":1e308}`, named},
		{`{"ph":"X","name":"T(1)","pid":1,"tid":1,"ts":10,"dur":-5}`, named},
		{`{"ph":"X","name":"T(1)","pid":1,"tid":1,"ts":-1e308,"dur":5}`, named},
		{`{"ph":"X","name":"T(1)","pid":1,"tid":1,"ts":1e309,"dur":5}`, append(named, `"ts"`)},
		{`{"ph":"X","pid":1,"tid":1,"ts":10,"dur":1e999,"name":"T(1)"}`, append(named, `"dur"`)},
		{`{"ph":"X","name":"T(1)","pid":1,"tid":1,"ts":"NaN","dur":5}`, append(named, `"ts"`)},
		{`{"ph":"X","name":"T(1)","pid":1,"tid":1,"ts":NaN,"dur":5}`, []string{"bad.json", "event 3", "invalid character"}},
		{`{"ph":"X","name":"T(1)","pid":1,"tid":1,"ts":10,"dur":Infinity}`, []string{"bad.json", "event 3"}},
	} {
		snaps, err := FromTrace(strings.NewReader(traceHead+tc.bad+"]}"), "bad.json")
		if err == nil {
			// Without the check, the replay cannot be served: its snapshots hold +Inf or NaN.
			for _, s := range snaps {
				if _, jerr := json.Marshal(s); jerr != nil {
					t.Fatalf("%s: FromTrace accepted it, and its snapshot does not encode: %v", tc.bad, jerr)
				}
			}
			t.Fatalf("%s: FromTrace accepted it", tc.bad)
		}
		for _, want := range tc.want {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: the error %q does not mention %s", tc.bad, err, want)
			}
		}
	}
}

// Malformed traces are errors that say what is wrong and where: a file cut anywhere, an
// event too large to hold, a worker id no lane can have, more tracks than a page shows, JSON
// that is not a trace.
func TestFromTraceMalformed(t *testing.T) {
	good := synthTrace(t, synth{events: 200, classes: 3, span: time.Second})
	if _, err := FromTrace(bytes.NewReader(good), "good.json"); err != nil {
		t.Fatalf("the whole trace: %v", err)
	}
	for _, cut := range []int{0, 1, 20, 40, len(good) / 3, len(good) / 2, len(good) - 200, len(good) - 3, len(good) - 2} {
		_, err := FromTrace(bytes.NewReader(good[:cut]), "cut.json")
		if err == nil || !strings.Contains(err.Error(), "cut.json") ||
			!strings.Contains(err.Error(), "truncated") && !strings.Contains(err.Error(), "empty file") {
			t.Errorf("the trace cut at byte %d of %d: %v, want an error saying it is truncated", cut, len(good), err)
		}
	}
	var many strings.Builder
	many.WriteString(`{"traceEvents":[`)
	for i := range maxTracks + 1 {
		fmt.Fprintf(&many, `{"ph":"M","name":"process_name","pid":%d,"args":{"name":"p%d"}},`, i, i)
	}
	many.WriteString(`{"ph":"X","name":"T","pid":0,"tid":0,"ts":0,"dur":1}]}`)
	for _, tc := range []struct {
		name, trace string
		want        []string
	}{
		{"huge event", traceHead + `{"ph":"X","name":"` + strings.Repeat("x", 2*maxValueBytes) + `","pid":1,"tid":1,"ts":0,"dur":1}]}`,
			[]string{"event 3", "larger than"}},
		{"huge worker id", `{"traceEvents":[{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"worker 99999999"}}]}`,
			[]string{"event 0", "worker 99999999", "out of range"}},
		{"negative worker id", `{"traceEvents":[{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"worker -1"}}]}`,
			[]string{"event 0", "out of range"}},
		{"too many tracks", many.String(), []string{fmt.Sprintf("event %d", maxTracks), "more than"}},
		{"not an event", traceHead + `5]}`, []string{"event 3", "not an event"}},
		{"events not an array", `{"traceEvents":{}}`, []string{"not an array"}},
		{"a string", `"trace"`, []string{"not a JSON trace"}},
		{"garbage", `{"traceEvents":[}`, []string{"invalid character"}},
		{"no spans", `{"traceEvents":[{"ph":"M","name":"process_name","pid":0,"args":{"name":"workers"}}]}`, []string{"no task spans"}},
		{"no tasks", traceHead[:strings.LastIndex(traceHead, "\n")] + `{"ph":"X","name":"startup:T","pid":1,"tid":1,"ts":0,"dur":5}]}`,
			[]string{"no task spans"}},
	} {
		_, err := FromTrace(strings.NewReader(tc.trace), "x.json")
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		for _, want := range append(tc.want, "x.json") {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: the error %q does not mention %q", tc.name, err, want)
			}
		}
	}
}

// A small trace is replayed exactly: every task counted in its class and at its end, every
// span a lane segment, devices' tasks and transfers counted, the workers' busy time right.
// The array form of the format reads as the object form does, and members other than the
// events are skipped.
func TestFromTraceSmall(t *testing.T) {
	events := `
{"ph":"M","name":"process_name","pid":1,"args":{"name":"workers"}},
{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"worker 0"}},
{"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"worker 1"}},
{"ph":"M","name":"thread_name","pid":1,"tid":3,"args":{"name":"inserter 0"}},
{"ph":"X","name":"startup:A","pid":1,"tid":1,"ts":0,"dur":1000000},
{"ph":"X","name":"A(0)","pid":1,"tid":1,"ts":1000000,"dur":1000000},
{"ph":"X","name":"B(0, 1)","pid":1,"tid":1,"ts":2000000,"dur":2000000},
{"ph":"X","name":"A(1)","pid":1,"tid":2,"ts":1000000,"dur":3000000},
{"ph":"X","name":"gpu own gpu0","pid":1,"tid":2,"ts":4000000,"dur":1000000},
{"ph":"X","name":"A(9)","pid":1,"tid":3,"ts":1000000,"dur":1000000},
{"ph":"i","name":"mark","pid":1,"tid":2,"ts":4500000},
{"ph":"X","name":"A(2)","pid":2,"tid":7,"ts":4000000,"dur":500000},
{"ph":"X","name":"stage_in A(2)","pid":2,"tid":8,"ts":3900000,"dur":100000},
{"ph":"X","name":"stage_out A(2)","pid":2,"tid":8,"ts":4500000,"dur":100000},
{"ph":"X","name":"C(0)","pid":3,"tid":1,"ts":4000000,"dur":100000},
{"ph":"M","name":"process_name","pid":2,"args":{"name":"gpu0"}}`
	for form, trace := range map[string]string{
		"object": `{"displayTimeUnit":"ns","meta":{"a":[1,{"b":null}],"c":"d"},"traceEvents":[` + events + `],"other":[]}`,
		"array":  `[` + events + `]`,
	} {
		snaps, err := FromTrace(strings.NewReader(trace), "small.json")
		if err != nil {
			t.Fatalf("%s form: %v", form, err)
		}
		last := snaps[len(snaps)-1]
		// The run spans 0 to 5 s: 100 snapshots of 50 ms.
		if len(snaps) != 100 || !last.Finished || last.Time != 5 || last.Workers != 2 || last.Done != 4 || last.Note != "" {
			t.Fatalf("%s form: %d snapshots, the last %+v: want 100, at 5 s, 2 workers, 4 tasks, no note", form, len(snaps), last)
		}
		got := fmt.Sprint(last.Classes)
		if want := "[{ A 3 3} { B 1 1}]"; got != want {
			t.Errorf("%s form: classes %s, want %s", form, got, want)
		}
		if g := last.GPUs; len(g) != 1 || g[0].Name != "gpu0" || g[0].Executed != 1 || g[0].StageIns != 1 || g[0].StageOuts != 1 {
			t.Errorf("%s form: devices %+v", form, last.GPUs)
		}
		var lanes []string
		busy := make([]float64, 2)
		for i, s := range snaps {
			for _, g := range s.Lanes {
				lanes = append(lanes, fmt.Sprintf("w%d %s %g-%g", g.Worker, g.Class, g.Start, g.End))
				if g.End > s.Time+1e-9 || i > 0 && g.End <= snaps[i-1].Time {
					t.Errorf("%s form: segment %+v in the snapshot at %g s", form, g, s.Time)
				}
			}
			for w, b := range s.Busy {
				busy[w] += b * 0.05
			}
		}
		if got, want := strings.Join(lanes, ", "), "w0 A 1-2, w0 B 2-4, w1 A 1-4, w1 gpu0 submit 4-5"; got != want {
			t.Errorf("%s form: lanes %s, want %s", form, got, want)
		}
		if !(busy[0] > 2.999 && busy[0] < 3.001 && busy[1] > 3.999 && busy[1] < 4.001) {
			t.Errorf("%s form: busy seconds %v, want [3 4]", form, busy)
		}
		// Snapshot k is at (k+1)·50 ms: tasks end at 2, 4 (two) and 4.5 s.
		var done []int64
		for _, k := range []int{38, 39, 78, 79, 88, 89} {
			done = append(done, snaps[k].Done)
		}
		if got := fmt.Sprint(done); got != "[0 1 1 3 3 4]" {
			t.Errorf("%s form: tasks done at 1.95, 2, 3.95, 4, 4.45 and 4.5 s: %s, want [0 1 1 3 3 4]", form, got)
		}
	}
}

// A trace of many distinct class names, many devices and busy lanes becomes bounded
// snapshots: maxClasses classes by name and the rest as one, maxDevices devices by name and
// the rest as one, at most laneCap segments per worker; and the page is told so.
func TestFromTraceManyNames(t *testing.T) {
	const classes, devices = 5000, 40
	trace := synthTrace(t, synth{events: 20000, classes: classes, devices: devices, span: 10 * time.Second})
	snaps, err := FromTrace(bytes.NewReader(trace), "names.json")
	if err != nil {
		t.Fatal(err)
	}
	last := snaps[len(snaps)-1]
	if n := len(last.Classes); n != maxClasses+1 || last.Classes[n-1].Name != otherClasses {
		t.Fatalf("%d classes, the last %+v: want %d, the last %s", n, last.Classes[n-1], maxClasses+1, otherClasses)
	}
	if n := len(last.GPUs); n != maxDevices+1 || last.GPUs[n-1].Name != otherDevices {
		t.Fatalf("%d devices, the last %+v: want %d, the last %s", n, last.GPUs[n-1], maxDevices+1, otherDevices)
	}
	var sum, exec int64
	for _, c := range last.Classes {
		sum += c.Total
	}
	for _, g := range last.GPUs {
		exec += g.Executed
	}
	if sum != last.Done || sum == 0 || exec == 0 {
		t.Errorf("classes sum to %d tasks, devices ran %d, done %d", sum, exec, last.Done)
	}
	segs := make([]int, last.Workers)
	size := 0
	for _, s := range snaps {
		for _, g := range s.Lanes {
			segs[g.Worker]++
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		size += len(b)
	}
	for w, n := range segs {
		if n == 0 || n > maxLaneCap {
			t.Errorf("worker %d: %d lane segments, want 1 to %d", w, n, maxLaneCap)
		}
	}
	for _, want := range []string{otherClasses, otherDevices, "one segment per"} {
		if !strings.Contains(last.Note, want) {
			t.Errorf("the note %q does not mention %q", last.Note, want)
		}
	}
	// What the page receives is bounded by the bounds, not by the trace.
	if size > 4<<20 {
		t.Errorf("the snapshots encode to %d bytes", size)
	}
}

// FromTrace's memory does not grow with the trace: the live heap, sampled whenever it has read
// another MiB (after a collection, so that only what it keeps counts), peaks no higher on a
// trace 8 times larger, and stays a small fraction of it.
func TestFromTraceMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes traces of 3 and 25 MB")
	}
	dir := t.TempDir()
	measure := func(events int) (size int64, peak int64, kept int64) {
		path := filepath.Join(dir, fmt.Sprintf("trace-%d.json", events))
		// The same run time for both traces: the same number of snapshots.
		if err := os.WriteFile(path, synthTrace(t, synth{events: events, classes: 12, devices: 1, span: 300 * time.Second}), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		st, _ := f.Stat()
		base := liveHeap()
		pr := &probeReader{f: f}
		snaps, err := FromTrace(pr, "synth.json")
		if err != nil {
			t.Fatal(err)
		}
		kept = liveHeap() - base
		runtime.KeepAlive(snaps)
		return st.Size(), pr.peak - base, kept
	}
	smallSize, smallPeak, smallKept := measure(40_000)
	largeSize, largePeak, largeKept := measure(320_000)
	t.Logf("trace of %d bytes: live heap peak %d, snapshots %d; trace of %d bytes: %d, %d",
		smallSize, smallPeak, smallKept, largeSize, largePeak, largeKept)
	if largeSize < 7*smallSize {
		t.Fatalf("traces of %d and %d bytes: want the second 7 times larger or more", smallSize, largeSize)
	}
	// Before streaming, the peak grew by about 9 bytes per byte of trace.
	const slack = 2 << 20
	if largePeak > smallPeak+slack || largeKept > smallKept+slack || largePeak > largeSize/8 {
		t.Errorf("live heap peak %d and kept %d on the larger trace, %d and %d on the smaller: want no growth beyond %d bytes, and a peak below 1/8 of %d",
			largePeak, largeKept, smallPeak, smallKept, slack, largeSize)
	}
}

// liveHeap returns the bytes the heap holds after a collection.
func liveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// probeReader reads f and samples the live heap after every MiB it hands out: FromTrace's
// own reads, so every sample sees what FromTrace holds at that point of the trace.
type probeReader struct {
	f       *os.File
	n, next int64
	peak    int64
}

func (p *probeReader) Read(b []byte) (int, error) {
	n, err := p.f.Read(b)
	p.n += int64(n)
	if p.n >= p.next {
		p.next = p.n + 1<<20
		p.peak = max(p.peak, liveHeap())
	}
	return n, err
}

func (p *probeReader) Seek(off int64, whence int) (int64, error) { return p.f.Seek(off, whence) }

// synth describes a generated trace: events spans spread over span on 8 workers, named after
// classes distinct classes, and when devices > 0 one in 9 spans on a device (tasks and stage-ins).
type synth struct {
	events, classes, devices int
	span                     time.Duration
}

// synthTrace writes the trace s describes with rt/profile's writer, the format FromTrace reads.
func synthTrace(t *testing.T, s synth) []byte {
	t.Helper()
	const workers = 8
	tr := profile.New()
	names := make([]profile.Name, s.classes)
	for i := range names {
		names[i] = tr.Name(fmt.Sprintf("C%d", i))
	}
	var tracks []*profile.Track
	for w := range workers {
		tracks = append(tracks, tr.NewTrack("workers", fmt.Sprintf("worker %d", w)))
	}
	var devs []*profile.Track
	for d := range s.devices {
		devs = append(devs, tr.NewTrack(fmt.Sprintf("gpu%d", d), "stream 0"))
	}
	startup, own, stageIn := tr.Name("startup:C0"), tr.Name("gpu own gpu0"), tr.Name("stage_in C0")
	tracks[0].Span(startup, 0, 1000)
	lanes := workers + min(s.devices, 1)
	per := s.span.Nanoseconds() / int64(s.events/lanes+1)
	for i := range s.events {
		slot, lane := int64(i/lanes), i%lanes
		start, end := slot*per, slot*per+per*3/4
		switch {
		case lane < workers && i%97 == 0 && s.devices > 0:
			tracks[lane].Span(own, start, end)
		case lane < workers:
			tracks[lane].Span(names[i%s.classes], start, end, int64(i), int64(lane))
		case slot%2 == 0:
			devs[i%s.devices].Span(names[i%s.classes], start, end, int64(i))
		default:
			devs[i%s.devices].Span(stageIn, start, end)
		}
	}
	var b bytes.Buffer
	if err := tr.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
