package codegen

// One rt.TaskClass descriptor per JDF task class (docs/language.md, "What gen produces", rt/doc.go
// "The TaskClass contract"), then its small functions.
//
//	var <prefix><Class> rt.TaskClass
//
//	func init() {
//		<prefix><Class> = rt.TaskClass{Name: "<Class>", ID: <i>, Locals: ..., Params: ...,
//			Flows: ..., Space: <prefix><Class>Space, Complete: ..., Inputs: ..., Goal: ...,
//			Prepare: ..., Successors: ..., Predecessors: ..., Priority: ..., Affinity: ...,
//			Incarnations: []rt.Incarnation{...}}
//	}
//
// The descriptors are assigned in init because their functions refer to descriptors,
// possibly their own (a class that is its own successor), which Go would report as an
// initialization cycle in a variable initializer.

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/dave/jennifer/jen"
	"github.com/jdf2go/jdf2go/parser"
)

// classGen generates one task class.
type classGen struct {
	g  *generator
	tc *parser.TaskClass
	id string // identifier part: "POTRF", "Gemm"
	v  string // descriptor variable: "potrfPOTRF"

	readiness  string // "Counter" or "Mask"
	incs       []incarnation
	gpuMember  bool               // a GPU incarnation emits the GPU member type (gpubody.go)
	cpuMember  bool               // a CPU incarnation emits the CPU member type (incarnation.go)
	exported   []*parser.Property // class properties kept for Property
	descriptor jen.Code           // `<c> = rt.TaskClass{...}`, built by emit
}

// newClassGen prepares the generation of tc; ids holds the identifier parts taken by the
// classes before it.
func newClassGen(g *generator, tc *parser.TaskClass, ids map[string]bool) *classGen {
	c := &classGen{g: g, tc: tc, id: upperFirst(tc.Name), readiness: "Counter"}
	if isFileName(c.id) {
		c.id += "_"
	}
	for ids[c.id] {
		c.id += "_" // "gemm" and "Gemm" in one program
	}
	ids[c.id] = true
	c.v = g.pfx + c.id
	for _, d := range tc.Defs {
		if e := parser.RangeLocalError(tc, d); e != nil {
			g.diags = append(g.diags, e)
		}
	}
	c.attrs()
	for _, b := range tc.Bodies {
		if inc := c.newIncarnation(b); inc != nil {
			c.incs = append(c.incs, inc)
		}
	}
	if len(c.incs) == 0 && !g.diags.HasErrors() {
		g.errorf(tc.Pos(), "%s has no body that jdf2go can generate", tc.Name)
	}
	return c
}

// attrs interprets the class properties and warns about the ones rt has no use for.
func (c *classGen) attrs() {
	g, tc, a := c.g, c.tc, &c.tc.Attrs
	if a.MaskDeps {
		if why := c.maskImpossible(); why != "" {
			g.warnf(tc.Props.Pos(), "mask_deps: %s has %s; using counters", tc.Name, why)
		} else {
			c.readiness = "Mask"
		}
	}
	ignored := func(e parser.Expr, what string) {
		if e != nil {
			g.warnf(e.Pos(), "%s is not supported by jdf2go's runtime; ignored", what)
		}
	}
	ignored(a.HashStruct, "hash_struct")
	ignored(a.StartupFn, "startup_fn")
	ignored(a.FindDepsFn, "find_deps_fn")
	ignored(a.AllocDepsFn, "alloc_deps_fn")
	ignored(a.FreeDepsFn, "free_deps_fn")
	if p := tc.Props.Get("nb_local_tasks_fn"); p != nil {
		g.warnf(p.NamePos, "nb_local_tasks_fn is not supported by jdf2go's runtime; ignored")
	}
	// The dependency properties jdf2go cannot honour are check's to report
	// (parser.DepPropDiagnostics): gen never sees a Go file that has them.
	if a.Immediate {
		if p := tc.Props.Get("immediate"); p != nil {
			g.warnf(p.NamePos, "immediate is not supported by jdf2go's runtime; %s runs through the scheduler", tc.Name)
		}
	}
	known := map[string]bool{}
	for _, n := range classPropNames {
		known[n] = true
	}
	if tc.Props != nil {
		for _, p := range tc.Props.List {
			if !known[p.Name] {
				c.exported = append(c.exported, p)
			}
		}
	}
}

