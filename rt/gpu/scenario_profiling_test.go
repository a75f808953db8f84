package gpu_test

import (
	"slices"
	"testing"

	"github.com/jdf2go/jdf2go/rt/gpu"
)

// Scenarios 31 to 33 of docs/gpu.md, "Tests": profiling.

func TestScenario31_DisabledNeverTracedNoReleaseWhileOpen(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	hook := func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		s.CollectBatch(task, gpu.BatchPolicy{}.Match, nil)
		for m := range task.Ring() {
			work(s, m.EC().(*ec).name)
		}
		return gpu.Done
	}
	quiet := &gpu.Incarnation{Name: "quiet", Batch: true, NoProfile: true, Submit: hook}
	loud := &gpu.Incarnation{Name: "loud", Batch: true, Submit: hook}
	h.fill(4, plain(h.j))
	states := map[string]gpu.ExecState{}
	for _, c := range []struct {
		n   string
		inc *gpu.Incarnation
	}{{"q1", quiet}, {"q2", quiet}, {"q3", quiet}, {"l1", loud}, {"l2", loud}} {
		tk, _ := h.task(c.n, 0, c.inc)
		if c.inc == quiet && tk.ExecState() != gpu.ExecDisabled {
			t.Fatalf("%s starts %v, want DISABLED", c.n, tk.ExecState())
		}
		tk.OnRelease(func(w *gpu.Task) { states[c.n] = w.ExecState() })
		h.submit(nil, tk)
	}
	h.settle()
	h.finish()
	for _, e := range h.prof.Events() {
		if e.ID.Class[0] == 'q' {
			t.Fatalf("DISABLED member %s produced a %s record", e.ID.Class, e.Name)
		}
	}
	for n, st := range states {
		want := gpu.ExecClosed
		if n[0] == 'q' {
			want = gpu.ExecDisabled
		}
		if st != want {
			t.Errorf("%s released in state %v, want %v", n, st, want)
		}
	}
	if len(states) != 5 {
		t.Fatalf("%d releases seen, want 5", len(states))
	}
}

func TestScenario32_StageEndNotSkippedAtExecEnd(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	inc := &gpu.Incarnation{Name: "S", Submit: func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		s.BeginStage(task, "transfer")
		work(s, "S")
		return gpu.Done
	}}
	tk, _ := h.task("S", 0, inc)
	h.submit(nil, tk)
	h.finish()
	var got []string
	for _, e := range h.prof.Events() {
		if e.ID.Class != "S" {
			continue
		}
		ph := "end "
		if e.Begin {
			ph = "begin "
		}
		got = append(got, ph+e.Name)
	}
	want := []string{"begin transfer", "begin exec", "end transfer", "end exec"}
	if !slices.Equal(got, want) {
		t.Fatalf("records (-want +got):\n-%v\n+%v", want, got)
	}
}

func TestScenario33_NoStartOnNextAsyncError(t *testing.T) {
	for _, first := range []gpu.Result{gpu.Next, gpu.Async, gpu.Error} {
		t.Run(first.String(), func(t *testing.T) {
			h := newHarness(t, harnessConfig{})
			calls := 0
			startsAtSecond := -1
			var owned *ec
			inc := &gpu.Incarnation{Name: "X", Submit: func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
				calls++
				if calls == 1 {
					if first == gpu.Async {
						owned = task.EC().(*ec)
					}
					return first
				}
				startsAtSecond, _ = h.spans(gpu.SpanExec, "X")
				work(s, "X")
				return gpu.Done
			}}
			tk, e := h.task("X", 0, inc)
			h.submit(nil, tk)
			switch first {
			case gpu.Next:
				h.drain()
				if startsAtSecond != 0 {
					t.Fatalf("%d starts before the second call", startsAtSecond)
				}
				if b, en := h.spans(gpu.SpanExec, "X"); b != 1 || en != 1 {
					t.Fatalf("%d starts and %d ends overall, want 1 and 1 (at the DONE commit)", b, en)
				}
			case gpu.Async:
				if owned == nil || e.released.Load() != 1 {
					t.Fatal("ASYNC did not hand the task over")
				}
				if b, en := h.spans(gpu.SpanExec, "X"); b != 0 || en != 0 {
					t.Fatalf("%d starts and %d ends after ASYNC", b, en)
				}
			case gpu.Error:
				h.drain()
				if b, en := h.spans(gpu.SpanExec, "X"); b != 0 || en != 0 || e.cleaned.Load() != 1 {
					t.Fatalf("%d starts, %d ends, cleaned %d after ERROR", b, en, e.cleaned.Load())
				}
			}
			h.drain()
			if err := h.leakCheck(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
