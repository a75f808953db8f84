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
	nHelpers
)

var helperNames = [nHelpers]string{"B2I", "Flow", "Element", "New"}

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
		}
		f.Line()
	}
}
