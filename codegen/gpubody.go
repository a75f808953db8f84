package codegen

// GPU bodies (docs/language.md, "GPU bodies"; rt/gpu and docs/gpu.md for the
// protocol). A BODY [type=GPU] (any GPU backend, the simulated one included) or [type=CUDA]
// (the CUDA backend only) becomes a submit hook for rt/gpu's manager that runs the user code
// in place (hook.go) or, when something stands in the way, calls a body function with it,
// and a *gpu.Incarnation descriptor that the class's rt.Incarnation carries
// in its Device field. Per class with batched GPU bodies, a member type gives the definitions
// and buffers of any task of a ring:
//
//	// <c>GPU is one task of a ring in a GPU body of <Class>(<params>) ...
//	type <c>GPU struct {
//		<def> int            // every definition, in order
//		<Flow> gpu.Buffer    // every data flow (NULL: the zero Buffer)
//	}
//
//	func <c>MemberGPU(t *gpu.Task) <c>GPU { ... t.EC().(*rt.Task).Locals(), t.Buffer(i) ... }
//
//	// <c>Submit<Dev> is the submit hook of the <Dev> body of <Class>(<params>).
//	func <c>Submit<Dev>(dev *gpu.Device, task *gpu.Task, stream *gpu.Stream) gpu.Result {
//		if _, err := stream.CollectBatch(task, <c>Batch<Dev>(task).Match, nil); err != nil {
//			return task.Fail(err)             // batch = true only
//		}
//		g, l := rt.TaskGlobals[*<Name>](task.EC().(*rt.Task))
//		return <c>Body<Dev>(dev, task, stream, g.<global>, ..., l[<i>], ..., task.Buffer(<flow>), ...)
//	}
//
//	// <c>Batch<Dev> is the batch-match policy ... for a ring headed by head.
//	func <c>Batch<Dev>(head *gpu.Task) gpu.BatchPolicy {     // batch = true | manual
//		return gpu.BatchPolicy{Max: <batch_max>, User: <batch_match>}
//	}
//
//	// <c>Body<Dev> is the <Dev> body of <Class>(<params>) at <file.jdf:L:C>.
//	func <c>Body<Dev>(dev *gpu.Device, task *gpu.Task, stream *gpu.Stream,
//		<global> <type>, ..., <def> int, ..., <Flow> gpu.Buffer, ...) gpu.Result {
//		member := <c>MemberGPU                 // batch = true | manual, when the body mentions it
//		match := <c>Batch<Dev>(task).Match     // batch = manual, when the body mentions it
//	//line <file.jdf>:<L>
//		<body text>
//	//line <file_jdf.go>:<restored>
//		return gpu.Done        // unless the body ends in a terminating statement
//	}
//
//	// <c>Inc<Dev> is the rt/gpu descriptor of the <Dev> body of <Class>.
//	var <c>Inc<Dev> = &gpu.Incarnation{Name: "<Class>/<Dev>", Type: gpu.TypeAny | gpu.TypeCUDA,
//		Submit: <c>Submit<Dev>, Batch: <bool>, NoProfile: <profile = off>,
//		StageIn: <stage_in>, StageOut: <stage_out>, Size: <c>Size<Dev>}
//
// and the class's incarnation {Kind: rt.GPU | rt.CUDA, Device: <c>Inc<Dev>, Select: <device>,
// Evaluate: <evaluate>, NoTrace: <profile = off>}. The generated batch-match policy is
// gpu.BatchPolicy: it rejects candidates of another class, body or device, stops at
// batch_max, then asks batch_match (a func(cand, head *gpu.Task) gpu.Action, named or inline)
// or accepts. batch_max, X.size and device are JDF expressions over the head's definitions
// and the globals; stage_in and stage_out name gpu.StageFn functions (or are inline code
// with dev, task and stream in scope, returning (int, gpu.Result)).

import (
	"strconv"

	"github.com/dave/jennifer/jen"
	"github.com/jdf2go/jdf2go/parser"
)

const gpuPath = "github.com/jdf2go/jdf2go/rt/gpu"

// noHIP handles HIP bodies: jdf2go has no HIP backend, so they are skipped with a warning
// when the class has another body, and are an error otherwise.
func noHIP(c *classGen, b *parser.Body) incarnation {
	// The rule is parser's: check has reported the warning already, and the error stops
	// gen before it gets here, but for a program that was not checked.
	if d := parser.HIPBodyDiagnostic(c.tc, b); d.Severity == parser.Error {
		c.g.diags = append(c.g.diags, d)
	}
	return nil
}

// gpuIncarnation is one GPU body: its hook, body function, descriptor and helpers.
type gpuIncarnation struct {
	c      *classGen
	b      *parser.Body
	gb     goBody
	dev    string // "GPU" or "CUDA": the suffix of its functions
	member bool   // this incarnation emits the class's member type
	names  struct{ submit, body, batch, size string }
}