var classPropNames = []string{"high_priority", "immediate", "profile", "count_deps", "mask_deps", "time_estimate",
	"make_key_fn", "hash_struct", "startup_fn", "find_deps_fn", "alloc_deps_fn", "free_deps_fn", "nb_local_tasks_fn"}

// maskImpossible says why bit-mask readiness cannot track this class: a CTL flow that may
// receive several arrivals.
func (c *classGen) maskImpossible() string {
	for _, f := range c.tc.Flows {
		if f.Access != parser.AccessCTL {
			continue
		}
		ins := f.In()
		if len(ins) > 1 {
			return "CTL flow " + f.Name + " with several inputs"
		}
		for _, d := range ins {
			for _, t := range []*parser.Target{d.Then, d.Else} {
				if t != nil && hasRange(t, d) {
					return "a CTL gather on flow " + f.Name
				}
			}
		}
	}
	return ""
}

// fn names a generated function of the class: fn("Space") = "potrfPOTRFSpace".
func (c *classGen) fn(role string) string { return c.v + role }

// scope returns a scope for a function of the class where the taskpool struct is the Go
// variable gv (g in rt.TaskClass functions) and the definitions are Go variables bound on
// demand (bindLocals).
func (c *classGen) scope(gv jen.Code) *scope {
	if gv == nil {
		gv = jen.Id("tp")
	}
	s := &scope{g: c.g, class: c, ndefs: len(c.tc.Defs),
		defVar: map[*parser.Definition]jen.Code{}, namedVar: map[*parser.NamedRange]jen.Code{},
		use: &usage{defs: map[*parser.Definition]bool{}}}
	gvCode := gv
	s.global = func(gl *parser.Global) jen.Code { return jen.Add(gvCode).Dot(c.g.field(gl)) }
	s.inline = &inlineSite{tp: gvCode}
	for _, d := range c.tc.Defs {
		s.defVar[d] = jen.Id(goVar(d.Name))
	}
	return s
}

// bindLocals returns `a, b := l[i], l[j]` for the definitions s used, in slot order.
func (c *classGen) bindLocals(s *scope, l jen.Code) []jen.Code {
	var used []*parser.Definition
	for d := range s.use.defs {
		used = append(used, d)
	}
	if len(used) == 0 {
		return nil
	}
	sort.Slice(used, func(i, j int) bool { return used[i].Index < used[j].Index })
	var names, vals []jen.Code
	for _, d := range used {
		names = append(names, jen.Id(goVar(d.Name)))
		vals = append(vals, jen.Add(l).Index(jen.Lit(d.Index)))
	}
	return []jen.Code{jen.List(names...).Op(":=").List(vals...)}
}

// globalsVar returns `g := tp.Globals().(*<Name>)` when s used a global.
func (c *classGen) globalsVar(s *scope, tp jen.Code) []jen.Code {
	if !s.use.g {
		return nil
	}
	return []jen.Code{jen.Id("g").Op(":=").Add(tp).Dot("Globals").Call().Assert(jen.Op("*").Id(c.g.name))}
}

// bind returns the bindings s used, in one statement: `g, a, b := tp.Globals().(*<Name>),
// l[i], l[j]` (globalsVar and bindLocals together).
func (c *classGen) bind(s *scope, tp, l jen.Code) []jen.Code {
	var names, vals []jen.Code
	if s.use.g {
		names = append(names, jen.Id("g"))
		vals = append(vals, jen.Add(tp).Dot("Globals").Call().Assert(jen.Op("*").Id(c.g.name)))
	}
	if ls := c.bindLocals(s, l); len(ls) > 0 {
		if len(names) == 0 {
			return ls
		}
		var used []*parser.Definition
		for d := range s.use.defs {
			used = append(used, d)
		}
		sort.Slice(used, func(i, j int) bool { return used[i].Index < used[j].Index })
		for _, d := range used {
			names = append(names, jen.Id(goVar(d.Name)))
			vals = append(vals, jen.Add(l).Index(jen.Lit(d.Index)))
		}
	}
	if len(names) == 0 {
		return nil
	}
	return []jen.Code{jen.List(names...).Op(":=").List(vals...)}
}

