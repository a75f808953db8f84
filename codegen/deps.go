package codegen

// Dependencies (docs/language.md, "Flows"): the readiness goal, input
// preparation, and successor and predecessor iteration of a class.
//
// Inputs of a data flow form an if / else-if chain: the first dep whose guard holds supplies
// the data. Inputs of a CTL flow are independent: every one whose guard holds is awaited, a
// range (a gather) once per instance of the range that lies in its space. Outputs are
// independent: every one whose guard holds fires. A target named outside its class's
// execution space is skipped (the output may over-approximate, as in jdf2c); when the target
// is a single instance (no range), the iteration reports it with rt.Edges.Outside, and the
// end of a data flow's input chain with rt.Edges.NoInput, for Verify.
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
// none (when not nil) the code for "no guard holds".
func (c *classGen) chain(s *scope, f *parser.Flow, sel func(d *parser.Dep, t *parser.Target) []jen.Code, none []jen.Code) []jen.Code {
	var first, cur *jen.Statement
	for _, d := range f.In() {
		if d.Guard == nil {
			code := sel(d, d.Then)
			if cur == nil {
				return code
			}
			cur.Else().Block(code...)
			return []jen.Code{first}
		}
		st := jen.If(s.expr(d.Guard, parser.KindBool)).Block(sel(d, d.Then)...)
		if cur == nil {
			first = st
		} else {
			cur.Else().Add(st)
		}
		cur = st
		if d.Else != nil {
			cur.Else().Block(sel(d, d.Else)...)
			return []jen.Code{first}
		}
	}
	if first == nil {
		return nil
	}
	if none != nil {
		cur.Else().Block(none...)
	}
	return []jen.Code{first}
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

// dropped returns `e.<method>(args)`: the report of a dependency that the successor or
// predecessor iteration drops (rt.Edges.Outside, rt.Edges.NoInput), which only Verify hears.
func dropped(method string, args ...jen.Code) jen.Code {
	return jen.Id("e").Dot(method).Call(args...)
}

// goal emits the readiness goal (rt.TaskClass.Goal): the number of expected arrivals, or
// the bit set of flows expecting one with mask_deps.
//
//	func <c>Goal(tp *rt.Taskpool, l *rt.Locals) uint32 {
//		var n uint32
//		var pl rt.Locals // the predecessor's locals
//		<per flow: the selected input, or every CTL input, counted when in space>
//		return n
//	}
func (c *classGen) goal() jen.Code {
	s := c.scope(jen.Id("g"))
	pl := jen.Id("pl")
	var body []jen.Code
	for _, f := range c.tc.Flows {
		count := jen.Id("n").Op("++")
		if c.readiness == "Mask" {
			count = jen.Id("n").Op("|=").Lit(1 << f.Index)
		}
		taskSel := func(ts *scope, t *parser.Target) []jen.Code {
			return ts.forArgs(t.Args, func(as *scope, vals []jen.Code) []jen.Code {
				return c.peerCall(t, vals, pl, []jen.Code{count}, nil)
			})
		}
		if f.Access == parser.AccessCTL {
			for _, d := range f.In() {
				body = append(body, c.eachTarget(s, d, taskSel)...)
			}
			continue
		}
		if task, _ := inputKinds(f); !task {
			continue
		}
		body = append(body, c.chain(s, f, func(d *parser.Dep, t *parser.Target) []jen.Code {
			if t.Kind != parser.TargetTask {
				return []jen.Code{jen.Comment(targetText(t) + ": from memory")}
			}
			return taskSel(s, t)
		}, nil)...)
	}
	if len(body) == 0 {
		return nil
	}
	pre := append(c.globalsVar(s, jen.Id("tp")), c.bindLocals(s, jen.Id("l"))...)
	pre = append(pre, jen.Var().Id("n").Uint32(), jen.Var().Id("pl").Qual(rtPath, "Locals"))
	body = append(pre, append(body, jen.Return(jen.Id("n")))...)
	what := "the number of inputs"
	if c.readiness == "Mask" {
		what = "the set of flows"
	}
	return doc(c.fn("Goal"), jen.Func().Id(c.fn("Goal")).Params(tpLocals()...).Uint32().Block(body...),
		"returns %s that %s waits for from other tasks.", what, c.sig())
}

// prepare emits the input preparation (rt.TaskClass.Prepare): memory inputs are bound
// (collection elements, NEW copies from arenas, NULL), and inputs from tasks are checked to
// have arrived.
//
//	func <c>Prepare(task *rt.Task) error {
//		g := task.Taskpool().Globals().(*<Name>)
//		l := task.Locals()
//		if <guard> {
//			if err := task.BindElement(<flow>, g.<coll>, rt.Index{...}); err != nil {
//				return fmt.Errorf("<file.jdf:L:C>: flow <F>: %w", err)
//			}
//		} else if task.Flow(<flow>) == nil {
//			return ... // nothing arrived from the predecessor
//		}
//		return nil
//	}
func (c *classGen) prepare() jen.Code {
	s := c.scope(jen.Id("g"))
	var body []jen.Code
	fail := func(pos posT, flow string, msg string, err jen.Code) jen.Code {
		return jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit("%s: flow %s: "+msg+"%w"),
			jen.Lit(c.g.where(pos)), jen.Lit(flow), err))
	}
	for _, f := range c.tc.Flows {
		if f.Access == parser.AccessCTL {
			continue
		}
		fi := jen.Lit(f.Index)
		if len(f.In()) == 0 {
			if f.Access == parser.AccessWrite {
				var name jen.Code = jen.Lit("DEFAULT")
				for _, d := range f.Out() {
					if d.Attrs.Type != nil {
						name = c.arenaName(s, d.Attrs.Type)
						break
					}
				}
				body = append(body, jen.If(jen.Err().Op(":=").Id("task").Dot("BindNew").Call(fi, name),
					jen.Err().Op("!=").Nil()).Block(fail(f.NamePos, f.Name, "", jen.Err())))
			}
			continue
		}
		noData := func(d *parser.Dep, t *parser.Target) jen.Code {
			return jen.Return(jen.Qual("fmt", "Errorf").Call(
				jen.Lit("%s: flow %s: no data arrived from %s (it is outside its execution space, or it sent NULL)"),
				jen.Lit(c.g.where(t.Pos())), jen.Lit(f.Name), jen.Lit(targetText(t))))
		}
		none := []jen.Code{fail(f.NamePos, f.Name, "", jen.Qual(rtPath, "ErrNoInput"))}
		arrived := jen.Id("task").Dot("Flow").Call(fi).Op("==").Nil()
		task, memory := inputKinds(f)
		if task && !memory {
			// Every input is a task: evaluate the chain only to explain a missing arrival.
			chain := c.chain(s, f, func(d *parser.Dep, t *parser.Target) []jen.Code {
				return []jen.Code{noData(d, t)}
			}, none)
			body = append(body, jen.If(arrived).Block(chain...))
			continue
		}
		body = append(body, c.chain(s, f, func(d *parser.Dep, t *parser.Target) []jen.Code {
			switch t.Kind {
			case parser.TargetTask:
				return []jen.Code{jen.If(arrived.Clone()).Block(noData(d, t))}
			case parser.TargetNull:
				return []jen.Code{jen.Id("task").Dot("SetFlow").Call(fi, jen.Nil())}
			case parser.TargetNew:
				return []jen.Code{jen.If(jen.Err().Op(":=").Id("task").Dot("BindNew").Call(fi, c.arenaName(s, d.Attrs.Type)),
					jen.Err().Op("!=").Nil()).Block(fail(t.Pos(), f.Name, "", jen.Err()))}
			default:
				if t.Collection == nil {
					return nil
				}
				s.use.g = true
				return []jen.Code{jen.If(jen.Err().Op(":=").Id("task").Dot("BindElement").Call(
					fi, s.global(t.Collection), s.index(t.Args)),
					jen.Err().Op("!=").Nil()).Block(fail(t.Pos(), f.Name, "", jen.Err()))}
			}
		}, none)...)
	}
	if len(body) == 0 {
		return nil
	}
	var pre []jen.Code
	if s.use.g {
		pre = append(pre, jen.Id("g").Op(":=").Id("task").Dot("Taskpool").Call().Dot("Globals").Call().Assert(jen.Op("*").Id(c.g.name)))
	}
	if len(s.use.defs) > 0 {
		pre = append(pre, jen.Id("l").Op(":=").Id("task").Dot("Locals").Call())
		pre = append(pre, c.bindLocals(s, jen.Id("l"))...)
	}
	body = append(pre, append(body, jen.Return(jen.Nil()))...)
	return doc(c.fn("Prepare"), jen.Func().Id(c.fn("Prepare")).Params(jen.Id("task").Op("*").Qual(rtPath, "Task")).Error().Block(body...),
		"binds the memory inputs of %s and checks that its inputs from\n// other tasks arrived.", c.sig())
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