func newGPUIncarnation(c *classGen, b *parser.Body) incarnation {
	g := c.g
	a := &b.Attrs
	c.reserveBodyNames(gpuRing)
	if a.Dyld != "" {
		g.warnf(b.Pos(), "dyld is not supported by jdf2go (GPU bodies call rt/gpu); ignored")
	}
	for _, dc := range a.DataColls {
		g.warnf(dc.Pos, "%s.dc is not used by jdf2go; ignored", dc.Flow.Name)
	}
	gb, ok := g.parseBody(b.Text, b.TextPos)
	if !ok {
		return nil
	}
	inc := &gpuIncarnation{c: c, b: b, gb: gb, dev: b.Device()}
	suffix := inc.dev
	for n := 2; c.hasIncarnation(c.fn("Submit" + suffix)); n++ {
		suffix = inc.dev + strconv.Itoa(n)
	}
	inc.names.submit = c.fn("Submit" + suffix)
	inc.names.body = c.fn("Body" + suffix)
	inc.names.batch = c.fn("Batch" + suffix)
	inc.names.size = c.fn("Size" + suffix)
	if inc.batched() {
		inc.member = !c.gpuMember
		c.gpuMember = true
	}
	return inc
}

func (inc *gpuIncarnation) batched() bool { return inc.b.Attrs.Batch != parser.BatchOff }

func gpuT(name string) *jen.Statement { return jen.Op("*").Qual(gpuPath, name) }

// hookParams are the parameters of a submit hook: (dev *gpu.Device, task *gpu.Task,
// stream *gpu.Stream).
func hookParams() []jen.Code {
	return []jen.Code{jen.Id("dev").Add(gpuT("Device")), jen.Id("task").Add(gpuT("Task")), jen.Id("stream").Add(gpuT("Stream"))}
}

// collect is the first statement of the submit hook of a body with batch = true: it
// collects the ring.
func (inc *gpuIncarnation) collect() jen.Code {
	return jen.If(
		jen.List(jen.Id("_"), jen.Err()).Op(":=").Id("stream").Dot("CollectBatch").Call(
			jen.Id("task"), jen.Id(inc.names.batch).Call(jen.Id("task")).Dot("Match"), jen.Nil()),
		jen.Err().Op("!=").Nil(),
	).Block(jen.Return(jen.Id("task").Dot("Fail").Call(jen.Err())))
}

// ringNames are the first statements of a batched body that mentions them: member and,
// for batch = manual, match.
func (inc *gpuIncarnation) ringNames(names map[string]bool) []jen.Code {
	c := inc.c
	var out []jen.Code
	if inc.batched() && names["member"] {
		out = append(out, jen.Id("member").Op(":=").Id(c.memberFn(gpuRing)))
	}
	if inc.batched() && inc.b.Attrs.Batch == parser.BatchManual && names["match"] {
		out = append(out, jen.Id("match").Op(":=").Id(inc.names.batch).Call(jen.Id("task")).Dot("Match"))
	}
	return out
}

// merged returns the statements of the submit hook with the body in place (hook.go), or
// false.
func (inc *gpuIncarnation) merged() ([]jen.Code, bool) {
	c, g := inc.c, inc.c.g
	mentions := bodyIdents(inc.b.Text)
	globals, defs := c.hookBinds(mentions)
	var flows []binding
	var flowNames []string
	for _, f := range dataFlows(c.tc) {
		flows = append(flows, binding{userParam(f.Name), jen.Id("task").Dot("Buffer").Call(jen.Lit(f.Index))})
		flowNames = append(flowNames, userParam(f.Name))
	}
	used, uses, ok := inPlace(inc.b.Text, []string{"g", "l"}, append(globals, defs...), flowNames)
	if !ok {
		return nil, false
	}
	var hook []jen.Code
	if inc.b.Attrs.Batch == parser.BatchOn {
		hook = append(hook, inc.collect())
	}
	ug, ul := usedBinds(used, globals)
	hook = append(hook, c.globalsStmt(jen.Id("task").Dot("EC").Call().Assert(jen.Op("*").Qual(rtPath, "Task")), len(ug) > 0, len(ul) > 0)...)
	for _, f := range flows {
		if uses[f.name] {
			used = append(used, f)
		}
	}
	hook = append(hook, bindStmts(used)...)
	hook = append(hook, inc.ringNames(mentions)...)
	taken := map[string]bool{"dev": true, "task": true, "stream": true, "g": true, "l": true, "member": true, "match": true}
	for _, b := range append(append(globals, defs...), flows...) {
		taken[b.name] = true
	}
	hook = append(hook, g.userCode(unwrap(inc.b.Text, inc.b.TextPos, taken))...)
	hook = append(hook, g.restoreDirective())
	if !inc.gb.terminates {
		hook = append(hook, jen.Return(jen.Qual(gpuPath, "Done")))
	}
	return hook, true
}