// tpLocals are the parameters of most rt.TaskClass functions.
func tpLocals() []jen.Code {
	return []jen.Code{jen.Id("tp").Op("*").Qual(rtPath, "Taskpool"), jen.Id("l").Op("*").Qual(rtPath, "Locals")}
}

// emit builds the descriptor of the class (c.descriptor) and returns its functions.
func (c *classGen) emit() []jen.Code {
	tc := c.tc
	var locals, params, flows []jen.Code
	for _, d := range tc.Defs {
		locals = append(locals, jen.Lit(d.Name))
	}
	for _, p := range tc.Params {
		if p.Def != nil {
			params = append(params, jen.Lit(p.Def.Index))
		}
	}
	for _, fl := range tc.Flows {
		flows = append(flows, jen.Values(jen.Id("Name").Op(":").Lit(fl.Name),
			jen.Id("Access").Op(":").Qual(rtPath, accessName(fl.Access))))
	}
	// Name, ID, Locals and Params on one line.
	fields := []jen.Code{
		jen.Id("Name").Op(":").Lit(tc.Name).Op(",").Id("ID").Op(":").Lit(tc.Index).Op(",").
			Id("Locals").Op(":").Index().String().Values(locals...).Op(",").
			Id("Params").Op(":").Index().Int().Values(params...),
	}
	if len(flows) > 0 {
		fields = append(fields, jen.Id("Flows").Op(":").Index().Qual(rtPath, "Flow").ValuesFunc(func(gr *jen.Group) {
			for _, fl := range flows {
				if len(flows) > 3 {
					gr.Line().Add(fl)
				} else {
					gr.Add(fl)
				}
			}
			if len(flows) > 3 {
				gr.Line()
			}
		}))
	}
	if c.readiness == "Mask" {
		fields = append(fields, jen.Id("Readiness").Op(":").Qual(rtPath, "Mask"))
	}
	if tc.Attrs.HighPriority {
		fields = append(fields, jen.Id("HighPriority").Op(":").True())
	}
	if tc.Attrs.ProfileOff {
		fields = append(fields, jen.Id("NoTrace").Op(":").True())
	}

	decls, inputs := c.inputs()
	role := func(field, name string, decl jen.Code) {
		if decl == nil {
			return
		}
		fields = append(fields, jen.Id(field).Op(":").Id(name))
		decls = append(decls, decl, jen.Line())
	}
	// The functions that only the descriptor refers to are function literals in it: the
	// field names what each one is for.
	lit := func(field string, fn jen.Code) {
		if fn != nil {
			fields = append(fields, jen.Id(field).Op(":").Add(fn))
		}
	}
	lit("Space", c.space())
	role("Complete", c.fn("Complete"), c.complete())
	role("OffStep", c.fn("OffStep"), c.offStep())
	if inputs != nil {
		fields = append(fields, inputs)
	}
	role("Goal", c.fn("Goal"), c.goal())
	role("Prepare", c.fn("Prepare"), c.prepare())
	lit("Successors", c.successors())
	lit("Predecessors", c.predecessors())
	lit("Priority", c.priority())
	lit("Affinity", c.affinity())
	role("Key", c.fn("Key"), c.key())
	if te := c.timeEstimate(); te != nil {
		fields = append(fields, jen.Id("TimeEstimate").Op(":").Add(te))
	}
	var incs []jen.Code
	for _, inc := range c.incs {
		incs = append(incs, jen.Line().Values(inc.value()...))
		decls = append(decls, inc.decls()...)
	}
	incs = append(incs, jen.Line())
	fields = append(fields, jen.Id("Incarnations").Op(":").Index().Qual(rtPath, "Incarnation").Values(incs...))

	c.descriptor = jen.Id(c.v).Op("=").Qual(rtPath, "TaskClass").ValuesFunc(func(gr *jen.Group) {
		for _, fl := range fields {
			gr.Line().Add(fl)
		}
		gr.Line()
	})
	return decls
}

