package parser

// The custom production for dependencies (participle.Parseable), which
// builds the AST's Deps and Targets directly:
//
//	dep    = ARROW named? target props?
//	target = guard '?' call (':' call)? | call
//	guard  = binary                    (a collection element `coll(args)` without '?')
//	call   = named? IDENT IDENT? args | 'NEW' | 'NULL'
//	args   = '(' arg (',' arg)* ')'
//
// Dependencies are most of a task class, and the most frequent production
// of a JDF file after expressions: as participle structs (a dependency, a
// union of a guarded target and a call, each with optional parts), every
// dependency cost a few dozen reflective branches and captures. A
// dependency's property list is still parsed by the participle production
// props (propsGrammar); named ranges and the expressions are the custom
// productions of expr.go. The syntax errors are those the struct
// productions gave, worded as syntax.go worded them.

import (
	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// dep is a dependency of a flow.
type dep struct{ X *Dep }

// Parse parses a dependency, which starts with an arrow.
func (d *dep) Parse(lex *lexer.PeekingLexer) error {
	arrow := lex.Peek()
	if arrow.Type != tArrow {
		return participle.NextMatch
	}
	p := exprParser{lex: lex}
	p.next()
	x := &Dep{Span: Span{Pos: arrow.Pos}, Dir: In}
	d.X = x
	if arrow.Value == "->" {
		x.Dir = Out
	}
	if p.is("[") {
		named, err := p.named()
		if err != nil {
			return err
		}
		x.Named = named
	}
	if err := p.target(x); err != nil {
		return err
	}
	x.Span.EndPos = x.Then.End()
	if x.Else != nil {
		x.Span.EndPos = x.Else.End()
	}
	if p.is("[") {
		ps, err := propsGrammar.ParseFromLexer(lex, participle.AllowTrailing(true))
		if err != nil {
			return err
		}
		x.Props = convertProps(ps, tokenEnd(p.lastRaw()))
		x.Span.EndPos = x.Props.End()
	}
	return nil
}

// target parses the target of dependency x: its guard, Then and Else.
// Where no target starts, the error says what may.
func (p *exprParser) target(x *Dep) error {
	t := p.lex.Peek()
	if !startsExpr(t) || t.Type == tIdent && p.startsTaskCall() {
		// NEW, NULL, a named range or FLOW Class(args).
		then, err := p.call(false)
		x.Then = then
		return err
	}
	g, err := p.binary(lowestBinary)
	if err != nil {
		return err
	}
	if !p.is("?") {
		if coll := collection(g); coll != nil {
			x.Then = coll
			return nil
		}
		next := p.lex.Peek()
		if next.EOF() || next.Pos.Offset == g.End().Offset {
			return unexpected(next, "'?' after the guard, or a dependency target")
		}
		return &syntaxError{pos: g.Pos(), msg: "syntax error: expected dependency target (FLOW Class(args), collection(args), NEW or NULL), or a guard followed by '?'"}
	}
	p.next()
	x.Guard = g
	if x.Then, err = p.call(true); err != nil {
		return err
	}
	if p.is(":") {
		p.next()
		x.Else, err = p.call(true)
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
		list, err := p.named()
		if err != nil {
			return nil, err
		}
		tg.Named = list
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
