package codegen

// Incarnations: one per BODY, tried in BODY order (docs/language.md, "Bodies"). A CPU body
// (no type, type=CPU, or any type that is not a GPU one, such as RECURSIVE) runs in place in
// its hook when nothing stands in the way (hook.go). Otherwise it becomes two functions: a
// hook that unpacks the task, and the body itself with the globals it mentions (tp when it
// mentions tp), the locals and the typed flow values as parameters:
//
//	// <c>Hook runs the CPU body of <Class>(<params>).
//	func <c>Hook(task *rt.Task) error {
//		g, l := rt.TaskGlobals[*<Name>](task)
//		var err error // one flow: <F>, err := rt.FlowValue[<gotype>](task, <flow>)
//		<F>, ... := rt.FlowAs[<gotype>](task, <flow>, &err), ... // up to three a line
//		if err != nil {
//			return err
//		}
//		return <c>Body(task, g.<global>, ..., l[<i>], ..., <F>, ...)
//	}
//
//	// <c>Body is the CPU body of <Class>(<params>) at <file.jdf:L:C>.
//	func <c>Body(task *rt.Task, <global> <type>, ..., <local> int, ..., <F> <gotype>, ...) error {
//	//line <file.jdf>:<L>
//		<body text>
//	//line <file_jdf.go>:<restored>
//		return nil        // unless the body ends in a terminating statement
//	}
//
// A batched CPU body (batch = true | manual) also gets the class's member type <c>CPU and
// its constructor, the policy <c>Batch (batch.go) and its callback
//
//	func <c>Match(cand, head *rt.Task) rt.BatchAction { return <c>Batch(head).Match(cand, head) }
//
// and the hook of batch = true first collects the ring:
//
//	if _, err := task.CollectBatch(<c>Match); err != nil {
//		return err
//	}
//
// the body starts with member (and match for batch = manual; see ringNames), and the
// incarnation has Batch: true and, when the class has data flows, Admit (the error of
// <c>MemberCPU).
//
// GPU bodies (type=CUDA or GPU) plug in through incarnationMakers (gpubody.go): a maker
// returns an incarnation whose decls are the top-level functions it needs (the submit hook,
// the body, the batch-match policy) and whose value is the fields of its rt.Incarnation
// literal (Kind: rt.GPU or rt.CUDA, Device: the rt/gpu descriptor, Select for the device
// property, Evaluate). HIP bodies are skipped with a warning (no HIP backend).

import (
	"go/scanner"
	"go/token"
	"regexp"
	"strconv"

	"github.com/dave/jennifer/jen"
	"github.com/jdf2go/jdf2go/parser"
)

// callsScratch matches a CPU body that calls Scratch (task.Scratch, or through a value of
// the task): its incarnation declares Scratch, so that rt names the worker on the task.
var callsScratch = regexp.MustCompile(`\bScratch\s*\(`)

// incarnation generates one BODY.
type incarnation interface {
	// decls returns the top-level declarations of the incarnation.
	decls() []jen.Code
	// value returns the fields of its rt.Incarnation composite literal.
	value() []jen.Code
}

// incarnationMakers maps a body's device (parser.Body.Device) to its generator. A nil
// result without an error diagnostic means the body is skipped. Devices without an entry
// get a CPU hook.
var incarnationMakers = map[string]func(c *classGen, b *parser.Body) incarnation{
	"CUDA": newGPUIncarnation,
	"HIP":  noHIP,
	"GPU":  newGPUIncarnation,
}

func (c *classGen) newIncarnation(b *parser.Body) incarnation {
	if mk, ok := incarnationMakers[b.Device()]; ok {
		return mk(c, b)
	}
	return newCPUIncarnation(c, b)
}

// cpuIncarnation is a CPU hook and its body function.
type cpuIncarnation struct {
	c      *classGen
	b      *parser.Body
	hook   string
	body   string
	batch  string // the batch-match policy of a batched body (batch.go)
	match  string // its batch-match callback
	member bool   // this incarnation emits the class's CPU member type
	gb     goBody
	// perTask: batch = true on a body that does not walk its ring; it runs unbatched.
	perTask bool
}

