package gpu_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/sim"
)

// Scenarios 21 to 27 of docs/gpu.md, "Tests": the batch collector.

// collectOnce builds a harness whose batch hook runs probe on its first call
// (as the head, with the other tasks waiting in the FIFO), then completes
// every ring member; it returns after the probe ran and the device drained.
func collectOnce(t *testing.T, cfg harnessConfig, inc func(gpu.SubmitHook) *gpu.Incarnation, names []string,
	probe func(task *gpu.Task, s *gpu.Stream) gpu.Result) *harness {
	t.Helper()
	h := newHarness(t, cfg)
	probed := false
	hook := func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		r := gpu.Done
		if !probed {
			probed = true
			r = probe(task, s)
		}
		for m := range task.Ring() {
			work(s, m.EC().(*ec).name)
		}
		return r
	}
	in := inc(hook)
	tasks, _ := h.queueBatch(in, nil, names...)
	h.drain()
	if !probed {
		t.Fatal("the probe never ran")
	}
	for _, e := range tasks {
		if e.ended() != 1 {
			t.Errorf("%s ended %d times, want 1", e.name, e.ended())
		}
	}
	// Every task ran in exactly one ring that completed: the members counted at the
	// rings' completion are the tasks completed (the batch's and the harness's own).
	if st := h.d.Stats(); st.Batched != int64(st.Executed) || st.Executed < uint64(len(tasks)) {
		t.Errorf("stats: %d rings of %d members in all, %d tasks executed; want as many members as tasks, at least %d",
			st.Batches, st.Batched, st.Executed, len(tasks))
	}
	if err := h.leakCheck(); err != nil {
		t.Fatal(err)
	}
	return h
}

func batch(hook gpu.SubmitHook) *gpu.Incarnation { return batchInc("C", hook) }

func TestScenario21_CollectOnContinuationIsIdempotent(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	calls, callbacks := 0, 0
	var inCallback []int
	var queueBefore, queueAfter []string
	var n2 int
	counting := func(cand, head *gpu.Task, data any) gpu.Action {
		callbacks++
		if callbacks == 2 {
			// The head's ring is no longer a singleton: a nested collect
			// returns its follower count without locking (no deadlock) and
			// without the re-entry error.
			n, err := cand.Stream().Device().Compute(0).CollectBatch(head, nil, nil)
			if err != nil {
				t.Errorf("nested collect on a non-singleton ring: %v", err)
			}
			inCallback = append(inCallback, n)
		}
		if callbacks > 2 {
			return gpu.Reject
		}
		return gpu.Accept
	}
	inc := batchInc("K", func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		if calls == 0 {
			calls++
			if n, err := s.CollectBatch(task, counting, nil); n != 2 || err != nil {
				t.Errorf("first collect: %d, %v; want 2", n, err)
			}
			for m := range task.Ring() {
				work(s, m.EC().(*ec).name)
			}
			return gpu.Again
		}
		if task.Continuation() {
			calls++
			before := callbacks
			queueBefore = names(s.Queue())
			n2, _ = s.CollectBatch(task, counting, nil)
			queueAfter = names(s.Queue())
			if callbacks != before {
				t.Errorf("callback called %d times on the continuation", callbacks-before)
			}
		}
		for m := range task.Ring() {
			work(s, m.EC().(*ec).name)
		}
		return gpu.Done
	})
	h.fill(4, plain(h.j))
	p := plain(h.j)
	for _, c := range []struct {
		name string
		inc  *gpu.Incarnation
	}{{"k1", inc}, {"k2", inc}, {"k3", inc}, {"x1", p}, {"x2", p}, {"x3", p}, {"k4", inc}} {
		tk, _ := h.task(c.name, 0, c.inc)
		h.submit(nil, tk)
	}
	h.settle()
	h.step("exec0") // k1 collects k2, k3 (rejects k4) and parks
	for calls < 2 {
		h.step("exec0") // blockers (x1..x3 take their slots), then k1's work
	}
	if n2 != 2 {
		t.Fatalf("collect on the continuation returned %d, want 2", n2)
	}
	if !slices.Equal(inCallback, []int{1}) {
		t.Fatalf("nested collect returned %v, want [1]", inCallback)
	}
	if !slices.Equal(queueBefore, []string{"k4"}) || !slices.Equal(queueBefore, queueAfter) {
		t.Fatalf("FIFO changed: %v -> %v", queueBefore, queueAfter)
	}
	h.finish()
}

func TestScenario22_StopKeepsCandidatesInOrder(t *testing.T) {
	var n int
	var ring, rest []string
	stopAtC3 := func(cand, head *gpu.Task, data any) gpu.Action {
		if cand.EC().(*ec).name == "c3" {
			return gpu.Stop
		}
		return gpu.Accept
	}
	h := collectOnce(t, harnessConfig{}, batch, []string{"h", "c1", "c2", "c3", "c4"}, func(task *gpu.Task, s *gpu.Stream) gpu.Result {
		n, _ = s.CollectBatch(task, stopAtC3, nil)
		ring, rest = ringNames(task), names(s.Queue())
		return gpu.Done
	})
	if n != 2 || !slices.Equal(ring, []string{"h", "c1", "c2"}) || !slices.Equal(rest, []string{"c3", "c4"}) {
		t.Fatalf("STOP: %d, ring %v, FIFO %v; want 2, [h c1 c2], [c3 c4]", n, ring, rest)
	}
	if got := countEntries(h.j.entries(), "complete c3"); got != 1 {
		t.Fatalf("the STOP candidate completed %d times, want 1", got)
	}
}

