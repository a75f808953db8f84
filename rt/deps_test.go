package rt_test

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jdf2go/jdf2go/rt"
)

// edgeProgram is a two-class program A(k) -> B(k) whose B side is configurable, to provoke
// dependency errors.
type edgeProgram struct {
	n      int
	target func(k int) int // parameter of the B instance that A(k) releases
	twice  bool            // release the same flow twice
	mode   rt.Readiness
	goal   uint32
}

func edgeClasses(p *edgeProgram) (*rt.TaskClass, *rt.TaskClass) {
	a := &rt.TaskClass{Name: "A", ID: 0, Locals: []string{"k"}, Params: []int{0},
		Flows: []rt.Flow{{Name: "X", Access: rt.CTL}}}
	b := &rt.TaskClass{Name: "B", ID: 1, Locals: []string{"k"}, Params: []int{0},
		Flows: []rt.Flow{{Name: "X", Access: rt.CTL}, {Name: "Y", Access: rt.CTL}}, Readiness: p.mode, NoStartup: true}
	space := func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
		for k := 0; k < p.n; k++ {
			l[0] = k
			if !yield(l) {
				return
			}
		}
	}
	bounds := func(tp *rt.Taskpool, l *rt.Locals) bool { return true } // over-approximates, like a bad JDF
	nop := []rt.Incarnation{{Kind: rt.CPU, Hook: func(*rt.Task) error { return nil }}}
	a.Space, a.Complete, a.Incarnations = space, bounds, nop
	b.Space, b.Complete, b.Incarnations = space, bounds, nop
	b.Goal = func(*rt.Taskpool, *rt.Locals) uint32 { return p.goal }
	a.Successors = func(tp *rt.Taskpool, l *rt.Locals, f rt.FlowMask, e *rt.Edges) {
		e.L[0] = p.target(l[0])
		e.Task(0, 0, b, 0)
		if p.twice {
			e.L[0] = p.target(l[0])
			e.Task(0, 1, b, 0)
		}
	}
	return a, b
}

func TestDependencyErrors(t *testing.T) {
	c := newCtx(t, rt.Workers(2))
	for _, tc := range []struct {
		name string
		p    edgeProgram
		want error
		text string
	}{
		{"outside space", edgeProgram{n: 4, target: func(k int) int { return k + 10 }, goal: 1},
			rt.ErrOutsideSpace, "execution space: B(1"}, // whichever A(k) fails first
		{"mask twice", edgeProgram{n: 4, target: func(k int) int { return k }, twice: true, mode: rt.Mask, goal: 3},
			rt.ErrDependency, "two arrivals"},
		{"unexpected flow", edgeProgram{n: 4, target: func(k int) int { return k }, mode: rt.Mask, goal: 2},
			rt.ErrDependency, "does not expect"},
		{"no goal", edgeProgram{n: 4, target: func(k int) int { return k }, goal: 0},
			rt.ErrDependency, "does not expect"},
		{"too many", edgeProgram{n: 4, target: func(k int) int { return 0 }, twice: true, goal: 2},
			rt.ErrDependency, "more inputs than its goal (2)"},
		// A gather: workers apply CTL arrivals in batches (arrival credits).
		{"too many gathered", edgeProgram{n: 500, target: func(k int) int { return 0 }, goal: 300},
			rt.ErrDependency, "more inputs than its goal (300)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := edgeClasses(&tc.p)
			err := run(t, c, rt.NewTaskpool(tc.name, nil, a, b))
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("err = %v, want %v mentioning %q", err, tc.want, tc.text)
			}
		})
	}
	// The matching program runs: counter goal 2 met by two arrivals on the same flow.
	p := edgeProgram{n: 50, target: func(k int) int { return k }, twice: true, goal: 2}
	a, b := edgeClasses(&p)
	mustRun(t, c, rt.NewTaskpool("ok", nil, a, b))
}

// A taskpool whose class list does not match the IDs is refused.
func TestClassIDMismatch(t *testing.T) {
	c := newCtx(t, rt.Workers(1))
	p := edgeProgram{n: 2, target: func(k int) int { return k }, goal: 1}
	a, b := edgeClasses(&p)
	if err := c.Add(rt.NewTaskpool("swapped", nil, b, a)); !errors.Is(err, rt.ErrBadTaskClass) {
		t.Fatalf("err = %v", err)
	}
}

// Write-back copies any slice or pointer type, and refuses mismatched types.
func TestWriteBackTypes(t *testing.T) {
	type cell struct{ v int }
	for _, tc := range []struct {
		name     string
		src, dst any
		ok       bool
		check    func(dst any) bool
	}{
		{"float64", []float64{1, 2}, []float64{0, 0}, true, func(d any) bool { return d.([]float64)[1] == 2 }},
		{"int", []int{3}, []int{0}, true, func(d any) bool { return d.([]int)[0] == 3 }},
		{"pointer", &cell{7}, &cell{}, true, func(d any) bool { return d.(*cell).v == 7 }},
		{"mismatch", []int{1}, []float64{0}, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := rt.NewData(0, tc.dst)
			err := writeBackOnce(t, d, tc.src)
			if (err == nil) != tc.ok || (tc.ok && !tc.check(d.Host().Value)) {
				t.Fatalf("err = %v, value %v", err, d.Host().Value)
			}
			if tc.ok && rt.Impl.Version(d.Host()) != 1 {
				t.Fatalf("version %d after write-back, want 1", rt.Impl.Version(d.Host()))
			}
			if !tc.ok && !errors.Is(err, rt.ErrWriteBack) {
				t.Fatalf("err = %v, want ErrWriteBack", err)
			}
		})
	}
}

