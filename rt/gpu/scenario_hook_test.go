package gpu_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/jdf2go/jdf2go/rt/gpu"
)

// Scenarios 12 to 20 of docs/gpu.md, "Tests": the submit-hook protocol.

// batchInc is a batch-capable incarnation around hook.
func batchInc(name string, hook gpu.SubmitHook) *gpu.Incarnation {
	return &gpu.Incarnation{Name: name, Batch: true, Submit: hook}
}

var acceptAll = gpu.BatchPolicy{}.Match

// queueBatch submits tasks named names of inc behind a full compute stream
// (4 blockers), so that they wait in its FIFO; it returns their logical
// tasks and the blockers.
func (h *harness) queueBatch(inc *gpu.Incarnation, prio []int32, names ...string) (tasks []*ec, blockers []*ec) {
	h.t.Helper()
	blockers = h.fill(4, plain(h.j))
	for i, n := range names {
		var p int32
		if prio != nil {
			p = prio[i]
		}
		t, e := h.task(n, p, inc)
		h.submit(nil, t)
		tasks = append(tasks, e)
	}
	h.settle()
	if got := h.d.Compute(0).QueueLen(); got != len(names) {
		h.t.Fatalf("%d wrappers queued, want %d", got, len(names))
	}
	return tasks, blockers
}

func TestScenario12_AgainRingOf5(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	script := newScript(gpu.Again, gpu.Again, gpu.Again, gpu.Done)
	var rings [][]*gpu.Task
	completeStage := 0
	eventsBeforeDone := -1
	inc := batchInc("B", func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		if _, err := s.CollectBatch(task, acceptAll, nil); err != nil {
			t.Error(err)
			return gpu.Error
		}
		rings = append(rings, slices.Collect(task.Ring()))
		if len(rings) == 1 {
			task.SetCompleteStage(func(*gpu.Device, *gpu.Task, *gpu.Stream) gpu.Result {
				completeStage++
				return gpu.Done
			})
		}
		for m := range task.Ring() {
			work(s, m.EC().(*ec).name)
		}
		return script.Next()
	})
	tasks, _ := h.queueBatch(inc, nil, "m1", "m2", "m3", "m4", "m5")
	before := h.d.Outstanding()
	deltas := len(h.counterDeltas())
	// Run the blockers and each AGAIN step until the DONE call.
	for len(rings) < 4 {
		h.step("exec0")
	}
	_, ends := h.spans(gpu.SpanExec, "m1")
	eventsBeforeDone = ends
	if completeStage != 0 {
		t.Fatal("complete_stage ran before the DONE event")
	}
	if h.d.Outstanding() != before-4 || len(h.counterDeltas()) != deltas+4 {
		t.Fatalf("counter %d (was %d with 4 blockers): AGAIN steps changed it", h.d.Outstanding(), before)
	}
	h.finish()
	for i, r := range rings {
		if len(r) != 5 || !slices.Equal(r, rings[0]) {
			t.Fatalf("hook call %d saw ring %v, want the identical ring %v", i+1, r, rings[0])
		}
	}
	if eventsBeforeDone != 0 {
		t.Fatalf("%d execution ends before the DONE event", eventsBeforeDone)
	}
	if completeStage != 1 {
		t.Fatalf("complete_stage ran %d times, want 1", completeStage)
	}
	if script.Calls() != 4 {
		t.Fatalf("%d scripted results used, want 4", script.Calls())
	}
	for _, e := range tasks {
		b, en := h.spans(gpu.SpanExec, e.name)
		if e.completed.Load() != 1 || e.released.Load() != 1 || b != 1 || en != 1 {
			t.Errorf("%s: completed %d, released %d, %d starts, %d ends; want 1 each",
				e.name, e.completed.Load(), e.released.Load(), b, en)
		}
	}
	// The members release at their completions; a stage-out pass that
	// completes several subtracts them in one step (k at once).
	var memberDeltas int32
	for _, dlt := range h.counterDeltas()[deltas+4:] {
		if dlt >= 0 {
			t.Fatalf("member release changed the counter by %d, want a decrement", dlt)
		}
		memberDeltas += dlt
	}
	if memberDeltas != -5 {
		t.Fatalf("members changed the counter by %d, want -5", memberDeltas)
	}
}

