package parser

// A recursive-descent parser over the token slice of lexer.go, one method
// per production of jdf-language.md Part B §2 plus the Part A extensions:
//
//	file       = CODE? item* CODE?
//	item       = taskclass | IDENT ('=' expr)? props? | OPTION property
//	props      = '[' property+ ']'
//	property   = IDENT? IDENT '=' expr
//	taskclass  = IDENT '(' IDENT (',' IDENT)* ')' props? definition+ ('SIMCOST' expr)?
//	             ':' IDENT '(' expr (',' expr)* ')' flow* (';' expr)? body+
//	definition = IDENT '=' rangeexpr props?
//	flow       = ACCESS? IDENT props? dep*                     (props: jdf2go, for gotype)
//	dep        = ARROW named? target props?
//	target     = call | binary '?' call (':' call)?           (a guard has no bare ?:)
//	call       = 'NEW' | 'NULL' | IDENT '(' args ')' | named? IDENT IDENT '(' args ')'
//	args       = rangeexpr (',' rangeexpr)*
//	named      = '[' IDENT '=' rangeexpr (',' IDENT '=' rangeexpr)* ']'
//	rangeexpr  = expr '..' expr ('..' expr)? | named expr | expr
//	body       = 'BODY' props? NEWLINE BODYTEXT 'END'
//	expr       = binary ('?' expr ':' expr)?
//	binary     = unary (BINOP unary)*                          (precedence climbing, §4.1)
//	unary      = ('!' | '-') unary | primary                   ('-' on any operand: jdf2go)
//	primary    = INT | STRING | CODE | '(' expr ')' | name ('(' args? ')')?   (calls: jdf2go)
//	name       = IDENT (ARROW IDENT)*                          (IDENT may be dotted)
//
// On a syntax error it records the error, skips to the end of the next body
// (the token after END) and resumes there; after maxSyntaxErrors it stops.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

const (
	maxSyntaxErrors = 10
	compactAt       = 4096 // consumed tokens kept before the parser drops them
)

type parser struct {
	file    string
	s       *scanner
	ts      *tokens // p.ts.list[p.p] is the current token; it always exists
	p       int
	diags   *ErrorList
	prog    *Program
	nsyntax int
}

// syntaxError unwinds the parser to the item loop.
type syntaxError struct{}

func (p *parser) tok() *token       { return &p.ts.list[p.p] }
func (p *parser) at(k tokKind) bool { return p.ts.list[p.p].kind == k }

func (p *parser) peek(n int) *token {
	for p.p+n >= len(p.ts.list) && !p.s.done {
		p.s.fill()
	}
	return &p.ts.list[min(p.p+n, len(p.ts.list)-1)]
}
func (p *parser) pos(t tpos) lexer.Position {
	return lexer.Position{Filename: p.file, Offset: int(t.off), Line: int(t.line), Column: int(t.col)}
}

// span builds the Span from the token at index from to the last consumed token.
func (p *parser) span(from int) Span {
	last := p.p - 1
	if last < from {
		last = from
	}
	return Span{Pos: p.pos(p.ts.list[from].pos), EndPos: p.pos(p.ts.list[last].end)}
}

func (p *parser) advance() *token {
	// t stays valid when fill grows the slice: tokens never change once
	// scanned, and compaction happens only between items.
	t := &p.ts.list[p.p]
	if t.kind != tEOF {
		p.p++
		if p.p == len(p.ts.list) {
			p.s.fill()
		}
	}
	return t
}

func (p *parser) describe(t *token) string {
	switch t.kind {
	case tIdent:
		return fmt.Sprintf("identifier %q", p.ts.val(t))
	case tInt:
		if w := p.ts.onOffWord(t); w != "" {
			return fmt.Sprintf("%q (an integer in a property list)", w)
		}
		return "integer " + p.ts.val(t)
	case tString:
		return "string " + p.ts.raw(t)
	case tAccess, tNew, tNull, tSimcost, tBody, tEnd:
		return p.ts.val(t)
	case tCode, tBodyText, tEOF:
		return t.kind.String()
	}
	return fmt.Sprintf("%q", t.kind.String())
}

func (p *parser) fail(t *token, expected string) {
	msg := fmt.Sprintf("syntax error: unexpected %s, expected %s", p.describe(t), expected)
	switch {
	case t.kind == tBody && !strings.Contains(expected, "BODY"):
		msg += " (a line that starts with the word body begins a BODY)"
	case t.kind == tPct && p.peek(1).kind == tIdent && strings.EqualFold(p.ts.val(p.peek(1)), "option"):
		msg += " (%option must start in column 1)"
	}
	p.failMsg(p.pos(t.pos), msg)
}

