package rttest

import "github.com/jdf2go/jdf2go/rt"

// Body is the user body of a shape's tasks.
type Body func(t *rt.Task) error

// globals is the generated taskpool struct of every shape: the JDF globals plus the body.
type globals struct {
	N, M int
	Max  int // batch_max of IndependentBatched
	body Body
}

func g(tp *rt.Taskpool) *globals { return tp.Globals().(*globals) }

// hook is the CPU incarnation shared by the shapes: it runs the body if there is one.
func hook(t *rt.Task) error {
	if b := g(t.Taskpool()).body; b != nil {
		return b(t)
	}
	return nil
}

// Independent: n tasks without dependencies.
//
//	T(k)
//	  k = 0 .. N-1
//	BODY {} END
func Independent(n int, body Body) *rt.Taskpool {
	return rt.NewTaskpool("Independent", &globals{N: n, body: body}, &indepT)
}

var indepT rt.TaskClass

func init() {
	indepT = rt.TaskClass{
		Name: "T", ID: 0, Locals: []string{"k"}, Params: []int{0},
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			for k, n := 0, g(tp).N; k <= n-1; k++ {
				l[0] = k
				if !yield(l) {
					return
				}
			}
		},
		Complete:     func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] <= g(tp).N-1 },
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: hook}},
	}
}

// IndependentBatched: Independent whose body is batched. The hook collects a ring of up to
// max ready tasks (no bound when max <= 0) and runs body once, on the ring's head: body walks
// the ring with t.Ring(). Every member then completes.
//
//	T(k)
//	  k = 0 .. N-1
//	BODY [batch = true batch_max = MAX] {} END
func IndependentBatched(n, max int, body Body) *rt.Taskpool {
	return rt.NewTaskpool("IndependentBatched", &globals{N: n, Max: max, body: body}, &batchedT)
}

var batchedT rt.TaskClass

// batchMatch is the batch-match callback of IndependentBatched: a function, not a method
// value of an rt.BatchPolicy, so that a collection allocates nothing.
func batchMatch(cand, head *rt.Task) rt.BatchAction {
	return rt.BatchPolicy{Max: g(head.Taskpool()).Max}.Match(cand, head)
}

func init() {
	batchedT = indepT
	batchedT.Incarnations = []rt.Incarnation{{Kind: rt.CPU, Batch: true, Hook: func(t *rt.Task) error {
		if _, err := t.CollectBatch(batchMatch); err != nil {
			return err
		}
		return hook(t)
	}}}
}

// Chains: M chains of N tasks ordered by a CTL flow.
//
//	T(c, k)
//	  c = 0 .. M-1
//	  k = 0 .. N-1
//	CTL X <- (k > 0) ? X T(c, k-1)
//	      -> (k < N-1) ? X T(c, k+1)
//	BODY {} END
func Chains(m, n int, body Body) *rt.Taskpool {
	return rt.NewTaskpool("Chains", &globals{N: n, M: m, body: body}, &chainT)
}

var chainT rt.TaskClass

func init() {
	chainT = rt.TaskClass{
		Name: "T", ID: 0, Locals: []string{"c", "k"}, Params: []int{0, 1},
		Flows: []rt.Flow{{Name: "X", Access: rt.CTL}},
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			g := g(tp)
			for c := 0; c <= g.M-1; c++ {
				l[0] = c
				for k := 0; k <= g.N-1; k++ {
					l[1] = k
					if !yield(l) {
						return
					}
				}
			}
		},
		Complete: chainComplete,
		Goal: func(tp *rt.Taskpool, l *rt.Locals) uint32 {
			if l[1] > 0 {
				return 1
			}
			return 0
		},
		Successors: func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
			if flows&1 != 0 && l[1] < g(tp).N-1 {
				e.L[0], e.L[1] = l[0], l[1]+1
				if chainComplete(tp, &e.L) {
					e.Task(0, 0, &chainT, 0)
				}
			}
		},
		Predecessors: func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
			if flows&1 != 0 && l[1] > 0 {
				e.L[0], e.L[1] = l[0], l[1]-1
				if chainComplete(tp, &e.L) {
					e.Task(0, 0, &chainT, 0)
				}
			}
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: hook}},
	}
}

func chainComplete(tp *rt.Taskpool, l *rt.Locals) bool {
	g := g(tp)
	return l[0] >= 0 && l[0] <= g.M-1 && l[1] >= 0 && l[1] <= g.N-1
}

