package gpu_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/jdf2go/jdf2go/rt/gpu"
)

// copier is a body that copies flow 0 into flow 1 on the device.
func copier() *gpu.Incarnation {
	return &gpu.Incarnation{Name: "copy", Submit: func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		if err := s.Memcpy(task.Buffer(1), task.Buffer(0)); err != nil {
			return gpu.Error
		}
		return gpu.Done
	}}
}

func TestStageInOnlyWhenStale(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	x := newHostData(1, 2, 3, 4)
	read := func(name string) []string {
		tk, _ := h.task(name, 0, plain(h.j), gpu.Flow{Data: x, Access: gpu.Read, Elem: gpu.Float64})
		h.submit(nil, tk)
		queued := h.stream("in").Queued()
		h.drain()
		return queued
	}
	if got := read("A"); !slices.Equal(got, []string{"h2d"}) {
		t.Fatalf("first read staged %v, want one h2d", got)
	}
	if got := read("B"); len(got) != 0 {
		t.Fatalf("second read staged %v, want nothing (current copy)", got)
	}
	x.buf[0] = 10 // a CPU task writes the host copy
	x.ver.Add(1)
	if got := read("C"); !slices.Equal(got, []string{"h2d"}) {
		t.Fatalf("read after a host write staged %v, want one h2d", got)
	}
	if err := h.d.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestWriteBackAndKeepOnDevice(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	fill7 := &gpu.Incarnation{Name: "fill", Submit: fillHook(func(*gpu.Task) float64 { return 7 })}
	x := newHostData(0, 0, 0, 0)
	y := newHostData(0, 0, 0, 0)
	z := newHostData(0, 0, 0, 0)
	// Written back to the host: the version moves and the data arrives.
	a, _ := h.task("A", 0, fill7, gpu.Flow{Data: z, Access: gpu.ReadWrite, Elem: gpu.Float64})
	h.submit(nil, a)
	h.drain()
	if z.buf[3] != 7 || z.HostVersion() != 2 {
		t.Fatalf("written-back flow: %v version %d", z.buf, z.HostVersion())
	}
	// Kept on the device for the next consumer there.
	b, _ := h.task("B", 0, fill7, gpu.Flow{Data: x, Access: gpu.Write, Elem: gpu.Float64, KeepOnDevice: true})
	h.submit(nil, b)
	h.drain()
	if x.buf[0] != 0 || x.HostVersion() != 1 {
		t.Fatalf("kept flow reached the host: %v version %d", x.buf, x.HostVersion())
	}
	c, _ := h.task("C", 0, copier(),
		gpu.Flow{Data: x, Access: gpu.Read, Elem: gpu.Float64},
		gpu.Flow{Data: y, Access: gpu.Write, Elem: gpu.Float64})
	h.submit(nil, c)
	if got := h.stream("in").Queued(); len(got) != 0 {
		t.Fatalf("the consumer staged %v in, want nothing: the device copy is newer", got)
	}
	h.drain()
	if !slices.Equal(y.buf, []float64{7, 7, 7, 7}) {
		t.Fatalf("consumer read %v from the device copy", y.buf)
	}
	// Close writes the kept copy back: no result is lost.
	if err := h.close(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x.buf, []float64{7, 7, 7, 7}) || x.HostVersion() != 2 {
		t.Fatalf("after Close: %v version %d", x.buf, x.HostVersion())
	}
}

// TestStageOutCountsEveryWrittenFlow: the default stage-out copies each written flow of a
// task to the host and counts each one in Stats (StageOuts, BytesOut), so a task with three
// written flows counts three stage-outs, not one; a read-only flow and a flow kept on the
// device count none.
func TestStageOutCountsEveryWrittenFlow(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	const tile = 4 * 8 // bytes of a 4-element float64 datum
	x := newHostData(1, 2, 3, 4)
	one := newHostData(0, 0, 0, 0)
	a, _ := h.task("A", 0, copier(),
		gpu.Flow{Data: x, Access: gpu.Read, Elem: gpu.Float64},
		gpu.Flow{Data: one, Access: gpu.Write, Elem: gpu.Float64})
	h.submit(nil, a)
	h.drain()
	if st := h.d.Stats(); st.StageOuts != 1 || st.BytesOut != tile {
		t.Fatalf("after a task with one written flow: %d stage-outs of %d bytes, want 1 of %d", st.StageOuts, st.BytesOut, tile)
	}
	// B copies x into each of its written flows.
	fanOut := &gpu.Incarnation{Name: "fan-out", Submit: func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		for i := 1; i < 5; i++ {
			if err := s.Memcpy(task.Buffer(i), task.Buffer(0)); err != nil {
				return gpu.Error
			}
		}
		return gpu.Done
	}}
	ys := []*hostData{newHostData(0, 0, 0, 0), newHostData(0, 0, 0, 0), newHostData(9, 9, 9, 9)}
	kept := newHostData(0, 0, 0, 0)
	b, _ := h.task("B", 0, fanOut,
		gpu.Flow{Data: x, Access: gpu.Read, Elem: gpu.Float64},
		gpu.Flow{Data: ys[0], Access: gpu.Write, Elem: gpu.Float64},
		gpu.Flow{Data: ys[1], Access: gpu.Write, Elem: gpu.Float64},
		gpu.Flow{Data: ys[2], Access: gpu.ReadWrite, Elem: gpu.Float64},
		gpu.Flow{Data: kept, Access: gpu.Write, Elem: gpu.Float64, KeepOnDevice: true})
	h.submit(nil, b)
	h.drain()
	for i, y := range ys {
		if !slices.Equal(y.buf, x.buf) || y.HostVersion() != 2 {
			t.Errorf("written flow %d of B on the host: %v version %d, want %v version 2", i+1, y.buf, y.HostVersion(), x.buf)
		}
	}
	if kept.buf[0] != 0 || kept.HostVersion() != 1 {
		t.Errorf("the flow kept on the device reached the host: %v version %d", kept.buf, kept.HostVersion())
	}
	if st := h.d.Stats(); st.StageOuts != 4 || st.BytesOut != 4*tile {
		t.Errorf("after B with three written flows copied out: %d stage-outs of %d bytes, want 4 of %d", st.StageOuts, st.BytesOut, 4*tile)
	}
	if err := h.close(); err != nil {
		t.Fatal(err)
	}
}

