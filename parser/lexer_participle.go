package parser

import (
	"io"
	"sort"

	"github.com/alecthomas/participle/v2/lexer"
)

// Lexer is the JDF scanner as a participle lexer.Definition, for tools built
// with participle (participle.Lexer(parser.Lexer)). It yields the tokens
// this package's parser reads, with these symbol names:
//
//	Ident Int String Code Keyword Arrow Body BodyText End Option Punct Comment
//
// Keyword covers CTL READ RO WRITE WO RW NEW NULL SIMCOST; Punct covers the
// operators, parentheses and brackets. String values keep their quotes
// (use participle.Unquote), Code and BodyText values are the raw text, Int
// values of on/off words are the word. Comments are tokens, to be elided or
// kept. Lexing fails with the first lexical error as a *Diagnostic; the
// scanner's warnings (stray characters) are not reported.
var Lexer lexer.Definition = definition{}

type definition struct{}

var symbolNames = []string{"Ident", "Int", "String", "Code", "Keyword", "Arrow", "Body", "BodyText", "End", "Option", "Punct", "Comment"}

func symbolType(name string) lexer.TokenType {
	i := sort.SearchStrings(sortedSymbols, name)
	return lexer.EOF - 1 - lexer.TokenType(i)
}

var sortedSymbols = func() []string {
	s := append([]string{}, symbolNames...)
	sort.Strings(s)
	return s
}()

func (definition) Symbols() map[string]lexer.TokenType {
	m := map[string]lexer.TokenType{"EOF": lexer.EOF}
	for _, n := range symbolNames {
		m[n] = symbolType(n)
	}
	return m
}

func (d definition) Lex(filename string, r io.Reader) (lexer.Lexer, error) {
	src, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return d.LexString(filename, string(src))
}

// LexString implements lexer.StringDefinition.
func (definition) LexString(filename, src string) (lexer.Lexer, error) {
	var diags ErrorList
	ts, comments := scan(filename, src, &diags)
	for _, d := range diags {
		if d.Severity == Error {
			return nil, d
		}
	}
	var out []lexer.Token
	ci := 0
	pos := func(p tpos) lexer.Position {
		return lexer.Position{Filename: filename, Offset: int(p.off), Line: int(p.line), Column: int(p.col)}
	}
	for i := range ts.list {
		t := &ts.list[i]
		for ci < len(comments) && comments[ci].Pos.Offset < int(t.pos.off) {
			out = append(out, lexer.Token{Type: symbolType("Comment"), Value: comments[ci].Text, Pos: comments[ci].Pos})
			ci++
		}
		if t.kind == tEOF {
			out = append(out, lexer.EOFToken(pos(t.pos)))
			break
		}
		name, value := "Punct", ts.raw(t)
		switch t.kind {
		case tIdent:
			name = "Ident"
		case tInt:
			name = "Int"
		case tString:
			name = "String"
		case tCode:
			name, value = "Code", ts.val(t)
		case tAccess, tNew, tNull, tSimcost:
			name = "Keyword"
		case tArrowIn, tArrowOut:
			name = "Arrow"
		case tBody:
			name = "Body"
		case tBodyText:
			name = "BodyText"
		case tEnd:
			name = "End"
		case tOption:
			name = "Option"
		}
		out = append(out, lexer.Token{Type: symbolType(name), Value: value, Pos: pos(t.pos)})
	}
	return &tokenLexer{toks: out}, nil
}

type tokenLexer struct {
	toks []lexer.Token
	i    int
}

func (l *tokenLexer) Next() (lexer.Token, error) {
	t := l.toks[l.i]
	if l.i < len(l.toks)-1 {
		l.i++
	}
	return t, nil
}
