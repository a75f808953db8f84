package parser

// The custom production for the definitions of a task class
// (participle.Parseable), which builds the AST's Definition directly:
//
//	definition = IDENT '=' rangeexpr props?
//
// A definition is little more than its range expression, the custom
// production of expr.go, and every task class has several: as a
// participle struct, with a lookahead group (the definitions end before a
// name that no '=' follows) and three captures, each cost several times
// the parsing of its range. Its property list stays the participle
// production props. The syntax errors are those the struct production
// gave, worded as syntax.go worded them.

import (
	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// definition is a definition of a task class, `IDENT '=' rangeexpr props?`.
type definition struct{ X *Definition }

// Parse parses a definition, which starts with a name and '='; anything
// else ends the definitions.
func (d *definition) Parse(lex *lexer.PeekingLexer) error {
	name := lex.Peek()
	if name.Type != tIdent {
		return participle.NextMatch
	}
	p := exprParser{lex: lex}
	cp := lex.MakeCheckpoint()
	lex.Next()
	if !p.is("=") {
		lex.LoadCheckpoint(cp)
		return participle.NextMatch
	}
	p.next()
	if t := lex.Peek(); !startsRange(t) {
		return unexpected(t, "expression")
	}
	v, err := p.rangeExpr()
	if err != nil {
		return err
	}
	x := &Definition{Span: newSpan(name.Pos, v.End()), Name: name.Value, Value: v}
	d.X = x
	if p.is("[") {
		ps, err := p.props()
		if err != nil {
			return err
		}
		x.Props = ps
		x.setEnd(ps.End())
	}
	return nil
}