// TestObsoleteDirtyCopyNotWrittenBack: a value kept on the device whose host
// copy moved on meanwhile (an arena buffer recycled, a newer version written
// elsewhere) is obsolete: Close must not write it over the newer host copy.
func TestObsoleteDirtyCopyNotWrittenBack(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	fill7 := &gpu.Incarnation{Name: "fill", Submit: fillHook(func(*gpu.Task) float64 { return 7 })}
	x := newHostData(0, 0, 0, 0)
	a, _ := h.task("A", 0, fill7, gpu.Flow{Data: x, Access: gpu.Write, Elem: gpu.Float64, KeepOnDevice: true})
	h.submit(nil, a)
	h.drain()
	copy(x.buf, []float64{5, 5, 5, 5}) // the host copy gets a newer value
	x.ver.Store(10)
	if err := h.close(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x.buf, []float64{5, 5, 5, 5}) {
		t.Fatalf("after Close the host copy holds %v: the obsolete device value was written back", x.buf)
	}
}

// TestNextLeavesNoInputBehind: NEXT from complete_stage gives a task up on
// the device, but when one of its inputs exists only there (kept on the
// device by its producer) a body elsewhere would read a stale host copy, so
// the task fails instead of being rescheduled; a task whose inputs are on
// the host is rescheduled as before.
func TestNextLeavesNoInputBehind(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	fill7 := &gpu.Incarnation{Name: "fill", Submit: fillHook(func(*gpu.Task) float64 { return 7 })}
	giveUp := &gpu.Incarnation{Name: "giveup", Submit: func(_ *gpu.Device, task *gpu.Task, _ *gpu.Stream) gpu.Result {
		task.SetCompleteStage(func(*gpu.Device, *gpu.Task, *gpu.Stream) gpu.Result { return gpu.Next })
		return gpu.Done
	}}
	kept, onHost := newHostData(0, 0), newHostData(0, 0)
	a, _ := h.task("A", 0, fill7, gpu.Flow{Data: kept, Access: gpu.Write, Elem: gpu.Float64, KeepOnDevice: true})
	h.submit(nil, a)
	h.drain()
	b, eb := h.task("B", 0, giveUp, gpu.Flow{Data: kept, Access: gpu.Read, Elem: gpu.Float64})
	h.submit(nil, b)
	h.drain()
	c, ec := h.task("C", 0, giveUp, gpu.Flow{Data: onHost, Access: gpu.Read, Elem: gpu.Float64})
	h.submit(nil, c)
	h.drain()
	if eb.cleaned.Load() != 1 || eb.rescheduled.Load() != 0 {
		t.Errorf("B (input only on the device): %d cleanouts, %d reschedules; want it failed", eb.cleaned.Load(), eb.rescheduled.Load())
	}
	if ec.rescheduled.Load() != 1 || ec.cleaned.Load() != 0 {
		t.Errorf("C (input on the host): %d reschedules, %d cleanouts; want it rescheduled", ec.rescheduled.Load(), ec.cleaned.Load())
	}
	if err := h.managerErr(); !errors.Is(err, gpu.ErrTaskFailed) {
		t.Errorf("manager error %v, want ErrTaskFailed for B", err)
	}
	if err := h.close(); err != nil {
		t.Fatal(err)
	}
}