func newCPUIncarnation(c *classGen, b *parser.Body) incarnation {
	gb, ok := c.g.parseBody(b.Text, b.TextPos)
	if !ok {
		return nil
	}
	suffix := ""
	if b.Device() != "CPU" {
		suffix = b.Device()
	}
	inc := &cpuIncarnation{c: c, b: b, gb: gb}
	// PaRSEC's batch = true only permits batching: a CPU body written for one task runs for
	// each task. Collecting a ring for a body that never walks it would complete every
	// member with the head's work alone.
	if b.Attrs.Batch == parser.BatchOn && !gb.ring {
		inc.perTask = true
		c.g.warnf(b.Pos(), "BODY [batch = true] of %s: the CPU body does not walk task.Ring(), so it runs once per task, unbatched", c.tc.Name)
	}
	for n := 1; n == 1 || c.hasIncarnation(inc.hook); n++ {
		sfx := suffix
		if n > 1 {
			sfx += strconv.Itoa(n)
		}
		inc.hook, inc.body, inc.batch, inc.match = c.fn("Hook"+sfx), c.fn("Body"+sfx), c.fn("Batch"+sfx), c.fn("Match"+sfx)
	}
	if inc.batched() {
		c.reserveBodyNames(cpuRing)
		inc.member = !c.cpuMember
		c.cpuMember = true
	}
	return inc
}

func (inc *cpuIncarnation) batched() bool {
	return inc.b.Attrs.Batch != parser.BatchOff && !inc.perTask
}

// hasIncarnation reports whether an incarnation generated so far has the hook hook.
func (c *classGen) hasIncarnation(hook string) bool {
	for _, i := range c.incs {
		switch i := i.(type) {
		case *cpuIncarnation:
			if i.hook == hook {
				return true
			}
		case *gpuIncarnation:
			if i.names.submit == hook {
				return true
			}
		}
	}
	return false
}

// hookVar names the variable of a flow value in a hook, away from the hook's own
// variables (the body function receives it under the flow's name).
func hookVar(flow string) string {
	switch flow {
	case "g", "l", "err", "tp", "task":
		return flow + "_"
	}
	return userParam(flow)
}

// bodyGlobals returns the globals a body of the class can see: all of them but those a
// definition or a data flow of the class hides.
func (c *classGen) bodyGlobals() []*parser.Global { return parser.BodyGlobals(c.g.prog, c.tc) }

// usedGlobals returns the globals a body receives: those it can see and whose name it
// mentions (bodyIdents).
func (c *classGen) usedGlobals(names map[string]bool) []*parser.Global {
	var out []*parser.Global
	for _, gl := range c.bodyGlobals() {
		if names[gl.Name] {
			out = append(out, gl)
		}
	}
	return out
}

// bodyIdents returns the identifiers that Go code text may refer to: every identifier
// token but the field or method names after a period. A name it returns may still be
// unused (a struct literal's key, a local that hides it); one it omits is never referred to.
func bodyIdents(text string) map[string]bool {
	var sc scanner.Scanner
	fset := token.NewFileSet()
	f := fset.AddFile("", -1, len(text))
	sc.Init(f, []byte(text), nil, 0)
	out := map[string]bool{}
	prev := token.ILLEGAL
	for {
		_, tok, lit := sc.Scan()
		if tok == token.EOF {
			return out
		}
		if tok == token.IDENT && prev != token.PERIOD {
			out[lit] = true
		}
		prev = tok
	}
}

func dataFlows(tc *parser.TaskClass) []*parser.Flow {
	var out []*parser.Flow
	for _, f := range tc.Flows {
		if f.Access != parser.AccessCTL {
			out = append(out, f)
		}
	}
	return out
}