// Grid: an N×M wavefront of CTL chains; T(i, j) waits for T(i-1, j) and T(i, j-1).
//
//	T(i, j)
//	  i = 0 .. N-1
//	  j = 0 .. M-1
//	CTL X <- (j > 0) ? X T(i, j-1)
//	      -> (j < M-1) ? X T(i, j+1)
//	CTL Y <- (i > 0) ? Y T(i-1, j)
//	      -> (i < N-1) ? Y T(i+1, j)
//	BODY {} END
func Grid(n, m int, body Body) *rt.Taskpool {
	return rt.NewTaskpool("Grid", &globals{N: n, M: m, body: body}, &gridT)
}

var gridT rt.TaskClass

func init() {
	gridT = rt.TaskClass{
		Name: "T", ID: 0, Locals: []string{"i", "j"}, Params: []int{0, 1},
		Flows: []rt.Flow{{Name: "X", Access: rt.CTL}, {Name: "Y", Access: rt.CTL}},
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			g := g(tp)
			for i := 0; i <= g.N-1; i++ {
				l[0] = i
				for j := 0; j <= g.M-1; j++ {
					l[1] = j
					if !yield(l) {
						return
					}
				}
			}
		},
		Complete: gridComplete,
		Goal: func(tp *rt.Taskpool, l *rt.Locals) uint32 {
			var n uint32
			if l[1] > 0 {
				n++
			}
			if l[0] > 0 {
				n++
			}
			return n
		},
		Successors: func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
			g := g(tp)
			if flows&1 != 0 && l[1] < g.M-1 {
				e.L[0], e.L[1] = l[0], l[1]+1
				if gridComplete(tp, &e.L) {
					e.Task(0, 0, &gridT, 0)
				}
			}
			if flows&2 != 0 && l[0] < g.N-1 {
				e.L[0], e.L[1] = l[0]+1, l[1]
				if gridComplete(tp, &e.L) {
					e.Task(1, 0, &gridT, 1)
				}
			}
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: hook}},
	}
}

func gridComplete(tp *rt.Taskpool, l *rt.Locals) bool {
	g := g(tp)
	return l[0] >= 0 && l[0] <= g.N-1 && l[1] >= 0 && l[1] <= g.M-1
}

// FanOutIn: one source broadcasts to N middle tasks, whose CTL outputs a sink gathers.
//
//	Src()
//	CTL X -> X Mid(0 .. N-1)
//	Mid(k)
//	  k = 0 .. N-1
//	CTL X <- X Src()
//	CTL Y -> Y Sink()
//	Sink()
//	CTL Y <- Y Mid(0 .. N-1)
func FanOutIn(n int, body Body) *rt.Taskpool {
	return rt.NewTaskpool("FanOutIn", &globals{N: n, body: body}, &fanSrc, &fanMid, &fanSink)
}

var fanSrc, fanMid, fanSink rt.TaskClass

func one(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) { yield(l) }

func always(tp *rt.Taskpool, l *rt.Locals) bool { return true }

func midComplete(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] <= g(tp).N-1 }

func init() {
	fanSrc = rt.TaskClass{
		Name: "Src", ID: 0, Flows: []rt.Flow{{Name: "X", Access: rt.CTL}},
		Space: one, Complete: always,
		Successors: func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
			if flows&1 != 0 {
				for k, n := 0, g(tp).N; k <= n-1; k++ {
					e.L[0] = k
					if midComplete(tp, &e.L) {
						e.Task(0, 0, &fanMid, 0)
					}
				}
			}
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: hook}},
	}
	fanMid = rt.TaskClass{
		Name: "Mid", ID: 1, Locals: []string{"k"}, Params: []int{0},
		Flows: []rt.Flow{{Name: "X", Access: rt.CTL}, {Name: "Y", Access: rt.CTL}},
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			for k, n := 0, g(tp).N; k <= n-1; k++ {
				l[0] = k
				if !yield(l) {
					return
				}
			}
		},
		Complete:  midComplete,
		NoStartup: true,
		Goal:      func(tp *rt.Taskpool, l *rt.Locals) uint32 { return 1 },
		Successors: func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
			if flows&2 != 0 {
				e.Task(1, 0, &fanSink, 0)
			}
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: hook}},
	}
	fanSink = rt.TaskClass{
		Name: "Sink", ID: 2, Flows: []rt.Flow{{Name: "Y", Access: rt.CTL}},
		Space: one, Complete: always,
		// A CTL gather: one arrival per Mid instance whose guard holds.
		Goal:         func(tp *rt.Taskpool, l *rt.Locals) uint32 { return uint32(max(g(tp).N, 0)) },
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: hook}},
	}
}
