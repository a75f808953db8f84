package rt

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"
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

// TestDenseTableMarksReadyRecord: once a dense table makes an instance ready, its slot holds
// the ready marker, not the record. A slot left pointing at the record would take a late
// arrival as one more input of a live task (and, once the record is recycled, of whatever
// task it then holds), and a stall report would list the instance as waiting. The body of
// the instance checks its slot while the record is still its own, fresh from the table, on
// both paths that meet a goal: the arrival that counts the last input, and a worker's
// batch of arrival credits.
func TestDenseTableMarksReadyRecord(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int // S(k), k = 0 .. n-1, each release G(0): its goal
	}{
		{"last arrival", 2},
		{"arrival credits", 2 * creditMax},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(Workers(1))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var ran atomic.Int32
			var bad atomic.Value // string: what the body found wrong
			nop := []Incarnation{{Kind: CPU, Hook: func(*Task) error { return nil }}}
			g := &TaskClass{Name: "G", ID: 1, Locals: []string{"k"}, Params: []int{0}, NoStartup: true,
				Flows: []Flow{{Name: "X", Access: CTL}},
				Space: func(tp *Taskpool, l *Locals, y func(*Locals) bool) {
					l[0] = 0
					y(l)
				},
				Complete: func(tp *Taskpool, l *Locals) bool { return l[0] == 0 },
				Goal:     func(*Taskpool, *Locals) uint32 { return uint32(tc.n) },
				Incarnations: []Incarnation{{Kind: CPU, Hook: func(task *Task) error {
					ran.Add(1)
					cs := task.cs
					d := cs.dense.Load()
					switch {
					case cs.denseN == 0 || d == nil:
						bad.Store("G(0) did not wait in a dense table")
					case d.slots[task.key].Load() == task:
						bad.Store("the slot of G(0) still holds its record: the ready marker was not stored")
					case d.slots[task.key].Load() != &readyRecord:
						bad.Store(fmt.Sprintf("the slot of G(0) holds %p, want the ready marker", d.slots[task.key].Load()))
					}
					return nil
				}}}}
			s := &TaskClass{Name: "S", ID: 0, Locals: []string{"k"}, Params: []int{0},
				Flows: []Flow{{Name: "X", Access: CTL}},
				Space: func(tp *Taskpool, l *Locals, y func(*Locals) bool) {
					for k := 0; k < tc.n; k++ {
						if l[0] = k; !y(l) {
							return
						}
					}
				},
				Complete:     func(tp *Taskpool, l *Locals) bool { return l[0] >= 0 && l[0] < tc.n },
				Incarnations: nop,
				Successors: func(tp *Taskpool, l *Locals, f FlowMask, e *Edges) {
					e.L[0] = 0
					e.Task(0, 0, g, 0)
				}}
			tp := NewTaskpool("marker", nil, s, g)
			if err := c.Add(tp); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := tp.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			if ran.Load() != 1 {
				t.Fatalf("G(0) ran %d times, want 1", ran.Load())
			}
			if msg, _ := bad.Load().(string); msg != "" {
				t.Fatal(msg)
			}
		})
	}
}
