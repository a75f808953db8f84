package rt

// The instance graph behind Verify and WriteDOT.
//
// buildGraph enumerates every class's Space in class order, then visits each instance's
// dependencies with visitSuccessors and visitPredecessors; the graph is the
// EdgeVisitor (and DropVisitor) of those walks. Dependencies are kept as arcs between
// instance indices, once each in discovery order (a guard that holds twice for the same
// pair of flows is one arc), together with the index of the dependency that first gave them
// in its flow, so a problem can point at it. Arrivals, on the other hand, count every output
// dependency, duplicates included, since at run time each one is an arrival.
//
// check then matches outputs with inputs, compares readiness goals with the arrivals, and
// looks for a cycle over both directions.

import (
	"fmt"
	"strconv"
	"strings"
)

// vertexKey identifies an instance: its class and parameter values.
type vertexKey struct {
	class  int
	params [MaxParams]int
}

func keyOfVertex(tc *TaskClass, l *Locals) vertexKey {
	k := vertexKey{class: tc.ID}
	for i, s := range tc.Params {
		k.params[i] = l[s]
	}
	return k
}

type vertex struct {
	class *TaskClass
	l     Locals
}

// arc is a dependency from flow srcFlow of vertex src to flow dstFlow of vertex dst.
type arc struct {
	src, dst         int
	srcFlow, dstFlow int
}

type instanceGraph struct {
	tp  *Taskpool
	src *Source

	vertices []vertex
	index    map[vertexKey]int
	// outs and ins are the distinct output and input dependencies in discovery order;
	// outDep and inDep give the index of the dependency that first gave each.
	outs, ins     []arc
	outDep, inDep map[arc]int
	// arrivals and arrivedFlows count, per vertex, the output dependencies reaching it
	// and the set of flows they reach.
	arrivals, arrivedFlows []uint32

	problems []Problem
	// named marks the vertices that a dependency problem already names; their readiness
	// goal is not checked, since that problem explains any disagreement.
	named []bool

	// The walk's position: the vertex whose dependencies are visited, whether they are
	// inputs, and the instance a panic is reported at.
	cur    int
	input  bool
	atTC   *TaskClass
	atL    Locals
	atLSet bool
}

func (g *instanceGraph) problem(pos, format string, a ...any) {
	g.problems = append(g.problems, Problem{Pos: pos, Msg: fmt.Sprintf(format, a...)})
}

func (g *instanceGraph) name(i int) string { return taskName(g.vertices[i].class, &g.vertices[i].l) }

func (g *instanceGraph) flow(i, f int) string { return flowName(g.vertices[i].class, f) }

func flowName(tc *TaskClass, f int) string {
	if f >= 0 && f < len(tc.Flows) {
		return tc.Flows[f].Name
	}
	return "#" + strconv.Itoa(f)
}

// at names where the walk is, for a panic.
func (g *instanceGraph) at() string {
	switch {
	case g.atTC == nil:
		return "the start"
	case !g.atLSet:
		return "the execution space of " + g.atTC.Name
	}
	return taskName(g.atTC, &g.atL)
}

// buildGraph enumerates every instance and every dependency of tp. A panic in the classes'
// functions (generated or user code) becomes an error.
func buildGraph(tp *Taskpool, src *Source) (g *instanceGraph, err error) {
	if err := tp.validate(); err != nil {
		return nil, err
	}
	g = &instanceGraph{tp: tp, src: src, index: map[vertexKey]int{},
		outDep: map[arc]int{}, inDep: map[arc]int{}, cur: -1}
	defer func() {
		if r := recover(); r != nil {
			g, err = nil, fmt.Errorf("panic while walking the graph at %s: %v", g.at(), r)
		}
	}()
	for _, tc := range tp.classes {
		g.atTC, g.atLSet = tc, false
		var l Locals
		tc.Space(tp, &l, func(l *Locals) bool {
			g.atL, g.atLSet = *l, true
			k := keyOfVertex(tc, l)
			if _, dup := g.index[k]; dup {
				g.problem(src.class(tc.ID), "%s is enumerated twice", taskName(tc, l))
				return true
			}
			check := *l
			if !tc.Complete(tp, &check) {
				g.problem(src.class(tc.ID), "%s is enumerated but lies outside the execution space that %s checks",
					taskName(tc, l), tc.Name)
			}
			g.index[k] = len(g.vertices)
			g.vertices = append(g.vertices, vertex{tc, *l})
			return true
		})
	}
	n := len(g.vertices)
	g.arrivals, g.arrivedFlows, g.named = make([]uint32, n), make([]uint32, n), make([]bool, n)
	for i := range g.vertices {
		x := &g.vertices[i]
		g.cur, g.atTC, g.atL, g.atLSet = i, x.class, x.l, true
		g.input = false
		tp.visitSuccessors(x.class, &x.l, g)
		if x.class.hasPredecessors() {
			g.input = true
			tp.visitPredecessors(x.class, &x.l, g)
		}
	}
	return g, nil
}