// merged returns the statements of the hook with the body in place (hook.go), or false.
func (inc *cpuIncarnation) merged() ([]jen.Code, bool) {
	c, g := inc.c, inc.c.g
	globals, defs := c.hookBinds(bodyIdents(inc.b.Text))
	flows := dataFlows(c.tc)
	var flowNames []string
	for _, f := range flows {
		flowNames = append(flowNames, userParam(f.Name))
	}
	used, uses, ok := inPlace(inc.b.Text, []string{"g", "l", "err"}, append(globals, defs...), flowNames)
	if !ok {
		return nil, false
	}
	var hook []jen.Code
	if inc.b.Attrs.Batch == parser.BatchOn && inc.batched() {
		hook = append(hook, inc.collect())
	}
	ug, ul := usedBinds(used, globals)
	hook = append(hook, c.globalsStmt(jen.Id("task"), len(ug) > 0, len(ul) > 0)...)
	hook = append(hook, bindStmts(used)...)
	// Every data flow's type is checked, used or not, as rt checks a body function's.
	v := func(f string) jen.Code {
		if uses[userParam(f)] {
			return jen.Id(userParam(f))
		}
		return jen.Id("_")
	}
	if len(flows) == 1 {
		f := flows[0]
		val := jen.Qual(rtPath, "FlowValue").Types(jen.Op(f.GoType)).Call(jen.Id("task"), jen.Lit(f.Index))
		if uses[userParam(f.Name)] {
			hook = append(hook, jen.List(v(f.Name), jen.Err()).Op(":=").Add(val),
				jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())))
		} else {
			hook = append(hook, jen.If(jen.List(jen.Id("_"), jen.Err()).Op(":=").Add(val), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())))
		}
	} else if len(flows) > 1 {
		hook = append(hook, jen.Var().Err().Error())
		for i := 0; i < len(flows); i += 3 { // at most three values a line
			var names, vals []jen.Code
			def := false
			for _, f := range flows[i:min(i+3, len(flows))] {
				names = append(names, v(f.Name))
				vals = append(vals, jen.Qual(rtPath, "FlowAs").Types(jen.Op(f.GoType)).Call(jen.Id("task"), jen.Lit(f.Index), jen.Op("&").Err()))
				def = def || uses[userParam(f.Name)]
			}
			op := "="
			if def {
				op = ":="
			}
			hook = append(hook, jen.List(names...).Op(op).List(vals...))
		}
		hook = append(hook, jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())))
	}
	if inc.batched() {
		hook = append(hook, inc.ringNames(bodyIdents(inc.b.Text))...)
	}
	taken := map[string]bool{"task": true, "g": true, "l": true, "err": true, "member": true, "match": true}
	for _, b := range append(globals, defs...) {
		taken[b.name] = true
	}
	for _, n := range flowNames {
		taken[n] = true
	}
	hook = append(hook, g.userCode(unwrap(inc.b.Text, inc.b.TextPos, taken))...)
	hook = append(hook, g.restoreDirective())
	if !inc.gb.terminates {
		hook = append(hook, jen.Return(jen.Nil()))
	}
	return hook, true
}

// collect is the first statement of the hook of a body with batch = true: it collects the
// ring.
func (inc *cpuIncarnation) collect() jen.Code {
	return jen.If(
		jen.List(jen.Id("_"), jen.Err()).Op(":=").Id("task").Dot("CollectBatch").Call(jen.Id(inc.match)),
		jen.Err().Op("!=").Nil(),
	).Block(jen.Return(jen.Err()))
}