// oneColl is a collection of one datum.
type oneColl struct{ d *rt.Data }

func (o oneColl) RankOf(rt.Index) int      { return 0 }
func (o oneColl) DataOf(rt.Index) *rt.Data { return o.d }
func (o oneColl) KeyOf(rt.Index) uint64    { return 0 }

// writeBackOnce runs W(): WRITE X <- NEW [type = T] -> coll(0), with the arena making src.
func writeBackOnce(t *testing.T, d *rt.Data, src any) error {
	t.Helper()
	c := newCtx(t, rt.Workers(1))
	coll := oneColl{d}
	w := &rt.TaskClass{Name: "W", Flows: []rt.Flow{{Name: "X", Access: rt.Write}},
		Space:    func(tp *rt.Taskpool, l *rt.Locals, y func(*rt.Locals) bool) { y(l) },
		Complete: func(*rt.Taskpool, *rt.Locals) bool { return true },
		Prepare: func(task *rt.Task) error {
			x, err := task.Taskpool().NewCopy("T")
			task.SetFlow(0, x)
			return err
		},
		Successors: func(tp *rt.Taskpool, l *rt.Locals, f rt.FlowMask, e *rt.Edges) {
			e.Data(0, 0, coll, rt.Ix(0))
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(*rt.Task) error { return nil }}}}
	tp := rt.NewTaskpool("wb", nil, w)
	tp.SetArena("T", rt.NewArenaOf(8, func() any { return src }))
	return run(t, c, tp)
}

// gridClass is T(i, j) over n×n, after T(i-1, j) and T(i, j-1), with a custom Key when key
// is set (which sends its arrivals through the sharded table instead of the dense one). Its
// body checks that both predecessors ran and that it runs once.
func gridClass(n int, key bool, ran []atomic.Int32, bad *atomic.Int32) *rt.TaskClass {
	tc := &rt.TaskClass{Name: "T", Locals: []string{"i", "j"}, Params: []int{0, 1},
		Flows: []rt.Flow{{Name: "X", Access: rt.CTL}, {Name: "Y", Access: rt.CTL}}}
	in := func(l *rt.Locals) bool { return l[0] >= 0 && l[0] < n && l[1] >= 0 && l[1] < n }
	tc.Space = func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
		for i := range n {
			for j := range n {
				l[0], l[1] = i, j
				if !yield(l) {
					return
				}
			}
		}
	}
	tc.Complete = func(tp *rt.Taskpool, l *rt.Locals) bool { return in(l) }
	tc.Goal = func(tp *rt.Taskpool, l *rt.Locals) uint32 {
		return uint32(min(l[0], 1) + min(l[1], 1))
	}
	if key {
		tc.Key = func(tp *rt.Taskpool, l *rt.Locals) uint64 { return uint64(l[0]*n + l[1]) }
	}
	tc.Successors = func(tp *rt.Taskpool, l *rt.Locals, f rt.FlowMask, e *rt.Edges) {
		if l[1] < n-1 {
			e.L[0], e.L[1] = l[0], l[1]+1
			e.Task(0, 0, tc, 0)
		}
		if l[0] < n-1 {
			e.L[0], e.L[1] = l[0]+1, l[1]
			e.Task(1, 0, tc, 1)
		}
	}
	tc.Incarnations = []rt.Incarnation{{Kind: rt.CPU, Hook: func(t *rt.Task) error {
		i, j := t.Locals()[0], t.Locals()[1]
		if (i > 0 && ran[(i-1)*n+j].Load() != 1) || (j > 0 && ran[i*n+j-1].Load() != 1) {
			bad.Add(1)
		}
		if ran[i*n+j].Add(1) != 1 {
			bad.Add(1)
		}
		return nil
	}}}
	return tc
}

// Both dependency tables (dense, and sharded for classes with their own Key) make every
// instance ready exactly once and only after all its inputs, on every scheduler.
func TestDependencyTables(t *testing.T) {
	const n = 96
	for _, key := range []bool{false, true} {
		for _, s := range schedulers {
			t.Run(fmt.Sprintf("key=%v/%s", key, s), func(t *testing.T) {
				c := newCtx(t, rt.Workers(4), rt.Scheduler(s))
				ran := make([]atomic.Int32, n*n)
				var bad atomic.Int32
				mustRun(t, c, rt.NewTaskpool("grid", nil, gridClass(n, key, ran, &bad)))
				for k := range ran {
					if ran[k].Load() != 1 {
						t.Fatalf("T(%d, %d) ran %d times", k/n, k%n, ran[k].Load())
					}
				}
				if bad.Load() != 0 {
					t.Fatalf("%d tasks ran before an input or twice", bad.Load())
				}
			})
		}
	}
}
