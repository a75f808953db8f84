package rt_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jdf2go/jdf2go/dashboard"
	"github.com/jdf2go/jdf2go/rt"
)

// ringProg is the taskpool struct of the batched programs below: N tasks B(k) whose first
// incarnation is a batch-capable CPU body that collects a ring with BatchPolicy{max, match}
// and records it; then, when next is set, a plain CPU body. With succ, each B(k) releases
// S(k), which records that it ran.
type ringProg struct {
	n     int
	max   int
	match func(cand, head *rt.Task) rt.BatchAction
	// body runs once per ring, with the members' k in ring order, after they are recorded.
	body func(head *rt.Task, ks []int) error

	mu       sync.Mutex
	rings    [][]int
	ran      []int32 // B(k) bodies that returned nil or Async, per k (batched or plain)
	sran     []int32 // S(k) runs
	prepared atomic.Int32
	admitted atomic.Int32
}

func ringOf(tp *rt.Taskpool) *ringProg { return tp.Globals().(*ringProg) }

// ringOpts varies the classes of ringTaskpool.
type ringOpts struct {
	next     bool                      // a second, plain CPU incarnation
	succ     bool                      // B(k) -> S(k)
	prepare  bool                      // count Prepare calls
	evaluate func(t *rt.Task) error    // Evaluate of the batched incarnation
	admit    func(t *rt.Task) error    // Admit of the batched incarnation
	hook     func(t *rt.Task) error    // replaces the batched hook
	prio     func(l *rt.Locals) int32  // class priority
	manual   func(head *rt.Task) error // runs in the hook instead of CollectBatch
	plain    func(t *rt.Task) error    // the plain incarnation's hook (default: record)
	noBatch  bool                      // the first incarnation is not batch-capable
	gpuFirst bool                      // a GPU incarnation comes before the batched one
}

func ringSpace(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
	for k := 0; k < ringOf(tp).n; k++ {
		l[0] = k
		if !yield(l) {
			return
		}
	}
}

func ringComplete(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < ringOf(tp).n }

// ringHook is the batched body: collect, record the ring, run the test's body.
func ringHook(t *rt.Task) error {
	g := ringOf(t.Taskpool())
	if _, err := t.CollectBatch(rt.BatchPolicy{Max: g.max, User: g.match}.Match); err != nil {
		return err
	}
	return g.record(t)
}

// record notes the ring that t heads and runs the test's body over it.
func (g *ringProg) record(t *rt.Task) error {
	var ks []int
	for m := range t.Ring() {
		ks = append(ks, m.Locals()[0])
	}
	if len(ks) != t.RingLen() {
		return fmt.Errorf("Ring yielded %d members, RingLen is %d", len(ks), t.RingLen())
	}
	g.mu.Lock()
	g.rings = append(g.rings, ks)
	g.mu.Unlock()
	var err error
	if g.body != nil {
		err = g.body(t, ks)
	}
	if err == nil {
		g.ranRing(ks)
	}
	return err
}

// ranRing counts a ring as run; an Async body calls it before it hands the members on, since
// their completions may end the taskpool before the body returns.
func (g *ringProg) ranRing(ks []int) {
	for _, k := range ks {
		atomic.AddInt32(&g.ran[k], 1)
	}
}

