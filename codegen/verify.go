package codegen

// Verify and WriteDOT (docs/language.md, "Verify and graphs"). The verifier is rt's
// (rt.Source.Verify and rt.Source.WriteDOT): it walks the instance graph with the generated
// Space, Complete, Goal, Successors and Predecessors, which report the dependencies they drop
// through rt.Edges.Outside and rt.Edges.NoInput. The generated file only adds what rt cannot
// know: the .jdf position of every class, flow and dependency, and the program's error.
//
//	// <p>Source locates the task classes, flows and dependencies of <file.jdf> for Verify
//	// and WriteDOT.
//	var <p>Source = rt.Source{
//		Err:     Err<Name>Graph,
//		Classes: []string{"<file.jdf:L:C>", ...},           // [class]
//		Flows:   [][]string{{"<file.jdf:L:C>", ...}, ...},  // [class][flow]
//		Deps:    [][][]string{{{"<file.jdf:L:C>", ...}}},   // [class][flow][dep]
//	}
//
//	func (tp *<Name>) Verify() error { return <p>Source.Verify(tp.Taskpool) }
//	func (tp *<Name>) WriteDOT(w io.Writer) error { return <p>Source.WriteDOT(w, tp.Taskpool) }
//
//	var Err<Name>Graph = errors.New("<Name>: invalid task graph")

import (
	"github.com/dave/jennifer/jen"
)

func (g *generator) graphErr() string { return "Err" + g.name + "Graph" }

// sourceSuffix names the program's rt.Source after its prefix.
const sourceSuffix = "Source"

// sourceVar is the name of the program's rt.Source.
func (g *generator) sourceVar() string { return g.pfx + sourceSuffix }

// verifier emits the position tables and the Verify and WriteDOT methods.
func (g *generator) verifier(f *jen.File) {
	var classes, flows, deps []jen.Code
	for _, c := range g.classes {
		classes = append(classes, jen.Lit(g.where(c.tc.Pos())))
		var fl, ds []jen.Code
		for _, flow := range c.tc.Flows {
			fl = append(fl, jen.Lit(g.where(flow.NamePos)))
			var d []jen.Code
			for _, dep := range flow.Deps {
				d = append(d, jen.Lit(g.where(dep.Pos())))
			}
			ds = append(ds, jen.Values(d...))
		}
		flows = append(flows, jen.Values(fl...))
		deps = append(deps, jen.Values(ds...))
	}
	// One entry per line when a table has several, so that the tables read by class.
	lines := func(items []jen.Code) func(*jen.Group) {
		return func(gr *jen.Group) {
			for _, it := range items {
				gr.Line().Add(it)
			}
			gr.Line()
		}
	}
	f.Commentf("%s locates the task classes, flows and dependencies of %s for Verify and", g.sourceVar(), g.file)
	f.Comment("WriteDOT: Flows[class][flow], Deps[class][flow][dep].")
	field := func(name string, val jen.Code) jen.Code { return jen.Line().Id(name).Op(":").Add(val) }
	f.Var().Id(g.sourceVar()).Op("=").Qual(rtPath, "Source").Values(
		field("Err", jen.Id(g.graphErr())),
		field("Classes", jen.Index().String().Values(classes...)),
		field("Flows", jen.Index().Index().String().ValuesFunc(lines(flows))),
		field("Deps", jen.Index().Index().Index().String().ValuesFunc(lines(deps))),
		jen.Line())
	f.Line()

	f.Comment("Verify enumerates the instance graph of tp for its actual globals with the generated")
	f.Comment("functions and reports every output without a matching input on the other side (and the")
	f.Comment("reverse), every input that nothing can satisfy, every readiness goal that disagrees with")
	f.Comment("its arrivals, every cycle and every task outside its execution space, each with its")
	f.Commentf("class, parameters, flow and .jdf position, in an error wrapping %s", g.graphErr())
	f.Comment("(see rt.Source.Verify). Call it before the taskpool runs, not concurrently with it.")
	f.Func().Params(jen.Id("tp").Op("*").Id(g.name)).Id("Verify").Params().Error().Block(
		jen.Return(jen.Id(g.sourceVar()).Dot("Verify").Call(jen.Id("tp").Dot("Taskpool"))))
	f.Line()

	f.Comment("WriteDOT writes the instance graph of tp in Graphviz DOT: one node per task instance, one")
	f.Comment("edge per output dependency labelled with the flows (dashed for CTL). Like Verify, it must")
	f.Comment("not run concurrently with the taskpool.")
	f.Func().Params(jen.Id("tp").Op("*").Id(g.name)).Id("WriteDOT").Params(jen.Id("w").Qual("io", "Writer")).Error().Block(
		jen.Return(jen.Id(g.sourceVar()).Dot("WriteDOT").Call(jen.Id("w"), jen.Id("tp").Dot("Taskpool"))))
	f.Line()

	f.Commentf("%s is wrapped by the errors of Verify and WriteDOT.", g.graphErr())
	f.Var().Id(g.graphErr()).Op("=").Qual("errors", "New").Call(jen.Lit(g.name + ": invalid task graph"))
	f.Line()
}
