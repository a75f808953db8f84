package codegen

// Small functions shared by the generated code of one program, emitted once each and only
// when used. Their names carry the program's prefix, so several generated files can live in
// one package.

import (
	"github.com/dave/jennifer/jen"
)

type helperKind int

const (
	helperB2I helperKind = iota
	helperFlow
	helperElement
	helperNew
	helperCheckCollection
	nHelpers
)

var helperNames = [nHelpers]string{"B2I", "Flow", "Element", "New", "CheckCollection"}

// helper returns the name of a helper and marks it used.
func (g *generator) helper(k helperKind) string {
	g.helpers[k] = true
	return g.pfx + helperNames[k]
}

func (g *generator) emitHelpers(f *jen.File) {
	task := func() jen.Code { return jen.Id("task").Op("*").Qual(rtPath, "Task") }
	for k := helperKind(0); k < nHelpers; k++ {
		if !g.helpers[k] {
			continue
		}
		name := g.pfx + helperNames[k]
		switch k {
		case helperB2I:
			// func <p>B2I(b bool) int
			f.Commentf("%s converts a condition used as a number to 0 or 1, as JDF (like C) does.", name)
			f.Func().Id(name).Params(jen.Id("b").Bool()).Int().Block(
				jen.If(jen.Id("b")).Block(jen.Return(jen.Lit(1))),
				jen.Return(jen.Lit(0)))
		case helperFlow:
			// func <p>Flow[T any](task *rt.Task, i int) (T, error)
			f.Commentf("%s returns the value of flow i of task as a T: the zero T when the flow holds no", name)
			f.Comment("data (NULL), and an error when it holds a value of another type.")
			f.Func().Id(name).Types(jen.Id("T").Any()).Params(task(), jen.Id("i").Int()).Params(jen.Id("T"), jen.Error()).Block(
				jen.Var().Id("v").Id("T"),
				jen.Id("c").Op(":=").Id("task").Dot("Flow").Call(jen.Id("i")),
				jen.If(jen.Id("c").Op("==").Nil().Op("||").Id("c").Dot("Value").Op("==").Nil()).Block(
					jen.Return(jen.Id("v"), jen.Nil())),
				jen.List(jen.Id("v"), jen.Id("ok")).Op(":=").Id("c").Dot("Value").Assert(jen.Id("T")),
				jen.If(jen.Op("!").Id("ok")).Block(jen.Return(jen.Id("v"), jen.Qual("fmt", "Errorf").Call(
					jen.Lit("flow %s holds a %T, not a %T"),
					jen.Id("task").Dot("Class").Call().Dot("Flows").Index(jen.Id("i")).Dot("Name"),
					jen.Id("c").Dot("Value"), jen.Id("v")))),
				jen.Return(jen.Id("v"), jen.Nil()))
		case helperElement:
			// func <p>Element(task *rt.Task, i int, c rt.Collection, ix rt.Index) error
			f.Commentf("%s binds flow i of task to the host copy of element ix of collection c.", name)
			f.Func().Id(name).Params(task(), jen.Id("i").Int(), jen.Id("c").Qual(rtPath, "Collection"),
				jen.Id("ix").Qual(rtPath, "Index")).Error().Block(
				jen.Id("d").Op(":=").Id("c").Dot("DataOf").Call(jen.Id("ix")),
				jen.If(jen.Id("d").Op("==").Nil()).Block(jen.Return(jen.Qual("fmt", "Errorf").Call(
					jen.Lit("element %v is not stored on this rank"), jen.Id("ix")))),
				jen.Id("task").Dot("SetFlow").Call(jen.Id("i"), jen.Id("d").Dot("Host").Call()),
				jen.Return(jen.Nil()))
		case helperNew:
			// func <p>New(task *rt.Task, i int, arena string) error
			f.Commentf("%s binds flow i of task to a new copy from the arena registered as arena (NEW).", name)
			f.Func().Id(name).Params(task(), jen.Id("i").Int(), jen.Id("arena").String()).Error().Block(
				jen.List(jen.Id("c"), jen.Err()).Op(":=").Id("task").Dot("Taskpool").Call().Dot("NewCopy").Call(jen.Id("arena")),
				jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
				jen.Id("task").Dot("SetFlow").Call(jen.Id("i"), jen.Id("c")),
				jen.Return(jen.Nil()))
		case helperCheckCollection:
			g.emitCheckCollection(f, name)
		}
		f.Line()
	}
}

