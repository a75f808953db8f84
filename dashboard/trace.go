package dashboard

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A replay's memory is bounded by what the page shows, not by the size of the trace: the
// trace is read as a stream (scanTrace), twice, and only these are kept.
const (
	// maxReplay bounds the number of snapshots a trace becomes.
	maxReplay = 600

	// maxTraceTime bounds a span's timestamp and duration, in microseconds (about 31 years):
	// beyond it a time is garbage, and sums of such times overflow to infinities that no
	// snapshot can carry as JSON.
	maxTraceTime = 1e15

	// maxClasses task classes are shown by name, in the order the trace first names them;
	// the tasks of any further class are counted together as otherClasses.
	maxClasses = 64

	// maxDevices devices (processes other than "workers") are shown by name; the spans of
	// any further device are counted together as otherDevices.
	maxDevices = 16

	// maxTracks bounds the processes and worker threads a trace may name: the first pass
	// keeps them all, to know which track is which before the second pass reads the spans.
	maxTracks = 4096

	// Each worker's lane keeps its spans as they are up to laneCap of them, then one cell per
	// 1/laneCap of the run. laneCap is maxLaneSegments shared among the workers, within
	// [minLaneCap, maxLaneCap].
	maxLaneSegments = 1 << 18
	minLaneCap      = 64
	maxLaneCap      = 1024

	// maxNameBytes bounds the names kept (classes, devices): longer ones are cut.
	maxNameBytes = 128
)

// The names of what a replay sums beyond its bounds. A class name never holds '(' (className
// cuts there), so otherClasses cannot be a class of the trace.
const (
	otherClasses = "(other classes)"
	otherDevices = "(other devices)"
)

// FromTrace rebuilds a finished run from a Chrome/Perfetto JSON trace written by a jdf2go
// program (rt.Trace or JDF2GO_TRACE) as a sequence of snapshots, the last one Finished. The
// "workers" process's threads are the worker lanes; a span there is a task of the class its
// name starts with (startup walks excepted). Every other process is a device: its spans
// named after a class are tasks it ran, "stage_in …" and "stage_out …" spans its transfers.
// A trace does not record the classes' totals, so each class's total is the number of its
// tasks the trace holds.
//
// FromTrace reads r twice, as a stream: first the tracks' names and the run's time span,
// then the spans, which it aggregates as they come. Its memory does not grow with the trace:
// at most maxReplay snapshots, maxClasses classes and maxDevices devices by name (the rest
// summed as "(other classes)" and "(other devices)"), and per worker lane at most laneCap
// segments (a lane with more spans shows one segment per 1/laneCap of the run, in the class
// of its longest span). Snapshot.Note says which of these bounds the trace reached.
//
// A span whose timestamp or duration is not a finite number of microseconds within
// ±maxTraceTime (a duration >= 0), a malformed or truncated file, an event larger than
// maxValueBytes, or more than maxTracks named tracks is an error naming the event.
func FromTrace(r io.ReadSeeker, name string) ([]*Snapshot, error) {
	ix, err := indexTrace(r)
	if err != nil {
		return nil, fmt.Errorf("dashboard: reading trace %s: %w", name, err)
	}
	if ix.spans == 0 {
		return nil, fmt.Errorf("dashboard: trace %s holds no task spans", name)
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("dashboard: reading trace %s again: %w", name, err)
	}
	rp := newReplay(ix)
	if err := scanTrace(r, rp.add); err != nil {
		return nil, fmt.Errorf("dashboard: reading trace %s: %w", name, err)
	}
	if rp.tasks == 0 {
		return nil, fmt.Errorf("dashboard: trace %s holds no task spans", name)
	}
	return rp.snapshots(name), nil
}

