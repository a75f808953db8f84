package rt

import "sync"

// Task recycling. Each worker keeps a LIFO free list of tasks. A task is often created on one
// worker and freed on another (stealing), so lists drift; a worker whose list grows past
// 2*freeBatch moves freeBatch tasks to the Context's depot, and a worker whose list is empty
// takes a batch back, touching the depot's mutex once per freeBatch tasks. Fresh tasks are
// allocated freeBatch at a time.

const freeBatch = 64

// depot holds batches of free tasks, each a list linked through Task.next.
type depot struct {
	mu      sync.Mutex
	batches []*Task
}

func (d *depot) put(head *Task) {
	d.mu.Lock()
	d.batches = append(d.batches, head)
	d.mu.Unlock()
}

func (d *depot) get() *Task {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := len(d.batches)
	if n == 0 {
		return nil
	}
	h := d.batches[n-1]
	d.batches[n-1] = nil
	d.batches = d.batches[:n-1]
	return h
}

// newTask returns a clean task from the worker's free list.
func (w *Worker) newTask() *Task {
	if w.free == nil {
		if h := w.c.depot.get(); h != nil {
			w.free, w.nfree = h, freeBatch
		} else {
			slab := make([]Task, freeBatch)
			for i := range slab[:freeBatch-1] {
				slab[i].next = &slab[i+1]
			}
			w.free, w.nfree = &slab[0], freeBatch
		}
	}
	t := w.free
	w.free = t.next
	w.nfree--
	t.next = nil
	return t
}

// freeTask drops t's flow references and puts it back on the free list.
func (w *Worker) freeTask(t *Task) {
	n := MaxFlows
	if t.class != nil {
		n = len(t.class.Flows)
	}
	for i := 0; i < n; i++ {
		if c := t.flows[i]; c != nil {
			c.release()
			t.flows[i] = nil
		}
	}
	t.class, t.tp, t.cs = nil, nil, nil
	t.key, t.prio, t.pending, t.inc, t.kind, t.prepared = 0, 0, 0, 0, kindTask, false
	t.next = w.free
	w.free = t
	w.nfree++
	if w.nfree >= 2*freeBatch {
		head := w.free
		tail := head
		for i := 1; i < freeBatch; i++ {
			tail = tail.next
		}
		w.free = tail.next
		tail.next = nil
		w.nfree -= freeBatch
		w.c.depot.put(head)
	}
}
