package gpu_test

import (
	"slices"
	"testing"

	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/sim"
)

// Scenario 40 of docs/gpu.md, "Tests" on two simulated devices: a stage-in on B copies a
// datum from A's memory (a peer copy), and the release of A's copy's reader at the end of
// that transfer is A's bookkeeping. When A has no manager, B does it directly under A's
// transient idle lock (A's counter goes 0 -> -1 -> 0, no wrapper); when A has one, B
// increments A's counter and hands it a D2D_COMPLETE command, which A's manager takes
// through its stage-out FIFO and releases (-1), without completing any logical task.
func TestScenario40_D2DCompleteSim(t *testing.T) {
	a := newHarness(t, harnessConfig{sim: []sim.Option{sim.WithName("simA")}, opts: []gpu.Option{gpu.WithIndex(0)}})
	b := newHarness(t, harnessConfig{sim: []sim.Option{sim.WithName("simB")}, opts: []gpu.Option{gpu.WithIndex(1)}})
	if err := gpu.Link(a.d, b.d); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.d.Peers(), []*gpu.Device{b.d}) || !slices.Equal(b.d.Peers(), []*gpu.Device{a.d}) {
		t.Fatal("the simulated devices are not linked")
	}
	// Two data written on A and kept there: their host copies stay stale (version 1,
	// zeros) while A's copies hold version 2.
	d1, d2 := newHostData(0, 0, 0, 0), newHostData(0, 0, 0, 0)
	fill := &gpu.Incarnation{Name: "fill", Submit: func(_ *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		for i := range task.NumFlows() {
			buf, base := task.Buffer(i), float64(10*(i+1))
			err := s.Backend().(*sim.Stream).Enqueue("fill", func() error {
				f, err := gpu.Float64s(a.be, buf)
				for j := range f {
					f[j] = base + float64(j)
				}
				return err
			})
			if err != nil {
				return task.Fail(err)
			}
		}
		return gpu.Done
	}}
	keep := func(d gpu.Data) gpu.Flow {
		return gpu.Flow{Data: d, Access: gpu.Write, Elem: gpu.Float64, KeepOnDevice: true}
	}
	w, _ := a.task("w", 0, fill, keep(d1), keep(d2))
	a.submit(nil, w)
	a.drain()
	if a.d.Outstanding() != 0 || d1.HostVersion() != 1 || d1.buf[1] != 0 {
		t.Fatalf("after the writer: A's counter %d, host version %d, host value %v", a.d.Outstanding(), d1.HostVersion(), d1.buf[1])
	}
	deltasA := len(a.counterDeltas())

	// The reader on B copies its input into an output that goes back to the host.
	copyInc := &gpu.Incarnation{Name: "copy", Submit: func(_ *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		if err := s.Memcpy(task.Buffer(1), task.Buffer(0)); err != nil {
			return task.Fail(err)
		}
		return gpu.Done
	}}
	reader := func(name string, in gpu.Data) *hostData {
		out := newHostData(0, 0, 0, 0)
		r, _ := b.task(name, 0, copyInc, gpu.Flow{Data: in, Access: gpu.Read, Elem: gpu.Float64},
			gpu.Flow{Data: out, Access: gpu.Write, Elem: gpu.Float64})
		b.submit(nil, r)
		if got := b.stream("in").Queued(); !slices.Equal(got, []string{"peer"}) {
			t.Fatalf("%s: stage-in queued %v, want one peer copy", name, got)
		}
		if st := a.d.Stats(); st.PeerPins != 1 {
			t.Fatalf("%s: A's copy has %d peer readers during the transfer, want 1", name, st.PeerPins)
		}
		return out
	}

	// 1. A has no manager: direct release under A's idle lock.
	out1 := reader("r1", d1)
	b.step("in") // the peer copy lands; B's stage-in completion releases A's reader
	st := a.d.Stats()
	if st.PeerPins != 0 || st.D2DDirect != 1 || st.D2DCommands != 0 || st.Outstanding != 0 || len(a.counterDeltas()) != deltasA {
		t.Fatalf("direct release: A's stats %+v, counter updates %v", st, a.counterDeltas()[deltasA:])
	}
	if a.d.Stats().Episodes != 1 {
		t.Fatal("the direct release started a management episode on A")
	}
	b.drain()
	if !slices.Equal(out1.buf, []float64{10, 11, 12, 13}) || b.d.Stats().PeerCopies != 1 {
		t.Fatalf("r1 read %v through %d peer copies, want A's [10 11 12 13] through 1", out1.buf, b.d.Stats().PeerCopies)
	}

	// 2. A has a manager (busy with a task whose work has not run): a counted
	// D2D_COMPLETE command.
	busy, busyEC := a.task("busy", 0, plain(a.j))
	a.submit(nil, busy)
	if a.d.Outstanding() != 1 {
		t.Fatalf("A's counter %d with its manager busy, want 1", a.d.Outstanding())
	}
	out2 := reader("r2", d2)
	b.step("in")
	st = a.d.Stats()
	if st.Outstanding != 2 || a.d.Pending() != 1 || st.D2DCommands != 1 || st.D2DDirect != 1 || st.PeerPins != 1 {
		t.Fatalf("command: A's counter %d, %d pending, stats %+v; want 2, 1, one command and the reader still held",
			st.Outstanding, a.d.Pending(), st)
	}
	a.advance() // A's manager takes the command: stage-out FIFO, bookkeeping, release
	st = a.d.Stats()
	if st.Outstanding != 1 || st.PeerPins != 0 || st.Live != 1 {
		t.Fatalf("after A's manager ran the command: counter %d, %d peer readers, %d live wrappers; want 1, 0, 1",
			st.Outstanding, st.PeerPins, st.Live)
	}
	if got := a.counterDeltas()[deltasA:]; !slices.Equal(got, []int32{-1}) {
		t.Fatalf("A's counter updates %v, want the command's release [-1]", got)
	}
	if busyEC.completed.Load() != 0 || st.Executed != 1 {
		t.Fatalf("the command completed a logical task: busy completed %d, A executed %d", busyEC.completed.Load(), st.Executed)
	}
	b.finish()
	a.drain()
	if err := a.leakCheck(); err != nil {
		t.Fatal(err)
	}
	if err := a.close(); err != nil { // writes A's dirty copies back
		t.Fatal(err)
	}
	if !slices.Equal(out2.buf, []float64{20, 21, 22, 23}) {
		t.Fatalf("r2 read %v, want A's [20 21 22 23]", out2.buf)
	}
	if !slices.Equal(d1.buf, []float64{10, 11, 12, 13}) || !slices.Equal(d2.buf, []float64{20, 21, 22, 23}) {
		t.Fatalf("A's Close wrote back %v and %v", d1.buf, d2.buf)
	}
	if busyEC.completed.Load() != 1 {
		t.Fatal("A's busy task did not complete")
	}
}

