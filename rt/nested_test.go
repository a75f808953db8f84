package rt_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
)

// The sub-tiles of a block hold its values, with ragged edges, in buffers of their own
// (MB·NB elements, ld = MB); GatherToDense writes them back into the block and nothing
// around it.
func TestSubTiles(t *testing.T) {
	const m, n, ld, mb, nb = 7, 5, 9, 3, 2
	const pad = -1.0
	tile := make([]float64, ld*n+3)
	for i := range tile {
		tile[i] = pad
	}
	for j := range n {
		for i := range m {
			tile[i+j*ld] = float64(100*i + j)
		}
	}
	a, err := rt.SubTiles(tile, m, n, ld, mb, nb)
	if err != nil {
		t.Fatal(err)
	}
	if a.M != m || a.N != n || a.MT != 3 || a.NT != 3 || a.TileRows(2) != 1 || a.TileCols(2) != 1 {
		t.Fatalf("shape %dx%d in %dx%d tiles, last tile %dx%d", a.M, a.N, a.MT, a.NT, a.TileRows(2), a.TileCols(2))
	}
	if err := rt.VerifyCollection(a, 2, nil); err != nil {
		t.Fatal(err)
	}
	for tj := range a.NT {
		for ti := range a.MT {
			s := a.Tile(ti, tj)
			if len(s) != mb*nb {
				t.Fatalf("sub-tile (%d, %d) has %d elements, want %d", ti, tj, len(s), mb*nb)
			}
			if &s[0] == &tile[ti*mb+tj*nb*ld] {
				t.Fatalf("sub-tile (%d, %d) aliases the block", ti, tj)
			}
			for c := range a.TileCols(tj) {
				for r := range a.TileRows(ti) {
					if want := tile[ti*mb+r+(tj*nb+c)*ld]; s[r+c*mb] != want {
						t.Fatalf("sub-tile (%d, %d) [%d, %d] = %g, want %g", ti, tj, r, c, s[r+c*mb], want)
					}
					s[r+c*mb] = -s[r+c*mb] - 1 // what a nested taskpool would write
				}
			}
		}
	}
	if tile[1+ld] != 101 {
		t.Fatal("writing the sub-tiles changed the block before GatherToDense")
	}
	a.GatherToDense(tile, ld)
	for k, v := range tile {
		i, j := k%ld, k/ld
		want := pad
		if i < m && j < n {
			want = -float64(100*i+j) - 1
		}
		if v != want {
			t.Fatalf("tile[%d] (row %d, column %d) = %g after GatherToDense, want %g", k, i, j, v, want)
		}
	}
	for _, bad := range []struct{ m, n, ld, mb, nb, len int }{
		{7, 5, 6, 3, 2, 100},  // ld < m
		{7, 5, 9, 0, 2, 100},  // mb < 1
		{7, 5, 9, 3, 0, 100},  // nb < 1
		{-1, 5, 9, 3, 2, 100}, // m < 0
		{7, 5, 9, 3, 2, 42},   // shorter than (n-1)·ld + m = 43
	} {
		if _, err := rt.SubTiles(make([]float64, bad.len), bad.m, bad.n, bad.ld, bad.mb, bad.nb); !errors.Is(err, rt.ErrBadOption) {
			t.Errorf("SubTiles(len %d, %d, %d, %d, %d, %d): %v, want ErrBadOption", bad.len, bad.m, bad.n, bad.ld, bad.mb, bad.nb, err)
		}
	}
	if a, err := rt.SubTiles(nil, 0, 0, 1, 2, 2); err != nil || a.MT != 0 || a.NT != 0 {
		t.Errorf("empty block: %v", err)
	}
}

// nestedProgram is P(k), k = 0 .. parents-1, whose body runs child(k) with RunNested, and
// S(k), after P(k) through a CTL flow. S(k) checks that the nested taskpool of P(k) and its
// then function finished before P(k) completed.
type nestedProgram struct {
	parents int
	// child returns the nested taskpool of P(k), and then, the function RunNested calls.
	child   func(t *rt.Task, k int) (*rt.Taskpool, func() error)
	thenRan []atomic.Bool
	bad     atomic.Int32
}

