package parser

// The custom productions for expressions (participle.Parseable), which
// build AST nodes directly:
//
//	expr      = binary ('?' expr ':' expr)?
//	rangeExpr = expr '..' expr ('..' expr)? | named expr | expr
//	named     = '[' IDENT '=' rangeExpr (',' IDENT '=' rangeExpr)* ']'
//
//	binary    = unary (BINOP unary)*                levels 3 (||) to 10 (* / %)
//	unary     = ('!' | '-') unary | primary         ('-' on any operand: Go dialect)
//	primary   = INT | STRING | CODE | '(' expr ')' | name ('(' (arg (',' arg)*)? ')')?
//	name      = IDENT (ARROW IDENT)*                (IDENT may be dotted; calls: Go dialect)
//	arg       = rangeExpr
//
// The named ranges of dependencies and targets are parsed here too, and so
// are their guards and arguments (flow.go).

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// expr is an expression.
type expr struct{ X Expr }

// rangeExpr is a rangeexpr: a range, a "local indices" set or an expression.
type rangeExpr struct{ X Expr }

func (e *expr) Parse(lex *lexer.PeekingLexer) error {
	if !startsExpr(lex.Peek()) {
		return participle.NextMatch
	}
	p := exprParser{lex: lex}
	x, err := p.expr()
	e.X = x
	return err
}

// collection returns the collection element `coll(args)` that guard x,
// which starts at pos, is when no '?' follows it, or nil.
func collection(x Expr, pos lexer.Position) *Target {
	if call, ok := x.(*CallExpr); ok && len(call.Args) > 0 {
		if n, ok := call.Fun.(*Name); ok {
			return &Target{Span: call.Span, Kind: TargetCollection, Name: n.Name, namePos: offset32(pos), Args: call.Args}
		}
	}
	return nil
}

func (r *rangeExpr) Parse(lex *lexer.PeekingLexer) error {
	if t := lex.Peek(); !startsRange(t) {
		return participle.NextMatch
	}
	p := exprParser{lex: lex}
	x, err := p.rangeExpr()
	r.X = x
	return err
}

// startsRange reports whether t starts a rangeExpr: an expression or a
// named range.
func startsRange(t *lexer.Token) bool {
	return startsExpr(t) || t.Type == tPunct && t.Value == "["
}

func startsExpr(t *lexer.Token) bool {
	switch t.Type {
	case tIdent, tInt, tOnOff, tString, tCode:
		return true
	case tPunct:
		return t.Value == "(" || t.Value == "!" || t.Value == "-"
	}
	return false
}

// exprParser parses expressions from the tokens of a PeekingLexer.
type exprParser struct {
	lex   *lexer.PeekingLexer
	last  *lexer.Token // the last token consumed
	depth int          // nesting of the expression being parsed (MaxNesting)
}

// MaxNesting bounds how deeply expressions nest (parentheses, conditionals,
// unary operators, call arguments), far above what programs write, so that
// the recursive passes over an expression (checks, fmt, codegen) cannot
// exhaust the stack. A deeper expression is a syntax error at the token
// that goes past the limit. A long chain of binary operators at one level
// (a + b + ... ) is not nesting: it is parsed, checked and printed
// iteratively.
const MaxNesting = 50000

// errTooDeep is the message of an expression nested beyond MaxNesting.
var errTooDeep = fmt.Sprintf("expression nested too deeply (more than %d levels)", MaxNesting)

// enter counts one more level of nesting at token t.
func (p *exprParser) enter(t *lexer.Token) error {
	p.depth++
	if p.depth > MaxNesting {
		return &syntaxError{pos: t.Pos, msg: errTooDeep}
	}
	return nil
}

func (p *exprParser) next() *lexer.Token {
	p.last = p.lex.Next()
	return p.last
}

// is reports whether the next token is the punctuation s.
func (p *exprParser) is(s string) bool {
	t := p.lex.Peek()
	return t.Type == tPunct && t.Value == s
}

// span is the span from pos to the end of the last token consumed.
func (p *exprParser) span(pos lexer.Position) Span {
	return newSpan(pos, tokenEnd(p.last))
}

// tokenEnd returns the position just after token t.
func tokenEnd(t *lexer.Token) lexer.Position { return advance(t.Pos, t.Value) }

