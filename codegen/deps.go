package codegen

// Dependencies (docs/language.md, "Flows"): the readiness goal, input
// preparation, and successor and predecessor iteration of a class.
//
// Inputs of a data flow form a chain (a switch): the first dep whose guard holds supplies
// the data. Each chain is emitted once, as the Select function of an rt.InputChain; rt walks
// it for the readiness goal, the binding of memory inputs and the predecessor iteration.
// Inputs of a CTL flow are independent: every one whose guard holds is awaited, a
// range (a gather) once per instance of the range that lies in its space. Outputs are
// independent: every one whose guard holds fires. A target named outside its class's
// execution space is skipped (the output may over-approximate, as in jdf2c); when the target
// is a single instance (no range), the iteration reports it with rt.Edges.Instance, and rt's
// walk of the input table reports the end of a data flow's input chain, for Verify.
//
// A data input whose chain has no true guard fails the task at run time with rt.ErrNoInput,
// naming the flow and its .jdf position; a data input whose selected predecessor is outside
// its space (or forwarded NULL) fails it too, instead of waiting forever.

import (
	"github.com/dave/jennifer/jen"
	"github.com/jdf2go/jdf2go/parser"
)

// eachTarget emits a dependency: the loops over its named ranges, its guard, and emit for
// the target (or targets of a ternary) that the guard selects.
func (c *classGen) eachTarget(s *scope, d *parser.Dep, emit func(s *scope, t *parser.Target) []jen.Code) []jen.Code {
	return s.forNamed(d.Named, func(ns *scope) []jen.Code {
		then := ns.forNamed(d.Then.Named, func(ts *scope) []jen.Code { return emit(ts, d.Then) })
		if d.Guard == nil {
			return then
		}
		st := jen.If(ns.expr(d.Guard, parser.KindBool)).Block(then...)
		if d.Else != nil {
			st.Else().Block(ns.forNamed(d.Else.Named, func(ts *scope) []jen.Code { return emit(ts, d.Else) })...)
		}
		return []jen.Code{st}
	})
}

// chain emits the input chain of a data flow: sel builds the code of the selected target,
// none (when not nil) the code for "no guard holds". One guard is an if statement; several
// are the cases of one switch, in order, as for the ternaries of expr.go (assign): the Go
// compiler's cost of an else-if chain grows with the square of its length.
func (c *classGen) chain(s *scope, f *parser.Flow, sel func(d *parser.Dep, t *parser.Target) []jen.Code, none []jen.Code) []jen.Code {
	var conds []jen.Code
	var bodies [][]jen.Code
	last, final := none, false // the code when no guard holds; final: an input always supplies it
	for _, d := range f.In() {
		if d.Guard == nil {
			last, final = sel(d, d.Then), true
			break
		}
		conds = append(conds, s.expr(unparen(d.Guard), parser.KindBool))
		bodies = append(bodies, sel(d, d.Then))
		if d.Else != nil {
			last, final = sel(d, d.Else), true
			break
		}
	}
	switch len(conds) {
	case 0:
		if final {
			return last
		}
		return nil
	case 1:
		st := jen.If(conds[0]).Block(bodies[0]...)
		if last != nil {
			st.Else().Block(last...)
		}
		return []jen.Code{st}
	}
	clauses := make([]jen.Code, 0, len(conds)+1)
	for i, cond := range conds {
		clauses = append(clauses, jen.Case(cond).Block(bodies[i]...))
	}
	if last != nil {
		clauses = append(clauses, jen.Default().Block(last...))
	}
	return []jen.Code{jen.Switch().Block(clauses...)}
}

// peerCall emits, for one instance of a task target whose arguments are vals, the
// assignment of its parameters into peer (a Locals), and `if <T>Complete(tp, &peer) { hit }`
// with `else { miss }` for a single instance.
func (c *classGen) peerCall(t *parser.Target, vals []jen.Code, peer *jen.Statement, hit []jen.Code, miss jen.Code) []jen.Code {
	tg := c.g.classes[t.Class.Index]
	var lhs []jen.Code
	for _, p := range t.Class.Params {
		lhs = append(lhs, jen.Add(peer.Clone()).Index(jen.Lit(p.Def.Index)))
	}
	st := jen.If(jen.Id(tg.fn("Complete")).Call(jen.Id("tp"), jen.Op("&").Add(peer.Clone()))).Block(hit...)
	if miss != nil {
		st.Else().Block(miss)
	}
	return []jen.Code{jen.List(lhs...).Op("=").List(vals...), st}
}

// inputKinds reports whether the inputs of f include a task and a memory endpoint.
func inputKinds(f *parser.Flow) (task, memory bool) {
	for _, d := range f.In() {
		for _, t := range []*parser.Target{d.Then, d.Else} {
			if t == nil {
				continue
			}
			if t.Kind == parser.TargetTask {
				task = true
			} else {
				memory = true
			}
		}
	}
	return
}