// Task records a dependency between flow of the current vertex and peerFlow of the instance
// of peer in l (rt.EdgeVisitor).
func (g *instanceGraph) Task(flow, dep int, peer *TaskClass, peerFlow int, l *Locals) {
	j, ok := g.index[keyOfVertex(peer, l)]
	if !ok {
		g.dropped(flow, dep, peer, peerFlow, l, "is not enumerated by the execution space of %s, although its Complete accepts it,")
		return
	}
	if g.input {
		a := arc{src: j, dst: g.cur, srcFlow: peerFlow, dstFlow: flow}
		if _, seen := g.inDep[a]; !seen {
			g.inDep[a] = dep
			g.ins = append(g.ins, a)
		}
		return
	}
	g.arrivals[j]++
	if peerFlow >= 0 && peerFlow < 32 {
		g.arrivedFlows[j] |= 1 << uint(peerFlow)
	}
	a := arc{src: g.cur, dst: j, srcFlow: flow, dstFlow: peerFlow}
	if _, seen := g.outDep[a]; !seen {
		g.outDep[a] = dep
		g.outs = append(g.outs, a)
	}
}

// Data ignores collection endpoints: nothing on the other side has to match them
// (rt.EdgeVisitor).
func (g *instanceGraph) Data(flow, dep int, c Collection, ix Index) {}

// Outside records a dependency on a single instance outside its class's space
// (rt.DropVisitor).
func (g *instanceGraph) Outside(flow, dep int, peer *TaskClass, peerFlow int, l *Locals) {
	if p, ok := offStep(g.tp, peer, l); ok {
		g.dropped(flow, dep, peer, peerFlow, l, betweenSteps("%s", strings.ReplaceAll(p, "%", "%%"))+",")
		return
	}
	g.dropped(flow, dep, peer, peerFlow, l, "is outside the execution space of %s,")
}

// dropped reports a dependency of the current vertex whose target instance is not in the
// graph; why says so, with %s for the target's class.
func (g *instanceGraph) dropped(flow, dep int, peer *TaskClass, peerFlow int, l *Locals, why string) {
	cur := &g.vertices[g.cur]
	dir, what := "->", " so the output goes nowhere"
	if g.input {
		dir, what = "<-", " so nothing can satisfy this input"
		g.named[g.cur] = true
	}
	p := taskName(peer, l)
	g.problem(g.src.dep(cur.class.ID, flow, dep), "%s flow %s %s %s %s: %s "+why+what,
		g.name(g.cur), g.flow(g.cur, flow), dir, flowName(peer, peerFlow), p, p, peer.Name)
}

// NoInput records a data flow of the current vertex whose input guards are all false
// (rt.DropVisitor).
func (g *instanceGraph) NoInput(flow int) {
	g.named[g.cur] = true
	tc := g.vertices[g.cur].class
	if tc.hasGoal() {
		// TaskClass.startsReady: the task waits for an activation.
		g.problem(tc.inputPos(flow), "%s flow %s: no input dependency guard holds with the data of now "+
			"(the task waits for an activation to evaluate them again: unless a body writes what they read, it never runs)",
			g.name(g.cur), g.flow(g.cur, flow))
		return
	}
	g.problem(tc.inputPos(flow), "%s flow %s: no input dependency guard holds (the task would fail with %v)",
		g.name(g.cur), g.flow(g.cur, flow), ErrNoInput)
}