func TestScenario13_ContinuationAfterEarlierRecordsBeforeFIFO(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	calls := 0
	inc := &gpu.Incarnation{Name: "R", Submit: func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		calls++
		h.j.add("hook R#%d", calls)
		work(s, "R")
		if calls == 1 {
			return gpu.Again
		}
		return gpu.Done
	}}
	p := plain(h.j)
	b1, _ := h.task("b1", 0, p)
	h.submit(nil, b1)
	r, _ := h.task("R", 0, inc)
	h.submit(nil, r)
	for _, n := range []string{"b2", "b3", "x1"} {
		tk, _ := h.task(n, 0, p)
		h.submit(nil, tk)
	}
	h.settle()
	// Slots: b1, R (parked), b2, b3; FIFO: x1.
	if calls != 1 || h.d.Compute(0).QueueLen() != 1 {
		t.Fatalf("setup: %d R calls, %d queued", calls, h.d.Compute(0).QueueLen())
	}
	h.step("exec0") // b1: its slot goes to x1; R stays parked behind b1's record
	if calls != 1 {
		t.Fatal("R re-entered before the earlier record on its stream completed")
	}
	x2, _ := h.task("x2", 0, p)
	h.submit(nil, x2)
	h.settle()
	if h.d.Compute(0).QueueLen() != 1 {
		t.Fatal("x2 should wait: the stream is full")
	}
	if got := h.step("exec0"); got != "R" {
		t.Fatalf("stepped %q, want R's operation", got)
	}
	if calls != 2 {
		t.Fatalf("R called %d times after its event, want 2", calls)
	}
	log := h.j.entries()
	if indexOf(log, "hook x2") >= 0 {
		t.Fatal("x2 was popped before the continuation took the freed slot")
	}
	if q := names(h.d.Compute(0).Queue()); !slices.Equal(q, []string{"x2"}) {
		t.Fatalf("FIFO %v, want [x2]", q)
	}
	h.finish()
}

func TestScenario14_SingletonAgainThenCollect(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	calls := 0
	var doneRing []string
	inc := batchInc("H", func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		calls++
		if calls == 1 {
			work(s, "H")
			return gpu.Again
		}
		if _, err := s.CollectBatch(task, acceptAll, nil); err != nil {
			t.Error(err)
		}
		doneRing = ringNames(task)
		work(s, "H")
		return gpu.Done
	})
	hd, eh := h.task("H", 0, inc)
	h.submit(nil, hd)
	if b, _ := h.spans(gpu.SpanExec, "H"); b != 1 {
		t.Fatalf("%d starts for H after its first AGAIN, want 1", b)
	}
	p := plain(h.j)
	var fs []*ec
	for _, n := range []string{"b1", "b2", "b3"} {
		tk, _ := h.task(n, 0, p)
		h.submit(nil, tk)
	}
	for _, n := range []string{"F1", "F2", "F3"} {
		tk, e := h.task(n, 0, inc)
		h.submit(nil, tk)
		fs = append(fs, e)
	}
	h.settle()
	h.step("exec0") // H's AGAIN work: the continuation collects F1..F3
	if !slices.Equal(doneRing, []string{"H", "F1", "F2", "F3"}) {
		t.Fatalf("DONE ring %v", doneRing)
	}
	for _, e := range fs {
		if b, _ := h.spans(gpu.SpanExec, e.name); b != 1 {
			t.Fatalf("%s: %d starts at the DONE commit, want 1", e.name, b)
		}
	}
	if b, _ := h.spans(gpu.SpanExec, "H"); b != 1 {
		t.Fatal("H got a second start")
	}
	h.finish()
	for _, e := range append(fs, eh) {
		b, en := h.spans(gpu.SpanExec, e.name)
		if b != 1 || en != 1 || e.completed.Load() != 1 {
			t.Errorf("%s: %d starts, %d ends, completed %d", e.name, b, en, e.completed.Load())
		}
	}
}