func flowBit(f *parser.Flow) jen.Code {
	return jen.Id("flows").Op("&").Lit(1 << f.Index).Op("!=").Lit(0)
}

// chains lists the data flows that have inputs: one input chain each.
func (c *classGen) chains() []*parser.Flow {
	var out []*parser.Flow
	for _, f := range c.tc.Flows {
		if f.Access != parser.AccessCTL && len(f.In()) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// inputs emits the input chain of each data flow: the class's Inputs field, an entry per
// flow with its Select function as a literal, from which rt derives the goal, the binding
// and the predecessors of those flows. Guards are tried in order, each returning the
// endpoint it selects:
//
//	Inputs: []rt.InputChain{
//		{Flow: <i>, Pos: "<file.jdf:L:C>", Task: true, Memory: true, Select: func(tp *rt.Taskpool, l *rt.Locals) rt.Input {
//		if <guard> {
//			return rt.DataInput(<dep>, g.<coll>, rt.Ix(...), "<file.jdf:L:C>")
//		}
//		pl := rt.Locals{<slot>: <arg>, ...}
//		return rt.TaskInput(<dep>, &<T>, <peer flow>, <T>Complete(tp, &pl), &pl, "<file.jdf:L:C>", "<F T(args)>")
//		return rt.Input{} // when no guard may hold
//	}}, ...},
func (c *classGen) inputs() (decls []jen.Code, field jen.Code) {
	flows := c.chains()
	if len(flows) == 0 {
		return nil, nil
	}
	var list []jen.Code
	for _, f := range flows {
		s := c.scope(jen.Id("g"))
		terminates := true
		sel := func(d *parser.Dep, t *parser.Target) []jen.Code {
			di, pos := jen.Lit(d.Index), jen.Lit(c.g.where(t.Pos()))
			switch t.Kind {
			case parser.TargetTask:
				if t.Class == nil || t.FlowRef == nil {
					terminates = false
					return nil
				}
				if hasRange(t, d) {
					terminates = false
				}
				tg := c.g.classes[t.Class.Index]
				return s.forArgs(t.Args, func(as *scope, vals []jen.Code) []jen.Code {
					var slots []jen.Code
					for i, p := range t.Class.Params {
						slots = append(slots, jen.Lit(p.Def.Index).Op(":").Add(vals[i]))
					}
					return []jen.Code{jen.Id("pl").Op(":=").Qual(rtPath, "Locals").Values(slots...),
						jen.Return(jen.Qual(rtPath, "TaskInput").Call(di, jen.Op("&").Id(tg.v), jen.Lit(t.FlowRef.Index),
							jen.Id(tg.fn("Complete")).Call(jen.Id("tp"), jen.Op("&").Id("pl")), jen.Op("&").Id("pl"),
							pos, jen.Lit(parser.TargetString(t))))}
				})
			case parser.TargetNull:
				return []jen.Code{jen.Return(jen.Qual(rtPath, "NullInput").Call(di))}
			case parser.TargetNew:
				return []jen.Code{jen.Return(jen.Qual(rtPath, "NewInput").Call(di, c.arenaName(s, d.Attrs.Type), pos))}
			}
			if t.Collection == nil {
				terminates = false
				return nil
			}
			s.use.g = true
			return []jen.Code{jen.Return(jen.Qual(rtPath, "DataInput").Call(di, s.global(t.Collection), s.index(t.Args), pos))}
		}
		body := c.earlyReturns(s, f, sel)
		if body == nil {
			terminates = true
			body = c.chain(s, f, sel, nil)
		}
		if ins := f.In(); len(ins) == 0 || (ins[len(ins)-1].Guard != nil && ins[len(ins)-1].Else == nil) {
			terminates = false // no guard may hold
		}
		if !terminates {
			body = append(body, jen.Return(jen.Qual(rtPath, "Input").Values()))
		}
		body = append(c.bind(s, jen.Id("tp"), jen.Id("l")), body...)
		fields := []jen.Code{jen.Id("Flow").Op(":").Lit(f.Index), jen.Id("Pos").Op(":").Lit(c.g.where(f.NamePos))}
		task, memory := inputKinds(f)
		if task {
			fields = append(fields, jen.Id("Task").Op(":").True())
		}
		if memory {
			fields = append(fields, jen.Id("Memory").Op(":").True())
		}
		list = append(list, jen.Values(append(fields, jen.Id("Select").Op(":").Func().Params(tpLocals()...).Qual(rtPath, "Input").Block(body...))...))
	}
	if len(list) > 1 {
		for i := range list {
			list[i] = jen.Line().Add(list[i])
		}
		list = append(list, jen.Line())
	}
	return decls, jen.Id("Inputs").Op(":").Index().Qual(rtPath, "InputChain").Values(list...)
}

// earlyReturns emits the input chain of f as a sequence of `if <guard> { ...; return }`
// statements and a final unguarded selection, when every selection ends in a return (no
// range of targets, no unresolved target); otherwise it returns nil.
func (c *classGen) earlyReturns(s *scope, f *parser.Flow, sel func(d *parser.Dep, t *parser.Target) []jen.Code) []jen.Code {
	// sel ends every selection it emits in a return, but for a target it cannot resolve
	// (nothing) and for a range of targets (a loop).
	returns := func(code []jen.Code) bool { return len(code) > 0 }
	var out []jen.Code
	for _, d := range f.In() {
		for _, t := range []*parser.Target{d.Then, d.Else} {
			if t != nil && hasRange(t, d) {
				return nil
			}
		}
		then := sel(d, d.Then)
		if !returns(then) {
			return nil
		}
		if d.Guard == nil {
			return append(out, then...)
		}
		out = append(out, jen.If(s.expr(d.Guard, parser.KindBool)).Block(then...))
		if d.Else != nil {
			els := sel(d, d.Else)
			if !returns(els) {
				return nil
			}
			return append(out, els...)
		}
	}
	return out
}

// goal emits the readiness goal of the CTL flows (rt.TaskClass.Goal; rt adds that of the
// input chains): every CTL input whose guard holds counts once per instance in space, or
// sets the flow's bit with mask_deps.
//
//	func <c>Goal(tp *rt.Taskpool, l *rt.Locals) uint32 {
//		var n uint32
//		var pl rt.Locals // the predecessor's locals
//		<per CTL flow: every input, counted when in space>
//		return n
//	}
func (c *classGen) goal() jen.Code {
	s := c.scope(jen.Id("g"))
	pl := jen.Id("pl")
	var body []jen.Code
	for _, f := range c.tc.Flows {
		if f.Access != parser.AccessCTL {
			continue
		}
		count := jen.Id("n").Op("++")
		if c.readiness == "Mask" {
			count = jen.Id("n").Op("|=").Lit(1 << f.Index)
		}
		taskSel := func(ts *scope, t *parser.Target) []jen.Code {
			return ts.forArgs(t.Args, func(as *scope, vals []jen.Code) []jen.Code {
				return c.peerCall(t, vals, pl, []jen.Code{count}, nil)
			})
		}
		for _, d := range f.In() {
			body = append(body, c.eachTarget(s, d, taskSel)...)
		}
	}
	if len(body) == 0 {
		return nil
	}
	pre := append(c.bind(s, jen.Id("tp"), jen.Id("l")), jen.Var().Id("n").Uint32(), jen.Var().Id("pl").Qual(rtPath, "Locals"))
	body = append(pre, append(body, jen.Return(jen.Id("n")))...)
	what := "the number of inputs"
	if c.readiness == "Mask" {
		what = "the set of CTL flows"
	}
	return doc(c.fn("Goal"), jen.Func().Id(c.fn("Goal")).Params(tpLocals()...).Uint32().Block(body...),
		"returns %s that %s waits for on its CTL flows (rt adds its data flows').", what, c.sig())
}

// prepare emits the input preparation (rt.TaskClass.Prepare): a WRITE flow without inputs
// gets a NEW copy from its arena. rt then binds the flows of the input chains.
func (c *classGen) prepare() jen.Code {
	s := c.scope(jen.Id("g"))
	var body []jen.Code
	for _, f := range c.tc.Flows {
		if f.Access != parser.AccessWrite || len(f.In()) > 0 {
			continue
		}
		var name jen.Code = jen.Lit("DEFAULT")
		for _, d := range f.Out() {
			if d.Attrs.Type != nil {
				name = c.arenaName(s, d.Attrs.Type)
				break
			}
		}
		body = append(body, jen.If(jen.Err().Op(":=").Id("task").Dot("BindNew").Call(jen.Lit(f.Index), name),
			jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit("%s: flow %s: %w"),
			jen.Lit(c.g.where(f.NamePos)), jen.Lit(f.Name), jen.Err()))))
	}
	if len(body) == 0 {
		return nil
	}
	body = append(body, jen.Return(jen.Nil()))
	var pre []jen.Code
	if s.use.g {
		pre = append(pre, jen.Id("g").Op(":=").Id("task").Dot("Taskpool").Call().Dot("Globals").Call().Assert(jen.Op("*").Id(c.g.name)))
	}
	if len(s.use.defs) > 0 {
		pre = append(pre, jen.Id("l").Op(":=").Id("task").Dot("Locals").Call())
		pre = append(pre, c.bindLocals(s, jen.Id("l"))...)
	}
	body = append(pre, body...)
	return doc(c.fn("Prepare"), jen.Func().Id(c.fn("Prepare")).Params(jen.Id("task").Op("*").Qual(rtPath, "Task")).Error().Block(body...),
		"binds a NEW copy to each WRITE flow without inputs of %s.", c.sig())
}