// descriptorVars declares the rt.TaskClass variables of the classes. The init functions
// that assign them, one per class, hold the descriptors emit builds (generate writes them): in
// init, because their functions refer to one another.
func (g *generator) descriptorVars(p *part) {
	spec := func(c *classGen) jen.Code {
		return jen.Id(c.v).Qual(rtPath, "TaskClass").Comment(c.tc.Name + " at " + g.where(c.tc.Pos()))
	}
	decl := func(specs []jen.Code) jen.Code { return jen.Var().Defs(specs...) }
	// The placeholder sets the column of the types in every batch: its name is as wide as the
	// widest.
	width := 0
	for _, c := range g.classes {
		width = max(width, utf8.RuneCountInString(c.v))
	}
	vars := &list{n: len(g.classes), elem: func(i int) jen.Code { return spec(g.classes[i]) },
		ph: jen.Id(strings.Repeat("_", width)).Qual(rtPath, "TaskClass").Comment("-"), mark: "// -", wrap: decl}
	items := jen.NewFile("")
	items.Commentf("The task classes of %s, assigned in init: their functions refer to one another.", g.file)
	if len(g.classes) == 0 {
		items.Add(decl(nil))
		items.Line()
		g.render(p, items)
		return
	}
	items.Add(decl([]jen.Code{vars.ph}))
	items.Line()
	g.renderLists(p, items, vars)
}

func accessName(a parser.Access) string {
	switch a {
	case parser.AccessRead:
		return "Read"
	case parser.AccessWrite:
		return "Write"
	case parser.AccessCTL:
		return "CTL"
	}
	return "RW"
}

// space returns the enumeration of the execution space, a function literal in the
// descriptor: nested loops over the definitions in order, filling every slot.
//
//	Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
//		g := tp.Globals().(*<Name>)
//		for <p> := <from>; <p> <= <to>; <p> += <step> {
//			l[<i>] = <p>
//			<local> := <expr>
//			l[<j>] = <local>
//			...
//				if !yield(l) {
//					return
//				}
//		}
//	},
func (c *classGen) space() jen.Code {
	s := c.scope(jen.Id("g"))
	defs := c.tc.Defs
	var build func(i int) []jen.Code
	build = func(i int) []jen.Code {
		if i == len(defs) {
			return []jen.Code{jen.If(jen.Op("!").Id("yield").Call(jen.Id("l"))).Block(jen.Return())}
		}
		d := defs[i]
		ds := *s
		ds.ndefs = i
		v := goVar(d.Name)
		store := jen.Id("l").Index(jen.Lit(i)).Op("=").Id(v)
		switch val := d.Value.(type) {
		case *parser.RangeExpr:
			return ds.forRange(v, val, c.tc.Name, append([]jen.Code{store}, build(i+1)...))
		case *parser.LocalSetExpr:
			return ds.forNamed(val.Named, func(ns *scope) []jen.Code {
				return append([]jen.Code{jen.Id(v).Op(":=").Add(ns.expr(val.X, parser.KindInt)), store}, build(i+1)...)
			})
		default:
			return append([]jen.Code{jen.Id(v).Op(":=").Add(ds.expr(val, parser.KindInt)), store}, build(i+1)...)
		}
	}
	body := build(0)
	body = append(c.globalsVar(s, jen.Id("tp")), body...)
	return jen.Func().Params(append(tpLocals(),
		jen.Id("yield").Func().Params(jen.Op("*").Qual(rtPath, "Locals")).Bool())...).Block(body...)
}