func TestScenario15_NextWithRingOf4(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	calls := 0
	var queueAtSecond []string
	var startsAtSecond, deltasAtSecond int
	var outstandingBefore, outstandingAtSecond int32
	inc := batchInc("N", func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		calls++
		if calls == 1 {
			outstandingBefore = d.Outstanding()
			if n, _ := s.CollectBatch(task, acceptAll, nil); n != 3 {
				t.Errorf("collected %d, want 3", n)
			}
			return gpu.Next
		}
		if calls == 2 {
			queueAtSecond = append(names([]*gpu.Task{task}), names(s.Queue())...)
			for _, e := range h.prof.Events() {
				if e.Name == gpu.SpanExec && slices.Contains([]string{"h", "f1", "f2", "f3"}, e.ID.Class) {
					startsAtSecond++
				}
			}
			deltasAtSecond = len(h.counterDeltas())
			outstandingAtSecond = d.Outstanding()
			if _, err := s.CollectBatch(task, acceptAll, nil); err != nil {
				t.Error(err)
			}
		}
		for m := range task.Ring() {
			work(s, m.EC().(*ec).name)
		}
		return gpu.Done
	})
	tasks, _ := h.queueBatch(inc, nil, "h", "f1", "f2", "f3")
	deltas := len(h.counterDeltas())
	h.step("exec0") // frees one slot: h is popped, collects, returns NEXT
	if calls < 2 {
		t.Fatalf("%d hook calls", calls)
	}
	// Followers back in stable order, head re-inserted after them.
	if !slices.Equal(queueAtSecond, []string{"f1", "f2", "f3", "h"}) {
		t.Fatalf("FIFO after NEXT %v, want [f1 f2 f3 h]", queueAtSecond)
	}
	if startsAtSecond != 0 {
		t.Fatalf("%d execution records after NEXT, want 0", startsAtSecond)
	}
	if deltasAtSecond != deltas+1 || outstandingAtSecond != outstandingBefore-1 {
		// the one update is the blocker released by the step
		t.Fatalf("NEXT changed the counter: %d updates, outstanding %d -> %d", deltasAtSecond-deltas, outstandingBefore, outstandingAtSecond)
	}
	for _, e := range tasks {
		if e.completed.Load() != 0 || e.released.Load() != 0 {
			t.Fatalf("%s completed or released by NEXT", e.name)
		}
	}
	h.finish()
	for _, e := range tasks {
		if e.completed.Load() != 1 || e.released.Load() != 1 {
			t.Errorf("%s: completed %d, released %d", e.name, e.completed.Load(), e.released.Load())
		}
	}
}

func TestScenario16_AsyncWithRingOf6(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	var owned []*ec
	inc := batchInc("A", func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		if n, _ := s.CollectBatch(task, acceptAll, nil); n != 5 {
			t.Errorf("collected %d, want 5", n)
		}
		for m := range task.Ring() {
			owned = append(owned, m.EC().(*ec)) // the owner takes each logical task
		}
		return gpu.Async
	})
	tasks, _ := h.queueBatch(inc, nil, "a1", "a2", "a3", "a4", "a5", "a6")
	deltas := len(h.counterDeltas())
	h.step("exec0")
	if len(owned) != 6 {
		t.Fatalf("owner holds %d tasks", len(owned))
	}
	got := h.counterDeltas()[deltas:]
	if !slices.Contains(got, -6) || slices.Index(got, -6) != indexOfDelta(got, -6) {
		t.Fatalf("counter updates %v: want one -6", got)
	}
	for _, e := range tasks {
		if e.released.Load() != 1 || e.completed.Load() != 0 {
			t.Fatalf("%s: released %d, completed %d after ASYNC", e.name, e.released.Load(), e.completed.Load())
		}
	}
	// The owner reschedules each task once: a new wrapper, a new submission.
	for _, e := range owned {
		nt := h.d.NewTask(e, plain(h.j))
		h.submit(nil, nt)
	}
	h.finish()
	for _, e := range tasks {
		if e.completed.Load() != 1 {
			t.Errorf("%s completed %d times, want 1", e.name, e.completed.Load())
		}
	}
}

