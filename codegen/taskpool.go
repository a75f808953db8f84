package codegen

// The taskpool type and its constructor (docs/language.md, "Globals").
//
//	// <Name> is the taskpool of <file.jdf>. ...
//	type <Name> struct {
//		*rt.Taskpool
//		<global> <type> // one field per global, in declaration order
//	}
//
//	// Err<Name>Argument is wrapped by the errors of New<Name>.
//	var (
//		Err<Name>Argument = errors.New("<name>: bad argument")
//		Err<Name>Graph    = errors.New("<name>: invalid task graph")
//	)
//
//	func New<Name>(<non-hidden globals>) (*<Name>, error) {
//		<checks: collections not nil and well formed, sizes not negative>
//	//line <file.jdf>:<L>
//		<hidden> := <default>          // in declaration order, from earlier globals
//		tp := &<Name>{<global>: <global>, ...}
//		tp.Taskpool = rt.NewTaskpool("<Name>", tp, &<class descriptors>...)
//		return tp, nil
//	}

import (
	"slices"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/jdf2go/jdf2go/parser"
)

// goType returns the Go type of a global: its type text, or rt.Collection for a collection
// declared implicitly.
func goType(gl *parser.Global) jen.Code {
	if gl.Type == "" {
		return jen.Qual(rtPath, "Collection")
	}
	return jen.Op(gl.Type)
}

func (g *generator) argErr() string { return "Err" + g.name + "Argument" }

// taskpool declares the taskpool type and the errors of New<Name> (constructor).
func (g *generator) taskpool(f *jen.File) {
	fields := []jen.Code{jen.Op("*").Qual(rtPath, "Taskpool")}
	for _, gl := range g.prog.Globals {
		st := jen.Id(g.field(gl)).Add(goType(gl))
		switch {
		case gl.Implicit:
			st.Comment("collection declared implicitly")
		case gl.Hidden && gl.Default != nil:
			st.Comment("hidden: computed by New" + g.name)
		case gl.Hidden:
			st.Comment("hidden: set it before adding the taskpool to a Context")
		}
		fields = append(fields, st)
	}
	f.Commentf("%s is the taskpool of %s: its globals and the rt.Taskpool that runs it. Build it with", g.name, g.file)
	f.Commentf("New%s, check it with Verify, add its Taskpool to an rt.Context and Wait for it.", g.name)
	f.Type().Id(g.name).Struct(fields...)
	f.Line()

	f.Commentf("Errors wrapped by those of New%s (%s) and of Verify and WriteDOT (%s).", g.name, g.argErr(), g.graphErr())
	f.Var().Defs(
		jen.Id(g.argErr()).Op("=").Qual("errors", "New").Call(jen.Lit(strings.ToLower(g.name)+": bad argument")),
		jen.Id(g.graphErr()).Op("=").Qual("errors", "New").Call(jen.Lit(strings.ToLower(g.name)+": invalid task graph")))
	f.Line()
}

// sizeGlobals returns the int globals that bound a range of a definition or a named range:
// the constructor rejects negative values for them.
func (g *generator) sizeGlobals() map[*parser.Global]posT {
	out := map[*parser.Global]posT{}
	mark := func(e parser.Expr) {
		if e == nil {
			return
		}
		parser.Inspect(e, func(n parser.Node) bool {
			if nm, ok := n.(*parser.Name); ok && nm.Ref == parser.RefGlobal && nm.Global.Type == "int" && !nm.Global.Hidden {
				if _, seen := out[nm.Global]; !seen {
					out[nm.Global] = nm.Pos()
				}
			}
			return true
		})
	}
	var ranges func(e parser.Expr)
	ranges = func(e parser.Expr) {
		switch r := e.(type) {
		case *parser.RangeExpr:
			mark(r.From)
			mark(r.To)
			mark(r.Step)
		case *parser.LocalSetExpr:
			for _, nr := range r.Named {
				ranges(nr.Value)
			}
		}
	}
	for _, tc := range g.prog.Classes {
		for _, d := range tc.Defs {
			ranges(d.Value)
		}
	}
	return out
}

