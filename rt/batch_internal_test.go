package rt

import (
	"fmt"
	"math/rand/v2"
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
func queueScript(t *testing.T, cs *classState, collect func(w *worker), take []uint64, stop uint64) (offered, ring []uint64) {
	t.Helper()
	head := &Task{cs: cs, key: 1000}
	w := &worker{c: &Context{}}
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

// Random queues against a model: the tasks are offered in pop order until the stop, the ring
// holds the accepted ones in that order, and the queue then pops the others in their order.
// Pops and pushes before the collection make the bucket rings wrap around.
func TestQueueCollectRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	cs := queueClass()
	for iter := 0; iter < 2000; iter++ {
		var q prioQueue
		var f fifo
		n := r.IntN(70)
		key := uint64(0)
		prios := 1 + r.IntN(4)
		push := func() {
			q.push(&Task{cs: cs, key: key, prio: int32(r.IntN(prios))})
			f.pushBack(&Task{cs: cs, key: key})
			key++
		}
		for range r.IntN(40) { // wrap the rings around
			push()
		}
		for range r.IntN(int(key) + 1) {
			q.pop()
			f.pop()
		}
		for range n {
			push()
		}
		take := map[uint64]bool{}
		for k := range key {
			if r.IntN(3) > 0 {
				take[k] = true
			}
		}
		stop := uint64(1 << 62)
		if key > 0 && r.IntN(2) == 0 {
			stop = r.Uint64N(key)
		}
		var takeKeys []uint64
		for k := range take {
			takeKeys = append(takeKeys, k)
		}
		for _, qc := range []struct {
			name    string
			collect func(w *worker)
			pop     func() *Task
			peek    func() []uint64
		}{
			{"prioQueue", q.collect, q.pop, func() []uint64 { return popCopy(&q) }},
			{"fifo", f.collect, f.pop, func() []uint64 { return fifoKeys(&f) }},
		} {
			order := qc.peek()
			var wantOffer, wantRing, wantLeft []uint64
			stopped := false
			for _, k := range order {
				if stopped {
					wantLeft = append(wantLeft, k)
					continue
				}
				wantOffer = append(wantOffer, k)
				switch {
				case k == stop:
					stopped = true
					wantLeft = append(wantLeft, k)
				case take[k]:
					wantRing = append(wantRing, k)
				default:
					wantLeft = append(wantLeft, k)
				}
			}
			offered, ring := queueScript(t, cs, qc.collect, takeKeys, stop)
			left := drain(qc.pop)
			if !slices.Equal(offered, wantOffer) || !slices.Equal(ring, wantRing) || !slices.Equal(left, wantLeft) {
				t.Fatalf("iteration %d, %s: offered %v ring %v left %v; want %v, %v, %v",
					iter, qc.name, offered, ring, left, wantOffer, wantRing, wantLeft)
			}
		}
		if q.len() != 0 || len(q.buckets) != 0 || f.n != 0 || f.head != nil || f.tail != nil {
			t.Fatalf("iteration %d: queues not empty after draining", iter)
		}
	}
}

// popCopy returns the keys of q in pop order without changing q.
func popCopy(q *prioQueue) []uint64 {
	var out []uint64
	for i := len(q.buckets) - 1; i >= 0; i-- {
		b := q.buckets[i]
		for j := 0; j < b.n; j++ {
			out = append(out, b.ring[(b.head+j)&(len(b.ring)-1)].key)
		}
	}
	return out
}

// fifoKeys returns the keys of f in order.
func fifoKeys(f *fifo) []uint64 {
	var out []uint64
	for t := f.head; t != nil; t = t.next {
		out = append(out, t.key)
	}
	return out
}