// TestHintOfAnEvictedCopy: a submitter looks up the device copies of its
// flows for the manager (hintCopies); when the copy is evicted before the
// wrapper's reservation, by a better-priority task taken in the same
// iteration, the reservation must not use the freed copy: it stages the
// datum in again.
func TestHintOfAnEvictedCopy(t *testing.T) {
	const unit = 256
	h := newHarness(t, harnessConfig{opts: []gpu.Option{gpu.WithMemoryLimit(3 * unit)}})
	data := map[string]*hostData{}
	for _, n := range []string{"X", "Y", "W", "Z"} {
		data[n] = newHostData(make([]float64, unit/8)...)
	}
	read := func(task, n string, prio int32) *gpu.Task {
		tk, _ := h.task(task, prio, plain(h.j), gpu.Flow{Data: data[n], Access: gpu.Read, Elem: gpu.Float64})
		return tk
	}
	for _, n := range []string{"X", "Y", "W"} { // the device is full, X least recently used
		h.submit(nil, read("read"+n, n, 0))
		h.drain()
	}
	gate, _ := h.task("gate", 0, plain(h.j))
	h.submit(nil, gate) // a manager waits for the gate's event
	if h.mgr == nil {
		t.Fatal("no idle manager")
	}
	h.submit(nil, read("B", "X", 0))  // its hint is X's copy
	h.submit(nil, read("C", "Z", 10)) // reserved first: evicts X
	h.stream("in").Drain()
	h.advance()
	if got := h.stream("in").Queued(); len(got) != 2 {
		t.Fatalf("stage-in queued %v, want the copies of Z and of X again", got)
	}
	if ev := h.d.Stats().Evictions; ev != 2 {
		t.Fatalf("%d evictions, want 2 (X for Z, then Y for X)", ev)
	}
	h.finish()
}

func TestEvictionLeastRecentlyUsed(t *testing.T) {
	const unit = 256
	h := newHarness(t, harnessConfig{opts: []gpu.Option{gpu.WithMemoryLimit(2 * unit)}})
	data := map[string]*hostData{}
	for _, n := range []string{"X", "Y", "Z"} {
		data[n] = newHostData(make([]float64, unit/8)...)
	}
	read := func(n string) int {
		tk, _ := h.task("read"+n, 0, plain(h.j), gpu.Flow{Data: data[n], Access: gpu.Read, Elem: gpu.Float64})
		h.submit(nil, tk)
		staged := len(h.stream("in").Queued())
		h.drain()
		return staged
	}
	read("X")
	read("Y")
	read("X") // X is now the most recently used
	if ev := h.d.Stats().Evictions; ev != 0 {
		t.Fatalf("%d evictions with room", ev)
	}
	if read("Z") != 1 || h.d.Stats().Evictions != 1 {
		t.Fatal("Z did not evict one copy")
	}
	if read("X") != 0 {
		t.Fatal("X was evicted, but Y was the least recently used")
	}
	if read("Y") != 1 {
		t.Fatal("Y should have been evicted")
	}
	if st := h.d.Stats(); st.MemUsed > st.MemLimit {
		t.Fatalf("memory used %d over the limit %d", st.MemUsed, st.MemLimit)
	}
	if err := h.d.Close(); err != nil {
		t.Fatal(err)
	}
	if h.be.Allocations() != 0 {
		t.Fatalf("%d device allocations after Close", h.be.Allocations())
	}
}