func (inc *gpuIncarnation) decls() []jen.Code {
	c, g := inc.c, inc.c.g
	var out []jen.Code
	if inc.member {
		out = append(out, c.memberDecls(gpuRing)...)
	}
	if stmts, ok := inc.merged(); ok {
		out = append(out,
			doc(inc.names.submit, jen.Func().Id(inc.names.submit).Params(hookParams()...).Qual(gpuPath, "Result").Block(stmts...),
				"runs the %s body of %s at %s: rt/gpu's submit hook.", inc.dev, c.sig(), g.where(inc.b.Pos())),
			jen.Line())
		if inc.batched() {
			out = append(out, c.batchPolicy(inc.b, inc.names.batch, inc.dev, gpuRing), jen.Line())
		}
		if len(inc.b.Attrs.Sizes) > 0 {
			out = append(out, inc.sizes(), jen.Line())
		}
		return out
	}

	// The submit hook.
	var hook []jen.Code
	if inc.b.Attrs.Batch == parser.BatchOn {
		hook = append(hook, inc.collect())
	}
	l := jen.Id("l")
	if len(c.tc.Defs) == 0 {
		l = jen.Id("_")
	}
	names := bodyIdents(inc.b.Text)
	globals := c.usedGlobals(names)
	gv := jen.Id("g")
	if len(globals) == 0 && !names["tp"] {
		gv = jen.Id("_")
	}
	if len(c.tc.Defs) > 0 || len(globals) > 0 || names["tp"] {
		hook = append(hook, jen.List(gv, l).Op(":=").Qual(rtPath, "TaskGlobals").Types(jen.Op("*").Id(g.name)).Call(
			jen.Id("task").Dot("EC").Call().Assert(jen.Op("*").Qual(rtPath, "Task"))))
	}
	args := []jen.Code{jen.Id("dev"), jen.Id("task"), jen.Id("stream")}
	params := hookParams()
	if names["tp"] {
		args = append(args, jen.Id("g"))
		params = append(params, jen.Id("tp").Op("*").Id(g.name))
	}
	for _, gl := range globals {
		args = append(args, jen.Id("g").Dot(g.field(gl)))
		params = append(params, jen.Id(userParam(gl.Name)).Add(goType(gl)))
	}
	for _, d := range c.tc.Defs {
		args = append(args, jen.Id("l").Index(jen.Lit(d.Index)))
		params = append(params, jen.Id(userParam(d.Name)).Int())
	}
	for _, f := range dataFlows(c.tc) {
		args = append(args, jen.Id("task").Dot("Buffer").Call(jen.Lit(f.Index)))
		params = append(params, jen.Id(userParam(f.Name)).Qual(gpuPath, "Buffer"))
	}
	hook = append(hook, jen.Return(jen.Id(inc.names.body).Call(args...)))
	out = append(out,
		doc(inc.names.submit, jen.Func().Id(inc.names.submit).Params(hookParams()...).Qual(gpuPath, "Result").Block(hook...),
			"is the submit hook of the %s body of %s: rt/gpu runs it on a device stream.", inc.dev, c.sig()),
		jen.Line())

	// The batch policy.
	if inc.batched() {
		out = append(out, c.batchPolicy(inc.b, inc.names.batch, inc.dev, gpuRing), jen.Line())
	}

	// The body.
	body := inc.ringNames(names)
	body = append(body, g.userCode(inc.b.Text, inc.b.TextPos)...)
	body = append(body, g.restoreDirective())
	if !inc.gb.terminates {
		body = append(body, jen.Return(jen.Qual(gpuPath, "Done")))
	}
	out = append(out,
		doc(inc.names.body, jen.Func().Id(inc.names.body).Params(params...).Qual(gpuPath, "Result").Block(body...),
			"is the %s body of %s at %s.", inc.dev, c.sig(), g.where(inc.b.Pos())),
		jen.Line())

	// Flow sizes.
	if len(inc.b.Attrs.Sizes) > 0 {
		out = append(out, inc.sizes(), jen.Line())
	}

	return out
}

// taskFunc returns the statements of a function over one task of the class (task, an
// *rt.Task, in scope): the bindings of the globals and definitions that ret uses, then
// `return <ret>` between line directives for the JDF expression at pos.
func (c *classGen) taskFunc(s *scope, pos posT, ret jen.Code) []jen.Code {
	body := c.bind(s, jen.Id("task").Dot("Taskpool").Call(), jen.Id("task").Dot("Locals").Call())
	return append(body, c.g.lineDirective(pos), jen.Return(ret), c.g.restoreDirective())
}

