package dynamic_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/dynamic"
)

// oneWorker returns a graph with opts on a Context of one worker, closed with the test.
func oneWorker(t *testing.T, opts ...dynamic.Option) *dynamic.Graph {
	t.Helper()
	c, err := rt.New(rt.Workers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	g, err := dynamic.New(c, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// blockedWorker inserts, on a Context of one worker, a task that holds the worker until
// release is closed, then n independent tasks through a window of w from a goroutine; each
// independent task inserts a child with Task.Insert. It returns the inserter's result channel
// and the count of bodies (tasks and children) run.
func blockedWorker(t *testing.T, g *dynamic.Graph, release chan struct{}, n int) (<-chan error, *atomic.Int64) {
	t.Helper()
	started := make(chan struct{})
	if err := g.Insert("BLOCK", func(*dynamic.Task) error { close(started); <-release; return nil }); err != nil {
		t.Fatal(err)
	}
	<-started
	var ran atomic.Int64
	done := make(chan error, 1)
	go func() {
		for range n {
			err := g.Insert("INDEP", func(tk *dynamic.Task) error {
				ran.Add(1)
				// A body that inserts: run by the waiting inserter, it must not wait for
				// the full window itself.
				return tk.Insert("CHILD", func(*dynamic.Task) error { ran.Add(1); return nil })
			})
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	return done, &ran
}

// With its only worker held by a body, an inserter whose window is full runs the ready tasks
// itself, children that bodies insert included, and gets through ten windows' worth of tasks.
func TestWindowInserterRunsTasks(t *testing.T) {
	const window, n = 8, 80
	g := oneWorker(t, dynamic.Window(window))
	release := make(chan struct{})
	done, ran := blockedWorker(t, g, release, n)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("the inserter is stuck at the full window while its only worker is held")
	}
	// Every task but the last window's and its children ran while the worker was held.
	if got := ran.Load(); got < 2*(n-window) {
		t.Errorf("%d bodies ran while the only worker was held, want at least %d", got, 2*(n-window))
	}
	close(release)
	if err := g.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := ran.Load(); got != 2*n {
		t.Errorf("%d bodies ran, want %d", got, 2*n)
	}
}

// WindowHelp(false): the inserter only waits, so with the worker held it stays at the window
// until the worker is released.
func TestWindowHelpOff(t *testing.T) {
	const window, n = 8, 80
	g := oneWorker(t, dynamic.Window(window), dynamic.WindowHelp(false))
	release := make(chan struct{})
	done, ran := blockedWorker(t, g, release, n)
	select {
	case err := <-done:
		t.Fatalf("the inserter went past a full window without help (err %v)", err)
	case <-time.After(100 * time.Millisecond):
	}
	if got := ran.Load(); got != 0 {
		t.Errorf("%d bodies ran while the only worker was held and the inserter only waits", got)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := g.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := ran.Load(); got != 2*n {
		t.Errorf("%d bodies ran, want %d", got, 2*n)
	}
}

// Memory stays flat: however many tasks go through the window, the task records taken by
// insertions and not yet released never exceed the window.
func TestWindowBoundsRecords(t *testing.T) {
	n := 1 << 20
	if testing.Short() || raceEnabled {
		n = 1 << 16
	}
	const window = 1000
	live := dynamic.CountRecords()
	for _, workers := range []int{1, 2} {
		c, err := rt.New(rt.Workers(workers))
		if err != nil {
			t.Fatal(err)
		}
		g, err := dynamic.New(c, dynamic.Window(window))
		if err != nil {
			t.Fatal(err)
		}
		var data [16]dynamic.Arg
		for i := range data {
			d, err := dynamic.Register(g, "d", make([]float64, 1))
			if err != nil {
				t.Fatal(err)
			}
			data[i] = dynamic.ReadWrite(d)
			if i%2 == 1 {
				data[i] = dynamic.Read(d)
			}
		}
		var peak atomic.Int64
		note := func() {
			for v := live(); v > peak.Load(); {
				if peak.CompareAndSwap(peak.Load(), v) {
					break
				}
			}
		}
		body := func(*dynamic.Task) error { note(); return nil }
		for i := range n {
			if err := g.Insert("T", body, data[i%len(data)], data[(i*7+3)%len(data)]); err != nil {
				t.Fatal(err)
			}
			note()
		}
		if err := g.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		c.Close()
		if p := peak.Load(); p > window || p < window/2 {
			t.Errorf("%d workers: at most %d task records live, want at most the window, %d (and the window filled)",
				workers, p, window)
		}
		if v := live(); v != 0 {
			t.Errorf("%d workers: %d task records left after Wait", workers, v)
		}
	}
}

// A task that is ready when it is inserted while every worker is busy waits in the inserter's
// batch; a worker that runs out of work takes it there, even if the inserting goroutine never
// inserts again nor calls Wait (here it waits for that task's own result).
func TestBatchReachesIdleWorkers(t *testing.T) {
	c, err := rt.New(rt.Workers(2))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	g, err := dynamic.New(c)
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{}, 2)
	hold := make(chan struct{})
	defer func() {
		select {
		case <-hold:
		default:
			close(hold)
		}
	}()
	for range 2 { // both workers busy
		if err := g.Insert("HOLD", func(*dynamic.Task) error { started <- struct{}{}; <-hold; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("a task ready at insertion never started on an idle worker")
		}
	}
	result := make(chan int, 1)
	if err := g.Insert("LAST", func(*dynamic.Task) error { result <- 42; return nil }); err != nil {
		t.Fatal(err)
	}
	close(hold)
	select {
	case v := <-result:
		if v != 42 {
			t.Fatalf("result %d", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a task ready at insertion never ran while the inserter waited for it")
	}
	if err := g.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
}