// expect consumes the punctuation s or fails, saying what was expected.
func (p *exprParser) expect(s, expected string) error {
	if !p.is(s) {
		return unexpected(p.lex.Peek(), expected)
	}
	p.next()
	return nil
}

// expr = binary ('?' expr ':' expr)?
func (p *exprParser) expr() (Expr, error) {
	if err := p.enter(p.lex.Peek()); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	pos := p.lex.Peek().Pos
	c, err := p.binary(lowestBinary)
	if err != nil || !p.is("?") {
		return c, err
	}
	p.next()
	then, err := p.expr()
	if err != nil {
		return nil, err
	}
	if err := p.expect(":", "':' of the conditional expression"); err != nil {
		return nil, err
	}
	els, err := p.expr()
	if err != nil {
		return nil, err
	}
	return &TernaryExpr{Span: p.span(pos), Cond: c, Then: then, Else: els}, nil
}

// lowestBinary is the level of || (level 2 is ?:, level 1 is ..).
const lowestBinary = 3

// binOp returns the binary operator of token t, if it is one.
func binOp(t *lexer.Token) (Op, bool) {
	if t.Type != tPunct {
		return 0, false
	}
	switch t.Value {
	case "||":
		return OpLOr, true
	case "|":
		return OpOr1, true
	case "&&":
		return OpLAnd, true
	case "&":
		return OpAnd1, true
	case "^":
		return OpXor, true
	case "==":
		return OpEq, true
	case "!=":
		return OpNe, true
	case "<":
		return OpLt, true
	case "<=":
		return OpLe, true
	case ">":
		return OpGt, true
	case ">=":
		return OpGe, true
	case "<<":
		return OpShl, true
	case ">>":
		return OpShr, true
	case "+":
		return OpAdd, true
	case "-":
		return OpSub, true
	case "*":
		return OpMul, true
	case "/":
		return OpDiv, true
	case "%":
		return OpRem, true
	}
	return 0, false
}

// binary parses operators of level minPrec and above, left associative,
// by precedence climbing.
func (p *exprParser) binary(minPrec int) (Expr, error) {
	pos := p.lex.Peek().Pos
	x, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		op, ok := binOp(p.lex.Peek())
		if !ok || op.Precedence() < minPrec {
			return x, nil
		}
		opTok := p.next()
		y, err := p.binary(op.Precedence() + 1)
		if err != nil {
			return nil, err
		}
		x = &BinaryExpr{Span: p.span(pos), X: x, Op: op, Y: y, opPos: offset32(opTok.Pos)}
	}
}

// unary = ('!' | '-') unary | primary, read as a loop: each operator is
// one level of nesting.
func (p *exprParser) unary() (Expr, error) {
	var ops []*lexer.Token
	for p.is("!") || p.is("-") {
		t := p.next()
		ops = append(ops, t)
		if err := p.enter(t); err != nil {
			p.depth -= len(ops)
			return nil, err
		}
	}
	x, err := p.primary()
	p.depth -= len(ops)
	if err != nil {
		return nil, err
	}
	for i := len(ops) - 1; i >= 0; i-- {
		op := OpNot
		if ops[i].Value == "-" {
			op = OpNeg
		}
		x = &UnaryExpr{Span: p.span(ops[i].Pos), Op: op, X: x}
	}
	return x, nil
}

func (p *exprParser) primary() (Expr, error) {
	t := p.lex.Peek()
	switch t.Type {
	case tInt, tOnOff:
		p.next()
		lit := &IntLit{Span: p.span(t.Pos)}
		if t.Type == tOnOff {
			lit.Text = t.Value
			lit.Value, _ = onOffValue(t.Value)
			return lit, nil
		}
		v, err := strconv.ParseInt(t.Value, 10, 64)
		if err != nil {
			return nil, &syntaxError{pos: t.Pos, msg: "integer " + t.Value + " out of range"}
		}
		lit.Value = v
		return lit, nil
	case tString:
		p.next()
		v, _ := unquote(t.Value)
		return &StringLit{Span: p.span(t.Pos), Value: v, Raw: t.Value}, nil
	case tCode:
		p.next()
		return &InlineCode{Span: p.span(t.Pos), Code: codeBlock(t)}, nil
	case tIdent:
		if t.Value == "inline_c" {
			if x := p.inlineC(t); x != nil {
				return x, nil
			}
		}
		return p.name()
	case tPunct:
		if t.Value == "(" {
			p.next()
			x, err := p.expr()
			if err != nil {
				return nil, err
			}
			if err := p.expect(")", "')'"); err != nil {
				return nil, err
			}
			return &ParenExpr{Span: p.span(t.Pos), X: x}, nil
		}
	}
	return nil, unexpected(t, "expression")
}

