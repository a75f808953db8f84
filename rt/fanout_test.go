package rt_test

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jdf2go/jdf2go/rt"
)

// broadcast is S() writing a buffer that it broadcasts to R(k), k in [0, n); with gather, R
// also waits for a CTL arrival from G(k), so that its records go through the dense table.
type broadcast struct {
	n      int
	gather bool
	// goal and prio, when set, replace R's goal and priority for some k.
	goal func(k int) uint32
	prio func(k int) int32

	ran     []atomic.Int32
	bad     atomic.Int32
	copy    atomic.Pointer[rt.Copy]
	version uint64 // of the buffer when S's body ran
}

func (b *broadcast) classes() []*rt.TaskClass {
	b.ran = make([]atomic.Int32, b.n)
	one := func(tp *rt.Taskpool, l *rt.Locals, y func(*rt.Locals) bool) { y(l) }
	each := func(tp *rt.Taskpool, l *rt.Locals, y func(*rt.Locals) bool) {
		for k := 0; k < b.n; k++ {
			l[0] = k
			if !y(l) {
				return
			}
		}
	}
	always := func(*rt.Taskpool, *rt.Locals) bool { return true }
	inRange := func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < b.n }
	r := &rt.TaskClass{Name: "R", ID: 1, Locals: []string{"k"}, Params: []int{0}, NoStartup: true,
		Flows: []rt.Flow{{Name: "X", Access: rt.Read}, {Name: "Y", Access: rt.CTL}},
		Space: each, Complete: inRange,
		Goal: func(tp *rt.Taskpool, l *rt.Locals) uint32 {
			if b.goal != nil {
				return b.goal(l[0])
			}
			if b.gather {
				return 2
			}
			return 1
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(t *rt.Task) error {
			if v, ok := t.Flow(0).Value.([]int); !ok || v[0] != 42 {
				b.bad.Add(1)
			}
			b.ran[t.Locals()[0]].Add(1)
			return nil
		}}},
	}
	if b.prio != nil {
		r.Priority = func(tp *rt.Taskpool, l *rt.Locals) int32 { return b.prio(l[0]) }
	}
	s := &rt.TaskClass{Name: "S", ID: 0, Flows: []rt.Flow{{Name: "X", Access: rt.Write}},
		Space: one, Complete: always,
		Prepare: func(t *rt.Task) error {
			x, err := t.Taskpool().NewCopy("T")
			t.SetFlow(0, x)
			return err
		},
		Successors: func(tp *rt.Taskpool, l *rt.Locals, f rt.FlowMask, e *rt.Edges) {
			for k := 0; k < b.n; k++ {
				e.L[0] = k
				e.Task(0, 0, r, 0)
			}
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(t *rt.Task) error {
			x := t.Flow(0)
			x.Value.([]int)[0] = 42
			b.copy.Store(x)
			b.version = rt.Impl.Version(x)
			return nil
		}}},
	}
	cls := []*rt.TaskClass{s, r}
	if b.gather {
		cls = append(cls, &rt.TaskClass{Name: "G", ID: 2, Locals: []string{"k"}, Params: []int{0},
			Flows: []rt.Flow{{Name: "Y", Access: rt.CTL}}, Space: each, Complete: inRange,
			Successors: func(tp *rt.Taskpool, l *rt.Locals, f rt.FlowMask, e *rt.Edges) {
				e.L[0] = l[0]
				e.Task(0, 0, r, 1)
			},
			Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(*rt.Task) error { return nil }}}})
	}
	return cls
}

func (b *broadcast) taskpool(name string) *rt.Taskpool {
	tp := rt.NewTaskpool(name, nil, b.classes()...)
	tp.SetArena("T", rt.NewArenaOf(8, func() any { return make([]int, 1) }))
	return tp
}

