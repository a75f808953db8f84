package codegen

// Small functions shared by the generated code of one program, emitted once each and only
// when used. Their names carry the program's prefix, so several generated files can live in
// one package. Flow access and binding (rt.FlowValue, Task.BindElement, Task.BindNew) live in
// rt instead, shared by every program.

import (
	"github.com/dave/jennifer/jen"
)

type helperKind int

const (
	helperB2I helperKind = iota
	nHelpers
)

var helperNames = [nHelpers]string{"B2I"}

// helper returns the name of a helper and marks it used.
func (g *generator) helper(k helperKind) string {
	g.helpers[k] = true
	return g.pfx + helperNames[k]
}

func (g *generator) emitHelpers(f *jen.File) {
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
		}
		f.Line()
	}
}