// inlineC reads `inline_c %{ ... %}` in a property list, where the words
// of the lexer's properties mode make inline_c a name and the block a code
// token (the prefix is sugar), as one inline code expression. It
// returns nil, having consumed nothing, when no code block follows.
func (p *exprParser) inlineC(t *lexer.Token) Expr {
	cp := p.lex.MakeCheckpoint()
	p.next()
	if p.lex.Peek().Type != tCode {
		p.lex.LoadCheckpoint(cp)
		return nil
	}
	code := codeBlock(p.next())
	code.setStart(t.Pos)
	return &InlineCode{Span: p.span(t.Pos), Code: code}
}

// name parses `IDENT (ARROW IDENT)*` and an optional call. The dotted
// segments of an identifier become selectors.
func (p *exprParser) name() (Expr, error) {
	t := p.next()
	x := dotted(t)
	for {
		a := p.lex.Peek()
		if a.Type != tArrow {
			break
		}
		cp := p.lex.MakeCheckpoint()
		p.lex.Next()
		if p.lex.Peek().Type != tIdent {
			// `k<-1` is k, then an arrow: not a selector.
			p.lex.LoadCheckpoint(cp)
			break
		}
		// A dotted word after the arrow (descA->super.mt) is one more
		// selector per dot.
		words := strings.Split(p.next().Value, ".")
		x = &SelectorExpr{Span: p.span(t.Pos), X: x, Sel: words[0], Arrow: true}
		for _, w := range words[1:] {
			x = &SelectorExpr{Span: p.span(t.Pos), X: x, Sel: w}
		}
	}
	if !p.is("(") {
		return x, nil
	}
	p.next()
	args, err := p.args()
	if err != nil {
		return nil, err
	}
	return &CallExpr{Span: p.span(t.Pos), Fun: x, Args: args}, nil
}

// dotted splits the dotted identifier t into a Name and selectors.
func dotted(t *lexer.Token) Expr {
	var x Expr
	base, word, seg := t.Pos, t.Value, 0
	for i := 0; i <= len(word); i++ {
		if i < len(word) && word[i] != '.' {
			continue
		}
		end := shift(base, i)
		if x == nil {
			x = &Name{Span: newSpan(shift(base, seg), end), Name: word[seg:i]}
		} else {
			x = &SelectorExpr{Span: newSpan(base, end), X: x, Sel: word[seg:i]}
		}
		seg = i + 1
	}
	return x
}

// args parses `(arg (',' arg)*)? ')'` after the '('.
func (p *exprParser) args() ([]Expr, error) {
	if p.is(")") {
		p.next()
		return nil, nil
	}
	var buf [4]Expr // most calls have few arguments: one allocation, of the right size
	args := buf[:0]
	for {
		a, err := p.rangeExpr()
		if err != nil {
			return nil, err
		}
		args = append(args, a)
		if !p.is(",") {
			break
		}
		p.next()
	}
	if err := p.expect(")", "',' or ')'"); err != nil {
		return nil, err
	}
	return append([]Expr(nil), args...), nil
}

// rangeExpr = expr '..' expr ('..' expr)? | named expr | expr
func (p *exprParser) rangeExpr() (Expr, error) {
	pos := p.lex.Peek().Pos
	if p.is("[") {
		named, err := p.named()
		if err != nil {
			return nil, err
		}
		x, err := p.expr()
		if err != nil {
			return nil, err
		}
		return &LocalSetExpr{Span: p.span(pos), Named: named, X: x}, nil
	}
	from, err := p.expr()
	if err != nil || !p.is("..") {
		return from, err
	}
	p.next()
	r := &RangeExpr{From: from}
	if r.To, err = p.expr(); err != nil {
		return nil, err
	}
	if p.is("..") {
		p.next()
		if r.Step, err = p.expr(); err != nil {
			return nil, err
		}
	}
	r.Span = p.span(pos)
	return r, nil
}

