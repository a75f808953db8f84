package codegen

// Expressions: JDF expressions (docs/language.md, "Expressions" with the Go-dialect extensions)
// become Go expressions. JDF mixes numbers and conditions as C does; Go does not, so every
// expression is translated for the kind its place wants (parser.Kind): a number used as a
// condition becomes `x != 0`, a condition used as a number goes through the generated
// bool-to-int helper. Operators are re-parenthesised for Go's precedence, which differs from
// JDF's (in JDF `a << b + c` shifts by b+c and `^` binds looser than `==`). A ternary becomes
// an immediately called function literal, so only the taken branch is evaluated. Inline
// code and strings pasted as code become generated functions (inline.go).

import (
	"github.com/dave/jennifer/jen"
	"github.com/jdf2go/jdf2go/parser"
)

// Go operator precedence levels, plus two for operands that never need parentheses.
const (
	precOrOr    = 1
	precAndAnd  = 2
	precCompare = 3
	precAdd     = 4
	precMul     = 5
	precUnary   = 6
	precPrimary = 7
)

// gx is a translated expression.
type gx struct {
	code jen.Code
	kind parser.Kind
	prec int
	neg  bool // the text starts with '-' (unary minus or a negative literal)
}

func goPrec(op parser.Op) int {
	switch op {
	case parser.OpLOr, parser.OpOr1:
		return precOrOr
	case parser.OpLAnd, parser.OpAnd1:
		return precAndAnd
	case parser.OpEq, parser.OpNe, parser.OpLt, parser.OpLe, parser.OpGt, parser.OpGe:
		return precCompare
	case parser.OpAdd, parser.OpSub, parser.OpXor:
		return precAdd
	}
	return precMul // * / % << >>
}

// paren wraps x in parentheses when its precedence is below min.
func paren(x gx, min int) gx {
	if x.prec >= min {
		return x
	}
	return gx{code: jen.Parens(x.code), kind: x.kind, prec: precPrimary}
}

// scope says how JDF names translate in one generated function.
type scope struct {
	g     *generator
	class *classGen // nil outside a task class
	// ndefs: class.tc.Defs[:ndefs] are visible.
	ndefs int
	// named lists the named-range indices in scope, innermost last.
	named []*parser.NamedRange
	// vars maps visible definitions and named indices to their Go expressions.
	defVar   map[*parser.Definition]jen.Code
	namedVar map[*parser.NamedRange]jen.Code
	// global returns the Go expression of a global.
	global func(*parser.Global) jen.Code
	// use records what the translated code referenced, so that callers bind only that. It
	// is shared by the scopes derived from one another (withNamed).
	use *usage
	// inline says how generated inline functions are called here; nil means inline code is
	// pasted in place (the constructor, where the globals are local variables).
	inline *inlineSite
}

func (s *scope) withNamed(nr ...*parser.NamedRange) *scope {
	n := *s
	n.named = append(append([]*parser.NamedRange{}, s.named...), nr...)
	return &n
}

// usage is what translated code referenced: definitions, and whether a global was used.
type usage struct {
	defs map[*parser.Definition]bool
	g    bool
}

// expr translates e for a place that wants kind want (KindOpaque: as it is).
func (s *scope) expr(e parser.Expr, want parser.Kind) jen.Code {
	return s.conv(s.tr(e, want), want).code
}

// conv converts x to the wanted kind.
func (s *scope) conv(x gx, want parser.Kind) gx {
	switch {
	case want == parser.KindBool && x.kind == parser.KindInt:
		x = paren(x, precCompare+1)
		return gx{code: jen.Add(x.code).Op("!=").Lit(0), kind: parser.KindBool, prec: precCompare}
	case want == parser.KindInt && x.kind == parser.KindBool:
		return gx{code: jen.Id(s.g.helper(helperB2I)).Call(x.code), kind: parser.KindInt, prec: precPrimary}
	}
	return x
}