func (p *parser) failMsg(pos lexer.Position, msg string) {
	p.diags.Add(pos, Error, msg)
	p.nsyntax++
	panic(syntaxError{})
}

func (p *parser) expect(k tokKind, expected string) *token {
	if !p.at(k) {
		p.fail(p.tok(), expected)
	}
	return p.advance()
}

// parseProgram parses a whole file; it always returns a Program.
func (p *parser) parseProgram() *Program {
	prog := &Program{Filename: p.file}
	p.prog = prog
	for !p.at(tEOF) && p.nsyntax < maxSyntaxErrors {
		if p.p >= compactAt {
			// Token indices are only held within an item: drop the
			// consumed tokens, so memory is bounded by the largest item.
			n := copy(p.ts.list, p.ts.list[p.p:])
			p.ts.list = p.ts.list[:n]
			p.p = 0
		}
		p.parseItemRecover()
	}
	prog.Span = Span{Pos: p.pos(tpos{0, 1, 1}), EndPos: p.pos(p.s.here())}
	return prog
}

func (p *parser) parseItemRecover() {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(syntaxError); !ok {
				panic(r)
			}
			// Resynchronise after the next END and the bodies that follow
			// it: bodies always end a task class.
			for {
				for !p.at(tEOF) && !p.at(tEnd) {
					p.advance()
				}
				p.advance()
				if !p.at(tBody) {
					break
				}
			}
		}
	}()
	p.parseItem()
}

func (p *parser) parseItem() {
	prog := p.prog
	t := p.tok()
	switch t.kind {
	case tCode:
		p.advance()
		cb := p.codeBlock(t)
		if prog.Prologue == nil && len(prog.Items) == 0 {
			prog.Prologue = cb
			return
		}
		if !p.at(tEOF) {
			p.failMsg(p.pos(t.pos), "syntax error: code block between items: a file has at most a prologue (first) and an epilogue (last)")
		}
		prog.Epilogue = cb
	case tOption:
		start := p.p
		p.advance()
		prop := p.parseProperty()
		o := &Option{Span: p.span(start), Prop: prop}
		prog.Options = append(prog.Options, o)
		prog.Items = append(prog.Items, o)
	case tIdent:
		if p.peek(1).kind == tLParen {
			c := p.parseTaskClass()
			prog.Classes = append(prog.Classes, c)
			prog.Items = append(prog.Items, c)
			return
		}
		g := p.parseGlobal()
		prog.Globals = append(prog.Globals, g)
		prog.Items = append(prog.Items, g)
	default:
		p.fail(t, "task class, global, %option or code block")
	}
}

func (p *parser) codeBlock(t *token) *CodeBlock {
	return &CodeBlock{
		Span:    Span{Pos: p.pos(t.pos), EndPos: p.pos(t.end)},
		Lang:    p.ts.lang(t),
		Text:    p.ts.val(t),
		TextPos: p.pos(t.textPos()),
	}
}

// global = IDENT props? | IDENT '=' expr props?
func (p *parser) parseGlobal() *Global {
	start := p.p
	g := &Global{Name: p.ts.val(p.advance())}
	if p.at(tAssign) {
		p.advance()
		g.Def = p.parseExpr()
	}
	if p.at(tLBrack) {
		g.Props = p.parseProps()
	}
	g.Span = p.span(start)
	return g
}

// props = '[' property+ ']'
func (p *parser) parseProps() *Props {
	start := p.p
	p.advance()
	ps := &Props{}
	if p.at(tRBrack) {
		p.failMsg(p.pos(p.tok().pos), "syntax error: empty property list")
	}
	for !p.at(tRBrack) {
		if !p.at(tIdent) {
			p.fail(p.tok(), "property name or ]")
		}
		ps.List = append(ps.List, p.parseProperty())
	}
	p.advance()
	ps.Span = p.span(start)
	return ps
}

// property = IDENT? IDENT '=' expr
func (p *parser) parseProperty() *Property {
	start := p.p
	pr := &Property{}
	name := p.expect(tIdent, "property name")
	if p.at(tIdent) {
		pr.TypeWord = p.ts.val(name)
		name = p.advance()
	}
	pr.Name = p.ts.val(name)
	pr.NamePos = p.pos(name.pos)
	p.expect(tAssign, "= after property "+strconv.Quote(pr.Name))
	pr.Value = p.parseExpr()
	pr.Span = p.span(start)
	return pr
}

