package main

import (
	"container/heap"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jdf2go/jdf2go/rt"
)

// The scheduling suite: the task graph of the tiled Cholesky factorisation (the classes,
// dependencies and priorities of examples/potrf.jdf) with bodies that sleep for a fixed time
// per class instead of computing, on 16 workers whatever the machine: a sleeping worker needs
// no core, so the span measures how the runtime orders and hands out the tasks (wake-ups,
// priorities, queues), apart from the kernels' speed, on any machine.
//
//	sched potrf-sleep MT=16 and MT=32 (-quick: MT=16 with times divided by 8): variants lfq
//	    and ap (the schedulers) and list, the span of a greedy list schedule of the same graph
//	    with the same priorities, computed from the lfq runs' own body times (a discrete-event
//	    simulation: a task starts as soon as it is ready and a worker is free, the
//	    highest-priority ready task first, at no cost). list is not a bound (greedy is not
//	    optimal); the note gives the lower bound, max(work / 16, critical path).
//
// The body times (schedTimes) are the means of potrf's tile kernels at NB 512 in a trace of
// 16 workers on a 16-core Xeon (docs/performance.md, "The schedule alone"). MT=16 is N=8192 at
// NB 512, MT=32 N=16384.
func init() {
	register(Suite{Name: "sched", Applicable: func() (bool, string) { return true, "" }, Run: runSched})
}

const schedWorkers = 16

// Classes of the sleeping potrf graph, in potrf.jdf's order.
const (
	sPOTRF = iota
	sTRSM
	sSYRK
	sGEMM
)

var schedTimes = [4]time.Duration{2400 * time.Microsecond, 4800 * time.Microsecond, 3900 * time.Microsecond, 7700 * time.Microsecond}

// sleepTask is one task of the graph: its class, priority, successors and, for each
// successor, the input flow this task feeds.
type sleepTask struct {
	class int
	prio  int32
	nin   int
	succ  []int
	into  []int
}

// sleepGraph is the taskpool struct: the graph, the body times, and each task's start and
// end (each written by the one worker that runs the task, read after Wait).
type sleepGraph struct {
	ts         []sleepTask
	times      [4]time.Duration
	t0         time.Time
	start, end []time.Duration
}

// potrfGraph builds the graph for mt tile rows. Priorities are potrf.jdf's: 4*(MT - c) for
// a task that writes a tile of column c, plus 3 for POTRF (and TRSM(k+1, k)), 2 for TRSM and
// 1 for SYRK; POTRF is a high_priority class, ranked above every priority, which the offset
// below reproduces in this one-class graph.
func potrfGraph(mt int) []sleepTask {
	const hi = 1 << 20
	id := map[[4]int]int{}
	var ts []sleepTask
	add := func(class, m, n, k int, prio int) {
		id[[4]int{class, m, n, k}] = len(ts)
		ts = append(ts, sleepTask{class: class, prio: int32(prio)})
	}
	for k := range mt {
		add(sPOTRF, k, k, k, hi+4*(mt-k)+3)
		for m := k + 1; m < mt; m++ {
			p := 4*(mt-k) + 2
			if m == k+1 {
				p++
			}
			add(sTRSM, m, k, k, p)
			add(sSYRK, m, m, k, 4*(mt-m)+1)
			for n := k + 1; n < m; n++ {
				add(sGEMM, m, n, k, 4*(mt-n))
			}
		}
	}
	edge := func(from, to [4]int) {
		a, b := id[from], id[to]
		ts[a].succ = append(ts[a].succ, b)
		ts[a].into = append(ts[a].into, ts[b].nin)
		ts[b].nin++
	}
	for key := range id {
		c, m, n, k := key[0], key[1], key[2], key[3]
		switch c {
		case sPOTRF:
			if k > 0 {
				edge([4]int{sSYRK, k, k, k - 1}, key)
			}
		case sTRSM:
			edge([4]int{sPOTRF, k, k, k}, key)
			if k > 0 {
				edge([4]int{sGEMM, m, k, k - 1}, key)
			}
		case sSYRK:
			edge([4]int{sTRSM, m, k, k}, key)
			if k > 0 {
				edge([4]int{sSYRK, m, m, k - 1}, key)
			}
		case sGEMM:
			edge([4]int{sTRSM, m, k, k}, key)
			edge([4]int{sTRSM, n, k, k}, key)
			if k > 0 {
				edge([4]int{sGEMM, m, n, k - 1}, key)
			}
		}
	}
	return ts
}

var sleepClass rt.TaskClass

func sleepOf(tp *rt.Taskpool) *sleepGraph { return tp.Globals().(*sleepGraph) }

func init() {
	sleepClass = rt.TaskClass{
		Name: "T", ID: 0, Locals: []string{"i"}, Params: []int{0},
		// One CTL flow per input, tracked as a mask: as potrf's tasks, whose inputs are
		// distinct data flows.
		Flows:     []rt.Flow{{Name: "X0", Access: rt.CTL}, {Name: "X1", Access: rt.CTL}, {Name: "X2", Access: rt.CTL}},
		Readiness: rt.Mask,
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			for i := range sleepOf(tp).ts {
				if l[0] = i; !yield(l) {
					return
				}
			}
		},
		Complete: func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < len(sleepOf(tp).ts) },
		Goal:     func(tp *rt.Taskpool, l *rt.Locals) uint32 { return 1<<sleepOf(tp).ts[l[0]].nin - 1 },
		Priority: func(tp *rt.Taskpool, l *rt.Locals) int32 { return sleepOf(tp).ts[l[0]].prio },
		Successors: func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
			t := &sleepOf(tp).ts[l[0]]
			for d, s := range t.succ {
				e.L[0] = s
				e.Task(0, d, &sleepClass, t.into[d])
			}
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(t *rt.Task) error {
			g, i := sleepOf(t.Taskpool()), t.Locals()[0]
			g.start[i] = time.Since(g.t0)
			time.Sleep(g.times[g.ts[i].class])
			g.end[i] = time.Since(g.t0)
			return nil
		}}},
	}
}

