package rt_test

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/rttest"
)

// stamps records, per task index, how often it ran and the logical time its body started and
// ended, to check "exactly once" and "after its predecessors".
type stamps struct {
	clock      atomic.Int64
	runs       []atomic.Int32
	start, end []atomic.Int64
}

func newStamps(n int) *stamps {
	return &stamps{runs: make([]atomic.Int32, n), start: make([]atomic.Int64, n), end: make([]atomic.Int64, n)}
}

func (s *stamps) body(index func(*rt.Task) int) rttest.Body {
	return func(t *rt.Task) error {
		i := index(t)
		s.start[i].Store(s.clock.Add(1))
		s.runs[i].Add(1)
		s.end[i].Store(s.clock.Add(1))
		return nil
	}
}

func (s *stamps) checkOnce(t *testing.T) {
	t.Helper()
	for i := range s.runs {
		if n := s.runs[i].Load(); n != 1 {
			t.Fatalf("task %d ran %d times, want 1", i, n)
		}
	}
}

// checkAfter fails unless task b started after task a ended.
func (s *stamps) checkAfter(t *testing.T, a, b int) {
	t.Helper()
	if s.end[a].Load() >= s.start[b].Load() {
		t.Fatalf("task %d started at %d, before its predecessor %d ended at %d",
			b, s.start[b].Load(), a, s.end[a].Load())
	}
}

func TestShapes(t *testing.T) {
	size := 200
	if raceEnabled {
		size = 60
	}
	type shape struct {
		name  string
		n     int
		build func(b rttest.Body) *rt.Taskpool
		index func(*rt.Task) int
		order func(t *testing.T, s *stamps)
	}
	shapes := []shape{
		// 20000 instances: on 2 and 3 workers the startup walk is split into parts.
		{"independent", 20000, func(b rttest.Body) *rt.Taskpool { return rttest.Independent(20000, b) },
			func(t *rt.Task) int { return t.Locals()[0] }, nil},
		{"chain", 3000, func(b rttest.Body) *rt.Taskpool { return rttest.Chains(1, 3000, b) },
			func(t *rt.Task) int { return t.Locals()[1] },
			func(t *testing.T, s *stamps) {
				for k := 1; k < 3000; k++ {
					s.checkAfter(t, k-1, k)
				}
			}},
		{"chains", 4 * 500, func(b rttest.Body) *rt.Taskpool { return rttest.Chains(4, 500, b) },
			func(t *rt.Task) int { return t.Locals()[0]*500 + t.Locals()[1] },
			func(t *testing.T, s *stamps) {
				for c := 0; c < 4; c++ {
					for k := 1; k < 500; k++ {
						s.checkAfter(t, c*500+k-1, c*500+k)
					}
				}
			}},
		{"grid", size * size, func(b rttest.Body) *rt.Taskpool { return rttest.Grid(size, size, b) },
			func(t *rt.Task) int { return t.Locals()[0]*size + t.Locals()[1] },
			func(t *testing.T, s *stamps) {
				for i := 0; i < size; i++ {
					for j := 0; j < size; j++ {
						if i > 0 {
							s.checkAfter(t, (i-1)*size+j, i*size+j)
						}
						if j > 0 {
							s.checkAfter(t, i*size+j-1, i*size+j)
						}
					}
				}
			}},
		{"fan-out-in", 1000 + 2, func(b rttest.Body) *rt.Taskpool { return rttest.FanOutIn(1000, b) },
			func(t *rt.Task) int {
				switch t.Class().Name {
				case "Src":
					return 0
				case "Mid":
					return 1 + t.Locals()[0]
				}
				return 1001
			},
			func(t *testing.T, s *stamps) {
				for k := 1; k <= 1000; k++ {
					s.checkAfter(t, 0, k)
					s.checkAfter(t, k, 1001)
				}
			}},
		{"empty", 0, func(b rttest.Body) *rt.Taskpool { return rttest.Chains(3, 0, b) },
			func(t *rt.Task) int { return 0 }, nil},
		{"fan-out-in-0", 2, func(b rttest.Body) *rt.Taskpool { return rttest.FanOutIn(0, b) },
			func(t *rt.Task) int {
				if t.Class().Name == "Src" {
					return 0
				}
				return 1
			}, nil},
	}
	for _, sched := range schedulers {
		for _, workers := range []int{1, 2, 3} {
			c := newCtx(t, rt.Workers(workers), rt.Scheduler(sched))
			for _, sh := range shapes {
				t.Run(fmt.Sprintf("%s/%d/%s", sched, workers, sh.name), func(t *testing.T) {
					s := newStamps(sh.n)
					tp := sh.build(s.body(sh.index))
					mustRun(t, c, tp)
					s.checkOnce(t)
					if sh.order != nil {
						sh.order(t, s)
					}
					if got := tp.Total(); got != int64(sh.n) {
						t.Fatalf("Total() = %d, want %d", got, sh.n)
					}
				})
			}
		}
	}
}

// Several taskpools run at once in one Context and all finish.
func TestConcurrentTaskpools(t *testing.T) {
	c := newCtx(t, rt.Workers(2))
	var n atomic.Int64
	body := func(*rt.Task) error { n.Add(1); return nil }
	tps := []*rt.Taskpool{rttest.Chains(2, 1000, body), rttest.Grid(30, 30, body),
		rttest.Independent(2000, body), rttest.FanOutIn(500, body)}
	for _, tp := range tps {
		if err := c.Add(tp); err != nil {
			t.Fatal(err)
		}
	}
	for _, tp := range tps {
		mustRun(t, c, rttest.Independent(1, nil)) // interleave more work
		if err := wait(t, tp); err != nil {
			t.Fatal(err)
		}
	}
	if want := int64(2000 + 900 + 2000 + 502); n.Load() != want {
		t.Fatalf("ran %d tasks, want %d", n.Load(), want)
	}
}

// Diamonds and random DAGs: every task runs once, after all its predecessors.
func TestDAGs(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	graphs := map[string]struct {
		n     int
		edges [][2]int
	}{
		"diamond":        {4, [][2]int{{0, 1}, {0, 2}, {1, 3}, {2, 3}}},
		"double-diamond": {7, [][2]int{{0, 1}, {0, 2}, {1, 3}, {2, 3}, {3, 4}, {3, 5}, {4, 6}, {5, 6}, {0, 6}}},
	}
	for g := 0; g < 4; g++ {
		n := 300 + r.IntN(300)
		var edges [][2]int
		for b := 1; b < n; b++ {
			for k := r.IntN(4); k > 0; k-- {
				edges = append(edges, [2]int{r.IntN(b), b})
			}
		}
		graphs[fmt.Sprintf("random%d", g)] = struct {
			n     int
			edges [][2]int
		}{n, edges}
	}
	for _, sched := range schedulers {
		c := newCtx(t, rt.Workers(2), rt.Scheduler(sched))
		for name, g := range graphs {
			t.Run(sched+"/"+name, func(t *testing.T) {
				s := newStamps(g.n)
				mustRun(t, c, rttest.DAG(g.n, g.edges, s.body(func(t *rt.Task) int { return t.Locals()[0] })))
				s.checkOnce(t)
				for _, e := range g.edges {
					s.checkAfter(t, e[0], e[1])
				}
			})
		}
	}
}
