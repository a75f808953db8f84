package codegen

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/jdf2go/jdf2go/parser"
)

// Automatic arenas. A NEW input or a WRITE flow takes its buffer from the arena that its
// dependency's type names (DEFAULT without one), which a program registers with SetArena
// before Add. When a dependency that allocates also gives the buffer's length, with a count
// property, and the flow's Go type is a slice, the constructor registers the arena itself:
//
//	//line <file.jdf:L of the count>
//	<prefix>Count<i> := <count>
//	//line <generated file:L>
//	tp.SetArena("<name>", rt.NewSliceArena[<element type>](<prefix>Count<i>))
//
// The count may use only globals: it is evaluated once, in the constructor. A program may
// still replace the arena with SetArena before Add. The first such dependency of an arena
// decides it; a later one with another element type draws a warning.

// autoArena is an arena the constructor registers.
type autoArena struct {
	name  string
	elem  string
	count parser.Expr
}

// autoArenas returns the arenas whose length the program gives, in source order.
func (g *generator) autoArenas() []autoArena {
	var out []autoArena
	seen := map[string]int{}
	for _, tc := range g.prog.Classes {
		for _, f := range tc.Flows {
			if f.Access == parser.AccessCTL {
				continue
			}
			for _, d := range parser.AllocatingDeps(f) {
				p := d.Props.Get("count")
				if p == nil {
					continue
				}
				name, ok := parser.ConstArenaName(d.Attrs.Type)
				if !ok {
					g.warnf(p.NamePos, "count: the arena of this dependency is computed, so gen cannot register it; call SetArena")
					continue
				}
				elem, ok := strings.CutPrefix(f.GoType, "[]")
				if !ok {
					g.warnf(p.NamePos, "count: flow %s is a %s, not a slice, so gen cannot make arena %q; call SetArena", f.Name, f.GoType, name)
					continue
				}
				if !globalsOnly(p.Value) {
					g.warnf(p.Value.Pos(), "count uses a task's definitions, so arena %q cannot be made once; use globals only, or call SetArena", name)
					continue
				}
				if i, ok := seen[name]; ok {
					if out[i].elem != elem {
						g.warnf(p.NamePos, "arena %q holds []%s elsewhere; this count is ignored", name, out[i].elem)
					}
					continue
				}
				seen[name] = len(out)
				out = append(out, autoArena{name: name, elem: elem, count: p.Value})
			}
		}
	}
	return out
}

// globalsOnly reports whether e names nothing but globals (and is not code pasted as text).
func globalsOnly(e parser.Expr) bool {
	ok := true
	parser.Inspect(e, func(n parser.Node) bool {
		switch v := n.(type) {
		case *parser.Name:
			if v.Ref != parser.RefGlobal {
				ok = false
			}
		case *parser.InlineCode, *parser.StringLit:
			ok = false
		}
		return ok
	})
	return ok
}

// registerArenas emits the constructor's SetArena calls for the automatic arenas; s is the
// constructor's scope, where the globals are local variables.
func (g *generator) registerArenas(s *scope) []jen.Code {
	var out []jen.Code
	for i, a := range g.autoArenas() {
		n := fmt.Sprintf("%sCount%d", g.pfx, i)
		out = append(out,
			g.lineDirective(a.count.Pos()),
			jen.Id(n).Op(":=").Add(s.expr(a.count, parser.KindInt)),
			g.restoreDirective(),
			jen.Id("tp").Dot("SetArena").Call(jen.Lit(a.name),
				jen.Qual(rtPath, "NewSliceArena").Types(jen.Op(a.elem)).Call(jen.Id(n))))
	}
	return out
}

// unsupportedOptions warns about the options of PaRSEC's termination that jdf2go's runtime
// does not read: termination is counted per rank from the space, and a body says which
// counted tasks will not run with Taskpool.SkipTasks.
func (g *generator) unsupportedOptions() {
	for _, o := range g.prog.Options {
		switch p := o.Prop; p.Name {
		case "termdet":
			g.warnf(p.NamePos, "termdet is not supported by jdf2go's runtime; ignored: termination is counted on each rank, "+
				"and bodies call tp.SkipTasks for counted tasks that will not run")
		case "nb_local_tasks_fn":
			g.warnf(p.NamePos, "nb_local_tasks_fn is not supported by jdf2go's runtime; ignored: rt counts the local tasks "+
				"by walking the execution space")
		}
	}
}

// ignoredGlobalProps warns about PaRSEC's memory-layout properties of globals, which jdf2go
// accepts but does not use: aligned ties a global's data distribution to another's, size
// gives the bytes of a global's memory. A Go value carries its own length, and a collection
// lays out its tiles itself, so either would otherwise be silently dropped.
func (g *generator) ignoredGlobalProps() {
	for _, gl := range g.prog.Globals {
		if p := gl.Props.Get("size"); p != nil {
			g.warnf(p.NamePos, "size on global %s is not used by jdf2go; ignored: a Go value carries its own size", gl.Name)
		}
		if p := gl.Props.Get("aligned"); p != nil {
			g.warnf(p.NamePos, "aligned on global %s is not used by jdf2go; ignored: a collection lays out its own data", gl.Name)
		}
	}
}
