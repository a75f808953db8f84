package codegen

// Batched bodies (docs/language.md, "Batched bodies"): a GPU or CPU body with batch = true or
// batch = manual runs a ring of ready tasks of its class at once. GPU rings belong to rt/gpu
// (gpubody.go), CPU rings to rt (incarnation.go); both get, per class, a member type with the
// definitions and flow data of any task of a ring, and per body a batch-match policy:
//
//	// <c><K> is one task of a ring in a <K> body of <Class>(<params>) ...
//	type <c><K> struct {
//		<def> int            // every definition, in order
//		<Flow> <data>        // every data flow: gpu.Buffer (GPU), its Go type (CPU)
//	}
//
//	// GPU: the definitions and buffers of the task of wrapper t.
//	func <c>MemberGPU(t *gpu.Task) <c>GPU { ... t.EC().(*rt.Task).Locals(), t.Buffer(i) ... }
//
//	// CPU: the definitions and flow values of task t; the error names a flow holding a value
//	// of another type (rt calls it through Incarnation.Admit when t joins a ring).
//	func <c>MemberCPU(t *rt.Task) (<c>CPU, error) {
//		l := t.Locals()
//		var err error
//		m := <c>CPU{<def>: l[<i>], ..., <Flow>: rt.FlowAs[<type>](t, <flow>, &err), ...}
//		return m, err
//	}
//
//	// <c>Batch<Body> is the batch-match policy ... for a ring headed by head.
//	func <c>Batch<Body>(head *<pkg>.Task) <pkg>.BatchPolicy {
//		task := head.EC().(*rt.Task)         // GPU; CPU: task := head (when used)
//		g := task.Taskpool().Globals().(*<Name>)
//		<def> := task.Locals()[<i>]
//	//line <file.jdf>:<L>
//		batchMax := <batch_max>
//	//line <file.jdf>:<L>
//		batchMatch := <batch_match>
//	//line <file_jdf.go>:<restored>
//		return <pkg>.BatchPolicy{Max: batchMax, User: batchMatch}
//	}
//
// where <pkg> is gpu or rt. A CPU body passes rt a function rather than the policy's method
// value, which would cost an allocation per ring (incarnation.go, <c>Match). batch_max is a JDF expression over the head's definitions and the
// globals; batch_match is a func(cand, head *<pkg>.Task) <pkg>.<action>, named or inline.

import (
	"github.com/dave/jennifer/jen"
	"github.com/jdf2go/jdf2go/parser"
)

// ringKind is what differs between the rings of GPU bodies and of CPU bodies.
type ringKind struct {
	pkg    string          // the package of the task, action and policy types
	action string          // the batch-match action type
	suffix string          // of the member type and its constructor
	names  parser.RingKind // the names its bodies receive (parser checks them too)
}

var (
	// gpuRing: rt/gpu wrappers; GPU bodies receive dev and stream, batched ones member and
	// match.
	gpuRing = ringKind{pkg: gpuPath, action: "Action", suffix: "GPU", names: parser.GPURing}
	// cpuRing: rt tasks; batched CPU bodies receive member and match.
	cpuRing = ringKind{pkg: rtPath, action: "BatchAction", suffix: "CPU", names: parser.CPURing}
)

// task is the type of a ring's members: *gpu.Task or *rt.Task.
func (k ringKind) task() *jen.Statement { return jen.Op("*").Qual(k.pkg, "Task") }

// rtTask is the *rt.Task of member m.
func (k ringKind) rtTask(m jen.Code) *jen.Statement {
	if k.pkg == gpuPath {
		return jen.Add(m).Dot("EC").Call().Assert(jen.Op("*").Qual(rtPath, "Task"))
	}
	return jen.Add(m)
}

// memberType is the name of the class's member type of ring kind k, memberFn of its
// constructor.
func (c *classGen) memberType(k ringKind) string { return c.fn(k.suffix) }
func (c *classGen) memberFn(k ringKind) string   { return c.fn("Member" + k.suffix) }