// ringTaskpool builds the program; the classes are built per call, since tests vary their
// incarnations.
func ringTaskpool(g *ringProg, o ringOpts) *rt.Taskpool {
	g.ran = make([]int32, g.n)
	g.sran = make([]int32, g.n)
	b := &rt.TaskClass{Name: "B", ID: 0, Locals: []string{"k"}, Params: []int{0},
		Flows: []rt.Flow{{Name: "X", Access: rt.CTL}}, Space: ringSpace, Complete: ringComplete}
	classes := []*rt.TaskClass{b}
	hook := ringHook
	if o.hook != nil {
		hook = o.hook
	}
	if o.manual != nil {
		hook = func(t *rt.Task) error {
			if err := o.manual(t); err != nil {
				return err
			}
			return ringOf(t.Taskpool()).record(t)
		}
	}
	b.Incarnations = []rt.Incarnation{{Kind: rt.CPU, Hook: hook, Batch: !o.noBatch, Evaluate: o.evaluate, Admit: o.admit}}
	if o.gpuFirst {
		b.Incarnations = append([]rt.Incarnation{{Kind: rt.GPU}}, b.Incarnations...)
	}
	if o.next {
		plain := o.plain
		if plain == nil {
			plain = func(t *rt.Task) error {
				atomic.AddInt32(&ringOf(t.Taskpool()).ran[t.Locals()[0]], 1)
				return nil
			}
		}
		b.Incarnations = append(b.Incarnations, rt.Incarnation{Kind: rt.CPU, Hook: plain})
	}
	if o.prepare {
		b.Prepare = func(t *rt.Task) error {
			ringOf(t.Taskpool()).prepared.Add(1)
			return nil
		}
	}
	if o.prio != nil {
		b.Priority = func(_ *rt.Taskpool, l *rt.Locals) int32 { return o.prio(l) }
	}
	if o.succ {
		s := &rt.TaskClass{Name: "S", ID: 1, Locals: []string{"k"}, Params: []int{0},
			Flows: []rt.Flow{{Name: "X", Access: rt.CTL}}, Space: ringSpace, Complete: ringComplete,
			Goal: func(*rt.Taskpool, *rt.Locals) uint32 { return 1 },
			Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(t *rt.Task) error {
				atomic.AddInt32(&ringOf(t.Taskpool()).sran[t.Locals()[0]], 1)
				return nil
			}}}}
		b.Successors = func(_ *rt.Taskpool, l *rt.Locals, _ rt.FlowMask, e *rt.Edges) {
			e.L[0] = l[0]
			e.Task(0, 0, s, 0)
		}
		classes = append(classes, s)
	}
	return rt.NewTaskpool("Rings", g, classes...)
}

// checkOnce fails unless every B(k) ran exactly once (and every S(k), with succ).
func (g *ringProg) checkOnce(t *testing.T, succ bool) {
	t.Helper()
	for k := 0; k < g.n; k++ {
		if g.ran[k] != 1 {
			t.Errorf("B(%d) ran %d times, want 1", k, g.ran[k])
		}
		if succ && g.sran[k] != 1 {
			t.Errorf("S(%d) ran %d times, want 1", k, g.sran[k])
		}
	}
}

// maxRing returns the size of the largest ring.
func (g *ringProg) maxRing() int {
	n := 0
	for _, r := range g.rings {
		n = max(n, len(r))
	}
	return n
}

// On one worker the startup walk queues every task before the first runs, so rings are
// deterministic: batch_max tasks each, in queue order; every member is completed, releases
// its successor and is counted done (the taskpool finishes).
func TestCPURingsBatchMax(t *testing.T) {
	for _, sched := range []string{"lfq", "ap", "gd"} {
		t.Run(sched, func(t *testing.T) {
			c := newCtx(t, rt.Workers(1), rt.Scheduler(sched), rt.Progress(nil))
			g := &ringProg{n: 20, max: 8}
			mustRun(t, c, ringTaskpool(g, ringOpts{succ: true, prepare: true}))
			g.checkOnce(t, true)
			want := [][]int{{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11, 12, 13, 14, 15}, {16, 17, 18, 19}}
			if fmt.Sprint(g.rings) != fmt.Sprint(want) {
				t.Errorf("rings %v, want %v", g.rings, want)
			}
			if n := g.prepared.Load(); n != int32(g.n) {
				t.Errorf("Prepare ran %d times, want %d (once per task, followers included)", n, g.n)
			}
		})
	}
}

// Candidates are offered best first, so a ring holds the best waiting tasks of its class.
func TestCPURingsPriorityOrder(t *testing.T) {
	c := newCtx(t, rt.Workers(1), rt.Progress(nil))
	g := &ringProg{n: 10, max: 4}
	mustRun(t, c, ringTaskpool(g, ringOpts{prio: func(l *rt.Locals) int32 { return int32(l[0]) }}))
	g.checkOnce(t, false)
	want := [][]int{{9, 8, 7, 6}, {5, 4, 3, 2}, {1, 0}}
	if fmt.Sprint(g.rings) != fmt.Sprint(want) {
		t.Errorf("rings %v, want %v (best first)", g.rings, want)
	}
}

