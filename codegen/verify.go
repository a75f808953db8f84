package codegen

// Verify and WriteDOT (docs/language.md, "Verify and graphs"). The verifier is rt's
// (rt.Source.Verify and rt.Source.WriteDOT): it walks the instance graph with the generated
// Space, Complete, the input table and Successors, which report the dependencies they drop
// (rt.Edges.Instance; an input chain that selects nothing). The generated file only adds what rt cannot
// know: the .jdf position of every class and dependency, and the program's error. (The
// position of a data flow, where a flow without a true input guard points, is its input
// chain's, rt.InputChain.Pos.)
//
//	// <p>Source locates the task classes and dependencies of <file.jdf> for Verify
//	// and WriteDOT.
//	var <p>Source = rt.Source{
//		Err:     Err<Name>Graph,
//		Classes: []string{"<file.jdf:L:C>", ...},           // [class]
//		Deps:    [][][]string{{{"<file.jdf:L:C>", ...}}},   // [class][flow][dep]
//	}
//
//	func (tp *<Name>) Verify() error { return <p>Source.Verify(tp.Taskpool) }
//	func (tp *<Name>) WriteDOT(w io.Writer) error { return <p>Source.WriteDOT(w, tp.Taskpool) }
//
//	(Err<Name>Graph is declared beside Err<Name>Argument, in taskpool.go.)

import (
	"github.com/dave/jennifer/jen"
)

func (g *generator) graphErr() string { return "Err" + g.name + "Graph" }

// sourceSuffix names the program's rt.Source after its prefix.
const sourceSuffix = "Source"

// sourceVar is the name of the program's rt.Source.
func (g *generator) sourceVar() string { return g.pfx + sourceSuffix }

// verifier emits the position tables and the Verify and WriteDOT methods.
func (g *generator) verifier(p *part) {
	var classes []jen.Code
	for _, c := range g.classes {
		classes = append(classes, jen.Lit(g.where(c.tc.Pos())))
	}
	depRow := func(i int) jen.Code {
		var ds []jen.Code
		for _, flow := range g.classes[i].tc.Flows {
			var d []jen.Code
			for _, dep := range flow.Deps {
				d = append(d, jen.Lit(g.where(dep.Pos())))
			}
			ds = append(ds, jen.Values(d...))
		}
		return jen.Values(ds...)
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
	field := func(name string, val jen.Code) jen.Code { return jen.Line().Id(name).Op(":").Add(val) }
	depsType := jen.Index().Index().Index().String()
	// The rows of Deps are lists (write.go), formatted in a Source of their own.
	table := func(name string, typ *jen.Statement) func([]jen.Code) jen.Code {
		return func(rows []jen.Code) jen.Code {
			return jen.Var().Id("_").Op("=").Qual(rtPath, "Source").Values(field(name, typ.Clone().ValuesFunc(lines(rows))), jen.Line())
		}
	}
	deps := &list{n: len(g.classes), elem: depRow, ph: jen.Values(jen.Lit("-deps-")), mark: `{"-deps-"},`, wrap: table("Deps", depsType)}
	depRows := []jen.Code{deps.ph}
	if len(g.classes) == 0 {
		depRows = nil
	}
	items := jen.NewFile("")
	items.Commentf("%s locates the classes and the dependencies (Deps[class][flow][dep]) of %s.", g.sourceVar(), g.file)
	items.Var().Id(g.sourceVar()).Op("=").Qual(rtPath, "Source").Values(
		field("Err", jen.Id(g.graphErr())),
		field("Classes", jen.Index().String().Values(classes...)),
		field("Deps", depsType.Clone().ValuesFunc(lines(depRows))),
		jen.Line())
	items.Line()
	if len(g.classes) == 0 {
		g.render(p, items)
	} else {
		g.renderLists(p, items, deps)
	}

	f := jen.NewFile("")

	f.Comment("Verify checks the instance graph of tp for its actual globals (see rt.Source.Verify): it")
	f.Commentf("returns an error wrapping %s. Call it before the taskpool runs.", g.graphErr())
	// One line each (jennifer writes a Block on several lines; gofmt keeps a one-line body).
	f.Func().Params(jen.Id("tp").Op("*").Id(g.name)).Id("Verify").Params().Error().Op("{").
		Return(jen.Id(g.sourceVar()).Dot("Verify").Call(jen.Id("tp").Dot("Taskpool"))).Op("}")
	f.Line()

	f.Comment("WriteDOT writes the instance graph of tp in Graphviz DOT (rt.Source.WriteDOT); not while tp runs.")
	f.Func().Params(jen.Id("tp").Op("*").Id(g.name)).Id("WriteDOT").Params(jen.Id("w").Qual("io", "Writer")).Error().Op("{").
		Return(jen.Id(g.sourceVar()).Dot("WriteDOT").Call(jen.Id("w"), jen.Id("tp").Dot("Taskpool"))).Op("}")
	f.Line()
	g.render(p, f)
}
