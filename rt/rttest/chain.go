package rttest

import "github.com/jdf2go/jdf2go/rt"

// chainGlobals is the taskpool struct of Chain.
type chainGlobals struct {
	n, elems int
	v        *rt.Vector
}

// Chain is a chain H(k), k = 0 .. n-1, each task placed on the owner of block k of v (a
// vector of n blocks distributed over the ranks, so that consecutive tasks run on different
// ranks): every hop is one remote activation and, with elems > 0, one transfer of elems
// float64s. With elems = 0 the flow is CTL. The distribution layer's benchmarks run it.
//
//	H(k)
//	  k = 0 .. n-1
//	  : v(k)
//	RW X <- (k == 0) ? NEW : X H(k-1)      (CTL X when elems = 0)
//	     -> (k < n-1) ? X H(k+1)
func Chain(n, elems int, v *rt.Vector) *rt.Taskpool {
	tc := &chainCTL
	if elems > 0 {
		tc = &chainData
	}
	return rt.NewTaskpool("chain", &chainGlobals{n: n, elems: elems, v: v}, tc)
}

var chainCTL, chainData rt.TaskClass

func chainClass(access rt.Access, self *rt.TaskClass) rt.TaskClass {
	g := func(tp *rt.Taskpool) *chainGlobals { return tp.Globals().(*chainGlobals) }
	return rt.TaskClass{Name: "H", Locals: []string{"k"}, Params: []int{0},
		Flows: []rt.Flow{{Name: "X", Access: access}},
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			for k := 0; k < g(tp).n; k++ {
				l[0] = k
				if !yield(l) {
					return
				}
			}
		},
		Complete: func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < g(tp).n },
		Goal:     func(tp *rt.Taskpool, l *rt.Locals) uint32 { return uint32(min(l[0], 1)) },
		Affinity: func(tp *rt.Taskpool, l *rt.Locals) (rt.Collection, rt.Index) { return g(tp).v, rt.Ix(l[0]) },
		Prepare: func(t *rt.Task) error {
			if access != rt.CTL && t.Locals()[0] == 0 {
				t.SetFlow(0, rt.NewData(0, make([]float64, g(t.Taskpool()).elems)).Host())
			}
			return nil
		},
		Successors: func(tp *rt.Taskpool, l *rt.Locals, f rt.FlowMask, e *rt.Edges) {
			if e.L[0] = l[0] + 1; e.L[0] < g(tp).n {
				e.Task(0, 0, self, 0)
			}
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(t *rt.Task) error { return nil }}},
	}
}

func init() {
	chainCTL = chainClass(rt.CTL, &chainCTL)
	chainData = chainClass(rt.RW, &chainData)
}