// A broadcast much larger than one release batch (rt hands most of its arrivals to other
// workers) delivers the buffer to every reader exactly once, and the buffer goes back to its
// arena once the last reader is done: no reference is lost or released twice.
func TestBroadcastReachesEveryReader(t *testing.T) {
	for _, workers := range []int{1, 2, 4} {
		for _, s := range schedulers {
			for _, gather := range []bool{false, true} {
				t.Run(fmt.Sprintf("workers=%d/%s/gather=%v", workers, s, gather), func(t *testing.T) {
					c := newCtx(t, rt.Workers(workers), rt.Scheduler(s))
					b := &broadcast{n: 5000, gather: gather}
					mustRun(t, c, b.taskpool("bcast"))
					for k := range b.ran {
						if n := b.ran[k].Load(); n != 1 {
							t.Fatalf("R(%d) ran %d times", k, n)
						}
					}
					if n := b.bad.Load(); n != 0 {
						t.Fatalf("%d readers did not see the buffer S wrote", n)
					}
					// One bump for S's write, one when the last reference returns it.
					if v := rt.Impl.Version(b.copy.Load()); v != b.version+2 {
						t.Fatalf("buffer version %d after the run, want %d: a reference is still held",
							v, b.version+2)
					}
				})
			}
		}
	}
}

// An arrival that fails after rt deferred it (an unexpected input, a panicking priority)
// fails the taskpool with an error that names the releasing task, as when it fails inline.
func TestBroadcastErrorNamesTheSource(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    *broadcast
		want error
		text string
	}{
		{"unexpected input", &broadcast{n: 3000, goal: func(k int) uint32 { return map[bool]uint32{true: 0, false: 1}[k == 2900] }},
			rt.ErrDependency, "R(2900) flow X receives an input it does not expect"},
		{"panicking priority", &broadcast{n: 3000, prio: func(k int) int32 {
			if k == 2500 {
				panic("bad priority")
			}
			return 0
		}}, nil, "panic releasing successors: bad priority"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCtx(t, rt.Workers(2))
			err := run(t, c, tc.b.taskpool(tc.name))
			var te *rt.TaskError
			if !errors.As(err, &te) || te.Task != "S()" || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("err = %v, want a TaskError of S() mentioning %q", err, tc.text)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// A release whose calls alternate between two classes, which no generated Successors does
// but a hand-written one may, still reaches every instance of both exactly once.
func TestBroadcastAlternatingPeers(t *testing.T) {
	const n = 3000
	var ran [2][n]atomic.Int32
	each := func(tp *rt.Taskpool, l *rt.Locals, y func(*rt.Locals) bool) {
		for k := 0; k < n; k++ {
			if l[0] = k; !y(l) {
				return
			}
		}
	}
	inRange := func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < n }
	peer := func(name string, id int) *rt.TaskClass {
		return &rt.TaskClass{Name: name, ID: id, Locals: []string{"k"}, Params: []int{0}, NoStartup: true,
			Flows: []rt.Flow{{Name: "X", Access: rt.CTL}}, Space: each, Complete: inRange,
			Goal: func(*rt.Taskpool, *rt.Locals) uint32 { return 1 },
			Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(t *rt.Task) error {
				ran[id-1][t.Locals()[0]].Add(1)
				return nil
			}}}}
	}
	a, b := peer("A", 1), peer("B", 2)
	s := &rt.TaskClass{Name: "S", ID: 0, Flows: []rt.Flow{{Name: "X", Access: rt.CTL}},
		Space:    func(tp *rt.Taskpool, l *rt.Locals, y func(*rt.Locals) bool) { y(l) },
		Complete: func(*rt.Taskpool, *rt.Locals) bool { return true },
		Successors: func(tp *rt.Taskpool, l *rt.Locals, f rt.FlowMask, e *rt.Edges) {
			for k := 0; k < n; k++ {
				e.L[0] = k
				e.Task(0, 0, a, 0)
				e.Task(0, 1, b, 0)
			}
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(*rt.Task) error { return nil }}}}
	c := newCtx(t, rt.Workers(2))
	mustRun(t, c, rt.NewTaskpool("alternate", nil, s, a, b))
	for id := range ran {
		for k := range ran[id] {
			if got := ran[id][k].Load(); got != 1 {
				t.Fatalf("%c(%d) ran %d times", 'A'+id, k, got)
			}
		}
	}
}