// listSpan simulates a greedy list schedule of ts on w workers with the body times d.
func listSpan(ts []sleepTask, d []time.Duration, w int) time.Duration {
	nin := make([]int, len(ts))
	ready := &taskHeap{ts: ts}
	for i, t := range ts {
		if nin[i] = t.nin; nin[i] == 0 {
			heap.Push(ready, i)
		}
	}
	type ending struct {
		at time.Duration
		i  int
	}
	var running []ending // few: at most w
	var now time.Duration
	for done := 0; done < len(ts); done++ {
		for len(running) < w && ready.Len() > 0 {
			i := heap.Pop(ready).(int)
			running = append(running, ending{now + d[i], i})
		}
		j := 0
		for k := range running {
			if running[k].at < running[j].at {
				j = k
			}
		}
		e := running[j]
		running = slices.Delete(running, j, j+1)
		now = e.at
		for _, s := range ts[e.i].succ {
			if nin[s]--; nin[s] == 0 {
				heap.Push(ready, s)
			}
		}
	}
	return now
}

// taskHeap orders ready tasks by descending priority.
type taskHeap struct {
	ts []sleepTask
	q  []int
}

func (h *taskHeap) Len() int           { return len(h.q) }
func (h *taskHeap) Less(a, b int) bool { return h.ts[h.q[a]].prio > h.ts[h.q[b]].prio }
func (h *taskHeap) Swap(a, b int)      { h.q[a], h.q[b] = h.q[b], h.q[a] }
func (h *taskHeap) Push(x any)         { h.q = append(h.q, x.(int)) }
func (h *taskHeap) Pop() any {
	x := h.q[len(h.q)-1]
	h.q = h.q[:len(h.q)-1]
	return x
}

// criticalPath is the longest chain of body times in ts, in the nominal times.
func criticalPath(ts []sleepTask, times [4]time.Duration) time.Duration {
	// Tasks were built step by step, but edges may point backwards in ts: relax in
	// topological order.
	nin := make([]int, len(ts))
	var order []int
	for i, t := range ts {
		if nin[i] = t.nin; nin[i] == 0 {
			order = append(order, i)
		}
	}
	finish := make([]time.Duration, len(ts))
	var cp time.Duration
	for j := 0; j < len(order); j++ {
		i := order[j]
		finish[i] += times[ts[i].class]
		cp = max(cp, finish[i])
		for _, s := range ts[i].succ {
			finish[s] = max(finish[s], finish[i])
			if nin[s]--; nin[s] == 0 {
				order = append(order, s)
			}
		}
	}
	return cp
}

func runSched(cfg *Config) ([]Row, error) {
	mts, times := []int{16, 32}, schedTimes
	if cfg.Quick {
		mts = []int{16}
		for i := range times {
			times[i] /= 8
		}
	}
	var rows []Row
	for _, mt := range mts {
		ts := potrfGraph(mt)
		var work time.Duration
		for _, t := range ts {
			work += times[t.class]
		}
		cp := criticalPath(ts, times)
		workload := fmt.Sprintf("potrf-sleep MT=%d", mt)
		note := fmt.Sprintf("%d tasks; work/%d %v, critical path %v (nominal body times)",
			len(ts), schedWorkers, (work / schedWorkers).Round(100*time.Microsecond), cp.Round(100*time.Microsecond))
		var lists []time.Duration
		for _, sched := range []string{"lfq", "ap"} {
			c, err := rt.New(rt.Workers(schedWorkers), rt.Scheduler(sched))
			if err != nil {
				return rows, err
			}
			st, err := cfg.Measure(func() (time.Duration, error) {
				g := &sleepGraph{ts: ts, times: times, start: make([]time.Duration, len(ts)), end: make([]time.Duration, len(ts))}
				tp := rt.NewTaskpool("potrf-sleep", g, &sleepClass)
				// Let every worker give up stealing and park, as between two factorisations.
				time.Sleep(20 * time.Millisecond)
				g.t0 = time.Now()
				if err := c.Add(tp); err != nil {
					return 0, err
				}
				if err := tp.Wait(context.Background()); err != nil {
					return 0, err
				}
				span := time.Since(g.t0)
				if sched == "lfq" {
					d := make([]time.Duration, len(ts))
					for i := range d {
						d[i] = g.end[i] - g.start[i]
					}
					lists = append(lists, listSpan(ts, d, schedWorkers))
				}
				return span, nil
			})
			c.Close()
			if err != nil {
				return rows, fmt.Errorf("%s %s: %w", workload, sched, err)
			}
			rows = append(rows, Row{Suite: "sched", Workload: workload, Workers: schedWorkers, Variant: sched,
				Per: 1e6, Unit: "ms", Stats: st, Baselines: []string{"list"}, Note: note})
		}
		// The warm-up run's list span is left out, as its measured span is.
		lists = lists[1:]
		slices.Sort(lists)
		rows = append(rows, Row{Suite: "sched", Workload: workload, Workers: schedWorkers, Variant: "list",
			Per: 1e6, Unit: "ms", Stats: Stats{Median: lists[len(lists)/2], Min: lists[0], Max: lists[len(lists)-1]}, Note: note})
	}
	return rows, nil
}