// arenaName returns the arena of a dependency's type property: DEFAULT, a name, or
// inline code returning the name.
func (c *classGen) arenaName(s *scope, e parser.Expr) jen.Code {
	switch e := e.(type) {
	case nil:
		return jen.Lit("DEFAULT")
	case *parser.Name:
		return jen.Lit(e.Name)
	case *parser.StringLit:
		return jen.Lit(e.Value)
	case *parser.InlineCode:
		return s.inlineTyped(e, jen.String())
	}
	c.g.errorf(e.Pos(), "a dependency type must be an arena name, a string or inline code returning one")
	return jen.Lit("DEFAULT")
}

// successors returns the output iteration (rt.TaskClass.Successors), a function literal in
// the descriptor.
//
//	Successors: func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
//		if flows&<bit> != 0 {
//			if <guard> {
//				e.L[<slot>] = <arg>
//				e.Instance(<T>Complete(tp, &e.L), <flow>, <dep>, &<T>, <peer flow>) // a single instance
//				for <a> := <from>; <a> <= <to>; <a>++ { // a range: instances outside are skipped
//					e.L[<slot>] = <a>
//					e.TaskIf(<T>Complete(tp, &e.L), <flow>, <dep>, &<T>, <peer flow>)
//				}
//			}
//			e.Data(<flow>, <dep>, g.<coll>, rt.Index{...})
//		}
//	},
func (c *classGen) successors() jen.Code { return c.edges(parser.Out) }