func (p *nestedProgram) taskpool() *rt.Taskpool {
	p.thenRan = make([]atomic.Bool, p.parents)
	s := flowClass("S", 1, p.parents, []rt.Flow{{Name: "C", Access: rt.CTL}}, 1, func(t *rt.Task) error {
		if !p.thenRan[t.Locals()[0]].Load() {
			p.bad.Add(1)
		}
		return nil
	})
	par := flowClass("P", 0, p.parents, []rt.Flow{{Name: "C", Access: rt.CTL}}, 0, func(t *rt.Task) error {
		k := t.Locals()[0]
		child, then := p.child(t, k)
		return t.RunNested(child, func() error {
			var err error
			if then != nil {
				err = then()
			}
			p.thenRan[k].Store(true)
			return err
		})
	})
	par.Successors = func(tp *rt.Taskpool, l *rt.Locals, f rt.FlowMask, e *rt.Edges) {
		e.L[0] = l[0]
		e.Task(0, 0, s, 0)
	}
	return rt.NewTaskpool("parent", nil, par, s)
}

// counter is a taskpool of n independent tasks C(i) that run body.
func counter(n int, body func(t *rt.Task) error) *rt.Taskpool {
	return rt.NewTaskpool("child", nil, flowClass("C", 0, n, []rt.Flow{{Name: "C", Access: rt.CTL}}, 0, body))
}

// Each parent completes after its nested taskpool and then, on one worker too: the body
// does not hold its worker while the nested taskpool runs.
func TestRunNested(t *testing.T) {
	for _, workers := range []int{1, 3} {
		t.Run(fmt.Sprint(workers), func(t *testing.T) {
			const parents, tasks = 6, 50
			var ran [parents]atomic.Int32
			p := &nestedProgram{parents: parents, child: func(t *rt.Task, k int) (*rt.Taskpool, func() error) {
				child := counter(tasks, func(*rt.Task) error { ran[k].Add(1); return nil })
				return child, func() error {
					if n := ran[k].Load(); n != tasks {
						return fmt.Errorf("then of P(%d) ran after %d tasks of %d", k, n, tasks)
					}
					return nil
				}
			}}
			mustRun(t, newCtx(t, rt.Workers(workers)), p.taskpool())
			if p.bad.Load() != 0 {
				t.Fatalf("%d successors ran before their parent's nested taskpool ended", p.bad.Load())
			}
		})
	}
}

// A task of the nested taskpool that fails, or a then that fails or panics, fails the
// parent task's taskpool with a *TaskError naming the parent, whose cause names the nested
// taskpool and wraps its error.
func TestRunNestedErrors(t *testing.T) {
	boom := errors.New("boom")
	for _, c := range []struct {
		name string
		body func(*rt.Task) error
		then func() error
		want string
	}{
		{"task", func(t *rt.Task) error {
			if t.Locals()[0] == 3 {
				return boom
			}
			return nil
		}, nil, "C(3): boom"},
		{"then", func(*rt.Task) error { return nil }, func() error { return boom }, "boom"},
		{"panic", func(*rt.Task) error { return nil }, func() error { panic("then panicked") }, "panic after the nested taskpool: then panicked"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &nestedProgram{parents: 1, child: func(*rt.Task, int) (*rt.Taskpool, func() error) {
				return counter(5, c.body), c.then
			}}
			err := run(t, newCtx(t, rt.Workers(2)), p.taskpool())
			var te *rt.TaskError
			if !errors.As(err, &te) || te.Task != "P(0)" || te.Taskpool != "parent" {
				t.Fatalf("err = %v, want a *TaskError naming P(0)", err)
			}
			if c.name != "panic" && !errors.Is(err, boom) {
				t.Fatalf("err = %v does not wrap the nested failure", err)
			}
			if !strings.Contains(err.Error(), "nested taskpool child") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to name the nested taskpool and %q", err, c.want)
			}
		})
	}
}