func (g *generator) constructor(f *jen.File) {
	var params []jen.Code
	var body []jen.Code
	fail := func(msg ...jen.Code) jen.Code {
		return jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(msg...))
	}
	sizes := g.sizeGlobals()
	for _, gl := range g.prog.Globals {
		if gl.Hidden {
			continue
		}
		v := userParam(gl.Name)
		params = append(params, jen.Id(v).Add(goType(gl)))
		if gl.Collection {
			body = append(body, g.checkCollection(gl, fail))
		}
		if pos, ok := sizes[gl]; ok {
			body = append(body, jen.If(jen.Id(v).Op("<").Lit(0)).Block(
				fail(jen.Lit("New"+g.name+": %s is %d, want at least 0 (it bounds a range at %s): %w"),
					jen.Lit(gl.Name), jen.Id(v), jen.Lit(g.where(pos)), jen.Id(g.argErr()))))
		}
	}
	// Hidden globals, in declaration order, from the earlier ones (local variables here).
	s := &scope{g: g, global: func(gl *parser.Global) jen.Code { return jen.Id(userParam(gl.Name)) },
		use: &usage{defs: map[*parser.Definition]bool{}}}
	for _, gl := range g.prog.Globals {
		if !gl.Hidden {
			continue
		}
		v := userParam(gl.Name)
		if gl.Default == nil {
			body = append(body, jen.Var().Id(v).Add(goType(gl)))
			continue
		}
		var val jen.Code
		switch e := gl.Default.(type) {
		case *parser.StringLit:
			// One Go expression, the whole right-hand side: no parentheses needed.
			text, pos, _, _ := parser.CodeText(e)
			g.checkCode(text, pos, true)
			val = jen.Op(text)
		case *parser.InlineCode:
			val = g.pastedCode(e, goType(gl))
		default:
			val = s.expr(e, globalKind(gl))
		}
		body = append(body,
			g.lineDirective(gl.Default.Pos()),
			jen.Var().Id(v).Add(goType(gl)).Op("=").Add(val),
			g.restoreDirective())
		if gl.Collection {
			body = append(body, g.checkCollection(gl, fail))
		}
	}
	var vals []jen.Code
	for _, gl := range g.prog.Globals {
		vals = append(vals, jen.Id(g.field(gl)).Op(":").Id(userParam(gl.Name)))
	}
	classes := []jen.Code{jen.Lit(g.name), jen.Id("tp")}
	for _, c := range g.classes {
		classes = append(classes, jen.Op("&").Id(c.v))
	}
	body = append(body,
		jen.Id("tp").Op(":=").Op("&").Id(g.name).Values(vals...),
		jen.Id("tp").Dot("Taskpool").Op("=").Qual(rtPath, "NewTaskpool").Call(classes...))
	body = append(body, g.registerArenas(s)...)
	body = append(body, jen.Return(jen.Id("tp"), jen.Nil()))

	f.Commentf("New%s returns the taskpool of %s for the given globals, in declaration order. It rejects a", g.name, g.file)
	f.Commentf("nil or malformed data collection and a negative size (%s), and computes the hidden globals.", g.argErr())
	f.Func().Id("New"+g.name).Params(params...).Params(jen.Op("*").Id(g.name), jen.Error()).Block(body...)
	f.Line()
}

// checkCollection emits the check of a collection global (rt.VerifyCollection): not nil,
// well formed, and indexed with the number of arguments the program uses.
//
//	if err := rt.VerifyCollection(<global>, <arity>, Err<Name>Argument); err != nil {
//		return nil, fmt.Errorf("New<Name>: <global>: %w", err)
//	}
func (g *generator) checkCollection(gl *parser.Global, fail func(...jen.Code) jen.Code) jen.Code {
	return jen.If(jen.Err().Op(":=").Qual(rtPath, "VerifyCollection").Call(
		jen.Id(userParam(gl.Name)), jen.Lit(gl.Arity), jen.Id(g.argErr())), jen.Err().Op("!=").Nil()).Block(
		fail(jen.Lit("New"+g.name+": "+gl.Name+": %w"), jen.Err()))
}

// classProperties emits the accessor of the exported class properties (properties
// jdf2go does not interpret, such as flops), when there are any.
//
//	func (tp *<Name>) Property(class, name string, l *rt.Locals) (any, bool)
func (g *generator) classProperties(p *part) {
	class := func(i int) jen.Code {
		c := g.classes[i]
		var inner []jen.Code
		for _, p := range c.exported {
			s := c.scope(nil)
			s.inline = &inlineSite{tp: jen.Id("tp")}
			typ, kind := propType(p.TypeWord)
			var val jen.Code
			switch p.Value.(type) {
			case *parser.InlineCode, *parser.StringLit:
				val = s.inlineTyped(p.Value, typ)
			default:
				val = jen.Add(typ).Call(s.expr(p.Value, kind))
			}
			stmts := append(c.bindLocals(s, jen.Id("l")), jen.Return(val, jen.True()))
			inner = append(inner, jen.Case(jen.Lit(p.Name)).Block(stmts...))
		}
		if len(inner) == 0 {
			return nil
		}
		return jen.Case(jen.Lit(c.tc.Name)).Block(jen.Switch(jen.Id("name")).Block(inner...))
	}
	if !slices.ContainsFunc(g.classes, func(c *classGen) bool { return len(c.exported) > 0 }) {
		return
	}
	fn := func(cases []jen.Code) jen.Code {
		return jen.Func().Params(jen.Id("tp").Op("*").Id(g.name)).Id("Property").Params(
			jen.List(jen.Id("class"), jen.Id("name")).String(), jen.Id("l").Op("*").Qual(rtPath, "Locals")).Params(
			jen.Any(), jen.Bool()).Block(
			jen.Switch(jen.Id("class")).Block(cases...),
			jen.Return(jen.Nil(), jen.False()))
	}
	// The cases, one per class with exported properties, are a list (write.go); no class name
	// is "-".
	cases := &list{n: len(g.classes), elem: class, ph: jen.Case(jen.Lit("-")).Block(), mark: `case "-":`, wrap: fn}
	f := jen.NewFile("")
	f.Comment("Property evaluates the exported property name of a task class (a class property that")
	f.Comment("jdf2go does not interpret, such as flops) for the instance whose locals are in l.")
	f.Comment("It reports false when the class has no such property.")
	f.Add(fn([]jen.Code{cases.ph}))
	f.Line()
	g.renderLists(p, f, cases)
}

// propType maps the leading type word of a property to a Go type.
func propType(word string) (jen.Code, parser.Kind) {
	switch word {
	case "double":
		return jen.Float64(), parser.KindOpaque
	case "float":
		return jen.Float32(), parser.KindOpaque
	case "int64_t":
		return jen.Int64(), parser.KindInt
	}
	return jen.Int(), parser.KindInt
}

var _ = strconv.Itoa
