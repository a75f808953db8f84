package codegen

// Expressions: JDF expressions (docs/language.md, "Expressions" with the Go-dialect extensions)
// become Go expressions. JDF mixes numbers and conditions as C does; Go does not, so every
// expression is translated for the kind its place wants (parser.Kind): a number used as a
// condition becomes `x != 0`, a condition used as a number goes through the generated
// bool-to-int helper. Operators are re-parenthesised for Go's precedence, which differs from
// JDF's (in JDF `a << b + c` shifts by b+c and `^` binds looser than `==`). A ternary becomes
// if/else statements that assign a local, so only the taken branch is evaluated: the
// outermost ternary of an expression is an immediately called function literal holding
// them, and the ternaries inside it (in its branches, its condition or their operands) are
// more statements of the same literal, never literals of their own, so that the size and
// formatting time of the generated code stay linear in the nesting. Inline code and strings
// pasted as code become generated functions (inline.go).

import (
	"strconv"

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
	// flat is the function literal being filled with the statements of ternaries, nil
	// outside one.
	flat *flatFunc
	// hoist, when set, receives the statements of the ternaries that the expression always
	// evaluates (not on the right of && or ||), to run before the statement that uses it:
	// they become plain if/else assignments instead of a function literal.
	hoist *flatFunc
}