// sizes emits the X.size properties as a gpu.Incarnation Size function.
func (inc *gpuIncarnation) sizes() jen.Code {
	c := inc.c
	s := c.scope(jen.Id("g"))
	var cases []jen.Code
	for _, fs := range inc.b.Attrs.Sizes {
		v := s.expr(fs.Value, parser.KindInt)
		cases = append(cases, jen.Case(jen.Lit(fs.Flow.Index)).Block(
			c.g.lineDirective(fs.Pos), jen.Return(jen.Int64().Call(v)), c.g.restoreDirective()))
	}
	body := []jen.Code{jen.Id("task").Op(":=").Id("ec").Assert(jen.Op("*").Qual(rtPath, "Task"))}
	body = append(body, c.globalsVar(s, jen.Id("task").Dot("Taskpool").Call())...)
	body = append(body, c.bindLocals(s, jen.Id("task").Dot("Locals").Call())...)
	if !s.use.g && len(s.use.defs) == 0 {
		body = append(body, jen.Id("_").Op("=").Id("task"))
	}
	body = append(body, jen.Switch(jen.Id("flow")).Block(cases...), jen.Return(jen.Lit(0)))
	return doc(inc.names.size, jen.Func().Id(inc.names.size).Params(jen.Id("ec").Qual(gpuPath, "EC"), jen.Id("flow").Int()).Int64().Block(body...),
		"returns the device size in bytes of flow flow of a %s task (X.size),\n// or 0 for the size of its host copy.", c.tc.Name)
}

// stageFn returns a stage_in or stage_out value: a named gpu.StageFn, or inline code as a
// function literal with dev, task and stream in scope.
func (inc *gpuIncarnation) stageFn(fn parser.Expr) jen.Code {
	c := inc.c
	if _, ok := fn.(*parser.InlineCode); ok {
		text, pos, _, _ := parser.CodeText(fn)
		c.g.checkCode(text, pos, false)
		return jen.Func().Params(hookParams()...).Params(jen.Int(), jen.Qual(gpuPath, "Result")).Block(
			append(c.g.userCode(text, pos), c.g.restoreDirective())...)
	}
	return c.scope(jen.Id("g")).tr(fn, parser.KindOpaque).code
}

// descriptor returns the rt/gpu descriptor of the body, a *gpu.Incarnation.
func (inc *gpuIncarnation) descriptor() jen.Code {
	c := inc.c
	typ := "TypeAny"
	if inc.dev == "CUDA" {
		typ = "TypeCUDA"
	}
	fields := []jen.Code{
		jen.Id("Name").Op(":").Lit(c.tc.Name + "/" + inc.dev),
		jen.Id("Type").Op(":").Qual(gpuPath, typ),
		jen.Id("Submit").Op(":").Id(inc.names.submit),
	}
	if inc.batched() {
		fields = append(fields, jen.Id("Batch").Op(":").True())
	}
	if inc.b.Attrs.ProfileOff {
		fields = append(fields, jen.Id("NoProfile").Op(":").True())
	}
	if fn := inc.b.Attrs.StageIn; fn != nil {
		fields = append(fields, jen.Id("StageIn").Op(":").Add(inc.stageFn(fn)))
	}
	if fn := inc.b.Attrs.StageOut; fn != nil {
		fields = append(fields, jen.Id("StageOut").Op(":").Add(inc.stageFn(fn)))
	}
	if len(inc.b.Attrs.Sizes) > 0 {
		fields = append(fields, jen.Id("Size").Op(":").Id(inc.names.size))
	}
	return jen.Op("&").Qual(gpuPath, "Incarnation").Values(fields...)
}

func (inc *gpuIncarnation) value() []jen.Code {
	c, a := inc.c, &inc.b.Attrs
	kind := "GPU"
	if inc.dev == "CUDA" {
		kind = "CUDA"
	}
	fields := []jen.Code{
		jen.Id("Kind").Op(":").Qual(rtPath, kind),
		jen.Id("Device").Op(":").Add(inc.descriptor()),
	}
	if ev := a.Evaluate; ev != nil && a.Device == nil {
		fields = append(fields, jen.Id("Evaluate").Op(":").Add(c.evaluate(ev)))
	}
	if d := a.Device; d != nil {
		s := c.scope(jen.Id("g"))
		v := s.expr(d, parser.KindInt)
		fields = append(fields, jen.Id("Select").Op(":").Func().Params(jen.Id("task").Op("*").Qual(rtPath, "Task")).Int().Block(
			c.taskFunc(s, d.Pos(), v)...))
	}
	if a.ProfileOff {
		fields = append(fields, jen.Id("NoTrace").Op(":").True())
	}
	return fields
}
