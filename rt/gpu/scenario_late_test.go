package gpu_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/sim"
)

// holdingHost is the fake runtime with holds (gpu.Holder): a task whose write-backs are
// all Late completes before they land.
type holdingHost struct{ *host }

func (h holdingHost) Hold(t *gpu.Task) gpu.Hold {
	name := t.EC().(*ec).name
	h.j.add("hold %s", name)
	return journalHold{h.j, name}
}

type journalHold struct {
	j    *journal
	name string
}

func (l journalHold) Release(err error) {
	if err != nil {
		l.j.add("unhold %s: failed", l.name)
		return
	}
	l.j.add("unhold %s", l.name)
}

// lateRun submits one task that reads x and writes y back to the host as a Late flow,
// runs its stage-in and its kernel, and returns the harness and the task's state.
func lateRun(t *testing.T, holder bool, faults *sim.Faults) (*harness, *journal, *ec) {
	j := &journal{}
	opts := []sim.Option{opJournal(j)}
	if faults != nil {
		faults.Exec = func(stream, label string) error {
			j.add("op %s %s", stream, label)
			if stream == "out" {
				return errors.New("copy failed")
			}
			return nil
		}
		opts = []sim.Option{sim.WithFaults(faults)}
	}
	cfg := harnessConfig{sim: opts}
	hst := &host{j: j}
	if holder {
		cfg.opts = []gpu.Option{gpu.WithCompleter(holdingHost{hst})}
	} else {
		cfg.opts = []gpu.Option{gpu.WithCompleter(hst)}
	}
	h := newHarness(t, cfg)
	h.j, h.host = j, hst
	x := newHostData(1, 2, 3, 4)
	y := newHostData(5, 6, 7, 8)
	task, e := h.task("T", 0, plain(j),
		gpu.Flow{Data: x, Access: gpu.Read, Elem: gpu.Float64},
		gpu.Flow{Data: y, Access: gpu.ReadWrite, Elem: gpu.Float64, Late: true})
	h.submit(nil, task)
	h.step("in")
	h.step("in")
	h.step("exec0")
	return h, j, e
}

// TestLateWriteBackCompletesFirst: a task whose written-back flows are all Late completes
// as soon as its copy to the host is queued, under a hold that is released when the copy
// has landed; the wrapper is released then, not before.
func TestLateWriteBackCompletesFirst(t *testing.T) {
	h, j, e := lateRun(t, true, nil)
	if got := h.stream("out").Queued(); !slices.Equal(got, []string{"d2h"}) {
		t.Fatalf("stage-out queue %v, want one d2h", got)
	}
	if e.completed.Load() != 1 || e.released.Load() != 0 {
		t.Fatalf("before the copy landed: completed %d, released %d; want 1, 0", e.completed.Load(), e.released.Load())
	}
	if st := h.d.Stats(); st.Early != 1 || st.Executed != 1 || st.Outstanding != 1 {
		t.Fatalf("stats %+v: want 1 early, 1 executed, 1 outstanding", st)
	}
	h.step("out")
	want := []string{"op in h2d", "op in h2d", "hook T", "op exec0 T", "hold T", "complete T", "op out d2h", "unhold T", "release T"}
	if got := j.entries(); !slices.Equal(got, want) {
		t.Fatalf("order (-want +got):\n-%q\n+%q", want, got)
	}
	if h.mgr != nil {
		t.Fatal("the manager did not leave after the only release")
	}
	if b, e := h.spans(gpu.SpanStageOut, "T"); b != 1 || e != 1 {
		t.Fatalf("stage-out spans of T: %d begins, %d ends; want 1, 1", b, e)
	}
	h.finish()
}

// TestLateWriteBackWithoutHolder: a Completer that cannot hold its tasks gets them
// completed after the copy, as if no flow were Late.
func TestLateWriteBackWithoutHolder(t *testing.T) {
	h, j, e := lateRun(t, false, nil)
	if e.completed.Load() != 0 {
		t.Fatal("completed before the copy landed without a Holder")
	}
	h.step("out")
	want := []string{"op in h2d", "op in h2d", "hook T", "op exec0 T", "op out d2h", "complete T", "release T"}
	if got := j.entries(); !slices.Equal(got, want) {
		t.Fatalf("order (-want +got):\n-%q\n+%q", want, got)
	}
	if st := h.d.Stats(); st.Early != 0 {
		t.Fatalf("%d early completions, want 0", st.Early)
	}
	h.finish()
}

// TestLateWriteBackFailure: when the copy of an early-completed task fails, the hold is
// released with the error (its result never reached the host) and the task, completed
// already, is not cleaned out.
func TestLateWriteBackFailure(t *testing.T) {
	h, j, e := lateRun(t, true, &sim.Faults{})
	h.step("out")
	want := []string{"op in h2d", "op in h2d", "hook T", "op exec0 T", "hold T", "complete T", "op out d2h", "unhold T: failed", "release T"}
	if got := j.entries(); !slices.Equal(got, want) {
		t.Fatalf("order (-want +got):\n-%q\n+%q", want, got)
	}
	if e.completed.Load() != 1 || e.cleaned.Load() != 0 || e.released.Load() != 1 {
		t.Fatalf("completed %d, cleaned %d, released %d; want 1, 0, 1", e.completed.Load(), e.cleaned.Load(), e.released.Load())
	}
	if err := h.managerErr(); !errors.Is(err, gpu.ErrTaskFailed) {
		t.Fatalf("manager error %v, want ErrTaskFailed", err)
	}
}