// reserveBodyNames reports the JDF names of the class that its bodies of kind k would see
// and that jdf2go gives those bodies itself.
func (c *classGen) reserveBodyNames(k ringKind) {
	c.g.diags = append(c.g.diags, parser.RingNameErrors(c.g.prog, c.tc, k.names)...)
}

// memberDecls emits the class's member type of ring kind k and its constructor.
func (c *classGen) memberDecls(k ringKind) []jen.Code {
	gpu := k.pkg == gpuPath
	var fields, values []jen.Code
	// Fields of one type in a row share a line: "k, m int".
	var names []jen.Code
	lastType := ""
	field := func(name, typ string, t jen.Code) {
		if typ != lastType && len(names) > 0 {
			fields[len(fields)-1] = jen.List(names...).Add(fields[len(fields)-1])
			names = nil
		}
		if len(names) == 0 {
			fields = append(fields, t)
		}
		names, lastType = append(names, jen.Id(name)), typ
	}
	for _, d := range c.tc.Defs {
		field(userParam(d.Name), "int", jen.Int())
		values = append(values, jen.Id(userParam(d.Name)).Op(":").Id("l").Index(jen.Lit(d.Index)))
	}
	flows := dataFlows(c.tc)
	for _, f := range flows {
		if gpu {
			field(userParam(f.Name), "gpu.Buffer", jen.Qual(gpuPath, "Buffer"))
			values = append(values, jen.Id(userParam(f.Name)).Op(":").Id("t").Dot("Buffer").Call(jen.Lit(f.Index)))
		} else {
			field(userParam(f.Name), f.GoType, jen.Op(f.GoType))
			values = append(values, jen.Id(userParam(f.Name)).Op(":").Qual(rtPath, "FlowAs").Types(jen.Op(f.GoType)).Call(
				jen.Id("t"), jen.Lit(f.Index), jen.Op("&").Err()))
		}
	}
	if len(names) > 0 {
		fields[len(fields)-1] = jen.List(names...).Add(fields[len(fields)-1])
	}
	var body []jen.Code
	if len(c.tc.Defs) > 0 {
		body = append(body, jen.Id("l").Op(":=").Add(k.rtTask(jen.Id("t"))).Dot("Locals").Call())
	}
	// A literal of a few values on one line, of more one value a line.
	lit := jen.Id(c.memberType(k)).ValuesFunc(func(gr *jen.Group) {
		for _, v := range values {
			if len(values) > 6 {
				gr.Line()
			}
			gr.Add(v)
		}
		if len(values) > 6 {
			gr.Line()
		}
	})
	result := jen.Id(c.memberType(k))
	var what, fnDoc string
	switch {
	case gpu:
		body = append(body, jen.Return(lit))
		what = "device buffers"
		fnDoc = "returns the definitions and buffers of the %s task of wrapper t."
	case len(flows) == 0:
		body = append(body, jen.Return(lit, jen.Nil()))
	default:
		body = append(body, jen.Var().Err().Error(), jen.Id("m").Op(":=").Add(lit), jen.Return(jen.Id("m"), jen.Err()))
	}
	if !gpu {
		result = jen.Params(result, jen.Error())
		what = "values"
		fnDoc = "returns the definitions and flow values of the %s task t; the error\n// names a flow that holds a value of another type (rt calls it on each member with Admit)."
	}
	return []jen.Code{
		doc(c.memberType(k), jen.Type().Id(c.memberType(k)).Struct(fields...),
			"is one task of a ring in a %s body of %s: its definitions and the\n// %s of its data flows (a batched body gets them with member(t)).", k.suffix, c.sig(), what),
		jen.Line(),
		doc(c.memberFn(k), jen.Func().Id(c.memberFn(k)).Params(jen.Id("t").Add(k.task())).Add(result).Block(body...),
			fnDoc, c.tc.Name),
		jen.Line(),
	}
}