// Cancelling the parent's taskpool cancels the nested one with that cause; Close then
// leaves no waiter behind. A nested taskpool that is still running when Close comes ends
// too.
func TestRunNestedCancel(t *testing.T) {
	for _, how := range []string{"cancel", "close"} {
		t.Run(how, func(t *testing.T) {
			c, err := rt.New(rt.Workers(2))
			if err != nil {
				t.Fatal(err)
			}
			started := make(chan *rt.Taskpool, 1)
			p := &nestedProgram{parents: 1, child: func(*rt.Task, int) (*rt.Taskpool, func() error) {
				return counter(1, func(t *rt.Task) error {
					started <- t.Taskpool()
					<-t.Taskpool().Done() // runs until its taskpool ends
					return nil
				}), nil
			}}
			tp := p.taskpool()
			if err := c.Add(tp); err != nil {
				t.Fatal(err)
			}
			var child *rt.Taskpool
			select {
			case child = <-started:
			case <-time.After(testDeadline):
				t.Fatal("the nested taskpool did not start")
			}
			cause := errors.New("stop")
			if how == "cancel" {
				tp.Cancel(cause)
				if err := wait(t, tp); !errors.Is(err, cause) {
					t.Fatalf("parent: %v, want the cause", err)
				}
				select {
				case <-child.Done():
				case <-time.After(testDeadline):
					t.Fatal("the nested taskpool was not cancelled")
				}
				if !errors.Is(child.Err(), cause) || !strings.Contains(child.Err().Error(), "P(0)") {
					t.Fatalf("nested taskpool: %v, want the parent's cause, naming P(0)", child.Err())
				}
			}
			done := make(chan error, 1)
			go func() { done <- c.Close() }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(testDeadline):
				t.Fatal("Close did not return")
			}
			if !errors.Is(child.Err(), rt.ErrClosed) && !errors.Is(child.Err(), cause) {
				t.Fatalf("nested taskpool after Close: %v", child.Err())
			}
			// Close joined the waiter; its goroutine ends right after that.
			for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				buf := make([]byte, 1<<20)
				s := string(buf[:runtime.Stack(buf, true)])
				if !strings.Contains(s, "rt.(*Task).RunNested") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("a RunNested waiter outlived Close:\n%s", s)
				}
			}
		})
	}
}

// RunNested refuses a taskpool that cannot start, and the body's error fails the parent.
func TestRunNestedAddError(t *testing.T) {
	p := &nestedProgram{parents: 1, child: func(t *rt.Task, k int) (*rt.Taskpool, func() error) {
		return t.Taskpool(), nil // already added
	}}
	if err := run(t, newCtx(t, rt.Workers(1)), p.taskpool()); !errors.Is(err, rt.ErrAlreadyAdded) {
		t.Fatalf("err = %v, want ErrAlreadyAdded", err)
	}
	var nilTask *rt.Task
	if err := nilTask.RunNested(counter(1, nil), nil); !errors.Is(err, rt.ErrNotAdded) {
		t.Fatalf("RunNested on a nil task: %v", err)
	}
}

// A nested taskpool takes no sequence number, so that ranks which recurse differently still
// number the taskpools they all add alike.
func TestRunNestedTakesNoTaskpoolID(t *testing.T) {
	c := newCtx(t, rt.Workers(2))
	var children []*rt.Taskpool
	p := &nestedProgram{parents: 3, child: func(*rt.Task, int) (*rt.Taskpool, func() error) {
		child := counter(2, func(*rt.Task) error { return nil })
		return child, nil
	}}
	first := p.taskpool()
	mustRun(t, c, first)
	p.child = func(*rt.Task, int) (*rt.Taskpool, func() error) {
		child := counter(2, func(*rt.Task) error { return nil })
		children = append(children, child) // P's bodies run one at a time: parents is 1
		return child, nil
	}
	p.parents = 1
	second := p.taskpool()
	mustRun(t, c, second)
	if a, b := rt.Impl.TaskpoolID(first), rt.Impl.TaskpoolID(second); a != 0 || b != 1 {
		t.Fatalf("taskpool IDs %d and %d around nested taskpools, want 0 and 1", a, b)
	}
	if len(children) != 1 || rt.Impl.TaskpoolID(children[0]) != -1 {
		t.Fatalf("nested taskpool ID: %v", children)
	}
}
