package gpu

import (
	"math/rand/v2"
	"slices"
	"testing"
)

type prioEC int32

func (p prioEC) Priority() int32 { return int32(p) }

// TestFIFOSortedStable checks the bucketed insertion against a stable sort,
// through random inserts and removals from anywhere.
func TestFIFOSortedStable(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	q := &fifo{sorted: true}
	type item struct {
		t   *Task
		seq int
	}
	var model []item
	seq := 0
	for step := range 5000 {
		if len(model) > 0 && r.IntN(3) == 0 {
			i := r.IntN(len(model))
			if r.IntN(2) == 0 {
				i = 0 // pop
			}
			q.unlink(model[i].t)
			model = slices.Delete(model, i, i+1)
		} else {
			x := &Task{ec: prioEC(r.IntN(6) - 2)}
			x.makeSingleton()
			q.insert(x)
			model = append(model, item{x, seq})
			seq++
			slices.SortStableFunc(model, func(a, b item) int { return int(b.t.priority - a.t.priority) })
		}
		got := q.snapshot()
		if len(got) != len(model) || q.n != len(model) {
			t.Fatalf("step %d: %d elements, model %d", step, len(got), len(model))
		}
		for i := range got {
			if got[i] != model[i].t {
				t.Fatalf("step %d: position %d differs from the stable order", step, i)
			}
		}
		for i := 1; i < len(q.tails); i++ {
			if q.tails[i-1].prio <= q.tails[i].prio {
				t.Fatalf("step %d: tails out of order", step)
			}
		}
	}
}
