package dashboard

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// traceEvent is the part of a Chrome/Perfetto trace event that the replay reads.
type traceEvent struct {
	Ph   string          `json:"ph"`
	Name string          `json:"name"`
	Pid  int             `json:"pid"`
	Tid  int             `json:"tid"`
	Ts   float64         `json:"ts"`  // microseconds
	Dur  float64         `json:"dur"` // microseconds
	Args json.RawMessage `json:"args"`
}

// maxReplay bounds the number of snapshots a trace becomes.
const maxReplay = 600

// maxTraceTime bounds a span's timestamp and duration, in microseconds (about 31 years):
// beyond it a time is garbage, and sums of such times overflow to infinities that no
// snapshot can carry as JSON.
const maxTraceTime = 1e15

// FromTrace rebuilds a finished run from a Chrome/Perfetto JSON trace written by a jdf2go
// program (rt.Trace or JDF2GO_TRACE) as a sequence of snapshots, the last one Finished. The
// "workers" process's threads are the worker lanes; a span there is a task of the class its
// name starts with (startup walks excepted). Every other process is a device: its spans
// named after a class are tasks it ran, "stage_in …" and "stage_out …" spans its transfers.
// A trace does not record the classes' totals, so each class's total is the number of its
// tasks the trace holds.
func FromTrace(r io.Reader, name string) ([]*Snapshot, error) {
	var doc struct {
		TraceEvents []traceEvent `json:"traceEvents"`
	}
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return nil, fmt.Errorf("dashboard: reading trace %s: %w", name, err)
	}
	procs := map[int]string{}
	threads := map[[2]int]string{}
	for _, e := range doc.TraceEvents {
		if e.Ph != "M" {
			continue
		}
		var a struct{ Name string }
		if json.Unmarshal(e.Args, &a) != nil {
			continue
		}
		switch e.Name {
		case "process_name":
			procs[e.Pid] = a.Name
		case "thread_name":
			threads[[2]int{e.Pid, e.Tid}] = a.Name
		}
	}
	workerOf := map[[2]int]int{}
	for k, n := range threads {
		if procs[k[0]] == "workers" {
			if id, err := strconv.Atoi(strings.TrimPrefix(n, "worker ")); err == nil {
				workerOf[k] = id
			}
		}
	}
	type task struct {
		class string
		dev   int // the device that ran it; -1: a worker
		end   float64
	}
	var tasks []task
	var devNames []string
	devIndex := map[string]int{}
	type xfer struct {
		dev int
		out bool
		end float64
	}
	var xfers []xfer
	var lanes []Segment // busy intervals on the workers (times in seconds of the trace)
	t0, t1 := math.Inf(1), math.Inf(-1)
	workers := 0
	for i, e := range doc.TraceEvents {
		if e.Ph != "X" {
			continue
		}
		if !(math.Abs(e.Ts) <= maxTraceTime && e.Dur >= 0 && e.Dur <= maxTraceTime) {
			return nil, fmt.Errorf("dashboard: trace %s: event %d (%q): timestamp %g µs and duration %g µs: want times within ±%g µs and a duration >= 0",
				name, i, e.Name, e.Ts, e.Dur, maxTraceTime)
		}
		start, end := e.Ts/1e6, (e.Ts+e.Dur)/1e6
		t0, t1 = min(t0, start), max(t1, end)
		key := [2]int{e.Pid, e.Tid}
		if w, ok := workerOf[key]; ok {
			workers = max(workers, w+1)
			switch {
			case strings.HasPrefix(e.Name, "startup:"):
			case strings.HasPrefix(e.Name, "gpu own "):
				// The worker managed a device: the live lanes' "DEVICE submit".
				lanes = append(lanes, Segment{w, strings.TrimPrefix(e.Name, "gpu own ") + " submit", start, end})
			default:
				tasks = append(tasks, task{className(e.Name), -1, end})
				lanes = append(lanes, Segment{w, className(e.Name), start, end})
			}
			continue
		}
		dev, isWorkerProc := procs[e.Pid], procs[e.Pid] == "workers"
		if isWorkerProc || dev == "" {
			continue
		}
		di, ok := devIndex[dev]
		if !ok {
			di = len(devNames)
			devIndex[dev] = di
			devNames = append(devNames, dev)
		}
		switch {
		case strings.HasPrefix(e.Name, "stage_in "):
			xfers = append(xfers, xfer{di, false, end})
		case strings.HasPrefix(e.Name, "stage_out "):
			xfers = append(xfers, xfer{di, true, end})
		case !strings.Contains(className(e.Name), " "):
			tasks = append(tasks, task{className(e.Name), di, end})
		}
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("dashboard: trace %s holds no task spans", name)
	}
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].end < tasks[j].end })
	sort.Slice(xfers, func(i, j int) bool { return xfers[i].end < xfers[j].end })
	totals := map[string]int64{}
	var order []string
	for _, t := range tasks {
		if _, ok := totals[t.class]; !ok {
			order = append(order, t.class)
		}
		totals[t.class]++
	}
	sort.Strings(order)
	dur := t1 - t0
	// A snapshot every 250 ms as live, but at least 100 for a short run and at most
	// maxReplay for a long one.
	step := max(dur/maxReplay, min(0.25, dur/100), 1e-6)
	n := max(1, int(math.Ceil(dur/step)))
	sort.Slice(lanes, func(i, j int) bool { return lanes[i].End < lanes[j].End })
	busy := make([][]float64, n) // busy[k][w]: seconds worker w was busy in snapshot k's interval
	for k := range busy {
		busy[k] = make([]float64, workers)
	}
	for _, g := range lanes {
		a, b := g.Start-t0, g.End-t0
		for k := max(int(a/step), 0); k < n && float64(k)*step < b; k++ {
			busy[k][g.Worker] += max(min(b, float64(k+1)*step)-max(a, float64(k)*step), 0)
		}
	}
	li := 0
	done := map[string]int64{}
	gpus := make([]GPU, len(devNames))
	for i, d := range devNames {
		gpus[i].Name = d
	}
	var out []*Snapshot
	ti, xi := 0, 0
	var total int64
	for k := 1; k <= n; k++ {
		now := float64(k) * step
		if k == n {
			now = dur
		}
		s := &Snapshot{Time: now, Source: "trace " + name, Ranks: 1, Window: dur,
			Workers: workers, Finished: k == n}
		prev := total
		for ; li < len(lanes) && (lanes[li].End-t0 <= now || k == n); li++ {
			g := lanes[li]
			g.Start, g.End = g.Start-t0, g.End-t0
			s.Lanes = append(s.Lanes, g)
		}
		for ; ti < len(tasks) && (tasks[ti].end-t0 <= now || k == n); ti++ {
			t := tasks[ti]
			done[t.class]++
			total++
			if t.dev >= 0 {
				gpus[t.dev].Executed++
			}
		}
		for ; xi < len(xfers) && (xfers[xi].end-t0 <= now || k == n); xi++ {
			if xfers[xi].out {
				gpus[xfers[xi].dev].StageOuts++
			} else {
				gpus[xfers[xi].dev].StageIns++
			}
		}
		s.Done, s.Rate = total, float64(total-prev)/step
		for _, c := range order {
			s.Classes = append(s.Classes, Class{Name: c, Done: done[c], Total: totals[c]})
		}
		s.Busy = busy[k-1]
		for i := range s.Busy {
			if iv := now - float64(k-1)*step; iv > 0 {
				s.Busy[i] = min(s.Busy[i]/iv, 1)
			} else {
				s.Busy[i] = 0
			}
		}
		s.GPUs = append([]GPU(nil), gpus...)
		out = append(out, s)
	}
	return out, nil
}

// className is a span name without its parameters: "GEMM(3, 1, 0)" is class GEMM.
func className(span string) string {
	if i := strings.IndexByte(span, '('); i >= 0 {
		return span[:i]
	}
	return span
}