// REJECT leaves a candidate queued for a later ring, STOP ends the scan: every task still
// runs exactly once.
func TestCPURingsRejectStop(t *testing.T) {
	t.Run("reject", func(t *testing.T) {
		c := newCtx(t, rt.Workers(1), rt.Progress(nil))
		g := &ringProg{n: 30, match: func(cand, head *rt.Task) rt.BatchAction {
			if cand.Locals()[0]%2 != head.Locals()[0]%2 {
				return rt.Reject
			}
			return rt.Accept
		}}
		mustRun(t, c, ringTaskpool(g, ringOpts{succ: true}))
		g.checkOnce(t, true)
		for _, r := range g.rings {
			for _, k := range r {
				if k%2 != r[0]%2 {
					t.Errorf("ring %v mixes parities", r)
				}
			}
		}
		if len(g.rings) != 2 {
			t.Errorf("rings %v, want one of each parity", g.rings)
		}
	})
	t.Run("stop", func(t *testing.T) {
		c := newCtx(t, rt.Workers(1), rt.Progress(nil))
		g := &ringProg{n: 30, match: func(cand, head *rt.Task) rt.BatchAction {
			if cand.Locals()[0] >= head.Locals()[0]+3 {
				return rt.Stop
			}
			return rt.Accept
		}}
		mustRun(t, c, ringTaskpool(g, ringOpts{}))
		g.checkOnce(t, false)
		if n := g.maxRing(); n != 3 {
			t.Errorf("largest ring %d, want 3: %v", n, g.rings)
		}
	})
}

// Many workers, many tasks, every scheduler: no task is lost or run twice, whatever the
// rings, and rejected candidates all run.
func TestCPURingsManyWorkers(t *testing.T) {
	for _, sched := range []string{"lfq", "ap", "gd"} {
		t.Run(sched, func(t *testing.T) {
			c := newCtx(t, rt.Workers(4), rt.Scheduler(sched), rt.Progress(nil))
			g := &ringProg{n: 20000, max: 16, match: func(cand, _ *rt.Task) rt.BatchAction {
				if cand.Locals()[0]%7 == 0 {
					return rt.Reject
				}
				return rt.Accept
			}}
			mustRun(t, c, ringTaskpool(g, ringOpts{succ: true, prepare: true}))
			g.checkOnce(t, true)
			if n := g.maxRing(); n > 16 {
				t.Errorf("a ring of %d tasks, batch_max is 16", n)
			}
			for _, r := range g.rings {
				for _, k := range r[1:] {
					if k%7 == 0 {
						t.Fatalf("ring %v has a rejected follower", r)
					}
				}
			}
			if n := g.prepared.Load(); n != int32(g.n) {
				t.Errorf("Prepare ran %d times, want %d", n, g.n)
			}
		})
	}
}

// Batching(false), or JDF2GO_BATCHING=off, turns collection off: every ring is a single
// task. The option overrides the variable.
func TestCPURingsBatchingOff(t *testing.T) {
	for _, tc := range []struct {
		env  string
		opts []rt.Option
		want int
	}{
		{"", []rt.Option{rt.Batching(false)}, 1},
		{"off", nil, 1},
		{"off", []rt.Option{rt.Batching(true)}, 50},
	} {
		t.Run(fmt.Sprintf("env=%q,options=%d", tc.env, len(tc.opts)), func(t *testing.T) {
			t.Setenv("JDF2GO_BATCHING", tc.env)
			c := newCtx(t, append(tc.opts, rt.Workers(1), rt.Progress(nil))...)
			g := &ringProg{n: 50}
			mustRun(t, c, ringTaskpool(g, ringOpts{}))
			g.checkOnce(t, false)
			if n := g.maxRing(); n != tc.want {
				t.Errorf("largest ring %d, want %d", n, tc.want)
			}
		})
	}
}