func (p *parser) parseTaskClass() *TaskClass {
	start := p.p
	c := &TaskClass{Name: p.ts.val(p.advance())}
	p.advance() // (
	for {
		t := p.expect(tIdent, "parameter name")
		c.Params = append(c.Params, &Param{Span: Span{Pos: p.pos(t.pos), EndPos: p.pos(t.end)}, Name: p.ts.val(t)})
		if !p.at(tComma) {
			break
		}
		p.advance()
	}
	p.expect(tRParen, "',' or ')' in the parameter list")
	if p.at(tLBrack) {
		c.Props = p.parseProps()
	}
	for p.at(tIdent) && p.peek(1).kind == tAssign {
		c.Defs = append(c.Defs, p.parseDefinition())
	}
	if len(c.Defs) == 0 {
		p.fail(p.tok(), "a definition (NAME = range) for each parameter of "+c.Name)
	}
	if p.at(tSimcost) {
		p.advance()
		c.SimCost = p.parseExpr()
	}
	if !p.at(tColon) {
		p.fail(p.tok(), "another definition, SIMCOST or ':' (affinity)")
	}
	c.Affinity = p.parseAffinity()
	for p.at(tAccess) || p.at(tIdent) {
		c.Flows = append(c.Flows, p.parseFlow())
	}
	if p.at(tSemi) {
		p.advance()
		c.Priority = p.parseExpr()
	}
	if !p.at(tBody) {
		if c.Priority != nil {
			p.fail(p.tok(), "BODY")
		}
		p.fail(p.tok(), "a flow, ';' (priority) or BODY")
	}
	for p.at(tBody) {
		c.Bodies = append(c.Bodies, p.parseBody())
	}
	c.Span = p.span(start)
	return c
}

// definition = IDENT '=' rangeexpr props?
func (p *parser) parseDefinition() *Definition {
	start := p.p
	d := &Definition{Name: p.ts.val(p.advance())}
	p.advance() // =
	d.Value = p.parseRangeExpr()
	if p.at(tLBrack) {
		d.Props = p.parseProps()
	}
	d.Span = p.span(start)
	return d
}

// affinity = ':' IDENT '(' expr (',' expr)* ')'
func (p *parser) parseAffinity() *Affinity {
	start := p.p
	p.advance()
	name := p.expect(tIdent, "the data collection of the affinity")
	a := &Affinity{Name: p.ts.val(name), NamePos: p.pos(name.pos)}
	p.expect(tLParen, "'(' after the affinity collection")
	for {
		a.Args = append(a.Args, p.parseExpr())
		if !p.at(tComma) {
			break
		}
		p.advance()
	}
	p.expect(tRParen, "',' or ')'")
	a.Span = p.span(start)
	return a
}

var accessOf = map[string]Access{"CTL": AccessCTL, "READ": AccessRead, "RO": AccessRead, "WRITE": AccessWrite, "WO": AccessWrite, "RW": AccessRW}

// flow = ACCESS? IDENT props? dep*
func (p *parser) parseFlow() *Flow {
	start := p.p
	f := &Flow{Access: AccessRW}
	if p.at(tAccess) {
		f.Access = accessOf[p.ts.val(p.advance())]
	}
	name := p.expect(tIdent, "flow name")
	f.Name, f.NamePos = p.ts.val(name), p.pos(name.pos)
	if p.at(tLBrack) {
		f.Props = p.parseProps()
	}
	for p.at(tArrowIn) || p.at(tArrowOut) {
		f.Deps = append(f.Deps, p.parseDep())
	}
	f.Span = p.span(start)
	return f
}

// dep = ARROW named? target props?
func (p *parser) parseDep() *Dep {
	start := p.p
	d := &Dep{Dir: In}
	if p.advance().kind == tArrowOut {
		d.Dir = Out
	}
	if p.at(tLBrack) {
		d.Named = p.parseNamed()
	}
	switch {
	case p.at(tNew), p.at(tNull), p.at(tLBrack), p.isTaskCall():
		d.Then = p.parseTarget()
	default:
		guardTok := p.tok()
		e := p.parseBinary(3)
		if p.at(tQuest) {
			p.advance()
			d.Guard = e
			d.Then = p.parseTarget()
			if p.at(tColon) {
				p.advance()
				d.Else = p.parseTarget()
			}
			break
		}
		call, ok := e.(*CallExpr)
		fun, isName := Expr(nil), false
		if ok {
			fun = call.Fun
			_, isName = fun.(*Name)
		}
		if !isName || len(call.Args) == 0 {
			if p.at(tEOF) || e.End().Offset == p.pos(p.tok().pos).Offset {
				p.fail(p.tok(), "'?' after the guard, or a dependency target")
			}
			p.failMsg(p.pos(guardTok.pos), "syntax error: expected dependency target (FLOW Class(args), collection(args), NEW or NULL), or a guard followed by '?'")
		}
		n := fun.(*Name)
		d.Then = &Target{Span: call.Span, Kind: TargetCollection, Name: n.Name, NamePos: n.Span.Pos, Args: call.Args}
	}
	if p.at(tLBrack) {
		d.Props = p.parseProps()
	}
	d.Span = p.span(start)
	return d
}

