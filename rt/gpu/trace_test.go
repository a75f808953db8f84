package gpu_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt/gpu"
)

// TestTraceAgainThriceThenDone reads back the JSON trace of a batched run
// whose ring of 5 returns AGAIN three times, then DONE: every member has
// exactly one execution start and one end, on the compute stream's track,
// and the end comes after the start.
func TestTraceAgainThriceThenDone(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	calls := 0
	inc := batchInc("B", func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		if _, err := s.CollectBatch(task, acceptAll, nil); err != nil {
			return gpu.Error
		}
		calls++
		for m := range task.Ring() {
			work(s, m.EC().(*ec).name)
		}
		if calls <= 3 {
			return gpu.Again
		}
		return gpu.Done
	})
	members, _ := h.queueBatch(inc, nil, "m1", "m2", "m3", "m4", "m5")
	h.finish()
	if calls != 4 {
		t.Fatalf("%d hook calls, want 4", calls)
	}
	var buf bytes.Buffer
	if err := h.prof.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var trace struct {
		TraceEvents []struct {
			Name string         `json:"name"`
			Ph   string         `json:"ph"`
			TS   float64        `json:"ts"`
			TID  int            `json:"tid"`
			ID   string         `json:"id"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &trace); err != nil {
		t.Fatalf("the trace is not JSON: %v", err)
	}
	threads := map[int]string{}
	type span struct {
		begins, ends int
		b, e         float64
		tid          int
	}
	spans := map[string]*span{}
	for _, ev := range trace.TraceEvents {
		if ev.Ph == "M" && ev.Name == "thread_name" {
			threads[ev.TID] = ev.Args["name"].(string)
			continue
		}
		if ev.Name != gpu.SpanExec {
			continue
		}
		class, _ := ev.Args["class"].(string)
		sp := spans[class]
		if sp == nil {
			sp = &span{}
			spans[class] = sp
		}
		switch ev.Ph {
		case "b":
			sp.begins++
			sp.b, sp.tid = ev.TS, ev.TID
		case "e":
			sp.ends++
			sp.e = ev.TS
		default:
			t.Fatalf("unexpected phase %q", ev.Ph)
		}
	}
	for _, m := range members {
		sp := spans[m.name]
		if sp == nil || sp.begins != 1 || sp.ends != 1 {
			t.Fatalf("%s: %+v, want exactly one start and one end", m.name, sp)
		}
		if sp.e < sp.b {
			t.Fatalf("%s ends at %v before its start at %v", m.name, sp.e, sp.b)
		}
		if threads[sp.tid] != "gpu0/exec0" {
			t.Fatalf("%s traced on %q, want gpu0/exec0", m.name, threads[sp.tid])
		}
	}
}

// TestTraceLanesNest: wrappers in flight together on one stream record their
// stage and execution intervals on separate lanes, so that on every track the
// intervals nest or are disjoint (what viewers can draw), and a span ends on
// the track it began on.
func TestTraceLanesNest(t *testing.T) {
	h := newHarness(t, harnessConfig{opts: []gpu.Option{gpu.WithComputeStreams(1)}})
	inc := &gpu.Incarnation{Name: "S", Submit: func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		s.BeginStage(task, "transfer")
		work(s, task.EC().(*ec).name)
		return gpu.Done
	}}
	const n = 6
	for i := range n {
		tk, _ := h.task(fmt.Sprintf("S%d", i), 0, inc)
		h.submit(nil, tk)
	}
	h.finish()
	type key struct {
		track int
		name  string
		id    gpu.TraceID
	}
	type interval struct {
		key
		b, e time.Duration
	}
	open := map[key]time.Duration{}
	var ivs []interval
	for _, ev := range h.prof.Events() {
		if ev.Name == gpu.SpanOwn {
			continue
		}
		k := key{ev.Track, ev.Name, ev.ID}
		if ev.Begin {
			open[k] = ev.At
			continue
		}
		b, ok := open[k]
		if !ok {
			t.Fatalf("%s %v ends on %q without a begin there", ev.Name, ev.ID, h.prof.TrackName(ev.Track))
		}
		delete(open, k)
		ivs = append(ivs, interval{k, b, ev.At})
	}
	if len(open) != 0 || len(ivs) != 2*n {
		t.Fatalf("%d intervals (%d left open), want %d", len(ivs), len(open), 2*n)
	}
	lanes := map[string]bool{}
	overlapped := false
	for i, a := range ivs {
		lanes[h.prof.TrackName(a.track)] = true
		for _, b := range ivs[i+1:] {
			if a.name == "transfer" && b.name == "transfer" && a.b < b.e && b.b < a.e {
				overlapped = true
			}
			if a.track != b.track {
				continue
			}
			x, y := a, b
			if y.b < x.b {
				x, y = y, x
			}
			if y.b < x.e && y.e > x.e {
				t.Errorf("on %s, %s %v [%v, %v] and %s %v [%v, %v] overlap without nesting",
					h.prof.TrackName(a.track), x.name, x.id, x.b, x.e, y.name, y.id, y.b, y.e)
			}
		}
	}
	if !overlapped {
		t.Fatal("no two transfers were in flight together: the test shows nothing")
	}
	if !lanes["gpu0/exec0"] || !lanes["gpu0/exec0 #2"] {
		t.Fatalf("tracks used: %v, want gpu0/exec0 and its second lane", lanes)
	}
}
