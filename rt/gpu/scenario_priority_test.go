package gpu_test

import (
	"slices"
	"testing"

	"github.com/jdf2go/jdf2go/rt/gpu"
)

// Scenarios 28 to 30 of docs/gpu.md, "Tests": priorities.

func prios(ts []*gpu.Task) []int32 {
	out := make([]int32, len(ts))
	for i, t := range ts {
		out[i] = t.Priority()
	}
	return out
}

func hookOrder(log []string) []string {
	var out []string
	for _, e := range log {
		if len(e) > 5 && e[:5] == "hook " {
			out = append(out, e[5:])
		}
	}
	return out
}

func TestScenario28_SingletonInsertionsPopByPriority(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	h.fill(4, plain(h.j))
	inc := plain(h.j)
	for _, c := range []struct {
		name string
		p    int32
	}{{"p1", 1}, {"p5a", 5}, {"p3", 3}, {"p5b", 5}} {
		tk, _ := h.task(c.name, c.p, inc)
		h.submit(nil, tk)
	}
	h.settle()
	q := h.d.Compute(0).Queue()
	if !slices.Equal(prios(q), []int32{5, 5, 3, 1}) || !slices.Equal(names(q), []string{"p5a", "p5b", "p3", "p1"}) {
		t.Fatalf("FIFO %v %v, want 5 5 3 1 with the 5s in insertion order", names(q), prios(q))
	}
	h.finish()
	if got := hookOrder(h.j.entries())[4:]; !slices.Equal(got, []string{"p5a", "p5b", "p3", "p1"}) {
		t.Fatalf("popped %v", got)
	}
}

func TestScenario29_DoneRingMergedStable(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	written := func() gpu.Flow {
		return gpu.Flow{Data: newHostData(0, 0, 0, 0), Access: gpu.Write, Elem: gpu.Float64}
	}
	p := plain(h.j)
	// Fill the stage-out stream with four write-backs, then queue old3.
	for _, n := range []string{"o1", "o2", "o3", "o4"} {
		tk, _ := h.task(n, 0, p, written())
		h.submit(nil, tk)
		h.settle()
		h.step("exec0")
	}
	old3, _ := h.task("old3", 3, p, written())
	h.submit(nil, old3)
	h.settle()
	h.step("exec0")
	if got := names(h.d.StageOut().Queue()); !slices.Equal(got, []string{"old3"}) || h.d.StageOut().InFlight() != 4 {
		t.Fatalf("stage-out FIFO %v with %d in flight, want [old3] behind 4", got, h.d.StageOut().InFlight())
	}
	// h0 parks as a singleton, then collects 4, 3, 2 in FIFO order.
	inc := batchInc("R", func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		if !task.Continuation() {
			work(s, "h0")
			return gpu.Again
		}
		s.CollectBatch(task, acceptAll, nil)
		for m := range task.Ring() {
			work(s, m.EC().(*ec).name)
		}
		return gpu.Done
	})
	h0, _ := h.task("h0", 0, inc)
	h.submit(nil, h0)
	for _, n := range []string{"b1", "b2", "b3"} {
		tk, _ := h.task(n, -1, p)
		h.submit(nil, tk)
	}
	// The blockers take the three free slots before the ring's candidates
	// arrive (the manager takes everything waiting in device.pending at once).
	h.settle()
	for _, c := range []struct {
		n string
		p int32
	}{{"p4", 4}, {"new3", 3}, {"p2", 2}} {
		tk, _ := h.task(c.n, c.p, inc)
		h.submit(nil, tk)
	}
	h.settle()
	h.step("exec0") // h0's AGAIN work: the continuation builds [h0 p4 new3 p2]
	for range 3 + 4 {
		h.step("exec0") // blockers, then the ring's work
	}
	want := []string{"p4", "old3", "new3", "p2", "h0", "b1", "b2", "b3"}
	if got := names(h.d.StageOut().Queue()); !slices.Equal(got, want) {
		t.Fatalf("stage-out FIFO (-want +got):\n-%v\n+%v", want, got)
	}
	h.finish()
	var released []string
	for _, e := range h.j.entries() {
		switch e {
		case "release h0", "release p4", "release new3", "release p2":
			released = append(released, e[len("release "):])
		}
	}
	if !slices.Equal(released, []string{"p4", "new3", "p2", "h0"}) {
		t.Fatalf("ring members released in order %v, want [p4 new3 p2 h0]", released)
	}
}

func TestScenario30_PriorityChangeHonouredAtNextInsertion(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	var queueAtA []string
	nexted := false
	inc := &gpu.Incarnation{Name: "P", Submit: func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		e := task.EC().(*ec)
		h.j.add("hook %s", e.name)
		if e.name == "h" && !nexted {
			nexted = true
			e.prio.Store(1) // the body lowers its own priority
			return gpu.Next
		}
		if e.name == "a" {
			queueAtA = names(s.Queue())
		}
		work(s, e.name)
		return gpu.Done
	}}
	h.fill(4, plain(h.j))
	for _, c := range []struct {
		n string
		p int32
	}{{"h", 9}, {"a", 5}, {"b", 5}} {
		tk, _ := h.task(c.n, c.p, inc)
		h.submit(nil, tk)
	}
	h.settle()
	h.finish()
	if !slices.Equal(queueAtA, []string{"b", "h"}) {
		t.Fatalf("FIFO when a ran: %v, want [b h] (h re-inserted with priority 1)", queueAtA)
	}
	if got := hookOrder(h.j.entries())[4:]; !slices.Equal(got, []string{"h", "a", "b", "h"}) {
		t.Fatalf("hook order %v, want [h a b h]", got)
	}
}
