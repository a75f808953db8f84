package rt

// Verify and DOT output walk the instance graph of a taskpool with the generated functions,
// without running anything (jdf-language.md Part A §A.8). They allocate freely: they are tools.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
)

// ErrVerify is wrapped by every problem Verify reports.
var ErrVerify = errors.New("rt: verify")

// maxVerifyProblems bounds the report; a broken guard usually repeats over a whole range.
const maxVerifyProblems = 20

// instKey identifies an instance: its class and parameter values.
type instKey struct {
	class  int
	params [MaxParams]int
}

type instance struct {
	class *TaskClass
	l     Locals
}

type edgeRec struct {
	from, to         int // instance indices
	fromFlow, toFlow int
}

// instanceGraph is the enumerated graph of a taskpool.
type instanceGraph struct {
	tp    *Taskpool
	insts []instance
	index map[instKey]int
	out   []edgeRec // from Successors
	in    []edgeRec // from Predecessors (from = predecessor)
	probs []error
}

func (g *instanceGraph) problem(format string, a ...any) {
	if len(g.probs) < maxVerifyProblems {
		g.probs = append(g.probs, fmt.Errorf("%w: "+format, append([]any{ErrVerify}, a...)...))
	}
}

func keyOfInstance(tc *TaskClass, l *Locals) instKey {
	k := instKey{class: tc.ID}
	for i, s := range tc.Params {
		k.params[i] = l[s]
	}
	return k
}

// buildGraph enumerates every instance and every edge. A panic in generated or user code
// becomes an error.
func buildGraph(tp *Taskpool) (g *instanceGraph, err error) {
	if err := tp.validate(); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			g, err = nil, fmt.Errorf("%w: taskpool %s: panic while enumerating: %v", ErrVerify, tp.name, r)
		}
	}()
	g = &instanceGraph{tp: tp, index: map[instKey]int{}}
	for _, tc := range tp.classes {
		var l Locals
		tc.Space(tp, &l, func(l *Locals) bool {
			g.index[keyOfInstance(tc, l)] = len(g.insts)
			g.insts = append(g.insts, instance{tc, *l})
			return true
		})
	}
	for i := range g.insts {
		in := &g.insts[i]
		tp.VisitSuccessors(in.class, &in.l, &graphVisitor{g: g, self: i, out: true})
		if in.class.Predecessors != nil {
			tp.VisitPredecessors(in.class, &in.l, &graphVisitor{g: g, self: i})
		}
	}
	return g, nil
}

type graphVisitor struct {
	g    *instanceGraph
	self int
	out  bool
}

func (v *graphVisitor) Task(flow, dep int, peer *TaskClass, peerFlow int, l *Locals) {
	g := v.g
	me := &g.insts[v.self]
	j, ok := g.index[keyOfInstance(peer, l)]
	dir := "->"
	if !v.out {
		dir = "<-"
	}
	if !ok {
		g.problem("%s flow %s %s %s flow %s: no such task (outside its execution space)",
			taskName(me.class, &me.l), flowName(me.class, flow), dir, taskName(peer, l), flowName(peer, peerFlow))
		return
	}
	if v.out {
		g.out = append(g.out, edgeRec{v.self, j, flow, peerFlow})
	} else {
		g.in = append(g.in, edgeRec{j, v.self, peerFlow, flow})
	}
}

func (v *graphVisitor) Data(flow, dep int, c Collection, ix Index) {}

func flowName(tc *TaskClass, f int) string {
	if f >= 0 && f < len(tc.Flows) {
		return tc.Flows[f].Name
	}
	return "#" + strconv.Itoa(f)
}

// Verify enumerates the instance graph of tp for its actual globals and reports, joined in one
// error (each wrapping ErrVerify, at most 20): dependencies naming tasks outside their space,
// outputs without the matching input on the other side and inputs without the matching
// output (for classes that have Predecessors), readiness goals that disagree with the number
// (Counter) or flows (Mask) of incoming dependencies, and cycles. It returns nil when the
// graph is consistent. It does not run anything and can be called before Context.Add.
func Verify(tp *Taskpool) error {
	g, err := buildGraph(tp)
	if err != nil {
		return err
	}
	g.checkMatching()
	g.checkGoals()
	g.checkCycles()
	return errors.Join(g.probs...)
}

