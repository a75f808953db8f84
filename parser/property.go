package parser

// The custom production for properties (participle.Parseable), which
// builds the AST's Property directly:
//
//	property = IDENT? IDENT '=' expr      (with two words, the first is a type word)
//
// Property lists come in every part of a file (class, definitions, flows,
// dependencies, bodies, globals), and a property is little more than its
// expression, the custom production of expr.go: as a participle struct,
// with an optional word and three captures, each property cost several
// times the parsing of a short value. The property list itself stays the
// participle production props. The syntax errors are those the struct
// production gave, worded as syntax.go worded them.

import (
	"strconv"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// property is a property of a property list or an %option.
type property struct{ X *Property }

// Parse parses a property, which starts with a name.
func (pr *property) Parse(lex *lexer.PeekingLexer) error {
	first := lex.Peek()
	if first.Type != tIdent {
		return participle.NextMatch
	}
	p := exprParser{lex: lex}
	p.next()
	x := &Property{Span: openSpan(first.Pos), Name: first.Value, NamePos: first.Pos}
	pr.X = x
	if t := lex.Peek(); t.Type == tIdent {
		p.next()
		x.TypeWord, x.Name, x.NamePos = x.Name, t.Value, t.Pos
	}
	if !p.is("=") {
		return unexpected(lex.Peek(), "= after property "+strconv.Quote(p.last.Value))
	}
	p.next()
	if !startsExpr(lex.Peek()) {
		return unexpected(lex.Peek(), "expression")
	}
	v, err := p.expr()
	if err != nil {
		return err
	}
	x.Value = v
	x.setEnd(v.End())
	return nil
}
