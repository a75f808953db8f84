package gpu_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/sim"
)

// causes records the cleanout causes of a harness.
type causes struct {
	mu   sync.Mutex
	errs []error
}

func (c *causes) Complete(w gpu.Worker, t *gpu.Task) error { return nil }
func (c *causes) Cleanout(t *gpu.Task, cause error) {
	c.mu.Lock()
	c.errs = append(c.errs, cause)
	c.mu.Unlock()
	t.EC().(*ec).cleaned.Add(1)
}

func TestFailuresAreTerminalAndReleased(t *testing.T) {
	boom := errors.New("boom")
	potrf := &gpu.Incarnation{Name: "potrf", Submit: func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		if err := s.Dpotrf(blas.Lower, 2, task.Buffer(0), 2); err != nil {
			return gpu.Error
		}
		return gpu.Done
	}}
	cases := []struct {
		name   string
		faults *sim.Faults
		inc    func(j *journal) *gpu.Incarnation
		flows  func() []gpu.Flow
		cause  error
	}{
		{"stage-in copy", &sim.Faults{Copy: func(string, sim.CopyKind) error { return boom }}, plain,
			func() []gpu.Flow { return []gpu.Flow{{Data: newHostData(1, 2), Access: gpu.Read, Elem: gpu.Float64}} }, boom},
		{"stage-out copy", &sim.Faults{Copy: func(_ string, k sim.CopyKind) error { return boomIf(k == sim.DtoH, boom) }}, plain,
			func() []gpu.Flow { return []gpu.Flow{{Data: newHostData(1, 2), Access: gpu.Write, Elem: gpu.Float64}} }, boom},
		{"compute record", &sim.Faults{Record: func(s string, _ int) error { return boomIf(s == "exec0", boom) }}, plain, nil, boom},
		{"compute query", &sim.Faults{Query: func(s string, _ int) error { return boomIf(s == "exec0", boom) }}, plain, nil, boom},
		{"not positive definite", nil, func(*journal) *gpu.Incarnation { return potrf },
			func() []gpu.Flow {
				return []gpu.Flow{{Data: newHostData(-1, 0, 0, 1), Access: gpu.ReadWrite, Elem: gpu.Float64}}
			},
			gpu.ErrNotPositiveDefinite},
		{"body fails with a cause", nil, func(*journal) *gpu.Incarnation {
			return &gpu.Incarnation{Name: "f", Submit: func(_ *gpu.Device, t *gpu.Task, _ *gpu.Stream) gpu.Result { return t.Fail(boom) }}
		}, nil, boom},
		{"panic", nil, func(*journal) *gpu.Incarnation {
			return &gpu.Incarnation{Name: "p", Submit: func(*gpu.Device, *gpu.Task, *gpu.Stream) gpu.Result { panic("body bug") }}
		}, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &causes{}
			cfg := harnessConfig{opts: []gpu.Option{gpu.WithCompleter(c), gpu.WithLogger(quiet)}}
			if tc.faults != nil {
				cfg.sim = []sim.Option{sim.WithFaults(tc.faults)}
			}
			h := newHarness(t, cfg)
			var flows []gpu.Flow
			if tc.flows != nil {
				flows = tc.flows()
			}
			tk, e := h.task("F", 0, tc.inc(h.j), flows...)
			h.submit(nil, tk)
			h.drain()
			if e.cleaned.Load() != 1 || e.released.Load() != 1 {
				t.Fatalf("cleaned %d, released %d", e.cleaned.Load(), e.released.Load())
			}
			err := h.managerErr()
			if !errors.Is(err, gpu.ErrTaskFailed) {
				t.Fatalf("manager returned %v, want ErrTaskFailed", err)
			}
			if tc.cause != nil && (len(c.errs) != 1 || !errors.Is(c.errs[0], tc.cause)) {
				t.Fatalf("cleanout causes %v, want %v", c.errs, tc.cause)
			}
			if tc.name == "panic" && !strings.Contains(err.Error(), "body bug") {
				t.Fatalf("the panic is not in the error: %v", err)
			}
			if err := h.leakCheck(); err != nil {
				t.Fatal(err)
			}
			if err := h.close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestCompleteStageNextGivesUpEveryMember(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	inc := batchInc("G", func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		s.CollectBatch(task, acceptAll, nil)
		work(s, "G")
		task.SetCompleteStage(func(*gpu.Device, *gpu.Task, *gpu.Stream) gpu.Result { return gpu.Next })
		return gpu.Done
	})
	tasks, _ := h.queueBatch(inc, nil, "g1", "g2", "g3")
	deltas := len(h.counterDeltas())
	h.drain()
	for _, e := range tasks {
		if e.rescheduled.Load() != 1 || e.released.Load() != 1 || e.completed.Load() != 0 {
			t.Fatalf("%s: rescheduled %d, released %d, completed %d", e.name, e.rescheduled.Load(), e.released.Load(), e.completed.Load())
		}
	}
	got := h.counterDeltas()[deltas:]
	if indexOfDelta(got, -3) < 0 {
		t.Fatalf("counter updates %v: want the three members released in one -3", got)
	}
	if err := h.leakCheck(); err != nil {
		t.Fatal(err)
	}
}

// TestQuiesceWaitsForSlowWork is scenario 37 on the simulated device: after
// a hook failed, the cleanout waits for the slow work it launched before.
func TestQuiesceWaitsForSlowWork(t *testing.T) {
	const slow = 30 * time.Millisecond
	c := &causes{}
	var ranAt time.Time
	var mu sync.Mutex
	d, _ := freeDevice(t, &host{j: &journal{}}, []sim.Option{sim.WithFaults(&sim.Faults{Delay: func(_, label string) time.Duration {
		if label == "long" {
			return slow
		}
		return 0
	}})}, gpu.WithCompleter(c))
	inc := &gpu.Incarnation{Name: "Q", Submit: func(_ *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		s.Backend().(*sim.Stream).Enqueue("long", func() error {
			mu.Lock()
			ranAt = time.Now()
			mu.Unlock()
			return nil
		})
		return gpu.Error
	}}
	e := newEC("Q", 0)
	var cleanedAt time.Time
	tk := d.NewTask(e, inc)
	tk.OnRelease(func(*gpu.Task) { cleanedAt = time.Now() })
	if err := d.Submit(t.Context(), nil, tk); !errors.Is(err, gpu.ErrTaskFailed) {
		t.Fatalf("Submit: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if ranAt.IsZero() || cleanedAt.Before(ranAt) || e.cleaned.Load() != 1 {
		t.Fatalf("slow work ran at %v, wrapper released at %v, cleaned %d", ranAt, cleanedAt, e.cleaned.Load())
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}

func boomIf(cond bool, err error) error {
	if cond {
		return err
	}
	return nil
}