// predecessors emits the input iteration of the CTL flows (rt.TaskClass.Predecessors), for
// Verify: every holding input. rt reports the input chains' selections itself.
func (c *classGen) predecessors() jen.Code { return c.edges(parser.In) }

// edges returns the successor (dir Out) or CTL predecessor (In) iteration as a function
// literal, or nil when there is none.
func (c *classGen) edges(dir parser.Direction) jen.Code {
	s := c.scope(jen.Id("g"))
	peer := jen.Id("e").Dot("L")
	var body []jen.Code
	for _, f := range c.tc.Flows {
		fi := jen.Lit(f.Index)
		emit := func(d *parser.Dep) func(ts *scope, t *parser.Target) []jen.Code {
			return func(ts *scope, t *parser.Target) []jen.Code {
				di := jen.Lit(d.Index)
				switch t.Kind {
				case parser.TargetTask:
					if t.Class == nil || t.FlowRef == nil {
						return nil
					}
					ranged := hasRange(t, d)
					cls := jen.Op("&").Id(c.g.classes[t.Class.Index].v)
					return ts.forArgs(t.Args, func(as *scope, vals []jen.Code) []jen.Code {
						// A single instance: rt.Edges.Instance reports it, inside its space or
						// not; a member of a range: rt.Edges.TaskIf skips it outside.
						method := "Instance"
						if ranged {
							method = "TaskIf"
						}
						st := c.peerCall(t, vals, peer, nil, nil)
						tg := c.g.classes[t.Class.Index]
						return []jen.Code{st[0], jen.Id("e").Dot(method).Call(
							jen.Id(tg.fn("Complete")).Call(jen.Id("tp"), jen.Op("&").Add(peer.Clone())),
							fi, di, cls, jen.Lit(t.FlowRef.Index))}
					})
				case parser.TargetCollection:
					if t.Collection == nil {
						return nil
					}
					s.use.g = true
					return ts.forArgs(t.Args, func(as *scope, vals []jen.Code) []jen.Code {
						return []jen.Code{jen.Id("e").Dot("Data").Call(fi, di, ts.global(t.Collection), indexLit(vals))}
					})
				}
				return []jen.Code{jen.Comment(parser.TargetString(t))}
			}
		}
		if dir == parser.In && f.Access != parser.AccessCTL {
			continue // through the input chains
		}
		var fb []jen.Code
		for _, d := range f.Deps {
			if d.Dir == dir {
				fb = append(fb, c.eachTarget(s, d, emit(d))...)
			}
		}
		if len(fb) > 0 {
			body = append(body, jen.If(flowBit(f)).Block(fb...))
		}
	}
	if len(body) == 0 {
		return nil
	}
	body = append(c.bind(s, jen.Id("tp"), jen.Id("l")), body...)
	params := append(tpLocals(), jen.Id("flows").Qual(rtPath, "FlowMask"), jen.Id("e").Op("*").Qual(rtPath, "Edges"))
	return jen.Func().Params(params...).Block(body...)
}