func (p *parser) isTaskCall() bool {
	return p.at(tIdent) && p.peek(1).kind == tIdent && p.peek(2).kind == tLParen
}

// target = 'NEW' | 'NULL' | IDENT '(' args ')' | named? IDENT IDENT '(' args ')'
func (p *parser) parseTarget() *Target {
	start := p.p
	t := &Target{}
	switch {
	case p.at(tNew):
		p.advance()
		t.Kind = TargetNew
	case p.at(tNull):
		p.advance()
		t.Kind = TargetNull
	default:
		if p.at(tLBrack) {
			t.Named = p.parseNamed()
			if !p.isTaskCall() {
				p.fail(p.tok(), "FLOW Class(args) after a named range")
			}
		}
		name := p.expect(tIdent, "dependency target (FLOW Class(args), collection(args), NEW or NULL)")
		if p.at(tIdent) {
			t.Kind = TargetTask
			t.Flow, t.FlowPos = p.ts.val(name), p.pos(name.pos)
			name = p.advance()
		} else {
			t.Kind = TargetCollection
		}
		t.Name, t.NamePos = p.ts.val(name), p.pos(name.pos)
		p.expect(tLParen, "'(' and the arguments of "+p.ts.val(name))
		t.Args = p.parseArgs()
		if len(t.Args) == 0 {
			p.failMsg(t.NamePos, "syntax error: "+p.ts.val(name)+"() needs at least one argument")
		}
	}
	t.Span = p.span(start)
	return t
}

// parseArgs parses `arg (',' arg)* ')'` after the '('; arg = rangeexpr.
func (p *parser) parseArgs() []Expr {
	var args []Expr
	if p.at(tRParen) {
		p.advance()
		return args
	}
	for {
		args = append(args, p.parseRangeExpr())
		if !p.at(tComma) {
			break
		}
		p.advance()
	}
	p.expect(tRParen, "',' or ')'")
	return args
}

// named = '[' IDENT '=' rangeexpr (',' IDENT '=' rangeexpr)* ']'
func (p *parser) parseNamed() []*NamedRange {
	p.advance()
	var out []*NamedRange
	for {
		start := p.p
		name := p.expect(tIdent, "index name of a named range")
		p.expect(tAssign, "'=' after "+strconv.Quote(p.ts.val(name)))
		nr := &NamedRange{Name: p.ts.val(name), Value: p.parseRangeExpr()}
		nr.Span = p.span(start)
		out = append(out, nr)
		if !p.at(tComma) {
			break
		}
		p.advance()
	}
	p.expect(tRBrack, "',' or ']' in a named range")
	return out
}

// rangeexpr = expr '..' expr ('..' expr)? | named expr | expr
func (p *parser) parseRangeExpr() Expr {
	start := p.p
	if p.at(tLBrack) {
		named := p.parseNamed()
		x := p.parseExpr()
		return &LocalSetExpr{Span: p.span(start), Named: named, X: x}
	}
	from := p.parseExpr()
	if !p.at(tDotDot) {
		return from
	}
	p.advance()
	r := &RangeExpr{From: from, To: p.parseExpr()}
	if p.at(tDotDot) {
		p.advance()
		r.Step = p.parseExpr()
	}
	r.Span = p.span(start)
	return r
}

// body = 'BODY' props? NEWLINE text 'END'
func (p *parser) parseBody() *Body {
	start := p.p
	kw := p.advance()
	b := &Body{}
	if p.at(tLBrack) {
		b.Props = p.parseProps()
	}
	if p.at(tEOF) {
		p.failMsg(p.pos(kw.pos), "BODY without END (a line holding only END closes a body)")
	}
	if !p.at(tBodyText) {
		p.fail(p.tok(), "a property list or the end of the BODY line")
	}
	text := p.advance()
	b.Text, b.TextPos = p.ts.val(text), p.pos(text.textPos())
	if !p.at(tEnd) {
		p.failMsg(p.pos(kw.pos), "BODY without END (a line holding only END closes a body)")
	}
	b.EndKw = p.pos(p.advance().pos)
	b.Span = p.span(start)
	return b
}

