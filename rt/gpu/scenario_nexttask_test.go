package gpu_test

import (
	"testing"

	"github.com/jdf2go/jdf2go/rt/gpu"
)

// Scenarios 34 and 35 of docs/gpu.md, "Tests": next_task.

func TestScenario34_WinnerFlushesLoserKeeps(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	shared := &sharedQ{}
	p1, p2 := &cpuTask{name: "P1"}, &cpuTask{name: "P2"}
	w1 := &worker{id: 1, slot: p1, shared: shared}
	w2 := &worker{id: 2, slot: p2, shared: shared}
	w3 := &worker{id: 3, shared: shared}
	visibleAtStageIn := false
	inc := plain(h.j)
	inc.StageIn = func(d *gpu.Device, t *gpu.Task, s *gpu.Stream) (int, gpu.Result) {
		if t.EC().(*ec).name == "G1" {
			// The first stage pass of the episode: P1 must already be public.
			visibleAtStageIn = w1.slot == nil && shared.contains(p1)
		}
		return 0, gpu.Done
	}
	g1, _ := h.task("G1", 0, inc)
	h.submit(w1, g1)
	if h.mgr == nil {
		t.Fatal("G1's worker is not managing")
	}
	if !visibleAtStageIn {
		t.Fatal("the winner's private task was not flushed before the first stage pass")
	}
	g2, _ := h.task("G2", 0, inc)
	h.submit(w2, g2) // loses: returns at once
	if w2.flushes.Load() != 0 || w2.slot != p2 {
		t.Fatal("the loser's private task was flushed")
	}
	if got := w2.next(); got != p2 {
		t.Fatalf("the loser runs %v next, want its private task", got)
	}
	w2.run(p2)
	if got := w3.next(); got != p1 {
		t.Fatalf("an idle worker found %v, want the manager's flushed task", got)
	}
	w3.run(p1)
	if h.mgr == nil {
		t.Fatal("the manager left before its work drained")
	}
	h.finish()
	if p1.ran.Load() != 1 || p1.by.Load() != 3 || p2.ran.Load() != 1 || p2.by.Load() != 2 {
		t.Fatalf("P1 ran %d times by %d, P2 %d times by %d", p1.ran.Load(), p1.by.Load(), p2.ran.Load(), p2.by.Load())
	}
}

func TestScenario35_FlushAfterEachCompletion(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	shared := &sharedQ{}
	w1 := &worker{id: 1, shared: shared, j: h.j}
	w3 := &worker{id: 3, shared: shared}
	// Completing a task releases its successor with distance 0: into the
	// completing worker's private slot.
	h.host.onComplete = func(w gpu.Worker, task *gpu.Task) {
		if s := task.EC().(*ec).succ; s != nil {
			w.(*worker).slot = s
		}
	}
	inc := plain(h.j)
	g1, e1 := h.task("G1", 0, inc)
	g2, _ := h.task("G2", 0, inc)
	s1 := &cpuTask{name: "S1"}
	e1.succ = s1
	h.submit(w1, g1)
	h.submit(nil, g2)
	h.settle()
	h.step("exec0") // G1 completes inside the manager; G2 still runs
	if h.mgr == nil {
		t.Fatal("the manager left with G2 outstanding")
	}
	if w1.slot != nil {
		t.Fatal("the manager's private slot is not empty after a completion")
	}
	if got := w3.next(); got != s1 {
		t.Fatalf("a thief found %v, want S1 while the manager keeps running", got)
	}
	w3.run(s1)
	if log := h.j.entries(); indexOf(log, "flush S1") != indexOf(log, "complete G1")+1 {
		t.Fatalf("S1 not flushed right after G1's completion: %v", log)
	}
	h.finish()
	if s1.ran.Load() != 1 || s1.by.Load() != 3 {
		t.Fatalf("S1 ran %d times by worker %d", s1.ran.Load(), s1.by.Load())
	}
	if got := w1.flushes.Load(); got != 3 {
		t.Fatalf("%d flushes, want 3 (entry, after G1, after G2)", got)
	}
}