// traceIndex is what the first pass learns: which track is which, and the run's time span.
type traceIndex struct {
	procs    map[int]string // pid → process name
	threads  map[[2]int]int // (pid, tid) → worker id, for the threads named "worker N"
	workerOf map[[2]int]int // the threads of the "workers" process among them
	lanes    int            // 1 + the largest worker id
	t0, t1   float64        // seconds of the trace: the first span's start, the last one's end
	spans    int            // complete ("X") events
}

func indexTrace(r io.Reader) (*traceIndex, error) {
	ix := &traceIndex{procs: map[int]string{}, threads: map[[2]int]int{}, workerOf: map[[2]int]int{},
		t0: math.Inf(1), t1: math.Inf(-1)}
	err := scanTrace(r, func(i int, e *traceEvent) error {
		switch e.Ph {
		case "X":
			if !(math.Abs(e.Ts) <= maxTraceTime && e.Dur >= 0 && e.Dur <= maxTraceTime) {
				return fmt.Errorf("event %d (%q): timestamp %g µs and duration %g µs: want times within ±%g µs and a duration >= 0",
					i, e.Name, e.Ts, e.Dur, maxTraceTime)
			}
			ix.spans++
			ix.t0, ix.t1 = min(ix.t0, e.Ts/1e6), max(ix.t1, (e.Ts+e.Dur)/1e6)
		case "M":
			return ix.meta(i, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for k, id := range ix.threads {
		if ix.procs[k[0]] == "workers" {
			ix.workerOf[k] = id
			ix.lanes = max(ix.lanes, id+1)
		}
	}
	return ix, nil
}

// meta records a process_name or thread_name metadata event; other names, and names whose
// args do not hold a name, are ignored.
func (ix *traceIndex) meta(i int, e *traceEvent) error {
	if e.Name != "process_name" && e.Name != "thread_name" {
		return nil
	}
	var a struct{ Name string }
	if json.Unmarshal(e.Args, &a) != nil {
		return nil
	}
	tooMany := func() error {
		return fmt.Errorf("event %d (%s %q): more than %d processes and worker threads named", i, e.Name, shortName(a.Name), maxTracks)
	}
	if e.Name == "process_name" {
		if _, ok := ix.procs[e.Pid]; !ok && len(ix.procs)+len(ix.threads) >= maxTracks {
			return tooMany()
		}
		ix.procs[e.Pid] = strings.Clone(shortName(a.Name))
		return nil
	}
	n, ok := strings.CutPrefix(a.Name, "worker ")
	if !ok {
		return nil
	}
	id, err := strconv.Atoi(n)
	if err != nil {
		return nil
	}
	if id < 0 || id >= maxTracks {
		return fmt.Errorf("event %d (thread_name %q): worker id out of range [0, %d)", i, shortName(a.Name), maxTracks)
	}
	k := [2]int{e.Pid, e.Tid}
	if _, ok := ix.threads[k]; !ok && len(ix.procs)+len(ix.threads) >= maxTracks {
		return tooMany()
	}
	ix.threads[k] = id
	return nil
}

// replay aggregates the spans of the second pass, per snapshot interval: snapshot k (from 0)
// is at time (k+1)·step after the first span, the last one at the end of the run.
type replay struct {
	ix               *traceIndex
	t0, dur, step    float64
	n                int // snapshots
	laneCap          int
	classes, devices nameSet
	submits          nameSet   // the devices named by the workers' "gpu own DEVICE" spans
	done             [][]int64 // [class slot][k]: its tasks that ended in interval k; nil: none
	devs             []*deviceCounts
	lanes            []*workerLane // [worker id]; nil: no span yet
	workers          int           // 1 + the largest worker id with a span
	tasks            int64
	coarse           bool // a lane keeps cells, not spans
}

type deviceCounts struct {
	exec, in, out []int64 // [k]: tasks, stage-ins and stage-outs that ended in interval k
}

func newReplay(ix *traceIndex) *replay {
	dur := ix.t1 - ix.t0
	// A snapshot every 250 ms as live, but at least 100 for a short run and at most
	// maxReplay for a long one.
	step := max(dur/maxReplay, min(0.25, dur/100), 1e-6)
	return &replay{ix: ix, t0: ix.t0, dur: dur, step: step, n: max(1, int(math.Ceil(dur/step))),
		laneCap: min(max(maxLaneSegments/max(ix.lanes, 1), minLaneCap), maxLaneCap),
		classes: newNameSet(maxClasses), devices: newNameSet(maxDevices), submits: newNameSet(maxDevices),
		done: make([][]int64, maxClasses+1), devs: make([]*deviceCounts, maxDevices+1)}
}

// add aggregates one event of the second pass (the first one checked its times).
func (rp *replay) add(_ int, e *traceEvent) error {
	if e.Ph != "X" {
		return nil
	}
	start := min(max(e.Ts/1e6-rp.t0, 0), rp.dur)
	end := min(max((e.Ts+e.Dur)/1e6-rp.t0, start), rp.dur)
	if w, ok := rp.ix.workerOf[[2]int{e.Pid, e.Tid}]; ok {
		rp.workers = max(rp.workers, w+1)
		var label int32
		switch {
		case strings.HasPrefix(e.Name, "startup:"):
			return nil
		case strings.HasPrefix(e.Name, "gpu own "):
			// The worker managed a device: the live lanes' "DEVICE submit".
			label = -1 - int32(rp.submits.id(strings.TrimPrefix(e.Name, "gpu own ")))
		default:
			c := rp.classes.id(className(e.Name))
			rp.task(c, end)
			label = int32(c)
		}
		rp.lane(w).add(start, end, label, rp)
		return nil
	}
	dev := rp.ix.procs[e.Pid]
	if dev == "" || dev == "workers" {
		return nil
	}
	di := rp.devices.id(dev)
	d := rp.devs[di]
	if d == nil {
		d = &deviceCounts{make([]int64, rp.n), make([]int64, rp.n), make([]int64, rp.n)}
		rp.devs[di] = d
	}
	switch k := rp.snap(end); {
	case strings.HasPrefix(e.Name, "stage_in "):
		d.in[k]++
	case strings.HasPrefix(e.Name, "stage_out "):
		d.out[k]++
	case !strings.Contains(className(e.Name), " "):
		rp.task(rp.classes.id(className(e.Name)), end)
		d.exec[k]++
	}
	return nil
}

// task counts a task of class slot c that ended at end.
func (rp *replay) task(c int, end float64) {
	if rp.done[c] == nil {
		rp.done[c] = make([]int64, rp.n)
	}
	rp.done[c][rp.snap(end)]++
	rp.tasks++
}

// snap returns the snapshot that first counts what ended at t (seconds after the first
// span): the first one at or after t.
func (rp *replay) snap(t float64) int {
	k := max(0, min(int(math.Ceil(t/rp.step))-1, rp.n-1))
	for k > 0 && t <= float64(k)*rp.step {
		k--
	}
	for k < rp.n-1 && t > float64(k+1)*rp.step {
		k++
	}
	return k
}

func (rp *replay) lane(w int) *workerLane {
	for len(rp.lanes) <= w {
		rp.lanes = append(rp.lanes, nil)
	}
	if rp.lanes[w] == nil {
		rp.lanes[w] = &workerLane{partial: make([]float64, rp.n), whole: make([]int32, rp.n+1)}
	}
	return rp.lanes[w]
}

// workerLane is what a worker's lane keeps: its busy time per snapshot interval, and its
// spans, or once it had more than laneCap of them, one cell per 1/laneCap of the run.
type workerLane struct {
	partial []float64 // [k]: busy seconds in interval k from spans that cover part of it
	whole   []int32   // difference array of the number of spans that cover interval k whole
	spans   []laneSpan
	cells   []laneCell // nil while spans holds every span
}

// laneSpan is a span of a lane. label is a class slot (>= 0) or -1 - a device slot ("DEVICE
// submit").
type laneSpan struct {
	s, e  float64
	label int32
}

// laneCell sums the spans that start in one 1/laneCap of the run: their extent, and the label
// of the longest.
type laneCell struct {
	s, e, longest float64
	label         int32
	n             int32
}

func (l *workerLane) add(a, b float64, label int32, rp *replay) {
	ka, kb := int(a/rp.step), int(b/rp.step)
	ka, kb = min(max(ka, 0), rp.n-1), min(max(kb, 0), rp.n-1)
	if ka == kb {
		l.partial[ka] += b - a
	} else {
		l.partial[ka] += max(float64(ka+1)*rp.step-a, 0)
		l.partial[kb] += max(b-float64(kb)*rp.step, 0)
		l.whole[ka+1]++
		l.whole[kb]--
	}
	sp := laneSpan{a, b, label}
	if l.cells == nil {
		if len(l.spans) < rp.laneCap {
			l.spans = append(l.spans, sp)
			return
		}
		l.cells = make([]laneCell, rp.laneCap)
		for _, s := range l.spans {
			l.cell(s, rp.dur)
		}
		l.spans = nil
		rp.coarse = true
	}
	l.cell(sp, rp.dur)
}

func (l *workerLane) cell(sp laneSpan, dur float64) {
	i := 0
	if dur > 0 {
		i = min(max(int(sp.s/dur*float64(len(l.cells))), 0), len(l.cells)-1)
	}
	c := &l.cells[i]
	if c.n == 0 {
		*c = laneCell{s: sp.s, e: sp.e, longest: sp.e - sp.s, label: sp.label}
	} else {
		c.s, c.e = min(c.s, sp.s), max(c.e, sp.e)
		if d := sp.e - sp.s; d > c.longest {
			c.longest, c.label = d, sp.label
		}
	}
	c.n++
}

// segments returns the lane's segments: its spans, or its cells, a cell joined to the
// previous segment when both show the same label and touch.
func (l *workerLane) segments(w int, label func(int32) string) []Segment {
	var out []Segment
	if l.cells == nil {
		for _, s := range l.spans {
			out = append(out, Segment{w, label(s.label), s.s, s.e})
		}
		return out
	}
	for _, c := range l.cells {
		if c.n == 0 {
			continue
		}
		if m := len(out) - 1; m >= 0 && out[m].Class == label(c.label) && out[m].End >= c.s {
			out[m].End = max(out[m].End, c.e)
			continue
		}
		out = append(out, Segment{w, label(c.label), c.s, c.e})
	}
	return out
}

// snapshots builds the replay's snapshots from what the second pass aggregated.
func (rp *replay) snapshots(name string) []*Snapshot {
	label := func(l int32) string {
		if l >= 0 {
			return rp.classes.name(int(l), otherClasses)
		}
		return rp.submits.name(int(-1-l), otherDevices) + " submit"
	}
	var segs []Segment
	for w, l := range rp.lanes {
		if l != nil {
			segs = append(segs, l.segments(w, label)...)
		}
	}
	slices.SortStableFunc(segs, func(a, b Segment) int { return cmp.Compare(a.End, b.End) })
	// The classes in name order, the other classes last.
	var order []int
	for c := range rp.classes.names {
		order = append(order, c)
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(rp.classes.names[a], rp.classes.names[b]) })
	if rp.done[maxClasses] != nil {
		order = append(order, maxClasses)
	}
	totals := make([]int64, maxClasses+1)
	for c, d := range rp.done {
		for _, v := range d {
			totals[c] += v
		}
	}
	var devs []int
	for d := range rp.devs {
		if rp.devs[d] != nil {
			devs = append(devs, d)
		}
	}
	note := rp.note()
	done := make([]int64, maxClasses+1)
	gpus := make([]GPU, len(devs))
	for i, d := range devs {
		gpus[i].Name = rp.devices.name(d, otherDevices)
	}
	whole := make([]int32, len(rp.lanes)) // per worker: the running sum of its difference array
	var out []*Snapshot
	var total int64
	si := 0
	for k := 0; k < rp.n; k++ {
		now := float64(k+1) * rp.step
		if k == rp.n-1 {
			now = rp.dur
		}
		s := &Snapshot{Time: now, Source: "trace " + name, Ranks: 1, Window: rp.dur,
			Workers: rp.workers, Finished: k == rp.n-1, Note: note}
		for ; si < len(segs) && rp.snap(segs[si].End) <= k; si++ {
			s.Lanes = append(s.Lanes, segs[si])
		}
		prev := total
		for _, c := range order {
			done[c] += rp.done[c][k]
			total += rp.done[c][k]
			s.Classes = append(s.Classes, Class{Name: rp.classes.name(c, otherClasses), Done: done[c], Total: totals[c]})
		}
		s.Done, s.Rate = total, float64(total-prev)/rp.step
		for i, d := range devs {
			c := rp.devs[d]
			gpus[i].Executed += c.exec[k]
			gpus[i].StageIns += c.in[k]
			gpus[i].StageOuts += c.out[k]
		}
		s.GPUs = append([]GPU(nil), gpus...)
		s.Busy = make([]float64, rp.workers)
		iv := now - float64(k)*rp.step
		for w, l := range rp.lanes {
			if l == nil {
				continue
			}
			whole[w] += l.whole[k]
			if iv > 0 {
				s.Busy[w] = min(max((l.partial[k]+float64(whole[w])*rp.step)/iv, 0), 1)
			}
		}
		out = append(out, s)
	}
	return out
}

// note says which bounds of the replay the trace reached, for the page to show.
func (rp *replay) note() string {
	var notes []string
	if rp.classes.over {
		notes = append(notes, fmt.Sprintf("the trace holds more than %d task classes: the tasks of the others are counted as %s",
			maxClasses, otherClasses))
	}
	if rp.devices.over || rp.submits.over {
		notes = append(notes, fmt.Sprintf("the trace holds more than %d devices: the others are counted as %s",
			maxDevices, otherDevices))
	}
	if rp.coarse {
		notes = append(notes, fmt.Sprintf("a worker that ran more than %d spans is drawn with one segment per %.3g s of the run, in the colour of its longest span",
			rp.laneCap, rp.dur/float64(rp.laneCap)))
	}
	return strings.Join(notes, "; ")
}

// nameSet numbers up to max distinct names in the order they come; every further name gets
// the number max, the slot that sums the others.
type nameSet struct {
	ids   map[string]int
	names []string
	max   int
	over  bool // a name got the slot max
}

func newNameSet(max int) nameSet { return nameSet{ids: map[string]int{}, max: max} }

func (s *nameSet) id(name string) int {
	name = shortName(name)
	if i, ok := s.ids[name]; ok {
		return i
	}
	if len(s.names) == s.max {
		s.over = true
		return s.max
	}
	name = strings.Clone(name) // not a slice of the event's text
	s.ids[name] = len(s.names)
	s.names = append(s.names, name)
	return len(s.names) - 1
}

// name returns the name numbered i, or other for the slot that sums the others.
func (s *nameSet) name(i int, other string) string {
	if i < len(s.names) {
		return s.names[i]
	}
	return other
}

// shortName cuts name to at most maxNameBytes (on a rune boundary), marking the cut with "…".
func shortName(name string) string {
	if len(name) <= maxNameBytes {
		return name
	}
	cut := maxNameBytes - len("…")
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return name[:cut] + "…"
}

// className is a span name without its parameters: "GEMM(3, 1, 0)" is class GEMM.
func className(span string) string {
	if i := strings.IndexByte(span, '('); i >= 0 {
		return span[:i]
	}
	return span
}
