package codegen

// Inline code (`%{ return expr %}`, `inline_c %{ %}`, `%c{ %}`) and strings pasted as code
// (`"descA.MT - 1"`) become generated functions. Inside, the class's visible definitions and
// the named-range indices in scope are int parameters under their JDF names, the globals the
// code mentions are bound under their JDF names, and tp is the taskpool (docs/language.md,
// "Code blocks"). They return int in numeric places and bool in guards, or the type a property
// wants (string for an arena name, int64 for time_estimate, ...).
//
//	// <prefix><Class>Inline<N> is the inline code at <file.jdf:L:C>.
//	func <prefix><Class>Inline<N>(tp *<Name>, <def> int, ...) <type> {
//		<global> := tp.<field>
//		_ = <global>
//	//line <file.jdf>:<L>
//		<user code>            (a string becomes: return (<text>))
//	//line <file_jdf.go>:<restored>
//	}

import (
	"go/scanner"
	"go/token"
	"strconv"

	"github.com/dave/jennifer/jen"
	"github.com/jdf2go/jdf2go/parser"
)

// inlineSite says how generated inline functions are called from a scope.
type inlineSite struct {
	tp    jen.Code // the *<Name> value at the call site
	extra []inlineParam
}

// inlineParam is one parameter of an inline function beyond the JDF names.
type inlineParam struct {
	name  string
	typ   jen.Code
	value jen.Code
}

// inlineFn is a generated inline function.
type inlineFn struct {
	name   string
	defs   []*parser.Definition
	named  []*parser.NamedRange
	nextra int
}

// inlineCall translates inline code or a pasted string for a place that wants kind want.
func (s *scope) inlineCall(e parser.Expr, want parser.Kind) gx {
	typ := jen.Int()
	kind := parser.KindInt
	if want == parser.KindBool {
		typ, kind = jen.Bool(), parser.KindBool
	}
	return gx{code: s.inlineTyped(e, typ), kind: kind, prec: precPrimary}
}

// inlineTyped translates inline code or a pasted string as a value of Go type typ.
func (s *scope) inlineTyped(e parser.Expr, typ jen.Code) jen.Code {
	g := s.g
	if s.inline == nil {
		return g.pastedCode(e, typ)
	}
	fn, ok := g.inlines[e]
	if !ok {
		fn = g.newInline(s, e, typ)
		g.inlines[e] = fn
	}
	args := []jen.Code{s.inline.tp}
	for _, d := range fn.defs {
		v, ok := s.defVar[d]
		if !ok {
			g.errorf(e.Pos(), "codegen: inline code used in a scope without %s", d.Name)
			continue
		}
		s.use.defs[d] = true
		args = append(args, v)
	}
	for _, nr := range fn.named {
		args = append(args, s.namedVar[nr])
	}
	for _, p := range s.inline.extra {
		args = append(args, p.value)
	}
	s.use.g = true
	return jen.Id(fn.name).Call(args...)
}

// visible returns the definitions and named indices visible in s, without the ones that a
// later (inner) name shadows.
func (s *scope) visible() ([]*parser.Definition, []*parser.NamedRange) {
	taken := map[string]bool{}
	var named []*parser.NamedRange
	for i := len(s.named) - 1; i >= 0; i-- {
		nr := s.named[i]
		if !taken[nr.Name] {
			taken[nr.Name] = true
			named = append([]*parser.NamedRange{nr}, named...)
		}
	}
	var defs []*parser.Definition
	if s.class != nil {
		for _, d := range s.class.tc.Defs[:s.ndefs] {
			if !taken[d.Name] {
				taken[d.Name] = true
				defs = append(defs, d)
			}
		}
	}
	return defs, named
}

func (g *generator) newInline(s *scope, e parser.Expr, typ jen.Code) *inlineFn {
	g.ninline++
	owner := ""
	if s.class != nil {
		owner = s.class.id
	}
	fn := &inlineFn{name: g.pfx + owner + "Inline" + strconv.Itoa(g.ninline)}
	fn.defs, fn.named = s.visible()
	fn.nextra = len(s.inline.extra)

	params := []jen.Code{jen.Id("tp").Op("*").Id(g.name)}
	bound := map[string]bool{}
	for _, d := range fn.defs {
		params = append(params, jen.Id(userParam(d.Name)).Int())
		bound[d.Name] = true
	}
	for _, nr := range fn.named {
		params = append(params, jen.Id(userParam(nr.Name)).Int())
		bound[nr.Name] = true
	}
	for _, p := range s.inline.extra {
		params = append(params, jen.Id(p.name).Add(p.typ))
		bound[p.name] = true
	}
	text, pos, isString, _ := parser.CodeText(e)
	g.checkCode(text, pos, isString)
	var body []jen.Code
	// Bind the globals the code mentions, under their JDF names.
	for _, gl := range g.prog.Globals {
		if bound[gl.Name] || !mentions(text, gl.Name) {
			continue
		}
		v := userParam(gl.Name)
		body = append(body,
			jen.Id(v).Op(":=").Id("tp").Dot(g.field(gl)),
			jen.Id("_").Op("=").Id(v))
	}
	if isString {
		body = append(body, g.lineDirective(pos), jen.Return(jen.Parens(jen.Op(text))))
	} else {
		body = append(body, g.userCode(text, pos)...)
	}
	body = append(body, g.restoreDirective())
	g.inlineDecls = append(g.inlineDecls,
		jen.Commentf("%s is the inline code at %s.", fn.name, g.where(e.Pos())),
		jen.Func().Id(fn.name).Params(params...).Add(typ).Block(body...),
		jen.Line())
	return fn
}

// pastedCode puts inline code or a pasted string in place, for the constructor where the
// globals are local variables: a string as (text), code as a function literal called at
// once.
func (g *generator) pastedCode(e parser.Expr, typ jen.Code) jen.Code {
	text, pos, isString, _ := parser.CodeText(e)
	g.checkCode(text, pos, isString)
	if isString {
		return jen.Parens(jen.Op(text))
	}
	body := append(g.userCode(text, pos), g.restoreDirective())
	return jen.Func().Params().Add(typ).Block(body...).Call()
}

// mentions reports whether Go text contains the identifier name as a token.
func mentions(text, name string) bool {
	var sc scanner.Scanner
	fset := token.NewFileSet()
	f := fset.AddFile("", -1, len(text))
	sc.Init(f, []byte(text), nil, 0)
	for {
		_, tok, lit := sc.Scan()
		if tok == token.EOF {
			return false
		}
		if tok == token.IDENT && lit == name {
			return true
		}
	}
}