// named parses a list of named ranges, at its '[':
//
//	named = '[' IDENT '=' rangeExpr (',' IDENT '=' rangeExpr)* ']'
func (p *exprParser) named() ([]*NamedRange, error) {
	before := p.lastRaw()
	p.next()
	var buf [2]*NamedRange
	list := buf[:0]
	for {
		name := p.lex.Peek()
		if name.Type != tIdent {
			return nil, unexpected(name, "index name of a named range")
		}
		p.next()
		if !p.is("=") {
			return nil, unexpected(p.lex.Peek(), "'=' after "+strconv.Quote(name.Value))
		}
		p.next()
		if t := p.lex.Peek(); !startsRange(t) {
			return nil, unexpected(t, "expression")
		}
		v, err := p.rangeExpr()
		if err != nil {
			return nil, err
		}
		list = append(list, &NamedRange{Span: newSpan(name.Pos, v.End()), Name: name.Value, Value: v})
		if !p.is(",") {
			break
		}
		p.next()
	}
	if !p.is("]") {
		// As the participle production said it: a list that follows a
		// named range of the dependency ([i = ...] [j = ...] F T(i, j))
		// reads as a property list there.
		expected := "property name or ]"
		if opensNamedRange(before) {
			expected = "',' or ']' in a named range"
		}
		return nil, unexpected(p.lex.Peek(), expected)
	}
	p.next()
	return append([]*NamedRange(nil), list...), nil
}

// opensNamedRange reports whether a '[' after token t (nil at the start)
// opens what reads as a named range in a message: after an arrow, '?', ':'
// or a place for a range expression.
func opensNamedRange(t *lexer.Token) bool {
	if t == nil {
		return false
	}
	if t.Type == tArrow {
		return true
	}
	if t.Type == tPunct {
		switch t.Value {
		case "?", ":", "(", ",", "=":
			return true
		}
	}
	return false
}

// lastRaw returns the token before the lexer's cursor, or nil at the start:
// the token stream has no elided tokens.
func (p *exprParser) lastRaw() *lexer.Token {
	c := p.lex.RawCursor()
	if c == 0 {
		return nil
	}
	return &p.lex.Range(c-1, c)[0]
}

// codeBlock converts a code token.
func codeBlock(t *lexer.Token) *CodeBlock {
	c := splitCode(t.Value)
	return &CodeBlock{
		Span:    newSpan(t.Pos, advance(t.Pos, t.Value)),
		Lang:    c.lang,
		Text:    lf(t.Value[c.text:c.textEnd]),
		TextPos: shift(t.Pos, c.text), // the prefix and the delimiter are on the first line
	}
}

// syntaxError is a syntax error with its final message.
type syntaxError struct {
	pos lexer.Position
	msg string
}

func (e *syntaxError) Error() string            { return fmt.Sprintf("%s: %s", e.pos, e.msg) }
func (e *syntaxError) Message() string          { return e.msg }
func (e *syntaxError) Position() lexer.Position { return e.pos }

// unexpected is the error for token t where something else was expected.
func unexpected(t *lexer.Token, expected string) *syntaxError {
	msg := "syntax error: unexpected " + describe(t) + ", expected " + expected
	if t.Type == tBody && !strings.Contains(expected, "BODY") {
		msg += " (a line that starts with the word body begins a BODY)"
	}
	return &syntaxError{pos: t.Pos, msg: msg}
}

// describe names a token in a message.
func describe(t *lexer.Token) string {
	switch t.Type {
	case lexer.EOF:
		return "end of file"
	case tIdent:
		return fmt.Sprintf("identifier %q", t.Value)
	case tOnOff:
		return fmt.Sprintf("%q (an integer in a property list)", t.Value)
	case tInt:
		return "integer " + t.Value
	case tString:
		return "string " + t.Value
	case tAccess, tKeyword, tEnd:
		return t.Value
	case tBody:
		return t.Value
	case tOption:
		return strconv.Quote("%option")
	case tCode:
		return "code block"
	case tBodyText:
		return "body text"
	}
	return strconv.Quote(t.Value)
}
