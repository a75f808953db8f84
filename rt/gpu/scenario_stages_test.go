package gpu_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/sim"
)

// Scenarios 7 to 11 of docs/gpu.md, "Tests": stages and events.

// opJournal makes the simulated device journal every operation as it runs.
func opJournal(j *journal) sim.Option {
	return sim.WithFaults(&sim.Faults{Exec: func(stream, label string) error {
		j.add("op %s %s", stream, label)
		return nil
	}})
}

func TestScenario07_SingletonDoneOrder(t *testing.T) {
	j := &journal{}
	h := newHarness(t, harnessConfig{sim: []sim.Option{opJournal(j)}})
	h.j = j
	h.host.j = j
	x := newHostData(1, 2, 3, 4)
	y := newHostData(5, 6, 7, 8)
	sawEpilog := false
	h.host.onComplete = func(_ gpu.Worker, _ *gpu.Task) { sawEpilog = y.HostVersion() == 2 }
	task, e := h.task("T", 0, plain(j),
		gpu.Flow{Data: x, Access: gpu.Read, Elem: gpu.Float64},
		gpu.Flow{Data: y, Access: gpu.ReadWrite, Elem: gpu.Float64})
	h.submit(nil, task)
	if got := h.stream("in").Queued(); !slices.Equal(got, []string{"h2d", "h2d"}) {
		t.Fatalf("stage-in queue %v, want two h2d", got)
	}
	h.step("in")
	h.step("in")
	h.step("exec0")
	if got := h.stream("out").Queued(); !slices.Equal(got, []string{"d2h"}) {
		t.Fatalf("stage-out queue %v, want one d2h", got)
	}
	if e.completed.Load() != 0 || e.released.Load() != 0 {
		t.Fatal("completed before the stage-out event")
	}
	h.step("out")
	if h.mgr != nil {
		t.Fatal("the manager did not leave after the only release")
	}
	want := []string{"op in h2d", "op in h2d", "hook T", "op exec0 T", "op out d2h", "complete T", "release T"}
	if got := j.entries(); !slices.Equal(got, want) {
		t.Fatalf("order (-want +got):\n-%q\n+%q", want, got)
	}
	if !sawEpilog {
		t.Fatal("the epilog (host version of the written flow) had not run at completion")
	}
	if e.completed.Load() != 1 || e.released.Load() != 1 {
		t.Fatalf("completed %d, released %d; want 1, 1", e.completed.Load(), e.released.Load())
	}
	if got := h.counterDeltas(); !slices.Equal(got, []int32{-1}) {
		t.Fatalf("counter updates %v, want [-1]", got)
	}
	h.finish()
}

func TestScenario08_SkipEmptyEvents(t *testing.T) {
	for _, tc := range []struct {
		skip bool
		want uint64
	}{{true, 1}, {false, 3}} {
		h := newHarness(t, harnessConfig{opts: []gpu.Option{gpu.WithSkipEmptyEvents(tc.skip)}})
		task, _ := h.task("T", 0, plain(h.j))
		h.submit(nil, task)
		h.finish()
		var records uint64
		for _, s := range h.d.Streams() {
			records += s.Records()
		}
		if records != tc.want {
			t.Errorf("skip-empty-events %v: %d events recorded, want %d", tc.skip, records, tc.want)
		}
		if got := h.d.Compute(0).Records(); got != 1 {
			t.Errorf("skip-empty-events %v: %d compute events, want 1", tc.skip, got)
		}
	}
}

func TestScenario09_InOrderOnePerPassFourInFlight(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	inc := plain(h.j)
	for i := 1; i <= 6; i++ {
		task, _ := h.task("t"+string(rune('0'+i)), 0, inc)
		task.SetCompleteStage(func(d *gpu.Device, head *gpu.Task, s *gpu.Stream) gpu.Result {
			h.j.add("exec-done %s", head.EC())
			return gpu.Done
		})
		h.submit(nil, task)
	}
	h.settle()
	s := h.d.Compute(0)
	if s.InFlight() != 4 || s.QueueLen() != 2 {
		t.Fatalf("in flight %d, queued %d; want 4 and 2 (a full stream pops nothing)", s.InFlight(), s.QueueLen())
	}
	if n := len(h.j.entries()); n != 4 {
		t.Fatalf("%d hooks ran, want 4: %v", n, h.j.entries())
	}
	// Every event of the stream is now complete at once.
	if n := h.stream("exec0").Drain(); n != 4 {
		t.Fatalf("drained %d operations, want 4", n)
	}
	h.advance()
	if s.InFlight() > 4 {
		t.Fatalf("%d records in flight", s.InFlight())
	}
	got := h.j.entries()[4:]
	want := []string{
		"exec-done t1", "hook t5", "complete t1", "release t1",
		"exec-done t2", "hook t6", "complete t2", "release t2",
		"exec-done t3", "complete t3", "release t3",
		"exec-done t4", "complete t4", "release t4",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("after one drain (-want +got):\n-%q\n+%q", want, got)
	}
	h.finish()
}