// emitCheckCollection emits the constructor's check of a data collection:
//
//	func <p>CheckCollection(c rt.Collection, dims int) error
//
// It rejects a nil collection (a nil pointer included), an rt.TiledMatrix or rt.Vector whose
// process grid does not contain its rank or whose dimensions do not match the number of
// arguments the program uses, and whatever a Validate() error method of the collection
// rejects.
func (g *generator) emitCheckCollection(f *jen.File, name string) {
	bad := func(format string, args ...jen.Code) jen.Code {
		return jen.Return(jen.Qual("fmt", "Errorf").Call(append([]jen.Code{jen.Lit(format + ": %w")},
			append(args, jen.Id(g.argErr()))...)...))
	}
	rv := jen.Qual("reflect", "ValueOf").Call(jen.Id("c"))
	f.Commentf("%s checks a data collection given to New%s: not nil, a process grid that", name, g.name)
	f.Comment("contains its rank, as many dimensions as the program's references use, and whatever its")
	f.Comment("own Validate method checks.")
	f.Func().Id(name).Params(jen.Id("c").Qual(rtPath, "Collection"), jen.Id("dims").Int()).Error().Block(
		jen.If(jen.Id("c").Op("==").Nil()).Block(bad("is nil")),
		jen.Switch(jen.Id("v").Op(":=").Add(rv), jen.Id("v").Dot("Kind").Call()).Block(
			jen.Case(jen.Qual("reflect", "Pointer"), jen.Qual("reflect", "Map"), jen.Qual("reflect", "Slice"),
				jen.Qual("reflect", "Func"), jen.Qual("reflect", "Chan"), jen.Qual("reflect", "Interface")).Block(
				jen.If(jen.Id("v").Dot("IsNil").Call()).Block(bad("is a nil %s", jen.Id("v").Dot("Type").Call())),
			),
		),
		jen.Switch(jen.Id("c").Op(":=").Id("c").Assert(jen.Type())).Block(
			jen.Case(jen.Op("*").Qual(rtPath, "TiledMatrix")).Block(
				jen.If(jen.Id("dims").Op("!=").Lit(2)).Block(bad("is a TiledMatrix (2 indices) but the program uses %d", jen.Id("dims"))),
				jen.If(jen.Id("c").Dot("P").Op("<").Lit(1).Op("||").Id("c").Dot("Q").Op("<").Lit(1).Op("||").Id("c").Dot("Rank").Op("<").Lit(0).Op("||").
					Id("c").Dot("Rank").Op(">=").Id("c").Dot("P").Op("*").Id("c").Dot("Q")).Block(
					bad("process grid %dx%d does not contain rank %d", jen.Id("c").Dot("P"), jen.Id("c").Dot("Q"), jen.Id("c").Dot("Rank"))),
				jen.If(jen.Id("c").Dot("MB").Op("<").Lit(1).Op("||").Id("c").Dot("NB").Op("<").Lit(1).Op("||").
					Id("c").Dot("MT").Op("!=").Parens(jen.Id("c").Dot("M").Op("+").Id("c").Dot("MB").Op("-").Lit(1)).Op("/").Id("c").Dot("MB").Op("||").
					Id("c").Dot("NT").Op("!=").Parens(jen.Id("c").Dot("N").Op("+").Id("c").Dot("NB").Op("-").Lit(1)).Op("/").Id("c").Dot("NB")).Block(
					bad("%dx%d matrix in %dx%d tiles of %dx%d is inconsistent", jen.Id("c").Dot("M"), jen.Id("c").Dot("N"),
						jen.Id("c").Dot("MT"), jen.Id("c").Dot("NT"), jen.Id("c").Dot("MB"), jen.Id("c").Dot("NB")))),
			jen.Case(jen.Op("*").Qual(rtPath, "Vector")).Block(
				jen.If(jen.Id("dims").Op("!=").Lit(1)).Block(bad("is a Vector (1 index) but the program uses %d", jen.Id("dims"))),
				jen.If(jen.Id("c").Dot("Ranks").Op("<").Lit(1).Op("||").Id("c").Dot("Rank").Op("<").Lit(0).Op("||").
					Id("c").Dot("Rank").Op(">=").Id("c").Dot("Ranks")).Block(
					bad("%d ranks do not contain rank %d", jen.Id("c").Dot("Ranks"), jen.Id("c").Dot("Rank"))),
				jen.If(jen.Id("c").Dot("NB").Op("<").Lit(1).Op("||").Id("c").Dot("NT").Op("!=").
					Parens(jen.Id("c").Dot("N").Op("+").Id("c").Dot("NB").Op("-").Lit(1)).Op("/").Id("c").Dot("NB")).Block(
					bad("vector of %d in %d blocks of %d is inconsistent", jen.Id("c").Dot("N"), jen.Id("c").Dot("NT"), jen.Id("c").Dot("NB"))),
			),
		),
		jen.If(jen.List(jen.Id("v"), jen.Id("ok")).Op(":=").Id("c").Assert(jen.Interface(jen.Id("Validate").Params().Error())), jen.Id("ok")).Block(
			jen.If(jen.Err().Op(":=").Id("v").Dot("Validate").Call(), jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit("%w: %w"), jen.Id(g.argErr()), jen.Err())))),
		jen.Return(jen.Nil()),
	)
}