// tr translates e; want is passed down to ternaries and inline code, which produce the
// wanted kind themselves.
func (s *scope) tr(e parser.Expr, want parser.Kind) gx {
	switch e := e.(type) {
	case *parser.IntLit:
		if want == parser.KindBool {
			return gx{code: jen.Lit(e.Value != 0), kind: parser.KindBool, prec: precPrimary}
		}
		x := gx{code: jen.Lit(int(e.Value)), kind: parser.KindInt, prec: precPrimary}
		if e.Value < 0 {
			x.prec, x.neg = precUnary, true
		}
		return x
	case *parser.Name:
		return s.name(e)
	case *parser.SelectorExpr:
		x := s.tr(e.X, parser.KindOpaque)
		x = paren(x, precPrimary)
		return gx{code: jen.Add(x.code).Dot(e.Sel), kind: parser.KindOpaque, prec: precPrimary}
	case *parser.CallExpr:
		fun := paren(s.tr(e.Fun, parser.KindOpaque), precPrimary)
		args := make([]jen.Code, len(e.Args))
		for i, a := range e.Args {
			args[i] = s.tr(a, parser.KindOpaque).code
		}
		return gx{code: jen.Add(fun.code).Call(args...), kind: parser.KindOpaque, prec: precPrimary}
	case *parser.ParenExpr:
		x := s.tr(e.X, want)
		if x.prec == precPrimary {
			return x
		}
		return gx{code: jen.Parens(x.code), kind: x.kind, prec: precPrimary}
	case *parser.UnaryExpr:
		if e.Op == parser.OpNot {
			x := paren(s.conv(s.tr(e.X, parser.KindBool), parser.KindBool), precUnary)
			return gx{code: jen.Op("!").Add(x.code), kind: parser.KindBool, prec: precUnary}
		}
		x := s.conv(s.tr(e.X, parser.KindInt), parser.KindInt)
		if x.neg {
			x = gx{code: jen.Parens(x.code), kind: x.kind, prec: precPrimary}
		}
		x = paren(x, precUnary)
		return gx{code: jen.Op("-").Add(x.code), kind: parser.KindInt, prec: precUnary, neg: true}
	case *parser.BinaryExpr:
		return s.binary(e)
	case *parser.TernaryExpr:
		return s.ternary(e, want)
	case *parser.StringLit, *parser.InlineCode:
		return s.inlineCall(e, want)
	case *parser.RangeExpr, *parser.LocalSetExpr:
		s.g.errorf(e.Pos(), "a range is only allowed in a definition, a dependency argument or a named range")
		return gx{code: jen.Lit(0), kind: parser.KindInt, prec: precPrimary}
	}
	s.g.errorf(e.Pos(), "codegen: unexpected expression %T", e)
	return gx{code: jen.Lit(0), kind: parser.KindInt, prec: precPrimary}
}

func (s *scope) binary(e *parser.BinaryExpr) gx {
	p := goPrec(e.Op)
	ok := e.Op.OperandKind()
	x := paren(s.conv(s.tr(e.X, ok), ok), p)
	y := paren(s.conv(s.tr(e.Y, ok), ok), p+1)
	kind := parser.KindInt
	if p <= precCompare {
		kind = parser.KindBool
	}
	return gx{code: jen.Add(x.code).Op(e.Op.GoString()).Add(y.code), kind: kind, prec: p}
}

// ternary emits func() T { if c { return a }; return b }(), which evaluates only the taken
// branch; Go inlines such literals.
func (s *scope) ternary(e *parser.TernaryExpr, want parser.Kind) gx {
	kind := want
	if kind == parser.KindOpaque {
		kind = parser.ResultKind(e)
		if kind == parser.KindOpaque {
			kind = parser.KindInt
		}
	}
	typ := jen.Int()
	if kind == parser.KindBool {
		typ = jen.Bool()
	}
	c := s.expr(e.Cond, parser.KindBool)
	a := s.expr(e.Then, kind)
	b := s.expr(e.Else, kind)
	code := jen.Func().Params().Add(typ).Block(
		jen.If(c).Block(jen.Return(a)),
		jen.Return(b),
	).Call()
	return gx{code: code, kind: kind, prec: precPrimary}
}

// name translates a resolved name.
func (s *scope) name(n *parser.Name) gx {
	switch n.Ref {
	case parser.RefIndex:
		if v, ok := s.namedVar[n.Index]; ok {
			return gx{code: v, kind: parser.KindInt, prec: precPrimary}
		}
	case parser.RefDef:
		if v, ok := s.defVar[n.Def]; ok {
			s.use.defs[n.Def] = true
			return gx{code: v, kind: parser.KindInt, prec: precPrimary}
		}
	case parser.RefGlobal:
		s.use.g = true
		return gx{code: s.global(n.Global), kind: globalKind(n.Global), prec: precPrimary}
	}
	return gx{code: jen.Id(n.Name), kind: parser.KindOpaque, prec: precPrimary}
}

// globalKind is the kind of a global's value when its type is int or bool.
func globalKind(g *parser.Global) parser.Kind {
	switch g.Type {
	case "int":
		return parser.KindInt
	case "bool":
		return parser.KindBool
	}
	return parser.KindOpaque
}

// isCheap reports whether evaluating e costs no more than a few integer operations, so that
// a loop bound can be re-evaluated on every iteration instead of being hoisted.
func isCheap(e parser.Expr) bool {
	switch e := e.(type) {
	case *parser.IntLit:
		return true
	case *parser.Name:
		return e.Ref == parser.RefDef || e.Ref == parser.RefIndex || e.Ref == parser.RefGlobal
	case *parser.ParenExpr:
		return isCheap(e.X)
	case *parser.UnaryExpr:
		return isCheap(e.X)
	case *parser.BinaryExpr:
		return isCheap(e.X) && isCheap(e.Y)
	}
	return false
}

// hasRange reports whether a dependency target enumerates several instances (a range or a
// local set in an argument, or named ranges).
func hasRange(t *parser.Target, d *parser.Dep) bool {
	if len(d.Named) > 0 || len(t.Named) > 0 {
		return true
	}
	for _, a := range t.Args {
		switch a.(type) {
		case *parser.RangeExpr, *parser.LocalSetExpr:
			return true
		}
	}
	return false
}