// flatFunc collects the statements of the ternaries of one expression (see ternary).
type flatFunc struct {
	stmts []jen.Code // the block being filled
	n     int        // temporaries declared so far
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
		sel := e.Sel
		if e.Field != "" {
			sel = e.Field // a PaRSEC descriptor field, as rt.TiledMatrix names it
		}
		return gx{code: jen.Add(x.code).Dot(sel), kind: parser.KindOpaque, prec: precPrimary}
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

// binary translates a chain of binary operators at one level (a + b + c ...) in a loop, as
// the chain is a tree as deep as it is long, on its left side.
func (s *scope) binary(e *parser.BinaryExpr) gx {
	chain, first := parser.LeftChain(e)
	x := s.tr(first, chain[len(chain)-1].Op.OperandKind())
	for i := len(chain) - 1; i >= 0; i-- {
		b := chain[i]
		p := goPrec(b.Op)
		ok := b.Op.OperandKind()
		l := paren(s.conv(x, ok), p)
		rs := s
		if p <= precAndAnd && s.hoist != nil {
			cond := *s // the right operand runs only sometimes: no hoisting
			cond.hoist = nil
			rs = &cond
		}
		r := paren(rs.conv(rs.tr(b.Y, ok), ok), p+1)
		kind := parser.KindInt
		if p <= precCompare {
			kind = parser.KindBool
		}
		x = gx{code: jen.Add(l.code).Op(b.Op.GoString()).Add(r.code), kind: kind, prec: p}
	}
	return x
}

// ternaryKind is the kind a ternary produces where want is wanted.
func ternaryKind(e *parser.TernaryExpr, want parser.Kind) parser.Kind {
	kind := want
	if kind == parser.KindOpaque {
		kind = parser.ResultKind(e)
		if kind == parser.KindOpaque {
			kind = parser.KindInt
		}
	}
	return kind
}

// tempPrefix starts the names of the temporaries of ternaries; goVar renames JDF names that
// look like one.
const tempPrefix = "tern"

// ternary translates c ? a : b. Where the scope hoists, it emits the declaration and the if
// statement into the hoisted statements, and the expression is the temporary. Outside a
// function literal of ternaries it emits
//
//	func() T { var tern0 T; if c { tern0 = a } else { tern0 = b }; return tern0 }()
//
// and inside one only the declaration and the if statement, in the literal's current block,
// and the expression is the temporary. A ternary in the else branch continues the chain as
// one more case of a switch when its condition needs no statements of its own
// (c1 ? a : c2 ? b : d), and assigns the same temporary, as does a ternary in the then branch.
func (s *scope) ternary(e *parser.TernaryExpr, want parser.Kind) gx {
	kind := ternaryKind(e, want)
	typ := jen.Int()
	if kind == parser.KindBool {
		typ = jen.Bool()
	}
	if s.flat != nil {
		v := s.temp()
		s.flat.stmts = append(s.flat.stmts, jen.Var().Id(v).Add(typ))
		s.assign(e, kind, v)
		return gx{code: jen.Id(v), kind: kind, prec: precPrimary}
	}
	if s.hoist != nil {
		inner := *s
		inner.flat = s.hoist
		return inner.ternary(e, kind)
	}
	inner := *s
	inner.flat = &flatFunc{}
	x := inner.ternary(e, kind)
	body := append(inner.flat.stmts, jen.Return(x.code))
	return gx{code: jen.Func().Params().Add(typ).Block(body...).Call(), kind: kind, prec: precPrimary}
}

// assign appends to the current block the statements that set v to the value of ternary e:
// one if/else, or one switch along the ternaries of the branches, so that the usual nestings
// (c1 ? a : c2 ? b : d, and c1 ? (c2 ? a : b) : d, as if !c1 ? d : c2 ? a : b) give no nested
// blocks; only a ternary in both branches nests the then branch in a block. (Nested blocks
// are indented, so deep ones would make the generated file quadratic in size.)
func (s *scope) assign(e *parser.TernaryExpr, kind parser.Kind, v string) {
	var conds []jen.Code
	var thens [][]jen.Code
	var rest parser.Expr // the final else
	for {
		// The condition of a case must be an expression: chain only when translating it
		// adds no statement (no ternary inside it); the first condition's statements go
		// before the if.
		saved := s.flat.stmts
		s.flat.stmts = nil
		c := s.expr(unparen(e.Cond), parser.KindBool) // a case needs no parentheses
		pre := s.flat.stmts
		s.flat.stmts = saved
		if len(pre) > 0 {
			if len(conds) > 0 {
				rest = e // else { ...; if c { } else { } }, by branch
				break
			}
			s.flat.stmts = append(s.flat.stmts, pre...)
		}
		then, els := unparen(e.Then), unparen(e.Else)
		thenT, thenIsT := then.(*parser.TernaryExpr)
		elsT, elsIsT := els.(*parser.TernaryExpr)
		if thenIsT && !elsIsT {
			conds = append(conds, jen.Op("!").Parens(c))
			thens = append(thens, s.branch(els, kind, v))
			e = thenT
			continue
		}
		conds = append(conds, c)
		thens = append(thens, s.branch(then, kind, v))
		if !elsIsT {
			rest = els
			break
		}
		e = elsT
	}
	last := s.branch(rest, kind, v)
	if len(conds) == 1 {
		s.flat.stmts = append(s.flat.stmts, jen.If(conds[0]).Block(thens[0]...).Else().Block(last...))
		return
	}
	// A chain is one switch, not an else-if chain: each if of an else-if chain ends in a
	// join block of its own that jumps to the join of the if around it, and the Go
	// compiler's SSA passes merge those one at a time, moving the temporary's growing list
	// of incoming values each time (time and memory quadratic in the chain's length); each
	// if also opens a scope inside the one before it. The cases of a switch are siblings
	// that all join at its end. They run as the chain did: the conditions in order until
	// one holds, then that branch only.
	if len(conds) > maxSwitchCases {
		s.chunkedSwitch(conds, thens, last)
		return
	}
	clauses := make([]jen.Code, 0, len(conds)+1)
	for i, c := range conds {
		clauses = append(clauses, jen.Case(c).Block(thens[i]...))
	}
	clauses = append(clauses, jen.Default().Block(last...))
	s.flat.stmts = append(s.flat.stmts, jen.Switch().Block(clauses...))
}

// maxSwitchCases is the most cases assign puts in one function: a longer chain is split
// (chunkedSwitch).
const maxSwitchCases = 64

// chunkedSwitch appends the statements of a chain of more than maxSwitchCases cases, which
// set the temporary of the chain in their branches (thens, then last if no condition
// holds). Some passes of the Go compiler are superlinear in the size of one function (facts
// about one operand gathered along a switch's chain of conditions, register allocation over
// its blocks), so no generated function gets more than maxSwitchCases of anything: the
// cases go in runs, each a function literal called at once that reports whether one of its
// conditions held, and the calls are made in order until one reports true:
//
//	tern1 := func() bool { switch { case c1: tern0 = a ... default: return false }; return true }()
//	if !tern1 { tern1 = func() bool { switch { <the next run> } ... }() }
//	...
//	if !tern1 { tern0 = <last> }
//
// When there are more runs than that, the calls are grouped the same way, a level up, in
// function literals of up to maxSwitchCases calls each (log(n) levels for n cases). Each
// call stops at the first condition that holds, so the conditions are still evaluated in
// order until one holds, and only that branch runs.
func (s *scope) chunkedSwitch(conds []jen.Code, thens [][]jen.Code, last []jen.Code) {
	calls := make([]jen.Code, 0, len(conds)/maxSwitchCases+1)
	for i := 0; i < len(conds); i += maxSwitchCases {
		run := conds[i:min(i+maxSwitchCases, len(conds))]
		clauses := make([]jen.Code, 0, len(run)+1)
		for j, c := range run {
			clauses = append(clauses, jen.Case(c).Block(thens[i+j]...))
		}
		clauses = append(clauses, jen.Default().Return(jen.False()))
		calls = append(calls, jen.Func().Params().Bool().Block(jen.Switch().Block(clauses...), jen.Return(jen.True())).Call())
	}
	for len(calls) > maxSwitchCases {
		found := s.temp()
		up := make([]jen.Code, 0, len(calls)/maxSwitchCases+1)
		for i := 0; i < len(calls); i += maxSwitchCases {
			body := append(firstHolds(found, calls[i:min(i+maxSwitchCases, len(calls))]), jen.Return(jen.Id(found)))
			up = append(up, jen.Func().Params().Bool().Block(body...).Call())
		}
		calls = up
	}
	found := s.temp()
	s.flat.stmts = append(s.flat.stmts, firstHolds(found, calls)...)
	s.flat.stmts = append(s.flat.stmts, jen.If(jen.Op("!").Id(found)).Block(last...))
}

// firstHolds returns the statements that make the calls in order until one returns true,
// and leave in a new variable found whether one did.
func firstHolds(found string, calls []jen.Code) []jen.Code {
	stmts := []jen.Code{jen.Id(found).Op(":=").Add(calls[0])}
	for _, c := range calls[1:] {
		stmts = append(stmts, jen.If(jen.Op("!").Id(found)).Block(jen.Id(found).Op("=").Add(c)))
	}
	return stmts
}

// temp returns the name of a new temporary of the function literal being filled.
func (s *scope) temp() string {
	v := tempPrefix + strconv.Itoa(s.flat.n)
	s.flat.n++
	return v
}

// branch returns the statements that set v to the value of x, a branch of a ternary.
func (s *scope) branch(x parser.Expr, kind parser.Kind, v string) []jen.Code {
	saved := s.flat.stmts
	s.flat.stmts = nil
	if t, ok := unparen(x).(*parser.TernaryExpr); ok {
		s.assign(t, kind, v)
	} else {
		val := s.expr(x, kind)
		s.flat.stmts = append(s.flat.stmts, jen.Id(v).Op("=").Add(val))
	}
	out := s.flat.stmts
	s.flat.stmts = saved
	return out
}

// unparen strips the parentheses around x.
func unparen(x parser.Expr) parser.Expr {
	for {
		p, ok := x.(*parser.ParenExpr)
		if !ok {
			return x
		}
		x = p.X
	}
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
