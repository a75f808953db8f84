package rt

import (
	"fmt"
	"slices"
	"testing"
)

// queueClass is the class of the tasks of the queue tests.
func queueClass() *classState {
	return &classState{tc: &TaskClass{Name: "Q", Incarnations: []Incarnation{{Kind: CPU, Batch: true}}}}
}

// queueScript drives one collection over a queue: the worker accepts the tasks whose key is
// in take and stops at the key stop (-1: never); it returns the order in which they were
// offered and the ring collected.
func queueScript(t *testing.T, cs *classState, collect func(w *Worker), take []uint64, stop uint64) (offered, ring []uint64) {
	t.Helper()
	head := &Task{cs: cs, key: 1000}
	w := &Worker{c: &Context{}}
	w.batch = collection{on: true, head: head, tail: head, match: func(cand, _ *Task) BatchAction {
		offered = append(offered, cand.key)
		switch {
		case cand.key == stop:
			return Stop
		case slices.Contains(take, cand.key):
			return Accept
		}
		return Reject
	}}
	collect(w)
	for m := range head.Ring() {
		if m != head {
			ring = append(ring, m.key)
		}
	}
	return offered, ring
}

// drain pops every task left in a queue.
func drain(pop func() *Task) []uint64 {
	var out []uint64
	for t := pop(); t != nil; t = pop() {
		out = append(out, t.key)
	}
	return out
}

// prioQueue.collect and fifo.collect offer tasks in pop order, remove exactly those accepted,
// keep the others in their order, and leave the tail after a Stop untouched.
func TestQueueCollect(t *testing.T) {
	cs := queueClass()
	mk := func(key uint64, prio int32) *Task { return &Task{cs: cs, key: key, prio: prio} }
	for _, tc := range []struct {
		name       string
		take       []uint64
		stop       uint64
		wantOffer  string
		wantRing   string
		wantLeft   string
		wantOfferF string
		wantLeftF  string
	}{
		// Keys k with priority k/4: the prioQueue pops 12..15, 8..11, 4..7, 0..3.
		{"all", []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, 99,
			"[12 13 14 15 8 9 10 11 4 5 6 7 0 1 2 3]", "[12 13 14 15 8 9 10 11 4 5 6 7 0 1 2 3]", "[]",
			"[0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15]", "[]"},
		{"some", []uint64{13, 15, 8, 2}, 99,
			"[12 13 14 15 8 9 10 11 4 5 6 7 0 1 2 3]", "[13 15 8 2]", "[12 14 9 10 11 4 5 6 7 0 1 3]",
			"[0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15]", "[0 1 3 4 5 6 7 9 10 11 12 14]"},
		{"stop", []uint64{13, 14, 9, 2}, 10,
			"[12 13 14 15 8 9 10]", "[13 14 9]", "[12 15 8 10 11 4 5 6 7 0 1 2 3]",
			"[0 1 2 3 4 5 6 7 8 9 10]", "[0 1 3 4 5 6 7 8 10 11 12 13 14 15]"},
		{"none", nil, 99,
			"[12 13 14 15 8 9 10 11 4 5 6 7 0 1 2 3]", "[]", "[12 13 14 15 8 9 10 11 4 5 6 7 0 1 2 3]",
			"[0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15]", "[0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var q prioQueue
			for k := range uint64(16) {
				q.push(mk(k, int32(k/4)))
			}
			offered, ring := queueScript(t, cs, q.collect, tc.take, tc.stop)
			left := drain(q.pop)
			if got := fmt.Sprint(offered); got != tc.wantOffer {
				t.Errorf("prioQueue offered %s, want %s", got, tc.wantOffer)
			}
			if got := fmt.Sprint(ring); got != tc.wantRing {
				t.Errorf("prioQueue ring %s, want %s", got, tc.wantRing)
			}
			if got := fmt.Sprint(left); got != tc.wantLeft {
				t.Errorf("prioQueue left %s, want %s", got, tc.wantLeft)
			}
			if q.len() != 0 || len(q.buckets) != 0 {
				t.Errorf("prioQueue not empty after drain: n %d, %d buckets", q.len(), len(q.buckets))
			}

			var f fifo
			for k := range uint64(16) {
				f.pushBack(mk(k, 0))
			}
			offered, ring = queueScript(t, cs, f.collect, tc.take, tc.stop)
			if got := fmt.Sprint(offered); got != tc.wantOfferF {
				t.Errorf("fifo offered %s, want %s", got, tc.wantOfferF)
			}
			var wantRing []uint64 // the accepted keys, in FIFO order, before the stop
			for k := range uint64(16) {
				if k == tc.stop {
					break
				}
				if slices.Contains(tc.take, k) {
					wantRing = append(wantRing, k)
				}
			}
			if !slices.Equal(ring, wantRing) {
				t.Errorf("fifo ring %v, want %v", ring, wantRing)
			}
			n := f.n
			left = drain(f.pop)
			if len(left) != n {
				t.Errorf("fifo count %d, but %d tasks were queued", n, len(left))
			}
			if got := fmt.Sprint(left); got != tc.wantLeftF {
				t.Errorf("fifo left %s, want %s", got, tc.wantLeftF)
			}
			f.pushBack(mk(99, 0)) // the tail is still right
			if got := drain(f.pop); fmt.Sprint(got) != "[99]" {
				t.Errorf("fifo after a push: %v", got)
			}
		})
	}
}

// At most collectScan tasks are examined by one collection.
func TestCollectScanBound(t *testing.T) {
	var q prioQueue
	cs := queueClass()
	for k := range uint64(3 * collectScan) {
		q.push(&Task{cs: cs, key: k})
	}
	offered, _ := queueScript(t, cs, q.collect, nil, 1<<62)
	if len(offered) != collectScan {
		t.Errorf("%d tasks offered, want %d", len(offered), collectScan)
	}
	if q.len() != 3*collectScan {
		t.Errorf("queue holds %d tasks, want %d", q.len(), 3*collectScan)
	}
}