func TestPrefetch(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	x := newHostData(1, 2, 3, 4)
	done := make(chan error, 1)
	go func() { done <- h.d.Prefetch(context.Background(), nil, x) }()
	h.adopt(done)
	if got := h.stream("in").Queued(); !slices.Equal(got, []string{"h2d"}) {
		t.Fatalf("prefetch staged %v", got)
	}
	h.drain()
	tk, e := h.task("R", 0, plain(h.j), gpu.Flow{Data: x, Access: gpu.Read, Elem: gpu.Float64})
	h.submit(nil, tk)
	if got := h.stream("in").Queued(); len(got) != 0 {
		t.Fatalf("the reader staged %v after a prefetch", got)
	}
	h.drain()
	// A prefetch of a current copy ends at once, counted in and out.
	if err := h.d.Prefetch(context.Background(), nil, x); err != nil {
		t.Fatal(err)
	}
	if err := h.leakCheck(); err != nil || e.completed.Load() != 1 {
		t.Fatalf("%v, completed %d", err, e.completed.Load())
	}
	if got := h.d.Stats().Decrements; got != 3 {
		t.Fatalf("%d counter releases, want 3 (prefetch, reader, prefetch)", got)
	}
}

// TestPrefetchMany checks that one Prefetch of several data is one episode
// whose transfers are in flight together, not one episode per datum, and that
// a prefetch larger than the queue limit goes in chunks of that limit.
func TestPrefetchMany(t *testing.T) {
	h := newHarness(t, harnessConfig{opts: []gpu.Option{gpu.WithQueueLimit(3)}})
	xs := make([]gpu.Data, 5)
	for i := range xs {
		xs[i] = newHostData(float64(i))
	}
	if err := h.d.Prefetch(context.Background(), nil, xs[0], nil); !errors.Is(err, gpu.ErrBadArgument) {
		t.Fatalf("Prefetch with a nil datum: %v, want ErrBadArgument", err)
	}
	done := make(chan error, 1)
	go func() { done <- h.d.Prefetch(context.Background(), nil, xs...) }()
	h.adopt(done)
	if got := h.stream("in").Queued(); !slices.Equal(got, []string{"h2d", "h2d", "h2d"}) {
		t.Fatalf("the first chunk staged %v, want three transfers at once", got)
	}
	// The drain runs both episodes: the same call manages the second chunk
	// once the first is over.
	h.drain()
	if err := h.managerErr(); err != nil {
		t.Fatal(err)
	}
	if got := h.d.Stats().Episodes; got != 2 {
		t.Fatalf("%d management episodes for 5 data in chunks of 3, want 2", got)
	}
	if got := h.d.Stats().StageIns; got != 5 {
		t.Fatalf("%d copies staged in, want 5", got)
	}
	if err := h.leakCheck(); err != nil {
		t.Fatal(err)
	}
	// The readers of every datum find their copies current.
	for i, x := range xs {
		tk, _ := h.task(fmt.Sprint("R", i), 0, plain(h.j), gpu.Flow{Data: x, Access: gpu.Read, Elem: gpu.Float64})
		h.submit(nil, tk)
		if got := h.stream("in").Queued(); len(got) != 0 {
			t.Fatalf("reader %d staged %v after the prefetch", i, got)
		}
		h.drain()
	}
	h.finish()
}

// TestPrefetchClosed checks that a Prefetch on a closed device says so and
// leaves no wrapper behind.
func TestPrefetchClosed(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	h.finish()
	err := h.d.Prefetch(context.Background(), nil, newHostData(1), newHostData(2))
	if !errors.Is(err, gpu.ErrClosed) {
		t.Fatalf("Prefetch after Close: %v, want ErrClosed", err)
	}
	if live := h.d.Stats().Live; live != 0 {
		t.Fatalf("%d wrappers live after a refused prefetch", live)
	}
}

func TestDataLargerThanTheDeviceFails(t *testing.T) {
	const unit = 256
	c := &causes{}
	h := newHarness(t, harnessConfig{opts: []gpu.Option{gpu.WithMemoryLimit(unit), gpu.WithCompleter(c)}})
	big := newHostData(make([]float64, 2*unit/8)...)
	tk, e := h.task("big", 0, plain(h.j), gpu.Flow{Data: big, Access: gpu.Read, Elem: gpu.Float64})
	h.submit(nil, tk)
	h.drain()
	if e.cleaned.Load() != 1 || len(c.errs) != 1 || !errors.Is(c.errs[0], gpu.ErrOutOfMemory) {
		t.Fatalf("cleaned %d, causes %v; want one ErrOutOfMemory", e.cleaned.Load(), c.errs)
	}
	if err := h.leakCheck(); err != nil {
		t.Fatal(err)
	}
}