// complete emits the bounds check of an instance named from outside, computing its derived
// locals.
//
//	func <c>Complete(tp *rt.Taskpool, l *rt.Locals) bool {
//		<p> := l[<i>]
//		if <p> < <from> || <p> > <to> { return false }
//		l[<j>] = <local expr>
//		return true
//	}
func (c *classGen) complete() jen.Code {
	s := c.scope(jen.Id("g"))
	defs := c.tc.Defs
	type part struct {
		value jen.Code // derived local value, or nil for a parameter
		check jen.Code // out-of-space condition, or nil
		in    jen.Code // its negation: the in-space condition
	}
	derived := false
	parts := make([]part, len(defs))
	for i, d := range defs {
		ds := *s
		ds.ndefs = i
		v := jen.Id(goVar(d.Name))
		switch val := d.Value.(type) {
		case *parser.RangeExpr:
			if d.Param == nil {
				continue
			}
			from, to, step := ds.bounds(val)
			cond := jen.Add(v).Op("<").Add(from).Op("||").Add(v).Op(">").Add(to)
			in := jen.Add(v).Op(">=").Add(from).Op("&&").Add(v).Op("<=").Add(to)
			if step != nil {
				cond = cond.Op("||").Parens(jen.Add(v).Op("-").Add(from)).Op("%").Add(step).Op("!=").Lit(0)
				in = in.Op("&&").Parens(jen.Add(v).Op("-").Add(from)).Op("%").Add(step).Op("==").Lit(0)
			}
			parts[i].check, parts[i].in = cond, in
			s.use.defs[d] = true
		case *parser.LocalSetExpr:
			// A set of values: trusted, as jdf2c does (docs/language.md, "Dependencies").
		default:
			x := paren(ds.conv(ds.tr(val, parser.KindInt), parser.KindInt), precCompare+1)
			if d.Param != nil {
				parts[i].check, parts[i].in = jen.Add(v).Op("!=").Add(x.code), jen.Add(v).Op("==").Add(x.code)
				s.use.defs[d] = true
			} else {
				parts[i].value = ds.expr(val, parser.KindInt)
				derived = true
			}
		}
	}
	if !derived {
		// Parameters only: one conjunction of their bounds.
		var conds []jen.Code
		for _, p := range parts {
			if p.in != nil {
				conds = append(conds, p.in)
			}
		}
		ret := jen.Return(jen.True())
		if len(conds) > 0 {
			ret = jen.Return(jen.Add(conds[0]))
			for _, cnd := range conds[1:] {
				ret = ret.Op("&&").Add(cnd)
			}
		}
		body := append(c.bind(s, jen.Id("tp"), jen.Id("l")), ret)
		return doc(c.fn("Complete"), jen.Func().Id(c.fn("Complete")).Params(tpLocals()...).Bool().Block(body...),
			"reports whether the instance of %s whose parameters are in l lies in its execution space.", c.tc.Name)
	}
	var body []jen.Code
	for i, d := range defs {
		v := goVar(d.Name)
		p := parts[i]
		switch {
		case d.Param != nil:
			if s.use.defs[d] {
				body = append(body, jen.Id(v).Op(":=").Id("l").Index(jen.Lit(i)))
			}
			if p.check != nil {
				body = append(body, jen.If(p.check).Block(jen.Return(jen.False())))
			}
		case s.use.defs[d]:
			body = append(body, jen.Id(v).Op(":=").Add(p.value), jen.Id("l").Index(jen.Lit(i)).Op("=").Id(v))
		default:
			body = append(body, jen.Id("l").Index(jen.Lit(i)).Op("=").Add(p.value))
		}
	}
	body = append(body, jen.Return(jen.True()))
	body = append(c.globalsVar(s, jen.Id("tp")), body...)
	return doc(c.fn("Complete"), jen.Func().Id(c.fn("Complete")).Params(tpLocals()...).Bool().Block(body...),
		"reports whether the instance of %s whose parameters are in l lies in its execution\n// space, and computes its derived locals.", c.tc.Name)
}

// bounds translates the bounds of a parameter's range for a comparison, and its step, nil
// when it is 1.
func (s *scope) bounds(r *parser.RangeExpr) (from, to, step jen.Code) {
	from = paren(s.conv(s.tr(r.From, parser.KindInt), parser.KindInt), precCompare+1).code
	to = paren(s.conv(s.tr(r.To, parser.KindInt), parser.KindInt), precCompare+1).code
	if st := r.Step; st != nil {
		if lit, ok := st.(*parser.IntLit); !ok || lit.Value != 1 {
			step = paren(s.conv(s.tr(st, parser.KindInt), parser.KindInt), precUnary).code
		}
	}
	return from, to, step
}

