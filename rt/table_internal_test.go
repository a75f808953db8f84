package rt

import (
	"math/rand/v2"
	"testing"
)

// The open-addressed table agrees with a Go map under random inserts and deletes.
func TestOpenTable(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var tab openTable
	ref := map[uint64]*Task{}
	tasks := make([]Task, 512)
	for i := 0; i < 200000; i++ {
		k := uint64(r.IntN(512))
		if _, ok := ref[k]; ok && r.IntN(2) == 0 {
			tab.del(k, mix(k))
			delete(ref, k)
		} else if !ok {
			tab.put(k, mix(k), &tasks[k])
			ref[k] = &tasks[k]
		}
		if j := uint64(r.IntN(512)); tab.get(j, mix(j)) != ref[j] {
			t.Fatalf("step %d: get(%d) = %p, want %p", i, j, tab.get(j, mix(j)), ref[j])
		}
	}
	if tab.n != len(ref) {
		t.Fatalf("size %d, want %d", tab.n, len(ref))
	}
}

// The queue pops by (high priority, priority, FIFO), also across ring growth.
func TestPrioQueue(t *testing.T) {
	hi := &TaskClass{HighPriority: true}
	lo := &TaskClass{}
	var h prioQueue
	mk := func(c *TaskClass, p int32, k int) *Task { return &Task{hi: c.HighPriority, prio: p, key: uint64(k)} }
	in := []*Task{mk(lo, 5, 0), mk(lo, 7, 1), mk(lo, 5, 2), mk(hi, -3, 3), mk(lo, -1, 4), mk(lo, 7, 5)}
	for _, x := range in {
		h.push(x)
	}
	want := []uint64{3, 1, 5, 0, 2, 4}
	for i, k := range want {
		if got := h.pop(); got.key != k {
			t.Fatalf("pop %d = task %d, want %d", i, got.key, k)
		}
	}
	if h.pop() != nil {
		t.Fatal("queue not empty")
	}
	// Random pushes and pops against a reference order.
	r := rand.New(rand.NewPCG(3, 4))
	var ref []*Task
	for i := 0; i < 20000; i++ {
		if r.IntN(3) > 0 || len(ref) == 0 {
			x := mk(lo, int32(r.IntN(5)-2), i)
			if r.IntN(50) == 0 {
				x.hi = true
			}
			h.push(x)
			ref = append(ref, x)
			continue
		}
		best := 0
		for j, x := range ref {
			if rank(x) > rank(ref[best]) {
				best = j
			}
		}
		if got := h.pop(); got != ref[best] {
			t.Fatalf("step %d: pop = task %d, want %d", i, got.key, ref[best].key)
		}
		ref = append(ref[:best], ref[best+1:]...)
	}
	if h.len() != len(ref) {
		t.Fatalf("len %d, want %d", h.len(), len(ref))
	}
}
