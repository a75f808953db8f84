package parser

// The custom production for the target of a dependency
// (participle.Parseable), which builds the AST's Targets directly:
//
//	target = guard '?' call (':' call)? | call
//	guard  = binary                    (a collection element `coll(args)` without '?')
//	call   = named? IDENT IDENT? args | 'NEW' | 'NULL'
//	args   = '(' arg (',' arg)* ')'
//
// It is custom because it is the most frequent production of a JDF file
// after expressions: as participle structs (a union of a guarded target
// and a call, each with optional parts), every dependency cost a dozen
// reflective branches. A named range in a call is still parsed by the
// participle production named (namedGrammar). Its syntax errors are those
// the struct productions gave, worded as syntax.go worded them.

import (
	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// target is the target of a dependency: Then, with a guard Else too.
type target struct {
	Guard Expr    // or nil when unconditional
	Then  *Target // the target, or the one taken when Guard holds
	Else  *Target // or nil
}

// Parse parses a target. It never answers NextMatch: a target must follow
// the arrow, so where none starts the error says what may.
func (tg *target) Parse(lex *lexer.PeekingLexer) error {
	p := exprParser{lex: lex}
	t := lex.Peek()
	if !startsExpr(t) || t.Type == tIdent && p.startsTaskCall() {
		// NEW, NULL, a named range or FLOW Class(args).
		then, err := p.call(false)
		tg.Then = then
		return err
	}
	x, err := p.binary(lowestBinary)
	if err != nil {
		return err
	}
	next := lex.Peek()
	if next.Type != tPunct || next.Value != "?" {
		if coll := collection(x); coll != nil {
			tg.Then = coll
			return nil
		}
		if next.EOF() || next.Pos.Offset == x.End().Offset {
			return unexpected(next, "'?' after the guard, or a dependency target")
		}
		return &syntaxError{pos: x.Pos(), msg: "syntax error: expected dependency target (FLOW Class(args), collection(args), NEW or NULL), or a guard followed by '?'"}
	}
	p.next()
	tg.Guard = x
	if tg.Then, err = p.call(true); err != nil {
		return err
	}
	if p.is(":") {
		p.next()
		tg.Else, err = p.call(true)
	}
	return err
}

// startsTaskCall reports whether the next tokens, an identifier first, are
// `IDENT IDENT '('`, which starts FLOW Class(args) and not a guard.
func (p *exprParser) startsTaskCall() bool {
	cp := p.lex.MakeCheckpoint()
	defer p.lex.LoadCheckpoint(cp)
	p.lex.Next()
	if p.lex.Peek().Type != tIdent {
		return false
	}
	p.lex.Next()
	return p.is("(")
}

// call parses `named? IDENT IDENT? args | 'NEW' | 'NULL'`; afterGuard says
// that it follows '?' or ':', where a guard cannot start.
func (p *exprParser) call(afterGuard bool) (*Target, error) {
	t := p.lex.Peek()
	tg := &Target{Span: Span{Pos: t.Pos}}
	if t.Type == tKeyword && (t.Value == "NEW" || t.Value == "NULL") {
		p.next()
		tg.Kind, tg.Span.EndPos = TargetNew, tokenEnd(t)
		if t.Value == "NULL" {
			tg.Kind = TargetNull
		}
		return tg, nil
	}
	named := t.Type == tPunct && t.Value == "["
	if named {
		n, err := namedGrammar.ParseFromLexer(p.lex, participle.AllowTrailing(true))
		if err != nil {
			return nil, err
		}
		tg.Named = convertNamed(n)
	}
	first := p.lex.Peek()
	switch {
	case first.Type == tIdent:
	case named:
		// A named range comes before a task call only.
		return nil, unexpected(first, "FLOW Class(args) after a named range")
	case afterGuard:
		return nil, unexpected(first, targetWords)
	default:
		return nil, unexpected(first, targetWords+" or a guard")
	}
	p.next()
	name := first
	tg.Kind = TargetCollection
	if p.lex.Peek().Type == tIdent {
		name = p.next()
		tg.Kind = TargetTask
		tg.Flow, tg.FlowPos = first.Value, first.Pos
	}
	tg.Name, tg.NamePos = name.Value, name.Pos
	if named && tg.Kind == TargetCollection {
		return nil, unexpected(first, "FLOW Class(args) after a named range")
	}
	if !p.is("(") {
		return nil, unexpected(p.lex.Peek(), "'(' and the arguments of "+name.Value)
	}
	p.next()
	args, err := p.args()
	if err != nil {
		return nil, err
	}
	if len(args) == 0 {
		return nil, &syntaxError{pos: name.Pos, msg: "syntax error: " + name.Value + "() needs at least one argument"}
	}
	tg.Args, tg.Span.EndPos = args, tokenEnd(p.last)
	return tg, nil
}