func (inc *cpuIncarnation) decls() []jen.Code {
	c, g := inc.c, inc.c.g
	what := "CPU body"
	if inc.b.Device() != "CPU" {
		what = inc.b.Device() + " body (a CPU hook)"
	}
	var out []jen.Code
	if inc.member {
		out = append(out, c.memberDecls(cpuRing)...)
	}
	stmts, merged := inc.merged()
	if merged {
		out = append(out,
			doc(inc.hook, jen.Func().Id(inc.hook).Params(jen.Id("task").Op("*").Qual(rtPath, "Task")).Error().Block(stmts...),
				"runs the %s of %s at %s.", what, c.sig(), g.where(inc.b.Pos())),
			jen.Line())
		return append(out, inc.batchDecls()...)
	}
	tc := c.tc
	// The hook.
	l := jen.Id("l")
	if len(tc.Defs) == 0 {
		l = jen.Id("_")
	}
	names := bodyIdents(inc.b.Text)
	var args, params []jen.Code
	if names["tp"] {
		args = append(args, jen.Id("g"))
		params = append(params, jen.Id("tp").Op("*").Id(g.name))
	}
	args = append(args, jen.Id("task"))
	params = append(params, jen.Id("task").Op("*").Qual(rtPath, "Task"))
	globals := c.usedGlobals(names)
	gv := jen.Id("g")
	if len(globals) == 0 && !names["tp"] {
		gv = jen.Id("_")
	}
	var hook []jen.Code
	if len(tc.Defs) > 0 || len(globals) > 0 || names["tp"] {
		hook = append(hook, jen.List(gv, l).Op(":=").Qual(rtPath, "TaskGlobals").Types(jen.Op("*").Id(g.name)).Call(jen.Id("task")))
	}
	for _, gl := range globals {
		args = append(args, jen.Id("g").Dot(g.field(gl)))
		params = append(params, jen.Id(userParam(gl.Name)).Add(goType(gl)))
	}
	for _, d := range tc.Defs {
		args = append(args, jen.Id("l").Index(jen.Lit(d.Index)))
		params = append(params, jen.Id(userParam(d.Name)).Int())
	}
	if flows := dataFlows(tc); len(flows) == 1 {
		f, v := flows[0], hookVar(flows[0].Name)
		hook = append(hook,
			jen.List(jen.Id(v), jen.Err()).Op(":=").Qual(rtPath, "FlowValue").Types(jen.Op(f.GoType)).Call(jen.Id("task"), jen.Lit(f.Index)),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())))
		args = append(args, jen.Id(v))
		params = append(params, jen.Id(userParam(f.Name)).Op(f.GoType))
	} else if len(flows) > 1 {
		hook = append(hook, jen.Var().Err().Error())
		var names, vals []jen.Code
		flush := func() {
			if len(names) > 0 {
				hook = append(hook, jen.List(names...).Op(":=").List(vals...))
				names, vals = nil, nil
			}
		}
		for i, f := range flows {
			if i%3 == 0 {
				flush() // at most three values a line
			}
			v := hookVar(f.Name)
			names = append(names, jen.Id(v))
			vals = append(vals, jen.Qual(rtPath, "FlowAs").Types(jen.Op(f.GoType)).Call(jen.Id("task"), jen.Lit(f.Index), jen.Op("&").Err()))
			args = append(args, jen.Id(v))
			params = append(params, jen.Id(userParam(f.Name)).Op(f.GoType))
		}
		flush()
		hook = append(hook, jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())))
	}
	hook = append(hook, jen.Return(jen.Id(inc.body).Call(args...)))
	if inc.b.Attrs.Batch == parser.BatchOn && inc.batched() {
		hook = append([]jen.Code{inc.collect()}, hook...)
	}

	// The body.
	var body []jen.Code
	if inc.batched() {
		body = inc.ringNames(names)
	}
	body = append(body, g.userCode(inc.b.Text, inc.b.TextPos)...)
	body = append(body, g.restoreDirective())
	if !inc.gb.terminates {
		body = append(body, jen.Return(jen.Nil()))
	}
	out = append(out,
		doc(inc.hook, jen.Func().Id(inc.hook).Params(jen.Id("task").Op("*").Qual(rtPath, "Task")).Error().Block(hook...),
			"runs the %s of %s.", what, c.sig()),
		jen.Line())
	out = append(out, inc.batchDecls()...)
	return append(out,
		doc(inc.body, jen.Func().Id(inc.body).Params(params...).Error().Block(body...),
			"is the %s of %s at %s.", what, c.sig(), g.where(inc.b.Pos())),
		jen.Line())
}

// batchDecls returns the batch-match policy and callback of a batched body.
func (inc *cpuIncarnation) batchDecls() []jen.Code {
	if !inc.batched() {
		return nil
	}
	c := inc.c
	cand, head := jen.Id("cand"), jen.Id("head")
	return []jen.Code{c.batchPolicy(inc.b, inc.batch, inc.b.Device(), cpuRing), jen.Line(),
		doc(inc.match, jen.Func().Id(inc.match).Params(cand, head.Clone().Add(cpuRing.task())).Qual(rtPath, "BatchAction").Block(
			jen.Return(jen.Id(inc.batch).Call(head).Dot("Match").Call(cand, head))),
			"is the batch-match callback of the %s body of %s: the policy of\n// %s for the candidate's head. A function, unlike a method value of the\n// policy, costs a collection no allocation.", inc.b.Device(), c.tc.Name, inc.batch), jen.Line()}
}

