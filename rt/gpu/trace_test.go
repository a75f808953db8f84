package gpu_test

import (
	"bytes"
	"encoding/json"
	"testing"

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