// offStep emits, for a class with a range whose step is not 1, the function that names the
// parameter of an instance within every bound but between the steps of its range (Verify
// and the stall report say so; PaRSEC checks only the bounds). nil for other classes.
//
//	func <c>OffStep(tp *rt.Taskpool, l *rt.Locals) string {
//		off := ""
//		<p> := l[<i>]
//		if <p> < <from> || <p> > <to> { return "" }
//		if off == "" && (<p> - <from>) % <step> != 0 { off = "<p>" }
//		<local> := <expr>                  // a derived local a later bound uses
//		return off
//	}
func (c *classGen) offStep() jen.Code {
	stepped := false
	for _, d := range c.tc.Defs {
		if r, ok := d.Value.(*parser.RangeExpr); ok && d.Param != nil && r.Step != nil {
			if lit, ok := r.Step.(*parser.IntLit); !ok || lit.Value != 1 {
				stepped = true
			}
		}
	}
	if !stepped {
		return nil
	}
	s := c.scope(jen.Id("g"))
	defs := c.tc.Defs
	stmts := make([][]jen.Code, len(defs))
	values := make([]jen.Code, len(defs))
	// Later definitions first: a derived local is bound only when a later bound uses it.
	for i := len(defs) - 1; i >= 0; i-- {
		d := defs[i]
		ds := *s
		ds.ndefs = i
		v := jen.Id(goVar(d.Name))
		switch val := d.Value.(type) {
		case *parser.RangeExpr:
			if d.Param == nil {
				continue
			}
			from, to, step := ds.bounds(val)
			st := []jen.Code{jen.If(jen.Add(v).Op("<").Add(from).Op("||").Add(v).Op(">").Add(to)).Block(jen.Return(jen.Lit("")))}
			if step != nil {
				st = append(st, jen.If(jen.Id("off").Op("==").Lit("").Op("&&").Parens(jen.Add(v).Op("-").Add(from)).Op("%").Add(step).Op("!=").Lit(0)).Block(
					jen.Id("off").Op("=").Lit(d.Name)))
			}
			stmts[i] = st
			s.use.defs[d] = true
		case *parser.LocalSetExpr:
		default:
			if d.Param != nil {
				x := paren(ds.conv(ds.tr(val, parser.KindInt), parser.KindInt), precCompare+1)
				stmts[i] = []jen.Code{jen.If(jen.Add(v).Op("!=").Add(x.code)).Block(jen.Return(jen.Lit("")))}
				s.use.defs[d] = true
			} else if s.use.defs[d] {
				values[i] = ds.expr(val, parser.KindInt)
			}
		}
	}
	body := append(c.globalsVar(s, jen.Id("tp")), jen.Id("off").Op(":=").Lit(""))
	for i, d := range defs {
		switch {
		case d.Param != nil:
			if s.use.defs[d] {
				body = append(body, jen.Id(goVar(d.Name)).Op(":=").Id("l").Index(jen.Lit(i)))
			}
			body = append(body, stmts[i]...)
		case values[i] != nil:
			body = append(body, jen.Id(goVar(d.Name)).Op(":=").Add(values[i]))
		}
	}
	body = append(body, jen.Return(jen.Id("off")))
	return doc(c.fn("OffStep"), jen.Func().Id(c.fn("OffStep")).Params(tpLocals()...).String().Block(body...),
		"names the parameter of the instance of %s in l that lies between the steps of its\n// range while every parameter is within its bounds, or returns \"\".", c.tc.Name)
}

// priority returns the priority expression as a function literal, or nil.
func (c *classGen) priority() jen.Code {
	if c.tc.Priority == nil {
		return nil
	}
	s := c.scope(jen.Id("g"))
	s.hoist = &flatFunc{}
	val := s.expr(c.tc.Priority, parser.KindInt)
	body := append(c.bind(s, jen.Id("tp"), jen.Id("l")), c.g.lineDirective(c.tc.Priority.Pos()))
	body = append(body, s.hoist.stmts...)
	body = append(body, jen.Return(jen.Int32().Call(val)), c.g.restoreDirective())
	return jen.Func().Params(tpLocals()...).Int32().Block(body...)
}