// ringNames are the first statements of a batched body that mentions them: member, which
// returns a member's definitions and flow values (rt checked their types with Admit when it
// joined the ring), and, for batch = manual, match, the callback to pass to
// task.CollectBatch.
//
//	member := func(t *rt.Task) <c>CPU {
//		m, _ := <c>MemberCPU(t) // rt checked it with Admit
//		return m
//	}
//	match := <c>Match                // batch = manual
func (inc *cpuIncarnation) ringNames(names map[string]bool) []jen.Code {
	c := inc.c
	var out []jen.Code
	if names["member"] {
		out = append(out, jen.Id("member").Op(":=").Func().Params(jen.Id("t").Add(cpuRing.task())).Id(c.memberType(cpuRing)).Block(
			jen.List(jen.Id("m"), jen.Id("_")).Op(":=").Id(c.memberFn(cpuRing)).Call(jen.Id("t")).Comment("rt checked it with Admit"),
			jen.Return(jen.Id("m"))))
	}
	if inc.b.Attrs.Batch == parser.BatchManual && names["match"] {
		out = append(out, jen.Id("match").Op(":=").Id(inc.match))
	}
	return out
}

func (inc *cpuIncarnation) value() []jen.Code {
	c := inc.c
	fields := []jen.Code{
		jen.Id("Kind").Op(":").Qual(rtPath, "CPU"),
		jen.Id("Hook").Op(":").Id(inc.hook),
	}
	if ev := inc.b.Attrs.Evaluate; ev != nil {
		fields = append(fields, jen.Id("Evaluate").Op(":").Add(c.evaluate(ev)))
	}
	if inc.b.Attrs.ProfileOff {
		fields = append(fields, jen.Id("NoTrace").Op(":").True())
	}
	if callsScratch.MatchString(inc.b.Text) {
		fields = append(fields, jen.Id("Scratch").Op(":").True())
	}
	if inc.batched() {
		fields = append(fields, jen.Id("Batch").Op(":").True())
		if len(dataFlows(c.tc)) > 0 {
			fields = append(fields, jen.Id("Admit").Op(":").Func().Params(jen.Id("t").Add(cpuRing.task())).Error().Block(
				jen.List(jen.Id("_"), jen.Err()).Op(":=").Id(c.memberFn(cpuRing)).Call(jen.Id("t")),
				jen.Return(jen.Err())))
		}
	}
	return fields
}

// evaluate returns the Evaluate field: rt.EvaluateOf of a named func(*rt.Task) error (run,
// rt.Next or fail, PaRSEC's three answers) or func(*rt.Task) bool, or of a function literal
// around inline code that sees the locals and task and returns bool.
func (c *classGen) evaluate(ev parser.Expr) jen.Code {
	return jen.Qual(rtPath, "EvaluateOf").Call(c.evaluateFn(ev))
}

// evaluateFn is the function that evaluate adapts.
func (c *classGen) evaluateFn(ev parser.Expr) jen.Code {
	switch ev.(type) {
	case *parser.InlineCode, *parser.StringLit:
		s := c.scope(jen.Id("g"))
		s.inline.extra = []inlineParam{{name: "task", typ: jen.Op("*").Qual(rtPath, "Task"), value: jen.Id("task")}}
		call := s.inlineTyped(ev, jen.Bool())
		body := append([]jen.Code{
			jen.Id("g").Op(":=").Id("task").Dot("Taskpool").Call().Dot("Globals").Call().Assert(jen.Op("*").Id(c.g.name))},
			c.bindLocals(s, jen.Id("task").Dot("Locals").Call())...)
		body = append(body, jen.Return(call))
		return jen.Func().Params(jen.Id("task").Op("*").Qual(rtPath, "Task")).Bool().Block(body...)
	}
	s := c.scope(jen.Id("g"))
	return s.tr(ev, parser.KindOpaque).code
}
