package rt

import "testing"

// lfqWorker returns an lfq scheduler of 4 queues and its worker id, with next_task on.
func lfqWorker(t *testing.T, id int) (*lfq, *worker) {
	t.Helper()
	s, err := newScheduler("lfq", 4)
	if err != nil {
		t.Fatal(err)
	}
	return s.(*lfq), newWorker(&Context{sched: s, cfg: config{keepNext: true}}, id)
}

// A release that fills the ready buffer sends each full batch to another worker's queue in
// turn, and keeps what is left of the release (the best task and the last partial batch) on
// the releasing worker.
func TestLargeReleaseSpreadsOverQueues(t *testing.T) {
	s, w := lfqWorker(t, 1)
	tasks := make([]Task, 3*readyBatch+6)
	for i := range tasks {
		tasks[i].prio = int32(i)
		w.makeReady(&tasks[i])
	}
	w.flushReady()
	q := s.qs
	for i, want := range []int32{readyBatch, 5, readyBatch, readyBatch} {
		if got := q[i].n.Load(); got != want {
			t.Errorf("queue %d holds %d tasks, want %d", i, got, want)
		}
	}
	if w.next == nil || w.next.prio != int32(len(tasks)-1) {
		t.Errorf("next_task %v, want the best task of the release", w.next)
	}
}

// A release smaller than a batch stays on the releasing worker, for locality.
func TestSmallReleaseStaysLocal(t *testing.T) {
	s, w := lfqWorker(t, 2)
	tasks := make([]Task, readyBatch/2)
	for i := range tasks {
		w.makeReady(&tasks[i])
	}
	w.flushReady()
	for i := range s.qs {
		want := int32(0)
		if i == 2 {
			want = int32(len(tasks) - 1)
		}
		if got := s.qs[i].n.Load(); got != want {
			t.Errorf("queue %d holds %d tasks, want %d", i, got, want)
		}
	}
}
