package parser

// The custom productions for flows and their dependencies
// (participle.Parseable), which build the AST's Flows, Deps and Targets
// directly:
//
//	flow   = ACCESS? IDENT props? dep*
//	dep    = ARROW named? target props?
//	target = guard '?' call (':' call)? | call
//	guard  = binary                    (a collection element `coll(args)` without '?')
//	call   = named? IDENT IDENT? args | 'NEW' | 'NULL'
//	args   = '(' arg (',' arg)* ')'
//
// Flows are most of a task class, and the most frequent structural
// production of a JDF file: as participle structs (a flow with optional
// parts, a dependency, a union of a guarded target and a call), each flow
// cost some fifty reflective branches and captures, more than the rest of
// its class. Property lists are still parsed by the participle production
// props (propsGrammar); named ranges and the expressions are the custom
// productions of expr.go. The syntax errors are those the struct
// productions gave, worded as syntax.go worded them.

import (
	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// flow is a flow of a task class.
type flow struct{ X *Flow }

// Parse parses a flow, which starts with an access type or its name.
func (fl *flow) Parse(lex *lexer.PeekingLexer) error {
	p := exprParser{lex: lex}
	t := lex.Peek()
	f := &Flow{Span: openSpan(t.Pos), Access: AccessRW}
	switch {
	case t.Type == tAccess:
		f.Access = accessOf(t.Value)
		p.next()
		if t = lex.Peek(); t.Type != tIdent {
			return unexpected(t, "flow name")
		}
	case t.Type != tIdent:
		return participle.NextMatch
	}
	p.next()
	fl.X = f
	f.Name, f.NamePos = t.Value, t.Pos
	f.setEnd(tokenEnd(t))
	if p.is("[") {
		ps, err := p.props()
		if err != nil {
			return err
		}
		f.Props = ps
		f.setEnd(ps.End())
	}
	var buf [4]*Dep
	deps := buf[:0]
	for p.lex.Peek().Type == tArrow {
		d, err := p.dep()
		if err != nil {
			return err
		}
		deps = append(deps, d)
		f.setEnd(d.End())
	}
	if len(deps) > 0 {
		f.Deps = append([]*Dep(nil), deps...)
	}
	return nil
}

// accessOf returns the access type an ACCESS token spells.
func accessOf(word string) Access {
	switch word {
	case "CTL":
		return AccessCTL
	case "READ", "RO":
		return AccessRead
	case "WRITE", "WO":
		return AccessWrite
	}
	return AccessRW
}

// dep parses a dependency, at its arrow.
func (p *exprParser) dep() (*Dep, error) {
	arrow := p.next()
	d := &Dep{Span: openSpan(arrow.Pos), Dir: In}
	if arrow.Value == "->" {
		d.Dir = Out
	}
	if p.is("[") {
		named, err := p.named()
		if err != nil {
			return nil, err
		}
		d.Named = named
	}
	if err := p.target(d); err != nil {
		return nil, err
	}
	d.setEnd(d.Then.End())
	if d.Else != nil {
		d.setEnd(d.Else.End())
	}
	if p.is("[") {
		ps, err := p.props()
		if err != nil {
			return nil, err
		}
		d.Props = ps
		d.setEnd(ps.End())
	}
	return d, nil
}

// props parses a property list with the participle production props.
func (p *exprParser) props() (*Props, error) {
	ps, err := propsGrammar.ParseFromLexer(p.lex, participle.AllowTrailing(true))
	if err != nil {
		return nil, err
	}
	return convertProps(ps, tokenEnd(p.lastRaw())), nil
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
		if coll := collection(g, t.Pos); coll != nil {
			x.Then = coll
			return nil
		}
		next := p.lex.Peek()
		if next.EOF() || next.Pos.Offset == g.End().Offset {
			return unexpected(next, "'?' after the guard, or a dependency target")
		}
		return &syntaxError{pos: t.Pos, msg: "syntax error: expected dependency target (FLOW Class(args), collection(args), NEW or NULL), or a guard followed by '?'"}
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
	tg := &Target{Span: openSpan(t.Pos)}
	if t.Type == tKeyword && (t.Value == "NEW" || t.Value == "NULL") {
		p.next()
		tg.Kind = TargetNew
		tg.setEnd(tokenEnd(t))
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
		tg.Flow, tg.flowPos = first.Value, offset32(first.Pos)
	}
	tg.Name, tg.namePos = name.Value, offset32(name.Pos)
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
	tg.Args = args
	tg.setEnd(tokenEnd(p.last))
	return tg, nil
}