func (g *instanceGraph) name(i int) string { return taskName(g.insts[i].class, &g.insts[i].l) }

func (g *instanceGraph) checkMatching() {
	count := map[edgeRec]int{}
	for _, e := range g.in {
		count[e]++
	}
	for _, e := range g.out {
		if g.insts[e.to].class.Predecessors == nil {
			continue
		}
		if count[e] > 0 {
			count[e]--
			continue
		}
		g.problem("%s flow %s -> %s flow %s: the target has no matching input",
			g.name(e.from), flowName(g.insts[e.from].class, e.fromFlow),
			g.name(e.to), flowName(g.insts[e.to].class, e.toFlow))
	}
	var rest []edgeRec
	for e, n := range count {
		for ; n > 0; n-- {
			rest = append(rest, e)
		}
	}
	sort.Slice(rest, func(i, j int) bool {
		if rest[i].to != rest[j].to {
			return rest[i].to < rest[j].to
		}
		return rest[i].from < rest[j].from
	})
	for _, e := range rest {
		g.problem("%s flow %s <- %s flow %s: the source has no matching output",
			g.name(e.to), flowName(g.insts[e.to].class, e.toFlow),
			g.name(e.from), flowName(g.insts[e.from].class, e.fromFlow))
	}
}

func (g *instanceGraph) checkGoals() {
	arrivals := make([]uint32, len(g.insts))
	flows := make([]uint32, len(g.insts))
	for _, e := range g.out {
		arrivals[e.to]++
		flows[e.to] |= 1 << uint(e.toFlow)
	}
	for i := range g.insts {
		in := &g.insts[i]
		var goal uint32
		if in.class.Goal != nil {
			goal = in.class.Goal(g.tp, &in.l)
		}
		switch in.class.Readiness {
		case Mask:
			if goal != flows[i] {
				g.problem("%s: readiness mask %#x, but inputs arrive on flows %#x", g.name(i), goal, flows[i])
			}
		default:
			if goal != arrivals[i] {
				g.problem("%s: waits for %d inputs, but %d arrive", g.name(i), goal, arrivals[i])
			}
		}
	}
}

func (g *instanceGraph) checkCycles() {
	indeg := make([]int, len(g.insts))
	succ := make([][]int, len(g.insts))
	for _, e := range g.out {
		indeg[e.to]++
		succ[e.from] = append(succ[e.from], e.to)
	}
	var queue []int
	for i, d := range indeg {
		if d == 0 {
			queue = append(queue, i)
		}
	}
	seen := 0
	for len(queue) > 0 {
		i := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		seen++
		for _, j := range succ[i] {
			if indeg[j]--; indeg[j] == 0 {
				queue = append(queue, j)
			}
		}
	}
	if seen < len(g.insts) {
		for i, d := range indeg {
			if d > 0 {
				g.problem("%s: on a dependency cycle or after one (%d tasks never become ready)",
					g.name(i), len(g.insts)-seen)
				return
			}
		}
	}
}

// WriteDOT writes the instance graph of tp in Graphviz DOT: one node per task, one edge per
// task-to-task dependency labelled "OUT -> IN" with the flow names. Dependencies naming tasks
// outside their space are left out (Verify reports them).
func WriteDOT(w io.Writer, tp *Taskpool) error {
	g, err := buildGraph(tp)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "digraph %q {\n", tp.name)
	for i := range g.insts {
		fmt.Fprintf(bw, "  t%d [label=%q];\n", i, g.name(i))
	}
	for _, e := range g.out {
		fmt.Fprintf(bw, "  t%d -> t%d [label=%q];\n", e.from, e.to,
			flowName(g.insts[e.from].class, e.fromFlow)+" -> "+flowName(g.insts[e.to].class, e.toFlow))
	}
	fmt.Fprintln(bw, "}")
	return bw.Flush()
}