// A failing batched body fails the taskpool with a TaskError naming the head and the size of
// its ring, and drops every member (none is counted, the taskpool ends at once).
func TestCPURingFailure(t *testing.T) {
	boom := errors.New("boom")
	for _, how := range []string{"error", "panic"} {
		t.Run(how, func(t *testing.T) {
			c := newCtx(t, rt.Workers(1), rt.Progress(nil))
			g := &ringProg{n: 40, max: 5, body: func(head *rt.Task, ks []int) error {
				if ks[0] == 10 {
					if how == "panic" {
						panic(boom)
					}
					return boom
				}
				return nil
			}}
			err := run(t, c, ringTaskpool(g, ringOpts{succ: true}))
			var te *rt.TaskError
			if !errors.As(err, &te) || te.Task != "B(10) (ring of 5)" {
				t.Fatalf("Wait = %v, want a TaskError for B(10) (ring of 5)", err)
			}
			if how == "error" && !errors.Is(err, boom) {
				t.Errorf("Wait = %v, want it to wrap boom", err)
			}
			for k := 10; k < 15; k++ {
				if g.sran[k] != 0 {
					t.Errorf("S(%d) ran after its predecessor's ring failed", k)
				}
			}
			// The Context goes on with other taskpools.
			g2 := &ringProg{n: 10, max: 3}
			mustRun(t, c, ringTaskpool(g2, ringOpts{}))
			g2.checkOnce(t, false)
		})
	}
}

// A batch-match callback that panics or answers nonsense fails the ring's taskpool; the
// queue's lock is released (the Context runs the next taskpool).
func TestCPURingMatchFaults(t *testing.T) {
	cases := []struct {
		name  string
		match func(cand, head *rt.Task) rt.BatchAction
		want  error
		text  string
	}{
		{"panic", func(cand, _ *rt.Task) rt.BatchAction { panic("bad match") }, nil, "panic in batch_match: bad match"},
		{"invalid", func(cand, _ *rt.Task) rt.BatchAction { return rt.BatchAction(7) }, rt.ErrInvalidAction, "BatchAction(7)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCtx(t, rt.Workers(2), rt.Progress(nil))
			g := &ringProg{n: 100, match: tc.match}
			err := run(t, c, ringTaskpool(g, ringOpts{}))
			if err == nil || !strings.Contains(err.Error(), tc.text) || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("Wait = %v, want an error with %q", err, tc.text)
			}
			g2 := &ringProg{n: 100, max: 4}
			mustRun(t, c, ringTaskpool(g2, ringOpts{}))
			g2.checkOnce(t, false)
		})
	}
}

// A match callback that calls runtime.Goexit fails the ring (the whole ring is dropped), the
// worker is replaced, and the queue's lock is released.
func TestCPURingMatchGoexit(t *testing.T) {
	c := newCtx(t, rt.Workers(1), rt.Progress(nil), rt.Logger(slog.New(slog.DiscardHandler)))
	g := &ringProg{n: 10, match: func(cand, _ *rt.Task) rt.BatchAction {
		if cand.Locals()[0] == 3 {
			runtime.Goexit()
		}
		return rt.Accept
	}}
	err := run(t, c, ringTaskpool(g, ringOpts{}))
	if !errors.Is(err, rt.ErrGoexit) || !strings.Contains(err.Error(), "B(0) (ring of 3)") {
		t.Fatalf("Wait = %v, want ErrGoexit naming B(0) (ring of 3)", err)
	}
	g2 := &ringProg{n: 10, max: 3}
	mustRun(t, c, ringTaskpool(g2, ringOpts{}))
	g2.checkOnce(t, false)
}

// CollectBatch outside a batch-capable incarnation, or from inside a match callback, fails
// with a named error.
func TestCollectBatchMisuse(t *testing.T) {
	t.Run("not batched", func(t *testing.T) {
		c := newCtx(t, rt.Workers(1), rt.Progress(nil))
		g := &ringProg{n: 3}
		err := run(t, c, ringTaskpool(g, ringOpts{noBatch: true}))
		if !errors.Is(err, rt.ErrNotBatched) {
			t.Fatalf("Wait = %v, want ErrNotBatched", err)
		}
	})
	t.Run("reentrant", func(t *testing.T) {
		c := newCtx(t, rt.Workers(1), rt.Progress(nil))
		var inner atomic.Value
		g := &ringProg{n: 5}
		g.match = func(cand, head *rt.Task) rt.BatchAction {
			_, err := head.CollectBatch(nil)
			inner.CompareAndSwap(nil, fmt.Sprint(err))
			return rt.Accept
		}
		mustRun(t, c, ringTaskpool(g, ringOpts{}))
		g.checkOnce(t, false)
		if got := inner.Load(); got != rt.ErrReentrantCollect.Error() {
			t.Errorf("CollectBatch inside match returned %v, want ErrReentrantCollect", got)
		}
	})
}

