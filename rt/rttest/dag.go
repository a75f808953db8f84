package rttest

import "github.com/jdf2go/jdf2go/rt"

// dagGlobals is the taskpool struct of DAG: the adjacency of an explicit graph.
type dagGlobals struct {
	succ [][]int
	nin  []uint32
	body Body
}

// DAG runs an explicit graph of n tasks T(i) where every edge [2]int{a, b} (a < b is not
// required, but the graph must be acyclic) is a CTL dependency from T(a) to T(b). Its goal
// is the counted in-degree, so a task with several predecessors waits in the dependency
// table: diamonds, random DAGs, gathers of any shape.
//
//	T(i)
//	  i = 0 .. N-1
//	CTL X <- X T(pred) for every edge into i      (a gather with a run-time count)
//	      -> X T(succ) for every edge out of i
func DAG(n int, edges [][2]int, body Body) *rt.Taskpool {
	g := &dagGlobals{succ: make([][]int, n), nin: make([]uint32, n), body: body}
	for _, e := range edges {
		g.succ[e[0]] = append(g.succ[e[0]], e[1])
		g.nin[e[1]]++
	}
	return rt.NewTaskpool("DAG", g, &dagT)
}

var dagT rt.TaskClass

func dagOf(tp *rt.Taskpool) *dagGlobals { return tp.Globals().(*dagGlobals) }

func init() {
	dagT = rt.TaskClass{
		Name: "T", ID: 0, Locals: []string{"i"}, Params: []int{0},
		Flows: []rt.Flow{{Name: "X", Access: rt.CTL}},
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			for i := range dagOf(tp).nin {
				l[0] = i
				if !yield(l) {
					return
				}
			}
		},
		Complete: func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < len(dagOf(tp).nin) },
		Goal:     func(tp *rt.Taskpool, l *rt.Locals) uint32 { return dagOf(tp).nin[l[0]] },
		Successors: func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
			for d, s := range dagOf(tp).succ[l[0]] {
				e.L[0] = s
				e.Task(0, d, &dagT, 0)
			}
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(t *rt.Task) error {
			if b := dagOf(t.Taskpool()).body; b != nil {
				return b(t)
			}
			return nil
		}}},
	}
}
