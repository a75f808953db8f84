package codegen

// Verify and WriteDOT (jdf-language.md Part A §A.8). The generated verifier enumerates
// every class's execution space with the generated Space, and visits each instance's
// dependencies with the generated Successors and Predecessors through
// rt.Taskpool.VisitSuccessors / VisitPredecessors (it implements rt.EdgeVisitor). The
// generated functions report what they filter out at run time (a single instance outside
// its space, a data input with no true guard) to the verifier through the taskpool's
// jdfVerify field, which is set only while a walk runs.
//
// Verify then reports, each with the class, parameters, flow and .jdf position:
//   - an output dependency with no input naming it back on the other side, and the reverse;
//   - a dependency on a single instance outside its class's execution space;
//   - a data input whose guards are all false;
//   - an instance enumerated twice, or enumerated outside the space its Complete checks;
//   - a cycle, as the chain of instances around it.
//
// The verifier's code does not depend on the program except for its names and the table of
// .jdf positions; it belongs in rt (see the package documentation).

import (
	"github.com/dave/jennifer/jen"
)

func (g *generator) graphErr() string { return "Err" + g.name + "Graph" }

// verifier emits the verifier types, the position tables and the Verify and WriteDOT
// methods.
func (g *generator) verifier(f *jen.File) {
	V, X, A := g.pfx+"Verifier", g.pfx+"Vertex", g.pfx+"Arc"
	depPos, flowPos, classPos := g.pfx+"DepPos", g.pfx+"FlowPos", g.pfx+"ClassPos"
	id := jen.Id
	v := func() *jen.Statement { return jen.Id("v") }
	recv := func() *jen.Statement { return jen.Id("v").Op("*").Id(V) }
	classes := func() *jen.Statement { return v().Dot("tp").Dot("Classes").Call() }
	errorf := func(args ...jen.Code) *jen.Statement { return jen.Qual("fmt", "Errorf").Call(args...) }
	sprintf := func(args ...jen.Code) *jen.Statement { return jen.Qual("fmt", "Sprintf").Call(args...) }

	// Position tables.
	var cls, deps, fpos []jen.Code
	for _, c := range g.classes {
		cls = append(cls, jen.Lit(g.where(c.tc.Pos())))
		var flows, fls []jen.Code
		for _, fl := range c.tc.Flows {
			var ds []jen.Code
			for _, d := range fl.Deps {
				ds = append(ds, jen.Lit(g.where(d.Pos())))
			}
			flows = append(flows, jen.Values(ds...))
			fls = append(fls, jen.Lit(g.where(fl.NamePos)))
		}
		deps = append(deps, jen.Values(flows...))
		fpos = append(fpos, jen.Values(fls...))
	}
	f.Commentf("%s[class][flow][dep] is the .jdf position of each dependency, for Verify.", depPos)
	f.Var().Id(depPos).Op("=").Index().Index().Index().String().ValuesFunc(func(gr *jen.Group) {
		for _, d := range deps {
			gr.Line().Add(d)
		}
		gr.Line()
	})
	f.Line()
	f.Commentf("%s[class][flow] is the .jdf position of each flow, for Verify.", flowPos)
	f.Var().Id(flowPos).Op("=").Index().Index().String().ValuesFunc(func(gr *jen.Group) {
		for _, fl := range fpos {
			gr.Line().Add(fl)
		}
		gr.Line()
	})
	f.Line()
	f.Commentf("%s[class] is the .jdf position of each task class, for Verify.", classPos)
	f.Var().Id(classPos).Op("=").Index().String().Values(cls...)
	f.Line()

	f.Commentf("%s is one task instance of the graph that Verify and WriteDOT walk.", X)
	f.Type().Id(X).Struct(
		id("class").Int(),
		id("params").Index(jen.Qual(rtPath, "MaxParams")).Int())
	f.Line()
	f.Commentf("%s is a dependency from a flow of one instance to a flow of another.", A)
	f.Type().Id(A).Struct(
		jen.List(id("src"), id("dst")).Id(X),
		jen.List(id("srcFlow"), id("dstFlow")).Int())
	f.Line()
	f.Commentf("%s enumerates the instance graph with the generated functions and collects the", V)
	f.Comment("problems Verify reports. It implements rt.EdgeVisitor.")
	f.Type().Id(V).Struct(
		id("tp").Op("*").Id(g.name),
		id("vertices").Index().Id(X),
		id("locals").Index().Qual(rtPath, "Locals"),
		id("index").Map(id(X)).Int(),
		jen.Comment("outs and ins are the output and input dependencies in discovery order;"),
		jen.Comment("outDep and inDep give each one's dependency index in its flow."),
		jen.List(id("outs"), id("ins")).Index().Id(A),
		jen.List(id("outDep"), id("inDep")).Map(id(A)).Int(),
		id("problems").Index().String(),
		id("cur").Id(X),
		id("input").Bool(),
	)
	f.Line()

	// func new<V>(tp *<Name>) *<V>
	f.Func().Id("new" + upperFirst(V)).Params(id("tp").Op("*").Id(g.name)).Op("*").Id(V).Block(
		jen.Return(jen.Op("&").Id(V).Values(jen.Dict{
			id("tp"):     id("tp"),
			id("index"):  jen.Map(id(X)).Int().Values(),
			id("outDep"): jen.Map(id(A)).Int().Values(),
			id("inDep"):  jen.Map(id(A)).Int().Values(),
		})))
	f.Line()

	// vertex, name, flow, problem.
	f.Func().Params(recv()).Id("vertex").Params(id("tc").Op("*").Qual(rtPath, "TaskClass"), id("l").Op("*").Qual(rtPath, "Locals")).Id(X).Block(
		id("x").Op(":=").Id(X).Values(jen.Dict{id("class"): id("tc").Dot("ID")}),
		jen.For(jen.List(id("i"), id("s")).Op(":=").Range().Id("tc").Dot("Params")).Block(
			id("x").Dot("params").Index(id("i")).Op("=").Id("l").Index(id("s"))),
		jen.Return(id("x")))
	f.Line()
	f.Func().Params(recv()).Id("name").Params(id("x").Id(X)).String().Block(
		id("tc").Op(":=").Add(classes()).Index(id("x").Dot("class")),
		id("b").Op(":=").Index().Byte().Call(id("tc").Dot("Name").Op("+").Lit("(")),
		jen.For(id("i").Op(":=").Range().Id("tc").Dot("Params")).Block(
			jen.If(id("i").Op(">").Lit(0)).Block(id("b").Op("=").Append(id("b"), jen.Lit(", ").Op("..."))),
			id("b").Op("=").Qual("strconv", "AppendInt").Call(id("b"), jen.Int64().Call(id("x").Dot("params").Index(id("i"))), jen.Lit(10))),
		jen.Return(jen.String().Call(jen.Append(id("b"), jen.LitRune(')')))))
	f.Line()
	f.Func().Params(recv()).Id("flow").Params(id("x").Id(X), id("i").Int()).String().Block(
		jen.Return(classes().Index(id("x").Dot("class")).Dot("Flows").Index(id("i")).Dot("Name")))
	f.Line()
	f.Func().Params(recv()).Id("problem").Params(id("pos"), id("format").String(), id("args").Op("...").Any()).Block(
		v().Dot("problems").Op("=").Append(v().Dot("problems"), id("pos").Op("+").Lit(": ").Op("+").Add(sprintf(id("format"), id("args").Op("...")))))
	f.Line()

	// Task and Data (rt.EdgeVisitor).
	f.Comment("Task records a dependency that a generated successor or predecessor function reports.")
	f.Func().Params(recv()).Id("Task").Params(jen.List(id("flow"), id("dep")).Int(), id("peer").Op("*").Qual(rtPath, "TaskClass"),
		id("peerFlow").Int(), id("l").Op("*").Qual(rtPath, "Locals")).Block(
		id("p").Op(":=").Add(v()).Dot("vertex").Call(id("peer"), id("l")),
		jen.If(v().Dot("input")).Block(
			id("a").Op(":=").Id(A).Values(jen.Dict{id("src"): id("p"), id("srcFlow"): id("peerFlow"), id("dst"): v().Dot("cur"), id("dstFlow"): id("flow")}),
			jen.If(jen.List(jen.Id("_"), id("ok")).Op(":=").Add(v()).Dot("inDep").Index(id("a")), jen.Op("!").Id("ok")).Block(
				v().Dot("inDep").Index(id("a")).Op("=").Id("dep"),
				v().Dot("ins").Op("=").Append(v().Dot("ins"), id("a"))),
			jen.Return()),
		id("a").Op(":=").Id(A).Values(jen.Dict{id("src"): v().Dot("cur"), id("srcFlow"): id("flow"), id("dst"): id("p"), id("dstFlow"): id("peerFlow")}),
		jen.If(jen.List(jen.Id("_"), id("ok")).Op(":=").Add(v()).Dot("outDep").Index(id("a")), jen.Op("!").Id("ok")).Block(
			v().Dot("outDep").Index(id("a")).Op("=").Id("dep"),
			v().Dot("outs").Op("=").Append(v().Dot("outs"), id("a"))))
	f.Line()
	f.Comment("Data ignores collection endpoints: nothing has to match them.")
	f.Func().Params(recv()).Id("Data").Params(jen.List(id("flow"), id("dep")).Int(), id("c").Qual(rtPath, "Collection"), id("ix").Qual(rtPath, "Index")).Block()
	f.Line()

	// outside and noInput (called by generated functions through tp.jdfVerify).
	f.Comment("outside records a dependency on a single instance outside its class's execution space.")
	f.Func().Params(recv()).Id("outside").Params(jen.List(id("flow"), id("dep")).Int(), id("peer").Op("*").Qual(rtPath, "TaskClass"),
		id("peerFlow").Int(), id("l").Op("*").Qual(rtPath, "Locals")).Block(
		id("what").Op(":=").Lit("%s flow %s -> %s %s: %s is outside the execution space of %s, so the output goes nowhere"),
		jen.If(v().Dot("input")).Block(
			id("what").Op("=").Lit("%s flow %s <- %s %s: %s is outside the execution space of %s, so nothing can satisfy this input")),
		id("p").Op(":=").Add(v()).Dot("vertex").Call(id("peer"), id("l")),
		v().Dot("problem").Call(jen.Id(depPos).Index(v().Dot("cur").Dot("class")).Index(id("flow")).Index(id("dep")), id("what"),
			v().Dot("name").Call(v().Dot("cur")), v().Dot("flow").Call(v().Dot("cur"), id("flow")),
			id("peer").Dot("Flows").Index(id("peerFlow")).Dot("Name"), v().Dot("name").Call(id("p")), v().Dot("name").Call(id("p")), id("peer").Dot("Name")))
	f.Line()
	f.Comment("noInput records a data flow whose input guards are all false.")
	f.Func().Params(recv()).Id("noInput").Params(id("flow").Int()).Block(
		v().Dot("problem").Call(jen.Id(flowPos).Index(v().Dot("cur").Dot("class")).Index(id("flow")), jen.Lit("%s flow %s: no input dependency guard holds (the task would fail with %v)"),
			v().Dot("name").Call(v().Dot("cur")), v().Dot("flow").Call(v().Dot("cur"), id("flow")), jen.Qual(rtPath, "ErrNoInput")))
	f.Line()

	// walk.
	f.Comment("walk enumerates the instances and their dependencies. A panic in generated or user code")
	f.Comment("is returned as an error.")
	f.Func().Params(recv()).Id("walk").Params().Params(id("err").Error()).Block(
		id("tp").Op(":=").Add(v()).Dot("tp"),
		id("tp").Dot("jdfVerify").Op("=").Id("v"),
		jen.Defer().Func().Params().Block(
			id("tp").Dot("jdfVerify").Op("=").Nil(),
			jen.If(id("r").Op(":=").Recover(), id("r").Op("!=").Nil()).Block(
				id("err").Op("=").Add(errorf(jen.Lit("%w: panic while walking the graph at %s: %v"), id(g.graphErr()), v().Dot("name").Call(v().Dot("cur")), id("r"))))).Call(),
		jen.For(jen.List(jen.Id("_"), id("tc")).Op(":=").Range().Id("tp").Dot("Classes").Call()).Block(
			jen.Var().Id("l").Qual(rtPath, "Locals"),
			id("tc").Dot("Space").Call(id("tp").Dot("Taskpool"), jen.Op("&").Id("l"), jen.Func().Params(id("l").Op("*").Qual(rtPath, "Locals")).Bool().Block(
				id("x").Op(":=").Add(v()).Dot("vertex").Call(id("tc"), id("l")),
				v().Dot("cur").Op("=").Id("x"),
				jen.If(jen.List(jen.Id("_"), id("dup")).Op(":=").Add(v()).Dot("index").Index(id("x")), id("dup")).Block(
					v().Dot("problem").Call(jen.Id(classPos).Index(id("tc").Dot("ID")), jen.Lit("%s is enumerated twice"), v().Dot("name").Call(id("x"))),
					jen.Return(jen.True())),
				id("check").Op(":=").Op("*").Id("l"),
				jen.If(jen.Op("!").Id("tc").Dot("Complete").Call(id("tp").Dot("Taskpool"), jen.Op("&").Id("check"))).Block(
					v().Dot("problem").Call(jen.Id(classPos).Index(id("tc").Dot("ID")), jen.Lit("%s is enumerated but lies outside the execution space that %s checks"),
						v().Dot("name").Call(id("x")), id("tc").Dot("Name"))),
				v().Dot("index").Index(id("x")).Op("=").Len(v().Dot("vertices")),
				v().Dot("vertices").Op("=").Append(v().Dot("vertices"), id("x")),
				v().Dot("locals").Op("=").Append(v().Dot("locals"), jen.Op("*").Id("l")),
				jen.Return(jen.True())))),
		jen.For(jen.List(id("i"), id("x")).Op(":=").Range().Add(v()).Dot("vertices")).Block(
			id("tc").Op(":=").Id("tp").Dot("Classes").Call().Index(id("x").Dot("class")),
			v().Dot("cur").Op("=").Id("x"),
			v().Dot("input").Op("=").False(),
			id("tp").Dot("VisitSuccessors").Call(id("tc"), jen.Op("&").Add(v()).Dot("locals").Index(id("i")), id("v")),
			v().Dot("input").Op("=").True(),
			id("tp").Dot("VisitPredecessors").Call(id("tc"), jen.Op("&").Add(v()).Dot("locals").Index(id("i")), id("v"))),
		jen.Return(jen.Nil()))
	f.Line()

	// check.
	f.Comment("check matches outputs with inputs and looks for a cycle.")
	f.Func().Params(recv()).Id("check").Params().Block(
		jen.For(jen.List(jen.Id("_"), id("a")).Op(":=").Range().Add(v()).Dot("outs")).Block(
			jen.If(jen.List(jen.Id("_"), id("ok")).Op(":=").Add(v()).Dot("inDep").Index(id("a")), jen.Op("!").Id("ok")).Block(
				v().Dot("problem").Call(jen.Id(depPos).Index(id("a").Dot("src").Dot("class")).Index(id("a").Dot("srcFlow")).Index(v().Dot("outDep").Index(id("a"))),
					jen.Lit("%s flow %s -> %s %s: no input of %s flow %s names %s flow %s back"),
					v().Dot("name").Call(id("a").Dot("src")), v().Dot("flow").Call(id("a").Dot("src"), id("a").Dot("srcFlow")),
					v().Dot("flow").Call(id("a").Dot("dst"), id("a").Dot("dstFlow")), v().Dot("name").Call(id("a").Dot("dst")),
					v().Dot("name").Call(id("a").Dot("dst")), v().Dot("flow").Call(id("a").Dot("dst"), id("a").Dot("dstFlow")),
					v().Dot("name").Call(id("a").Dot("src")), v().Dot("flow").Call(id("a").Dot("src"), id("a").Dot("srcFlow"))))),
		jen.For(jen.List(jen.Id("_"), id("a")).Op(":=").Range().Add(v()).Dot("ins")).Block(
			jen.If(jen.List(jen.Id("_"), id("ok")).Op(":=").Add(v()).Dot("outDep").Index(id("a")), jen.Op("!").Id("ok")).Block(
				v().Dot("problem").Call(jen.Id(depPos).Index(id("a").Dot("dst").Dot("class")).Index(id("a").Dot("dstFlow")).Index(v().Dot("inDep").Index(id("a"))),
					jen.Lit("%s flow %s <- %s %s: no output of %s flow %s names %s flow %s, so this input never arrives"),
					v().Dot("name").Call(id("a").Dot("dst")), v().Dot("flow").Call(id("a").Dot("dst"), id("a").Dot("dstFlow")),
					v().Dot("flow").Call(id("a").Dot("src"), id("a").Dot("srcFlow")), v().Dot("name").Call(id("a").Dot("src")),
					v().Dot("name").Call(id("a").Dot("src")), v().Dot("flow").Call(id("a").Dot("src"), id("a").Dot("srcFlow")),
					v().Dot("name").Call(id("a").Dot("dst")), v().Dot("flow").Call(id("a").Dot("dst"), id("a").Dot("dstFlow"))))),
		v().Dot("cycle").Call())
	f.Line()

	// cycle: Kahn's algorithm over every dependency found; what remains is on or after a
	// cycle. Walking back through blocked predecessors from a blocked vertex must repeat.
	f.Comment("cycle reports one cycle of the dependency graph, if there is one: after removing the")
	f.Comment("vertices that a topological order reaches, walking back through the predecessors that")
	f.Comment("remain from any remaining vertex must come back to a vertex already seen.")
	n := func() *jen.Statement { return jen.Len(v().Dot("vertices")) }
	f.Func().Params(recv()).Id("cycle").Params().Block(
		jen.List(id("succs"), id("preds")).Op(":=").Make(jen.Index().Index().Int(), n()).Op(",").Make(jen.Index().Index().Int(), n()),
		id("blocked").Op(":=").Make(jen.Index().Int(), n()),
		jen.For(jen.List(jen.Id("_"), id("arcs")).Op(":=").Range().Index().Index().Id(A).Values(v().Dot("outs"), v().Dot("ins"))).Block(
			jen.For(jen.List(jen.Id("_"), id("a")).Op(":=").Range().Id("arcs")).Block(
				jen.List(id("s"), id("d")).Op(":=").Add(v()).Dot("index").Index(id("a").Dot("src")).Op(",").Add(v()).Dot("index").Index(id("a").Dot("dst")),
				id("succs").Index(id("s")).Op("=").Append(id("succs").Index(id("s")), id("d")),
				id("preds").Index(id("d")).Op("=").Append(id("preds").Index(id("d")), id("s")),
				id("blocked").Index(id("d")).Op("++"))),
		jen.Var().Id("ready").Index().Int(),
		jen.For(jen.List(id("i"), id("b")).Op(":=").Range().Id("blocked")).Block(
			jen.If(id("b").Op("==").Lit(0)).Block(id("ready").Op("=").Append(id("ready"), id("i")))),
		jen.For(jen.Len(id("ready")).Op(">").Lit(0)).Block(
			id("x").Op(":=").Id("ready").Index(jen.Len(id("ready")).Op("-").Lit(1)),
			id("ready").Op("=").Id("ready").Index(jen.Empty(), jen.Len(id("ready")).Op("-").Lit(1)),
			jen.For(jen.List(jen.Id("_"), id("d")).Op(":=").Range().Id("succs").Index(id("x"))).Block(
				jen.If(id("blocked").Index(id("d")).Op("--").Op(";").Id("blocked").Index(id("d")).Op("==").Lit(0)).Block(
					id("ready").Op("=").Append(id("ready"), id("d"))))),
		jen.For(id("start").Op(",").Id("b").Op(":=").Range().Id("blocked")).Block(
			jen.If(id("b").Op("==").Lit(0)).Block(jen.Continue()),
			id("seen").Op(":=").Map(jen.Int()).Int().Values(),
			jen.Var().Id("path").Index().Int(),
			jen.For(id("x").Op(":=").Id("start").Op(";").Op(";")).Block(
				jen.If(jen.List(id("at"), id("ok")).Op(":=").Id("seen").Index(id("x")), id("ok")).Block(
					id("path").Op("=").Id("path").Index(id("at"), jen.Empty()),
					jen.Break()),
				id("seen").Index(id("x")).Op("=").Len(id("path")),
				id("path").Op("=").Append(id("path"), id("x")),
				id("next").Op(":=").Lit(-1),
				jen.For(jen.List(jen.Id("_"), id("p")).Op(":=").Range().Id("preds").Index(id("x"))).Block(
					jen.If(id("blocked").Index(id("p")).Op(">").Lit(0)).Block(id("next").Op("=").Id("p"), jen.Break())),
				jen.If(id("next").Op("<").Lit(0)).Block(jen.Return()),
				id("x").Op("=").Id("next")),
			jen.Comment("path runs backwards along the dependencies; print it forwards, closed."),
			jen.Var().Id("names").Index().String(),
			jen.For(id("i").Op(":=").Len(id("path")).Op("-").Lit(1).Op(";").Id("i").Op(">=").Lit(0).Op(";").Id("i").Op("--")).Block(
				id("names").Op("=").Append(id("names"), v().Dot("name").Call(v().Dot("vertices").Index(id("path").Index(id("i")))))),
			id("names").Op("=").Append(id("names"), id("names").Index(jen.Lit(0))),
			v().Dot("problem").Call(jen.Id(classPos).Index(v().Dot("vertices").Index(id("path").Index(jen.Len(id("path")).Op("-").Lit(1))).Dot("class")),
				jen.Lit("cycle: %s"), jen.Qual("strings", "Join").Call(id("names"), jen.Lit(" -> "))),
			jen.Return()))
	f.Line()

	// Verify.
	const maxProblems = 50
	f.Comment("Verify enumerates the instance graph of tp for its actual globals with the generated")
	f.Comment("functions and reports every output without a matching input on the other side (and the")
	f.Comment("reverse), every input that nothing can satisfy, every cycle and every task outside its")
	f.Commentf("execution space, each with its class, parameters, flow and .jdf position, in an error wrapping %s.", g.graphErr())
	f.Comment("Call it before the taskpool runs (not concurrently with it).")
	f.Func().Params(jen.Id("tp").Op("*").Id(g.name)).Id("Verify").Params().Error().Block(
		id("v").Op(":=").Id("new"+upperFirst(V)).Call(id("tp")),
		jen.If(jen.Err().Op(":=").Add(v()).Dot("walk").Call(), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		v().Dot("check").Call(),
		id("ps").Op(":=").Add(v()).Dot("problems"),
		jen.If(jen.Len(id("ps")).Op("==").Lit(0)).Block(jen.Return(jen.Nil())),
		id("head").Op(":=").Lit("1 problem"),
		jen.If(jen.Len(id("ps")).Op(">").Lit(1)).Block(id("head").Op("=").Add(sprintf(jen.Lit("%d problems"), jen.Len(id("ps"))))),
		jen.If(jen.Len(id("ps")).Op(">").Lit(maxProblems)).Block(
			id("ps").Op("=").Append(id("ps").Index(jen.Empty(), jen.Lit(maxProblems), jen.Lit(maxProblems)), sprintf(jen.Lit("... and %d more"), jen.Len(v().Dot("problems")).Op("-").Lit(maxProblems)))),
		jen.Return(errorf(jen.Lit("%w: %s:\n%s"), id(g.graphErr()), id("head"), jen.Qual("strings", "Join").Call(id("ps"), jen.Lit("\n")))))
	f.Line()

	// WriteDOT.
	f.Comment("WriteDOT writes the instance graph of tp in Graphviz DOT: one node per task instance, one")
	f.Comment("edge per output dependency labelled with the flows (dashed for CTL). Like Verify, it must")
	f.Comment("not run concurrently with the taskpool.")
	f.Func().Params(jen.Id("tp").Op("*").Id(g.name)).Id("WriteDOT").Params(id("w").Qual("io", "Writer")).Error().Block(
		id("v").Op(":=").Id("new"+upperFirst(V)).Call(id("tp")),
		jen.If(jen.Err().Op(":=").Add(v()).Dot("walk").Call(), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		id("b").Op(":=").Qual("bufio", "NewWriter").Call(id("w")),
		jen.Qual("fmt", "Fprintf").Call(id("b"), jen.Lit("digraph %s {\n"), jen.Qual("strconv", "Quote").Call(id("tp").Dot("Name").Call())),
		jen.For(jen.List(id("i"), id("x")).Op(":=").Range().Add(v()).Dot("vertices")).Block(
			jen.Qual("fmt", "Fprintf").Call(id("b"), jen.Lit("  t%d [label=%s];\n"), id("i"), jen.Qual("strconv", "Quote").Call(v().Dot("name").Call(id("x"))))),
		jen.For(jen.List(jen.Id("_"), id("a")).Op(":=").Range().Add(v()).Dot("outs")).Block(
			id("style").Op(":=").Lit(""),
			jen.If(id("tp").Dot("Classes").Call().Index(id("a").Dot("src").Dot("class")).Dot("Flows").Index(id("a").Dot("srcFlow")).Dot("Access").Op("==").Qual(rtPath, "CTL")).Block(
				id("style").Op("=").Lit(" style=dashed")),
			jen.Qual("fmt", "Fprintf").Call(id("b"), jen.Lit("  t%d -> t%d [label=%s%s];\n"),
				v().Dot("index").Index(id("a").Dot("src")), v().Dot("index").Index(id("a").Dot("dst")),
				jen.Qual("strconv", "Quote").Call(v().Dot("flow").Call(id("a").Dot("src"), id("a").Dot("srcFlow")).Op("+").Lit(" -> ").Op("+").Add(v().Dot("flow").Call(id("a").Dot("dst"), id("a").Dot("dstFlow")))),
				id("style"))),
		jen.Qual("fmt", "Fprintln").Call(id("b"), jen.Lit("}")),
		jen.Return(id("b").Dot("Flush").Call()))
	f.Line()

	f.Commentf("%s is wrapped by the errors of Verify and WriteDOT.", g.graphErr())
	f.Var().Id(g.graphErr()).Op("=").Qual("errors", "New").Call(jen.Lit(g.name + ": invalid task graph"))
	f.Line()
}