func TestScenario23_RejectStaysAcceptAppends(t *testing.T) {
	var n int
	var ring, rest []string
	rejectEven := func(cand, head *gpu.Task, data any) gpu.Action {
		switch cand.EC().(*ec).name {
		case "c2", "c4":
			return gpu.Reject
		}
		return gpu.Accept
	}
	collectOnce(t, harnessConfig{}, batch, []string{"h", "c1", "c2", "c3", "c4", "c5"}, func(task *gpu.Task, s *gpu.Stream) gpu.Result {
		n, _ = s.CollectBatch(task, rejectEven, nil)
		ring, rest = ringNames(task), names(s.Queue())
		return gpu.Done
	})
	if n != 3 || !slices.Equal(ring, []string{"h", "c1", "c3", "c5"}) || !slices.Equal(rest, []string{"c2", "c4"}) {
		t.Fatalf("%d, ring %v, FIFO %v; want 3, [h c1 c3 c5], [c2 c4]", n, ring, rest)
	}
}

func TestScenario24_InvalidActionIsError(t *testing.T) {
	for _, v := range []gpu.Action{3, -1, -1000000} {
		t.Run(v.String(), func(t *testing.T) {
			var n int
			var err error
			var ring, rest []string
			bad := func(cand, head *gpu.Task, data any) gpu.Action {
				if cand.EC().(*ec).name == "c2" {
					return v
				}
				return gpu.Accept
			}
			collectOnce(t, harnessConfig{}, batch, []string{"h", "c1", "c2", "c3", "c4"}, func(task *gpu.Task, s *gpu.Stream) gpu.Result {
				n, err = s.CollectBatch(task, bad, nil)
				ring, rest = ringNames(task), names(s.Queue())
				return gpu.Done
			})
			if !errors.Is(err, gpu.ErrInvalidAction) {
				t.Fatalf("collect returned %d, %v; want ErrInvalidAction", n, err)
			}
			if !slices.Equal(ring, []string{"h", "c1"}) || !slices.Equal(rest, []string{"c2", "c3", "c4"}) {
				t.Fatalf("ring %v, FIFO %v; want [h c1], [c2 c3 c4]", ring, rest)
			}
		})
	}
}

func TestScenario25_NoBatchingNoCallback(t *testing.T) {
	cases := []struct {
		name string
		cfg  harnessConfig
		inc  func(gpu.SubmitHook) *gpu.Incarnation
	}{
		{"disabled", harnessConfig{opts: []gpu.Option{gpu.WithBatching(false)}}, batch},
		{"device-type", harnessConfig{sim: []sim.Option{sim.NoBatching()}}, batch},
		{"no-batch-flag", harnessConfig{}, func(h gpu.SubmitHook) *gpu.Incarnation {
			return &gpu.Incarnation{Name: "nb", Submit: h}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, callbacks := -1, 0
			var err error
			cb := func(cand, head *gpu.Task, data any) gpu.Action { callbacks++; return gpu.Accept }
			collectOnce(t, tc.cfg, tc.inc, []string{"h", "c1", "c2"}, func(task *gpu.Task, s *gpu.Stream) gpu.Result {
				n, err = s.CollectBatch(task, cb, nil)
				return gpu.Done
			})
			if n != 0 || err != nil || callbacks != 0 {
				t.Fatalf("collect returned %d, %v with %d callbacks; want 0, nil, 0", n, err, callbacks)
			}
		})
	}
}

func TestScenario26_SkipsIncapableCandidates(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	var seen []string
	var n int
	cb := func(cand, head *gpu.Task, data any) gpu.Action {
		seen = append(seen, cand.EC().(*ec).name)
		return gpu.Accept
	}
	probed := false
	done := func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		if !probed {
			probed = true
			n, _ = s.CollectBatch(task, cb, nil)
		}
		for m := range task.Ring() {
			work(s, m.EC().(*ec).name)
		}
		return gpu.Done
	}
	capable := batchInc("cap", done)
	notBatch := &gpu.Incarnation{Name: "nobatch", Submit: done}
	otherType := &gpu.Incarnation{Name: "cuda-only", Type: gpu.TypeCUDA, Batch: true, Submit: done}
	h.fill(4, plain(h.j))
	for _, c := range []struct {
		name string
		inc  *gpu.Incarnation
	}{{"h", capable}, {"c1", capable}, {"n1", notBatch}, {"c2", capable}, {"t1", otherType}} {
		tk, _ := h.task(c.name, 0, c.inc)
		h.submit(nil, tk)
	}
	h.settle()
	h.finish()
	if n != 2 || !slices.Equal(seen, []string{"c1", "c2"}) {
		t.Fatalf("collected %d with callbacks on %v; want 2 on [c1 c2]", n, seen)
	}
}

func TestScenario27_CallbackUnderLockReentryIsError(t *testing.T) {
	var locked []bool
	var reentry []error
	cb := func(cand, head *gpu.Task, data any) gpu.Action {
		s := data.(*gpu.Stream)
		locked = append(locked, s.FIFOLocked())
		_, err := s.CollectBatch(cand, gpu.BatchPolicy{}.Match, nil)
		reentry = append(reentry, err)
		return gpu.Accept
	}
	var n int
	collectOnce(t, harnessConfig{}, batch, []string{"h", "c1", "c2"}, func(task *gpu.Task, s *gpu.Stream) gpu.Result {
		n, _ = s.CollectBatch(task, cb, s)
		return gpu.Done
	})
	if n != 2 || len(locked) != 2 {
		t.Fatalf("collected %d with %d callbacks", n, len(locked))
	}
	for i := range locked {
		if !locked[i] {
			t.Errorf("callback %d ran without the FIFO lock", i)
		}
		if !errors.Is(reentry[i], gpu.ErrReentrantCollect) {
			t.Errorf("re-entrant collect %d returned %v, want ErrReentrantCollect", i, reentry[i])
		}
	}
}
