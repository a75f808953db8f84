package rt

import (
	"context"
	"testing"
	"time"
)

// tasksMade returns how many tasks c ever allocated, once none is live: tasks are recycled,
// never returned, so this is the most that were live at once (plus what free stacks kept).
func tasksMade(c *Context) int {
	n := len(c.ext.free)
	for _, w := range c.workers {
		n += len(w.free)
	}
	c.depot.mu.Lock()
	for _, b := range c.depot.full {
		n += len(b)
	}
	c.depot.mu.Unlock()
	return n
}

// A broadcast to 50 000 successors does not make them all exist at once: the deferred
// arrivals rank just below the tasks they make, so a worker runs those before it makes more.
// Made all at once, as before, they would take 50 000 tasks (19 MB).
func TestBroadcastKeepsFewTasksLive(t *testing.T) {
	const n = 50000
	for _, workers := range []int{1, 2, 4} {
		c, err := New(Workers(workers))
		if err != nil {
			t.Fatal(err)
		}
		one := func(tp *Taskpool, l *Locals, y func(*Locals) bool) { y(l) }
		always := func(*Taskpool, *Locals) bool { return true }
		nop := []Incarnation{{Kind: CPU, Hook: func(*Task) error { return nil }}}
		r := &TaskClass{Name: "R", ID: 1, Locals: []string{"k"}, Params: []int{0}, NoStartup: true,
			Flows: []Flow{{Name: "X", Access: CTL}},
			Space: func(tp *Taskpool, l *Locals, y func(*Locals) bool) {
				for k := 0; k < n; k++ {
					if l[0] = k; !y(l) {
						return
					}
				}
			},
			Complete:     func(tp *Taskpool, l *Locals) bool { return l[0] >= 0 && l[0] < n },
			Goal:         func(*Taskpool, *Locals) uint32 { return 1 },
			Incarnations: nop}
		s := &TaskClass{Name: "S", ID: 0, Flows: []Flow{{Name: "X", Access: CTL}},
			Space: one, Complete: always, Incarnations: nop,
			Successors: func(tp *Taskpool, l *Locals, f FlowMask, e *Edges) {
				for k := 0; k < n; k++ {
					e.L[0] = k
					e.Task(0, 0, r, 0)
				}
			}}
		tp := NewTaskpool("bcast", nil, s, r)
		if err := c.Add(tp); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err = tp.Wait(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		// A few release batches and fanouts per worker, and what free stacks keep.
		if made, most := tasksMade(c), workers*(fanInline+2*fanBatch+freeKeep*freeBatch)+freeBatch; made > most {
			t.Errorf("%d workers: %d tasks made for a broadcast to %d, want at most %d", workers, made, n, most)
		}
	}
}