// A copy that linked devices are reading is neither evicted nor overwritten: the owner's
// reservation waits (AGAIN) until the peer reader is released, then proceeds.
func TestPeerReadersBlockOverwrite(t *testing.T) {
	a := newHarness(t, harnessConfig{sim: []sim.Option{sim.WithName("simA")}, opts: []gpu.Option{gpu.WithIndex(0)}})
	b := newHarness(t, harnessConfig{sim: []sim.Option{sim.WithName("simB")}, opts: []gpu.Option{gpu.WithIndex(1)}})
	if err := gpu.Link(a.d, b.d); err != nil {
		t.Fatal(err)
	}
	data := newHostData(1, 2, 3, 4)
	rd := func(h *harness, name string) *ec {
		tk, e := h.task(name, 0, plain(h.j), gpu.Flow{Data: data, Access: gpu.Read, Elem: gpu.Float64})
		h.submit(nil, tk)
		return e
	}
	rd(a, "a0") // A gets a current copy
	a.drain()
	rd(b, "b0") // B starts a peer copy from A and holds A's copy
	if a.d.Stats().PeerPins != 1 {
		t.Fatal("B does not read A's copy")
	}
	// A writer on A must wait for B's transfer.
	wr, wrEC := a.task("aw", 0, plain(a.j), gpu.Flow{Data: data, Access: gpu.ReadWrite, Elem: gpu.Float64})
	a.submit(nil, wr)
	for range 3 {
		a.advance()
	}
	if wrEC.completed.Load() != 0 || a.d.StageIn().InFlight() != 1 {
		t.Fatal("A's writer did not wait for the peer reader (parked on the stage-in stream)")
	}
	b.step("in") // the peer copy lands; A's manager gets the command
	a.drain()
	b.finish()
	a.finish()
	if wrEC.completed.Load() != 1 {
		t.Fatal("A's writer did not run after the peer reader was released")
	}
	if st := a.d.Stats(); st.D2DCommands != 1 || st.PeerPins != 0 {
		t.Fatalf("A's stats %+v: want one command release", st)
	}
}