// check matches outputs with inputs, compares goals with arrivals and looks for a cycle.
func (g *instanceGraph) check() {
	for _, a := range g.outs {
		if dst := g.vertices[a.dst].class; !dst.hasPredecessors() && dst.hasGoal() {
			continue // its inputs cannot be enumerated; checkGoals covers them
		}
		if _, ok := g.inDep[a]; !ok {
			g.named[a.dst] = true
			g.problem(g.src.dep(g.vertices[a.src].class.ID, a.srcFlow, g.outDep[a]),
				"%s flow %s -> %s %s: no input of %s flow %s names %s flow %s back",
				g.name(a.src), g.flow(a.src, a.srcFlow), g.flow(a.dst, a.dstFlow), g.name(a.dst),
				g.name(a.dst), g.flow(a.dst, a.dstFlow), g.name(a.src), g.flow(a.src, a.srcFlow))
		}
	}
	for _, a := range g.ins {
		if _, ok := g.outDep[a]; !ok {
			g.named[a.dst] = true
			g.problem(g.src.dep(g.vertices[a.dst].class.ID, a.dstFlow, g.inDep[a]),
				"%s flow %s <- %s %s: no output of %s flow %s names %s flow %s, so this input never arrives",
				g.name(a.dst), g.flow(a.dst, a.dstFlow), g.flow(a.src, a.srcFlow), g.name(a.src),
				g.name(a.src), g.flow(a.src, a.srcFlow), g.name(a.dst), g.flow(a.dst, a.dstFlow))
		}
	}
	g.checkGoals()
	g.checkCycle()
}

// checkGoals compares each instance's readiness goal with the output dependencies that reach
// it: a disagreement starts the task too early or never.
func (g *instanceGraph) checkGoals() {
	for i := range g.vertices {
		x := &g.vertices[i]
		if g.named[i] {
			continue
		}
		goal := x.class.goal(g.tp, &x.l)
		pos := g.src.class(x.class.ID)
		switch x.class.Readiness {
		case Mask:
			if goal != g.arrivedFlows[i] {
				g.problem(pos, "%s: readiness mask %#x, but inputs arrive on flows %#x", g.name(i), goal, g.arrivedFlows[i])
			}
		default:
			if goal != g.arrivals[i] {
				g.problem(pos, "%s: waits for %d inputs, but %d arrive", g.name(i), goal, g.arrivals[i])
			}
		}
	}
}

// checkCycle reports one cycle of the dependency graph (outputs and inputs together), if
// there is one: after removing the vertices that a topological order reaches, walking back
// through the predecessors that remain from any remaining vertex must come back to a vertex
// already seen.
func (g *instanceGraph) checkCycle() {
	n := len(g.vertices)
	succs, preds := make([][]int, n), make([][]int, n)
	blocked := make([]int, n)
	for _, arcs := range [][]arc{g.outs, g.ins} {
		for _, a := range arcs {
			succs[a.src] = append(succs[a.src], a.dst)
			preds[a.dst] = append(preds[a.dst], a.src)
			blocked[a.dst]++
		}
	}
	var ready []int
	for i, b := range blocked {
		if b == 0 {
			ready = append(ready, i)
		}
	}
	for len(ready) > 0 {
		x := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		for _, d := range succs[x] {
			if blocked[d]--; blocked[d] == 0 {
				ready = append(ready, d)
			}
		}
	}
	for start, b := range blocked {
		if b == 0 {
			continue
		}
		seen := map[int]int{}
		var path []int
		for x := start; ; {
			if at, ok := seen[x]; ok {
				path = path[at:]
				break
			}
			seen[x] = len(path)
			path = append(path, x)
			next := -1
			for _, p := range preds[x] {
				if blocked[p] > 0 {
					next = p
					break
				}
			}
			if next < 0 {
				return // unreachable: a blocked vertex has a blocked predecessor
			}
			x = next
		}
		// path runs backwards along the dependencies; print it forwards, closed.
		names := make([]string, 0, len(path)+1)
		for i := len(path) - 1; i >= 0; i-- {
			names = append(names, g.name(path[i]))
		}
		names = append(names, names[0])
		g.problem(g.src.class(g.vertices[path[len(path)-1]].class.ID), "cycle: %s", strings.Join(names, " -> "))
		return
	}
}