func TestScenario10_ExecLifeOnOneStreamRoundRobin(t *testing.T) {
	// One submission per iteration (the spec's loop, transition 13): the
	// round robin below is asserted per arrival, which holds only when each
	// arrival is taken by its own iteration. The manager's default takes up
	// to DefaultPendingDrain waiting submissions at once (TestPendingDrainOneStream).
	h := newHarness(t, harnessConfig{opts: []gpu.Option{gpu.WithComputeStreams(3), gpu.WithPendingDrain(1)}})
	type call struct {
		task   string
		stream int
	}
	var calls []call
	counts := map[string]int{}
	inc := &gpu.Incarnation{Name: "rr", Submit: func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		name := task.EC().(*ec).name
		calls = append(calls, call{name, s.Index()})
		counts[name]++
		if counts[name] == 1 {
			return gpu.Next // nothing enqueued: a physical constraint
		}
		work(s, name)
		switch counts[name] {
		case 2:
			return gpu.Again
		}
		return gpu.Done
	}}
	var order []string
	for i := 1; i <= 6; i++ {
		name := "t" + string(rune('0'+i))
		task, _ := h.task(name, 0, inc)
		h.submit(nil, task)
		order = append(order, name)
	}
	h.finish()
	first := map[string]int{}
	for _, c := range calls {
		if s, ok := first[c.task]; !ok {
			first[c.task] = c.stream
		} else if s != c.stream {
			t.Errorf("%s ran on streams %d and %d", c.task, s, c.stream)
		}
	}
	for name, n := range counts {
		if n != 3 {
			t.Errorf("%s: %d hook calls, want 3 (NEXT, AGAIN, DONE)", name, n)
		}
	}
	// Arrivals after the first are taken one per iteration, and each
	// iteration moves to the next compute stream.
	for i := 2; i < len(order); i++ {
		a, b := first[order[i-1]], first[order[i]]
		if b != 2+(a-2+1)%3 {
			t.Errorf("%s on stream %d, then %s on stream %d: not round robin", order[i-1], a, order[i], b)
		}
	}
}

func TestScenario11_StageInAgainWaitsForEpoch(t *testing.T) {
	const unit = 256 // bytes: 32 float64
	h := newHarness(t, harnessConfig{opts: []gpu.Option{gpu.WithMemoryLimit(3 * unit)}})
	big := newHostData(make([]float64, 2*unit/8)...)
	other := newHostData(make([]float64, 2*unit/8)...)
	inc := plain(h.j)
	a, ea := h.task("A", 0, inc, gpu.Flow{Data: big, Access: gpu.Read, Elem: gpu.Float64})
	b, eb := h.task("B", 0, inc, gpu.Flow{Data: other, Access: gpu.Read, Elem: gpu.Float64})
	h.submit(nil, a)
	h.step("in") // A's copy; A now runs and pins 2 units
	h.submit(nil, b)
	h.settle()
	res := h.d.Stats().Reservations
	if res != 2 {
		t.Fatalf("%d reservations, want 2 (A, then B's failed one)", res)
	}
	// B is parked; its retries do not reserve again while the epoch stands.
	for range 5 {
		h.advance()
	}
	if got := h.d.Stats().Reservations; got != res {
		t.Fatalf("%d reservations after idle retries, want %d", got, res)
	}
	if eb.completed.Load() != 0 || h.d.StageIn().InFlight() != 1 {
		t.Fatal("B is not parked on the stage-in stream")
	}
	// A completes: its copy is unpinned, the epoch moves, B reserves again
	// (evicting A's clean copy) and proceeds.
	h.step("exec0")
	if got := h.d.Stats().Reservations; got != res+1 {
		t.Fatalf("%d reservations after the epoch bump, want %d", got, res+1)
	}
	if ea.completed.Load() != 1 {
		t.Fatal("A did not complete")
	}
	h.finish()
	if eb.completed.Load() != 1 || h.d.Stats().Evictions != 1 {
		t.Fatalf("B completed %d times, %d evictions; want 1, 1", eb.completed.Load(), h.d.Stats().Evictions)
	}
}

// The manager takes what waits in device.pending at once (WithPendingDrain),
// so submissions that arrive while it is busy reach the compute FIFO
// together and a batched head collects them, even when the stream has room
// for each of them (no backpressure: launches cost the host more than the
// device). Taking one per iteration, every ring is a
// singleton.
func TestPendingDrainBatchesWithoutBackpressure(t *testing.T) {
	for _, c := range []struct {
		drain int
		rings []int
	}{{gpu.DefaultPendingDrain, []int{6}}, {4, []int{4, 2}}, {1, []int{1, 1, 1, 1, 1, 1}}} {
		t.Run(fmt.Sprintf("drain=%d", c.drain), func(t *testing.T) {
			h := newHarness(t, harnessConfig{opts: []gpu.Option{gpu.WithComputeStreams(2), gpu.WithPendingDrain(c.drain)}})
			var rings []int
			streams := map[int]bool{}
			inc := batchInc("drain", func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
				if _, err := s.CollectBatch(task, acceptAll, nil); err != nil {
					return gpu.Error
				}
				rings = append(rings, task.RingLen())
				streams[s.Index()] = true
				work(s, "ring")
				return gpu.Done
			})
			gate, _ := h.task("gate", 0, plain(h.j))
			h.submit(nil, gate) // the manager, now idle with the gate's work in flight
			for i := range 6 {
				tk, _ := h.task(fmt.Sprintf("b%d", i), 0, inc)
				h.submit(nil, tk)
			}
			h.settle()
			h.advance()
			if !slices.Equal(rings, c.rings) {
				t.Errorf("rings %v, want %v", rings, c.rings)
			}
			if c.drain >= 6 && len(streams) != 1 {
				t.Errorf("one iteration's submissions ran on %d streams", len(streams))
			}
			h.finish()
		})
	}
}
