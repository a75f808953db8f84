package gpu_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/jdf2go/jdf2go/rt/gpu"
)

// Followers merged back into the FIFO, by NEXT or by RequeueFollowers
// take their place by priority: a follower of priority 7 goes ahead
// of a task of priority 5 that was already waiting, not behind it.
func TestMergeBackKeepsPriorityOrder(t *testing.T) {
	onlyF := func(cand, _ *gpu.Task, _ any) gpu.Action {
		if cand.EC().(*ec).name == "F" {
			return gpu.Accept
		}
		return gpu.Reject
	}
	for _, how := range []string{"next", "requeue"} {
		t.Run(how, func(t *testing.T) {
			h := newHarness(t, harnessConfig{})
			calls := 0
			var queue []string
			inc := batchInc("P", func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
				name := task.EC().(*ec).name
				if name != "H" {
					work(s, name)
					return gpu.Done
				}
				calls++
				if calls == 1 {
					if n, _ := s.CollectBatch(task, onlyF, nil); n != 1 {
						t.Errorf("collected %d, want F alone", n)
					}
					if how == "next" {
						queue = names(s.Queue())
						return gpu.Next
					}
					if n := s.RequeueFollowers(task); n != 1 {
						t.Errorf("requeued %d, want 1", n)
					}
					queue = names(s.Queue())
					work(s, "H")
					return gpu.Done
				}
				queue = names(s.Queue())
				work(s, "H")
				return gpu.Done
			})
			h.queueBatch(inc, []int32{9, 5, 7}, "H", "W", "F")
			h.finish()
			// After the merge-back F (7) is ahead of W (5), which waited all along.
			if !slices.Equal(queue, []string{"F", "W"}) {
				t.Fatalf("FIFO after the merge-back %v, want [F W]", queue)
			}
		})
	}
}

// A head that collects followers and returns NEXT past the retry limit fails
// alone: its followers go back to the FIFO and run as heads of their own.
func TestNextPastRetryLimitRequeuesFollowers(t *testing.T) {
	h := newHarness(t, harnessConfig{opts: []gpu.Option{gpu.WithRetryLimit(20)}})
	inc := batchInc("S", func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		name := task.EC().(*ec).name
		if name != "H" {
			work(s, name)
			return gpu.Done
		}
		if _, err := s.CollectBatch(task, acceptAll, nil); err != nil {
			t.Error(err)
		}
		return gpu.Next
	})
	tasks, _ := h.queueBatch(inc, []int32{9, 1, 1}, "H", "F1", "F2")
	h.finish()
	if e := tasks[0]; e.cleaned.Load() != 1 || e.completed.Load() != 0 {
		t.Fatalf("H: cleaned %d, completed %d; want it failed", e.cleaned.Load(), e.completed.Load())
	}
	for _, e := range tasks[1:] {
		if e.completed.Load() != 1 || e.cleaned.Load() != 0 {
			t.Errorf("%s: completed %d, cleaned %d; want it run", e.name, e.completed.Load(), e.cleaned.Load())
		}
	}
	if err := h.managerErr(); !errors.Is(err, gpu.ErrNoProgress) {
		t.Fatalf("manager returned %v, want ErrNoProgress", err)
	}
}