// successors emits the output iteration (rt.TaskClass.Successors).
//
//	func <c>Successors(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
//		if flows&<bit> != 0 {
//			if <guard> {
//				e.L[<slot>] = <arg>
//				if <T>Complete(tp, &e.L) {
//					e.Task(<flow>, <dep>, &<T>, <peer flow>)
//				} else {
//					e.Outside(<flow>, <dep>, &<T>, <peer flow>) // a single instance outside its space
//				}
//			}
//			e.Data(<flow>, <dep>, g.<coll>, rt.Index{...})
//		}
//	}
func (c *classGen) successors() jen.Code {
	return c.edges(parser.Out, "Successors", "reports the output dependencies of %s whose guards hold.")
}

// predecessors emits the input iteration (rt.TaskClass.Predecessors), for Verify: the
// selected input of each data flow, every holding input of each CTL flow.
func (c *classGen) predecessors() jen.Code {
	return c.edges(parser.In, "Predecessors", "reports the input dependencies of %s whose guards hold (for a data\n// flow, the one its input chain selects).")
}

func (c *classGen) edges(dir parser.Direction, role, what string) jen.Code {
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
						var miss jen.Code
						if !ranged {
							miss = dropped("Outside", fi, di, cls, jen.Lit(t.FlowRef.Index))
						}
						return c.peerCall(t, vals, peer,
							[]jen.Code{jen.Id("e").Dot("Task").Call(fi, di, cls, jen.Lit(t.FlowRef.Index))}, miss)
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
				return []jen.Code{jen.Comment(targetText(t))}
			}
		}
		var fb []jen.Code
		if dir == parser.In && f.Access != parser.AccessCTL {
			fb = c.chain(s, f, func(d *parser.Dep, t *parser.Target) []jen.Code {
				return emit(d)(s, t)
			}, []jen.Code{dropped("NoInput", fi)})
		} else {
			for _, d := range f.Deps {
				if d.Dir == dir {
					fb = append(fb, c.eachTarget(s, d, emit(d))...)
				}
			}
		}
		if len(fb) > 0 {
			body = append(body, jen.If(flowBit(f)).Block(fb...))
		}
	}
	if len(body) == 0 {
		return nil
	}
	body = append(append(c.globalsVar(s, jen.Id("tp")), c.bindLocals(s, jen.Id("l"))...), body...)
	params := append(tpLocals(), jen.Id("flows").Qual(rtPath, "FlowMask"), jen.Id("e").Op("*").Qual(rtPath, "Edges"))
	return doc(c.fn(role), jen.Func().Id(c.fn(role)).Params(params...).Block(body...), what, c.sig())
}