// batch = manual: the body chooses whether to collect; a second call collects more.
func TestCPURingManual(t *testing.T) {
	c := newCtx(t, rt.Workers(1), rt.Progress(nil))
	g := &ringProg{n: 32} // rings {4m, 4m+1, 4m+2}, then 4m+3 alone
	mustRun(t, c, ringTaskpool(g, ringOpts{manual: func(head *rt.Task) error {
		if head.Locals()[0]%2 == 1 {
			return nil // odd heads run alone
		}
		max2 := rt.BatchPolicy{Max: 2}.Match
		if n, err := head.CollectBatch(max2); err != nil || n != 1 {
			return fmt.Errorf("first CollectBatch = %d, %v; want 1 follower", n, err)
		}
		n, err := head.CollectBatch(rt.BatchPolicy{Max: 3}.Match)
		if err != nil || n != 2 {
			return fmt.Errorf("second CollectBatch = %d, %v; want 2 followers", n, err)
		}
		return nil
	}}))
	g.checkOnce(t, false)
	for _, r := range g.rings {
		if want := 3 - 2*(r[0]%2); len(r) != want {
			t.Errorf("ring %v, want %d members", r, want)
		}
	}
}

// Next passes the whole ring to the next incarnation; Again runs every member again later;
// Async hands every member to the body, which completes each one.
func TestCPURingResults(t *testing.T) {
	t.Run("next", func(t *testing.T) {
		c := newCtx(t, rt.Workers(2), rt.Progress(nil))
		g := &ringProg{n: 200, max: 8, body: func(*rt.Task, []int) error { return rt.Next }}
		mustRun(t, c, ringTaskpool(g, ringOpts{next: true, succ: true}))
		g.checkOnce(t, true) // each task ran the plain body once
	})
	t.Run("again", func(t *testing.T) {
		c := newCtx(t, rt.Workers(2), rt.Progress(nil))
		var seen sync.Map
		g := &ringProg{n: 200, max: 8}
		g.body = func(head *rt.Task, ks []int) error {
			again := false
			for _, k := range ks {
				if _, loaded := seen.LoadOrStore(k, true); !loaded {
					again = true
				}
			}
			if again {
				return rt.Again
			}
			return nil
		}
		mustRun(t, c, ringTaskpool(g, ringOpts{succ: true}))
		g.checkOnce(t, true)
	})
	t.Run("async", func(t *testing.T) {
		c := newCtx(t, rt.Workers(2), rt.Progress(nil))
		var wg sync.WaitGroup
		defer wg.Wait()
		g := &ringProg{n: 200, max: 8}
		g.body = func(head *rt.Task, ks []int) error {
			members := slices.Collect(head.Ring())
			g.ranRing(ks)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, m := range members {
					m.Complete()
				}
			}()
			return rt.Async
		}
		mustRun(t, c, ringTaskpool(g, ringOpts{succ: true}))
		g.checkOnce(t, true)
	})
}

