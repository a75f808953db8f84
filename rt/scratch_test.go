package rt_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/rttest"
)

// On one worker, tasks get the same backing array until one asks for more than it holds:
// the array then grows once, and later smaller requests get the grown array back.
func TestScratchReusedOnOneWorker(t *testing.T) {
	c := newCtx(t, rt.Workers(1), rt.Progress(nil))
	const n = 40
	size := func(k int) int {
		if k%10 == 9 {
			return 1000 + k // a few larger requests, each larger than the one before
		}
		return 10 + k%3
	}
	type use struct {
		array *float64
		n     int
	}
	var uses []use // in the order the tasks ran: one worker runs them one at a time
	body := func(task *rt.Task) error {
		s, err := task.Scratch(size(task.Locals()[0]))
		if err != nil {
			return err
		}
		s[len(s)-1] = 1 // the memory is writable to its last element
		uses = append(uses, use{&s[:1][0], len(s)})
		return nil
	}
	mustRun(t, c, scratchPool(n, body))
	if len(uses) != n {
		t.Fatalf("%d bodies ran, want %d", len(uses), n)
	}
	largest, grew := 0, 0
	for i, u := range uses {
		switch {
		case i == 0:
		case u.n > largest && u.array == uses[i-1].array:
			t.Errorf("run %d: Scratch(%d) after at most %d reused the smaller array", i, u.n, largest)
		case u.n > largest:
			grew++
		case u.array != uses[i-1].array:
			t.Errorf("run %d: Scratch(%d) after %d got a new array: scratch is not reused", i, u.n, largest)
		}
		largest = max(largest, u.n)
	}
	if grew == 0 {
		t.Errorf("the array never grew over %d requests of up to %d", n, largest)
	}
}

// Two tasks that run at once, on two workers, get distinct memory: each fills its scratch,
// waits until the other has filled its own, and checks that its values are still there.
// Under -race, a shared buffer is also a reported race.
func TestScratchDistinctAcrossWorkers(t *testing.T) {
	c := newCtx(t, rt.Workers(2), rt.Progress(nil))
	var arrived sync.WaitGroup
	arrived.Add(2)
	both := make(chan struct{})
	go func() { arrived.Wait(); close(both) }()
	var mu sync.Mutex
	seen := map[*float64]int{}
	body := func(task *rt.Task) error {
		k := task.Locals()[0]
		s, err := task.Scratch(4096)
		if err != nil {
			return err
		}
		for i := range s {
			s[i] = float64(k)
		}
		mu.Lock()
		seen[&s[0]] = k
		mu.Unlock()
		arrived.Done()
		select {
		case <-both:
		case <-time.After(testDeadline):
			return errors.New("the other task never ran at the same time")
		}
		for i, v := range s {
			if v != float64(k) {
				return fmt.Errorf("element %d of task %d's scratch holds %v: shared with the other task", i, k, v)
			}
		}
		return nil
	}
	mustRun(t, c, scratchPool(2, body))
	if len(seen) != 2 {
		t.Errorf("two concurrent tasks got %d distinct arrays, want 2", len(seen))
	}
}

// The head of a batched CPU body's ring has scratch; a follower, whose body does not run on
// its own, does not; a negative length is refused.
func TestScratchBatchedAndMisuse(t *testing.T) {
	c := newCtx(t, rt.Workers(1), rt.Progress(nil))
	var heads, followers int
	body := func(head *rt.Task) error {
		if _, err := head.Scratch(64); err != nil {
			return err
		}
		heads++
		for m := range head.Ring() {
			if m == head {
				continue
			}
			if _, err := m.Scratch(64); !errors.Is(err, rt.ErrScratch) {
				return errors.New("a ring follower got scratch memory")
			}
			followers++
		}
		if _, err := head.Scratch(-1); !errors.Is(err, rt.ErrScratch) {
			return errors.New("Scratch(-1) did not fail with ErrScratch")
		}
		return nil
	}
	mustRun(t, c, rttest.IndependentBatched(16, 4, body))
	if heads == 0 || followers == 0 {
		t.Errorf("%d rings with %d followers: the batched body did not run as a ring", heads, followers)
	}
}

// Scratch is for the CPU body: an incarnation's evaluate function, which runs on the worker
// before the body, gets ErrScratch.
func TestScratchOutsideBody(t *testing.T) {
	c := newCtx(t, rt.Workers(1), rt.Progress(nil))
	g := &ringProg{n: 1}
	var got error
	tp := ringTaskpool(g, ringOpts{noBatch: true,
		evaluate: func(task *rt.Task) error {
			_, got = task.Scratch(8)
			return nil
		},
		hook: func(*rt.Task) error { return nil }})
	mustRun(t, c, tp)
	if !errors.Is(got, rt.ErrScratch) {
		t.Errorf("Scratch from an evaluate function = %v, want ErrScratch", got)
	}
}

// In steady state a body's Scratch call allocates nothing.
func TestScratchDoesNotAllocate(t *testing.T) {
	c := newCtx(t, rt.Workers(1), rt.Progress(nil))
	var allocs float64
	mustRun(t, c, scratchPool(1, func(task *rt.Task) error {
		var err error
		allocs = testing.AllocsPerRun(100, func() {
			if _, e := task.Scratch(512); e != nil {
				err = e
			}
		})
		return err
	}))
	if allocs != 0 {
		t.Errorf("Scratch allocates %v times per call once the worker's memory is large enough", allocs)
	}
}

// BenchmarkScratch runs a body that asks for its worker's scratch b.N times.
func BenchmarkScratch(b *testing.B) {
	c, err := rt.New(rt.Workers(1), rt.Progress(nil))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	tp := scratchPool(1, func(task *rt.Task) error {
		// The loop runs on the worker; Wait orders its end before the benchmark returns.
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			s, err := task.Scratch(4096)
			if err != nil {
				return err
			}
			s[0]++
		}
		return nil
	})
	if err := c.Add(tp); err != nil {
		b.Fatal(err)
	}
	if err := tp.Wait(b.Context()); err != nil {
		b.Fatal(err)
	}
}

// scratchPool is rttest.Independent with a copy of its class whose incarnations declare
// Scratch (the class itself is shared by every rttest.Independent).
func scratchPool(n int, hook func(*rt.Task) error) *rt.Taskpool {
	tp := rttest.Independent(n, hook)
	tc := *tp.Classes()[0]
	tc.Incarnations = slices.Clone(tc.Incarnations)
	for i := range tc.Incarnations {
		tc.Incarnations[i].Scratch = true
	}
	return rt.NewTaskpool(tp.Name(), tp.Globals(), &tc)
}

// An incarnation that does not declare Scratch gets ErrScratch: rt names the worker on the
// task only for those that do.
func TestScratchUndeclared(t *testing.T) {
	c := newCtx(t, rt.Workers(1), rt.Progress(nil))
	var got error
	mustRun(t, c, rttest.Independent(1, func(task *rt.Task) error {
		_, got = task.Scratch(8)
		return nil
	}))
	if !errors.Is(got, rt.ErrScratch) {
		t.Errorf("Scratch from an incarnation without Scratch = %v, want ErrScratch", got)
	}
}