// batchPolicy emits the policy function name of the batched body b (named body in its doc)
// of ring kind k: batch_max over the head's definitions, batch_match named or inline.
func (c *classGen) batchPolicy(b *parser.Body, name, body string, k ringKind) jen.Code {
	g, a := c.g, &b.Attrs
	s := c.scope(jen.Id("g"))
	var stmts, fields []jen.Code
	_, inlineMatch := a.BatchMatch.(*parser.InlineCode)
	if e, m := a.BatchMax, a.BatchMatch; (e != nil || m != nil) && !inlineMatch &&
		(e == nil || m == nil || e.Pos().Line == m.Pos().Line) {
		// The expressions are on one line of the JDF: one assignment, under one directive.
		var pos posT
		var names, vals []jen.Code
		if e != nil {
			pos = e.Pos()
			names, vals = append(names, jen.Id("batchMax")), append(vals, s.expr(e, parser.KindInt))
			fields = append(fields, jen.Id("Max").Op(":").Id("batchMax"))
		}
		if m != nil {
			pos = m.Pos()
			names, vals = append(names, jen.Id("batchMatch")), append(vals, s.tr(m, parser.KindOpaque).code)
			fields = append(fields, jen.Id("User").Op(":").Id("batchMatch"))
		}
		stmts = append(stmts, g.lineDirective(pos), jen.List(names...).Op(":=").List(vals...), g.restoreDirective())
	} else {
		if e := a.BatchMax; e != nil {
			stmts = append(stmts, g.lineDirective(e.Pos()), jen.Id("batchMax").Op(":=").Add(s.expr(e, parser.KindInt)))
			fields = append(fields, jen.Id("Max").Op(":").Id("batchMax"))
		}
		if m := a.BatchMatch; m != nil {
			if _, ok := m.(*parser.InlineCode); ok {
				text, pos, _, _ := parser.CodeText(m)
				g.checkCode(text, pos, false)
				if len(stmts) > 0 {
					stmts = append(stmts, g.restoreDirective())
				}
				stmts = append(stmts, jen.Id("batchMatch").Op(":=").Func().Params(jen.Id("cand"), jen.Id("head").Add(k.task())).Qual(k.pkg, k.action).Block(
					append(g.userCode(text, pos), g.restoreDirective())...))
			} else {
				stmts = append(stmts, g.lineDirective(m.Pos()), jen.Id("batchMatch").Op(":=").Add(s.tr(m, parser.KindOpaque).code), g.restoreDirective())
			}
			fields = append(fields, jen.Id("User").Op(":").Id("batchMatch"))
		} else if len(stmts) > 0 {
			stmts = append(stmts, g.restoreDirective())
		}
	}
	var fn []jen.Code
	if s.use.g && len(s.use.defs) == 0 {
		fn = append(fn, jen.Id("g").Op(":=").Add(k.rtTask(jen.Id("head"))).Dot("Taskpool").Call().Dot("Globals").Call().Assert(jen.Op("*").Id(c.g.name)))
	} else if s.use.g || len(s.use.defs) > 0 {
		fn = append(fn, jen.Id("task").Op(":=").Add(k.rtTask(jen.Id("head"))))
		fn = append(fn, c.globalsVar(s, jen.Id("task").Dot("Taskpool").Call())...)
		fn = append(fn, c.bindLocals(s, jen.Id("task").Dot("Locals").Call())...)
	}
	fn = append(fn, stmts...)
	fn = append(fn, jen.Return(jen.Qual(k.pkg, "BatchPolicy").Values(fields...)))
	return doc(name, jen.Func().Id(name).Params(jen.Id("head").Add(k.task())).Qual(k.pkg, "BatchPolicy").Block(fn...),
		"is the batch-match policy of the %s body of %s for a ring headed\n// by head (batch_max, batch_match).", body, c.tc.Name)
}