// A follower that the incarnation's Evaluate refuses goes to the next incarnation; one that
// Admit refuses fails the taskpool with a TaskError naming it.
func TestCPURingEvaluateAdmit(t *testing.T) {
	t.Run("evaluate", func(t *testing.T) {
		c := newCtx(t, rt.Workers(1), rt.Progress(nil))
		var plain [60]atomic.Int32
		g := &ringProg{n: 60, max: 10}
		mustRun(t, c, ringTaskpool(g, ringOpts{next: true, succ: true,
			evaluate: rt.EvaluateOf(func(t *rt.Task) bool { return t.Locals()[0]%3 != 0 }),
			plain: func(t *rt.Task) error {
				plain[t.Locals()[0]].Add(1)
				atomic.AddInt32(&ringOf(t.Taskpool()).ran[t.Locals()[0]], 1)
				return nil
			}}))
		g.checkOnce(t, true)
		for k := range plain {
			if want := int32(0); k%3 == 0 {
				want = 1
				if plain[k].Load() != want {
					t.Errorf("B(%d) ran the plain body %d times, want %d", k, plain[k].Load(), want)
				}
			} else if plain[k].Load() != want {
				t.Errorf("B(%d) ran the plain body %d times, want %d", k, plain[k].Load(), want)
			}
		}
		for _, r := range g.rings {
			for _, k := range r {
				if k%3 == 0 {
					t.Errorf("ring %v holds B(%d), which Evaluate refuses", r, k)
				}
			}
		}
	})
	t.Run("admit", func(t *testing.T) {
		c := newCtx(t, rt.Workers(1), rt.Progress(nil))
		bad := errors.New("flow X holds a string")
		g := &ringProg{n: 20, max: 10}
		err := run(t, c, ringTaskpool(g, ringOpts{admit: func(t *rt.Task) error {
			ringOf(t.Taskpool()).admitted.Add(1)
			if t.Locals()[0] == 4 {
				return bad
			}
			return nil
		}}))
		var te *rt.TaskError
		if !errors.As(err, &te) || te.Task != "B(4)" || !errors.Is(err, bad) {
			t.Fatalf("Wait = %v, want a TaskError for B(4) wrapping the Admit error", err)
		}
		if n := g.admitted.Load(); n < 4 {
			t.Errorf("Admit ran %d times, want it for each follower", n)
		}
	})
}

// A ring that runs while another taskpool's tasks of the same class wait never takes them:
// members share the head's taskpool.
func TestCPURingsStayInTaskpool(t *testing.T) {
	c := newCtx(t, rt.Workers(2), rt.Progress(nil))
	var tps []*rt.Taskpool
	var gs []*ringProg
	for i := 0; i < 3; i++ {
		g := &ringProg{n: 2000, max: 32}
		gs = append(gs, g)
		tp := ringTaskpool(g, ringOpts{succ: true})
		if err := c.Add(tp); err != nil {
			t.Fatal(err)
		}
		tps = append(tps, tp)
	}
	for i, tp := range tps {
		if err := tp.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		gs[i].checkOnce(t, true)
	}
}

// Tasks waiting for a GPU incarnation that no device of the Context accepts would skip it:
// a ring of the CPU incarnation after it collects them.
func TestCPURingsAfterUnusableDevice(t *testing.T) {
	c := newCtx(t, rt.Workers(1), rt.Progress(nil))
	g := &ringProg{n: 20, max: 8}
	mustRun(t, c, ringTaskpool(g, ringOpts{gpuFirst: true, succ: true}))
	g.checkOnce(t, true)
	if n := g.maxRing(); n != 8 {
		t.Errorf("largest ring %d, want 8: %v", n, g.rings)
	}
}

// Every member of a ring counts as done (the dashboard's class progress reaches its total);
// the profile holds one span per ring.
func TestCPURingsObserved(t *testing.T) {
	c := newCtx(t, rt.Workers(1), rt.Progress(nil), rt.Profiling(), rt.Dashboard("localhost:0"))
	g := &ringProg{n: 100, max: 10}
	mustRun(t, c, ringTaskpool(g, ringOpts{}))
	g.checkOnce(t, false)
	s := waitSnapshot(t, c.DashboardURL(), func(s *dashboard.Snapshot) bool {
		return len(s.Classes) == 1 && s.Classes[0].Done == s.Classes[0].Total
	})
	if k := s.Classes[0]; k.Name != "B" || k.Total != 100 {
		t.Errorf("class progress %+v, want B 100/100", k)
	}
	var spans int64
	for _, st := range c.Tracer().Summary() {
		if st.Name == "B" {
			spans = st.Count
		}
	}
	if spans != int64(len(g.rings)) || spans != 10 {
		t.Errorf("%d spans of B, want one per ring (%d rings)", spans, len(g.rings))
	}
}