// ---------------------------------------------------------------------------
// Expressions (§4.1), by precedence climbing.

// parseExpr = binary ('?' expr ':' expr)?
func (p *parser) parseExpr() Expr {
	start := p.p
	c := p.parseBinary(3)
	if !p.at(tQuest) {
		return c
	}
	p.advance()
	then := p.parseExpr()
	p.expect(tColon, "':' of the conditional expression")
	els := p.parseExpr()
	return &TernaryExpr{Span: p.span(start), Cond: c, Then: then, Else: els}
}

var binOps = map[tokKind]Op{
	tLOr: OpLOr, tOr1: OpOr1, tLAnd: OpLAnd, tAnd1: OpAnd1, tXor: OpXor, tEq: OpEq, tNe: OpNe,
	tLt: OpLt, tLe: OpLe, tGt: OpGt, tGe: OpGe, tShl: OpShl, tShr: OpShr,
	tPlus: OpAdd, tMinus: OpSub, tStar: OpMul, tSlash: OpDiv, tPct: OpRem,
}

func (p *parser) parseBinary(minPrec int) Expr {
	start := p.p
	x := p.parseUnary()
	for {
		op, ok := binOps[p.tok().kind]
		if !ok || op.Precedence() < minPrec {
			return x
		}
		opTok := p.advance()
		y := p.parseBinary(op.Precedence() + 1)
		x = &BinaryExpr{Span: p.span(start), X: x, Op: op, OpPos: p.pos(opTok.pos), Y: y}
	}
}

func (p *parser) parseUnary() Expr {
	start := p.p
	switch p.tok().kind {
	case tNot, tMinus:
		op := OpNot
		if p.advance().kind == tMinus {
			op = OpNeg
		}
		x := p.parseUnary()
		return &UnaryExpr{Span: p.span(start), Op: op, X: x}
	}
	return p.parsePrimary()
}

func (p *parser) parsePrimary() Expr {
	start := p.p
	t := p.tok()
	switch t.kind {
	case tInt:
		p.advance()
		v, err := strconv.ParseInt(p.ts.val(t), 10, 64)
		if err != nil {
			p.failMsg(p.pos(t.pos), "integer "+p.ts.val(t)+" out of range")
		}
		return &IntLit{Span: p.span(start), Value: v, Text: p.ts.onOffWord(t)}
	case tString:
		p.advance()
		return &StringLit{Span: p.span(start), Value: p.ts.val(t), Raw: p.ts.raw(t)}
	case tCode:
		p.advance()
		return &InlineCode{Span: p.span(start), Code: p.codeBlock(t)}
	case tLParen:
		p.advance()
		x := p.parseExpr()
		p.expect(tRParen, "')'")
		return &ParenExpr{Span: p.span(start), X: x}
	case tIdent:
		return p.parseName()
	}
	p.fail(t, "expression")
	return nil
}

// parseName parses `IDENT (ARROW IDENT)*` and an optional call. The dotted
// segments of an identifier token become selectors.
func (p *parser) parseName() Expr {
	start := p.p
	t := p.advance()
	var x Expr
	seg := 0
	base := p.pos(t.pos)
	for i := 0; i <= len(p.ts.val(t)); i++ {
		if i < len(p.ts.val(t)) && p.ts.val(t)[i] != '.' {
			continue
		}
		pos := base
		pos.Offset += seg
		pos.Column += seg
		end := base
		end.Offset += i
		end.Column += i
		word := p.ts.val(t)[seg:i]
		if x == nil {
			x = &Name{Span: Span{Pos: pos, EndPos: end}, Name: word}
		} else {
			x = &SelectorExpr{Span: Span{Pos: base, EndPos: end}, X: x, Sel: word}
		}
		seg = i + 1
	}
	for (p.at(tArrowOut) || p.at(tArrowIn)) && p.peek(1).kind == tIdent {
		p.advance()
		sel := p.advance()
		// A dotted word after the arrow (descA->super.mt) is one more selector per dot.
		words := splitDots(p.ts.val(sel))
		x = &SelectorExpr{Span: p.span(start), X: x, Sel: words[0], Arrow: true}
		for _, w := range words[1:] {
			x = &SelectorExpr{Span: p.span(start), X: x, Sel: w}
		}
	}
	if p.at(tLParen) {
		p.advance()
		args := p.parseArgs()
		return &CallExpr{Span: p.span(start), Fun: x, Args: args}
	}
	return x
}

func splitDots(s string) []string {
	var out []string
	seg := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			out = append(out, s[seg:i])
			seg = i + 1
		}
	}
	return out
}
