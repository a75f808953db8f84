package gpu_test

import (
	"slices"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt/gpu"
)

// recall asks h's device for data like a submission: it returns once the request was
// handed over, or once the caller, now the manager, is idle; called gets the callback's
// error.
func (h *harness) recall(data ...gpu.Data) chan error {
	h.t.Helper()
	called := make(chan error, 1)
	done := make(chan error, 1)
	go func() { done <- h.d.Recall(data, func(err error) { called <- err }) }()
	select {
	case err := <-done:
		if err != nil {
			h.t.Fatal(err)
		}
	case <-h.idle:
		h.mgr = done
	case <-time.After(stepTimeout):
		h.t.Fatal("recall: no return and no idle manager")
	}
	return called
}

// TestRecall: a recall writes back the dirty copy of a datum kept on the device, once, and
// leaves it on the device clean; data with no copy or a clean one cost no transfer, and
// the callback still runs.
func TestRecall(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	fill7 := &gpu.Incarnation{Name: "fill", Submit: fillHook(func(*gpu.Task) float64 { return 7 })}
	x := newHostData(0, 0, 0, 0)
	y := newHostData(1, 1, 1, 1) // never on the device
	b, _ := h.task("B", 0, fill7, gpu.Flow{Data: x, Access: gpu.Write, Elem: gpu.Float64, KeepOnDevice: true})
	h.submit(nil, b)
	h.drain()
	if x.buf[0] != 0 {
		t.Fatalf("the kept flow reached the host: %v", x.buf)
	}
	called := h.recall(x, y)
	if got := h.stream("out").Queued(); !slices.Equal(got, []string{"d2h"}) {
		t.Fatalf("the recall queued %v, want one d2h (x)", got)
	}
	select {
	case err := <-called:
		t.Fatalf("the callback ran (%v) before the copy landed", err)
	default:
	}
	h.drain()
	if err := <-called; err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x.buf, []float64{7, 7, 7, 7}) || x.HostVersion() != 2 {
		t.Fatalf("after the recall: %v version %d", x.buf, x.HostVersion())
	}
	if st := h.d.Stats(); st.Recalled != 1 || st.Outstanding != 0 {
		t.Fatalf("%d recalled, outstanding %d; want 1, 0", st.Recalled, st.Outstanding)
	}
	// Clean now: a second recall copies nothing.
	called = h.recall(x)
	h.drain()
	if err := <-called; err != nil {
		t.Fatal(err)
	}
	if st := h.d.Stats(); st.Recalled != 1 {
		t.Fatalf("a recall of a clean copy copied it: %d recalled", st.Recalled)
	}
	// The copy stayed on the device: a reader stages nothing in.
	c, _ := h.task("C", 0, copier(),
		gpu.Flow{Data: x, Access: gpu.Read, Elem: gpu.Float64},
		gpu.Flow{Data: y, Access: gpu.Write, Elem: gpu.Float64})
	h.submit(nil, c)
	if got := h.stream("in").Queued(); len(got) != 0 {
		t.Fatalf("a reader after the recall staged %v in, want nothing", got)
	}
	h.drain()
	if err := h.close(); err != nil {
		t.Fatal(err)
	}
}