func indexOfDelta(ds []int32, v int32) int {
	n := -1
	for i, d := range ds {
		if d == v {
			if n >= 0 {
				return -2 // twice
			}
			n = i
		}
	}
	return n
}

func TestScenario17_ErrorAfterPartialEnqueue(t *testing.T) {
	for _, tc := range []struct {
		result   gpu.Result
		sentinel error
	}{{gpu.Error, gpu.ErrTaskFailed}, {gpu.Disable, gpu.ErrDeviceDisabled}} {
		t.Run(tc.result.String(), func(t *testing.T) {
			h := newHarness(t, harnessConfig{})
			inc := batchInc("E", func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
				if n, _ := s.CollectBatch(task, acceptAll, nil); n != 2 {
					t.Errorf("collected %d, want 2", n)
				}
				work(s, "partial") // partial work before failing
				return tc.result
			})
			tasks, _ := h.queueBatch(inc, nil, "e1", "e2", "e3")
			deltas := len(h.counterDeltas())
			h.step("exec0") // e1 pops, fails, and the manager quiesces exec0
			if got := h.stream("exec0").Queued(); len(got) != 4 || got[3] != "partial" {
				t.Fatalf("exec0 queue %v, want 3 blockers then partial", got)
			}
			for _, e := range tasks {
				if e.cleaned.Load() != 0 || e.released.Load() != 0 {
					t.Fatal("cleanout before the quiescing marker completed")
				}
			}
			for range 3 {
				h.stream("exec0").Step()
			}
			h.advance() // still waiting: "partial" has not run
			if tasks[0].cleaned.Load() != 0 {
				t.Fatal("cleanout before the partial work ran")
			}
			h.step("exec0") // partial
			for _, e := range tasks {
				if e.cleaned.Load() != 1 || e.released.Load() != 1 || e.completed.Load() != 0 {
					t.Fatalf("%s: cleaned %d, released %d, completed %d", e.name, e.cleaned.Load(), e.released.Load(), e.completed.Load())
				}
			}
			if got := h.counterDeltas()[deltas:]; len(got) == 0 || got[0] != -3 {
				t.Fatalf("counter updates %v, want -3 first", got)
			}
			h.drain()
			if err := h.managerErr(); !errors.Is(err, tc.sentinel) {
				t.Fatalf("manager returned %v, want %v", err, tc.sentinel)
			}
			if err := h.leakCheck(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestScenario18_UnknownResultsNormalized(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	mk := func(r gpu.Result) *gpu.Incarnation {
		return &gpu.Incarnation{Name: r.String(), Submit: func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
			work(s, "w")
			return r
		}}
	}
	t1, e1 := h.task("minus42", 0, mk(-42))
	t2, e2 := h.task("plus7", 0, mk(7))
	h.submit(nil, t1)
	h.submit(nil, t2)
	h.drain()
	if e1.cleaned.Load() != 1 || e1.completed.Load() != 0 {
		t.Fatalf("-42: cleaned %d, completed %d; want ERROR", e1.cleaned.Load(), e1.completed.Load())
	}
	if e2.completed.Load() != 1 || e2.cleaned.Load() != 0 {
		t.Fatalf("+7: completed %d, cleaned %d; want DONE", e2.completed.Load(), e2.cleaned.Load())
	}
	if err := h.managerErr(); !errors.Is(err, gpu.ErrTaskFailed) {
		t.Fatalf("manager returned %v, want ErrTaskFailed", err)
	}
	if err := h.leakCheck(); err != nil {
		t.Fatal(err)
	}
}

func TestScenario19_ManualDisbanding(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	var headRings [][]string
	var freshHeads []string
	inc := batchInc("D", func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		name := task.EC().(*ec).name
		if name != "H" {
			freshHeads = append(freshHeads, name)
			work(s, name)
			return gpu.Done
		}
		if len(headRings) == 0 {
			if n, _ := s.CollectBatch(task, acceptAll, nil); n != 3 {
				t.Errorf("collected %d, want 3", n)
			}
		}
		headRings = append(headRings, ringNames(task))
		switch len(headRings) {
		case 1:
			for m := range task.Ring() {
				work(s, m.EC().(*ec).name)
			}
			return gpu.Again
		case 2:
			if n := s.RequeueFollowers(task); n != 3 {
				t.Errorf("requeued %d, want 3", n)
			}
			work(s, "H")
			return gpu.Again
		}
		work(s, "H")
		return gpu.Done
	})
	// H first (highest priority), then followers in collection order F2, F3, F1.
	tasks, _ := h.queueBatch(inc, []int32{5, 1, 3, 2}, "H", "F1", "F2", "F3")
	h.finish()
	want := [][]string{{"H", "F2", "F3", "F1"}, {"H", "F2", "F3", "F1"}, {"H"}}
	if len(headRings) != 3 {
		t.Fatalf("H called %d times, want 3", len(headRings))
	}
	for i := range want {
		if !slices.Equal(headRings[i], want[i]) {
			t.Fatalf("H call %d saw ring %v, want %v", i+1, headRings[i], want[i])
		}
	}
	if !slices.Equal(freshHeads, []string{"F2", "F3", "F1"}) {
		t.Fatalf("followers submitted as fresh heads in order %v, want sorted [F2 F3 F1]", freshHeads)
	}
	for _, e := range tasks {
		b, en := h.spans(gpu.SpanExec, e.name)
		if e.completed.Load() != 1 || b != 1 || en != 1 {
			t.Errorf("%s: completed %d, %d starts, %d ends; want 1 each", e.name, e.completed.Load(), b, en)
		}
	}
	// Each follower's end comes after its own DONE hook call, not the head's.
	log := h.j.entries()
	for _, f := range []string{"F1", "F2", "F3"} {
		if indexOf(log, "complete "+f) < 0 {
			t.Fatalf("%s never completed", f)
		}
	}
	endOrder := []string{}
	for _, e := range h.prof.Events() {
		if !e.Begin && e.Name == gpu.SpanExec && e.ID.Class[0] == 'F' {
			endOrder = append(endOrder, e.ID.Class)
		}
	}
	if !slices.Equal(endOrder, []string{"F2", "F3", "F1"}) {
		t.Fatalf("follower ends in order %v, want at their own completions [F2 F3 F1]", endOrder)
	}
}

func TestScenario20_LeakDetection(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	inc := batchInc("L", func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		if n, _ := s.CollectBatch(task, acceptAll, nil); n != 2 {
			t.Errorf("collected %d, want 2", n)
		}
		task.Chop() // drops the followers without requeueing them
		work(s, "L")
		return gpu.Done
	})
	tasks, _ := h.queueBatch(inc, nil, "l1", "l2", "l3")
	for range 10 {
		for _, s := range h.d.Streams() {
			h.stream(s.Name()).Drain()
		}
		h.advance()
	}
	if h.mgr == nil {
		t.Fatal("the manager left although two wrappers were never released")
	}
	err := h.leakCheck()
	if err == nil || h.d.Outstanding() != 2 || h.d.Stats().Live != 2 {
		t.Fatalf("leak check %v, outstanding %d, live %d; want a report of 2 and 2", err, h.d.Outstanding(), h.d.Stats().Live)
	}
	if cerr := h.d.Close(); !errors.Is(cerr, gpu.ErrLeak) {
		t.Fatalf("Close returned %v, want ErrLeak", cerr)
	}
	if tasks[0].completed.Load() != 1 || tasks[1].completed.Load() != 0 {
		t.Fatal("the head should complete and the dropped followers never")
	}
	h.abandon()
}