// affinity returns the owner of an instance as a function literal, or nil.
func (c *classGen) affinity() jen.Code {
	a := c.tc.Affinity
	if a == nil || a.Global == nil {
		return nil
	}
	s := c.scope(jen.Id("g"))
	ix := s.index(a.Args)
	coll := s.global(a.Global)
	s.use.g = true
	body := append(c.bind(s, jen.Id("tp"), jen.Id("l")),
		c.g.lineDirective(a.Pos()),
		jen.Return(coll, ix),
		c.g.restoreDirective())
	return jen.Func().Params(tpLocals()...).Params(jen.Qual(rtPath, "Collection"), jen.Qual(rtPath, "Index")).Block(body...)
}

// key emits the user key function (make_key_fn), called with the parameters in order.
func (c *classGen) key() jen.Code {
	fn := c.tc.Attrs.MakeKeyFn
	if fn == nil {
		return nil
	}
	s := c.scope(jen.Id("g"))
	var call jen.Code
	switch fn.(type) {
	case *parser.InlineCode, *parser.StringLit:
		call = s.inlineTyped(fn, jen.Uint64())
	default:
		// PaRSEC's make_key_fn gets the taskpool and the assignments: here the generated
		// taskpool and the parameters, in order.
		s.use.g = true
		args := []jen.Code{jen.Id("g")}
		for _, p := range c.tc.Params {
			if p.Def != nil {
				s.use.defs[p.Def] = true
				args = append(args, jen.Id(goVar(p.Name)))
			}
		}
		call = jen.Uint64().Call(jen.Add(s.tr(fn, parser.KindOpaque).code).Call(args...))
	}
	body := append(c.bind(s, jen.Id("tp"), jen.Id("l")),
		c.g.lineDirective(fn.Pos()), jen.Return(call), c.g.restoreDirective())
	return doc(c.fn("Key"), jen.Func().Id(c.fn("Key")).Params(tpLocals()...).Uint64().Block(body...),
		"returns the key of %s from make_key_fn.", c.sig())
}

// timeEstimate returns the TimeEstimate field value: the named function itself (a
// func(*rt.Task, rt.Device) int64), or a function literal around inline code, which sees
// the locals, task and dev.
func (c *classGen) timeEstimate() jen.Code {
	te := c.tc.Attrs.TimeEstimate
	if te == nil {
		return nil
	}
	switch te.(type) {
	case *parser.InlineCode, *parser.StringLit:
		s := c.scope(jen.Id("g"))
		s.inline.extra = []inlineParam{
			{name: "task", typ: jen.Op("*").Qual(rtPath, "Task"), value: jen.Id("task")},
			{name: "dev", typ: jen.Qual(rtPath, "Device"), value: jen.Id("dev")},
		}
		call := s.inlineTyped(te, jen.Int64())
		body := append(append([]jen.Code{
			jen.Id("g").Op(":=").Id("task").Dot("Taskpool").Call().Dot("Globals").Call().Assert(jen.Op("*").Id(c.g.name))},
			c.bindLocals(s, jen.Id("task").Dot("Locals").Call())...), jen.Return(call))
		return jen.Func().Params(jen.Id("task").Op("*").Qual(rtPath, "Task"), jen.Id("dev").Qual(rtPath, "Device")).Int64().Block(body...)
	}
	s := c.scope(jen.Id("g"))
	return s.tr(te, parser.KindOpaque).code
}

// sig formats the class with its parameters: "TRSM(m, k)".
func (c *classGen) sig() string {
	out := c.tc.Name + "("
	for i, p := range c.tc.Params {
		if i > 0 {
			out += ", "
		}
		out += p.Name
	}
	return out + ")"
}

// doc puts the doc comment "<name> <text>" above the declaration of function name.
func doc(name string, decl *jen.Statement, format string, args ...any) jen.Code {
	text := name + " " + fmt.Sprintf(format, args...)
	var st *jen.Statement
	for _, line := range strings.Split(text, "\n// ") {
		if st == nil {
			st = jen.Comment(line)
		} else {
			st = st.Line().Comment(line)
		}
	}
	return st.Line().Add(decl)
}
