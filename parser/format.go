package parser

// The canonical printer behind `jdf2go fmt`. Layout: items separated by one
// blank line (consecutive globals and options stay together unless the
// source separated them), class contents indented by two spaces, one
// dependency per line aligned under the first arrow, canonical spacing in
// expressions. Code blocks and bodies are printed verbatim. Comments are
// kept: a comment on the line where a construct ends trails it, any other
// comment is printed on its own line before the next construct.

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

type printer struct {
	buf      bytes.Buffer
	comments []*Comment
	ci       int
	marks    []int // buffer offsets where a trailing comment starts, for alignment
	trailEnd int   // source line where the last trailing comment ends
}

// Format prints a parsed program in canonical layout. Formatting is
// idempotent, and parsing the output gives the same tree as parsing the
// input, positions aside. Lines end with \n, including those of bodies,
// code blocks and comments of a file written with \r\n or \r (the tree
// holds their text so, lf).
func Format(prog *Program) []byte {
	p := &printer{comments: prog.Comments}
	if prog.Prologue != nil {
		p.leading(prog.Prologue.Pos().Offset, "")
		p.code(prog.Prologue, true)
		p.trailing(prog.Prologue.End().Offset, prog.Prologue.End().Line)
		p.nl()
	}
	var prev Item
	prevEnd := 0
	if prog.Prologue != nil {
		prevEnd = prog.Prologue.End().Line
	}
	for _, it := range prog.Items {
		if prev != nil || prog.Prologue != nil {
			if !(isSimple(prev) && isSimple(it)) || p.firstLine(it.Pos().Offset, it.Pos().Line) > prevEnd+1 {
				p.nl()
			}
		}
		switch it := it.(type) {
		case *Global:
			p.lineStart(it.Name, it.Pos(), "")
			p.global(it)
		case *Option:
			p.leading(it.Pos().Offset, "")
			p.ws("%option ")
			p.property(it.Prop)
			p.trailing(it.End().Offset, it.End().Line)
			p.nl()
		case *TaskClass:
			p.lineStart(it.Name, it.Pos(), "")
			p.class(it)
		}
		prev, prevEnd = it, max(it.End().Line, p.trailEnd)
	}
	if prog.Epilogue != nil {
		if prev != nil || prog.Prologue != nil {
			p.nl()
		}
		p.leading(prog.Epilogue.Pos().Offset, "")
		p.code(prog.Epilogue, true)
		p.trailing(prog.Epilogue.End().Offset, prog.Epilogue.End().Line)
		p.nl()
	}
	p.leading(int(^uint(0)>>1), "")
	return p.alignComments()
}

// alignComments pads the trailing comments of consecutive lines to one
// column, one space after the longest code among them, as gofmt does.
func (p *printer) alignComments() []byte {
	src := p.buf.Bytes()
	if len(p.marks) == 0 {
		return src
	}
	type mark struct{ line, off, width int }
	var ms []mark
	line, lineStart, mi := 0, 0, 0
	for i := 0; i <= len(src) && mi < len(p.marks); i++ {
		for mi < len(p.marks) && p.marks[mi] == i {
			if len(ms) == 0 || ms[len(ms)-1].line != line {
				ms = append(ms, mark{line, i, i - lineStart})
			}
			mi++
		}
		if i < len(src) && src[i] == '\n' {
			line++
			lineStart = i + 1
		}
	}
	var out bytes.Buffer
	out.Grow(len(src) + 64)
	prev := 0
	for g := 0; g < len(ms); {
		h, width := g, 0
		for ; h < len(ms) && ms[h].line == ms[g].line+(h-g); h++ {
			width = max(width, ms[h].width)
		}
		for _, m := range ms[g:h] {
			out.Write(src[prev:m.off])
			out.WriteString(strings.Repeat(" ", width-m.width))
			prev = m.off
		}
		g = h
	}
	out.Write(src[prev:])
	return out.Bytes()
}

func isSimple(it Item) bool {
	switch it.(type) {
	case *Global, *Option:
		return true
	}
	return false
}

func (p *printer) ws(s string) { p.buf.WriteString(s) }
func (p *printer) nl()         { p.buf.WriteByte('\n') }

// firstLine is the line of the first pending comment before off, or line.
func (p *printer) firstLine(off, line int) int {
	if p.ci < len(p.comments) && p.comments[p.ci].Pos.Offset < off {
		return p.comments[p.ci].Pos.Line
	}
	return line
}

// leading prints the comments before off, each on its own line.
func (p *printer) leading(off int, indent string) {
	for p.ci < len(p.comments) && p.comments[p.ci].Pos.Offset < off {
		p.ws(indent)
		p.ws(p.comments[p.ci].Text)
		p.nl()
		p.ci++
	}
}

// lineStart prints the comments before a construct that starts with name
// at the start of a line, then the indentation. A name spelled like BODY
// would lex as the BODY keyword there, so it goes after an empty comment;
// that comment, found again on the construct's line, is not printed twice.
func (p *printer) lineStart(name string, pos lexer.Position, indent string) {
	if !strings.EqualFold(name, "body") {
		p.leading(pos.Offset, indent)
		p.ws(indent)
		return
	}
	for p.ci < len(p.comments) && p.comments[p.ci].Pos.Offset < pos.Offset {
		c := p.comments[p.ci]
		p.ci++
		if c.Text == emptyComment && c.Pos.Line == pos.Line {
			continue
		}
		p.ws(indent)
		p.ws(c.Text)
		p.nl()
	}
	p.ws(indent + emptyComment + " ")
}

const emptyComment = "/**/"

// trailing prints, on the current line, the comments inside a construct
// that ends at off and those starting on its last line. A block comment that
// spans lines moves that last line to its own end, so that a comment after
// it stays on its line when the output is formatted again.
func (p *printer) trailing(off, line int) {
	for p.ci < len(p.comments) {
		c := p.comments[p.ci]
		if c.Pos.Offset >= off && c.Pos.Line != line {
			return
		}
		p.marks = append(p.marks, p.buf.Len())
		p.ws(" ")
		p.ws(c.Text)
		p.trailEnd = c.EndPos.Line
		line = max(line, c.EndPos.Line)
		p.ci++
	}
}

func (p *printer) code(cb *CodeBlock, top bool) {
	if top && cb.Lang != "" {
		p.ws("extern ")
		p.ws(strconv.Quote(cb.Lang))
		p.ws(" ")
	}
	p.ws("%{")
	p.ws(cb.Text)
	p.ws("%}")
}

func (p *printer) global(g *Global) {
	p.ws(g.Name)
	if g.Def != nil {
		p.ws(" = ")
		p.expr(g.Def)
	}
	p.props(g.Props)
	p.trailing(g.End().Offset, g.End().Line)
	p.nl()
}

func (p *printer) props(ps *Props) {
	if ps == nil {
		return
	}
	p.ws(" [")
	for i, pr := range ps.List {
		if i > 0 {
			p.ws(" ")
		}
		p.property(pr)
	}
	p.ws("]")
}

func (p *printer) property(pr *Property) {
	if pr.TypeWord != "" {
		p.ws(pr.TypeWord)
		p.ws(" ")
	}
	p.ws(pr.Name)
	p.ws(" = ")
	p.expr(pr.Value)
}

const indent = "  "

func (p *printer) class(tc *TaskClass) {
	p.ws(tc.Name)
	p.ws("(")
	for i, par := range tc.Params {
		if i > 0 {
			p.ws(", ")
		}
		p.ws(par.Name)
	}
	p.ws(")")
	p.props(tc.Props)
	hdrEnd := tc.Params[len(tc.Params)-1].End()
	if tc.Props != nil {
		hdrEnd = tc.Props.End()
	}
	p.trailing(hdrEnd.Offset, hdrEnd.Line)
	p.nl()
	for _, d := range tc.Defs {
		p.lineStart(d.Name, d.Pos(), indent)
		p.ws(d.Name)
		p.ws(" = ")
		p.expr(d.Value)
		p.props(d.Props)
		p.trailing(d.End().Offset, d.End().Line)
		p.nl()
	}
	if tc.SimCost != nil {
		p.leading(tc.SimCost.Pos().Offset, indent)
		p.ws(indent + "SIMCOST ")
		p.expr(tc.SimCost)
		p.trailing(tc.SimCost.End().Offset, tc.SimCost.End().Line)
		p.nl()
	}
	a := tc.Affinity
	p.leading(a.Pos().Offset, indent)
	p.ws(indent + ": ")
	p.ws(a.Name)
	p.args(a.Args)
	p.trailing(a.End().Offset, a.End().Line)
	p.nl()
	for _, f := range tc.Flows {
		p.flow(f)
	}
	if tc.Priority != nil {
		p.leading(tc.Priority.Pos().Offset, indent)
		p.ws(indent + "; ")
		p.expr(tc.Priority)
		p.trailing(tc.Priority.End().Offset, tc.Priority.End().Line)
		p.nl()
	}
	for _, b := range tc.Bodies {
		p.leading(b.Pos().Offset, "")
		p.ws("BODY")
		p.props(b.Props)
		end := b.Pos()
		end.Offset += 4
		if b.Props != nil {
			end = b.Props.End()
		}
		p.trailing(b.TextPos.Offset, end.Line)
		p.nl()
		p.ws(b.Text)
		p.ws("END\n")
	}
}

func (p *printer) flow(f *Flow) {
	p.leading(f.Pos().Offset, indent)
	start := p.buf.Len()
	p.ws(indent)
	p.ws(f.Access.String())
	p.ws(" ")
	p.ws(f.Name)
	p.props(f.Props)
	if len(f.Deps) == 0 {
		p.trailing(f.End().Offset, f.End().Line)
		p.nl()
		return
	}
	p.ws(" ")
	align := strings.Repeat(" ", p.buf.Len()-start)
	for i, d := range f.Deps {
		if i > 0 {
			p.leading(d.Pos().Offset, align)
			p.ws(align)
		}
		p.dep(d)
		p.trailing(d.End().Offset, d.End().Line)
		p.nl()
	}
}

func (p *printer) dep(d *Dep) {
	p.ws(d.Dir.String())
	p.ws(" ")
	p.named(d.Named)
	if d.Guard != nil {
		p.expr(d.Guard)
		p.ws(" ? ")
	}
	p.target(d.Then)
	if d.Else != nil {
		p.ws(" : ")
		p.target(d.Else)
	}
	p.props(d.Props)
}

func (p *printer) named(list []*NamedRange) {
	if len(list) == 0 {
		return
	}
	p.ws("[")
	for i, nr := range list {
		if i > 0 {
			p.ws(", ")
		}
		p.ws(nr.Name)
		p.ws(" = ")
		p.expr(nr.Value)
	}
	p.ws("] ")
}

func (p *printer) target(t *Target) {
	switch t.Kind {
	case TargetNew:
		p.ws("NEW")
	case TargetNull:
		p.ws("NULL")
	case TargetTask:
		p.named(t.Named)
		p.ws(t.Flow)
		p.ws(" ")
		p.ws(t.Name)
		p.args(t.Args)
	case TargetCollection:
		p.ws(t.Name)
		p.args(t.Args)
	}
}

func (p *printer) args(args []Expr) {
	p.ws("(")
	for i, a := range args {
		if i > 0 {
			p.ws(", ")
		}
		p.expr(a)
	}
	p.ws(")")
}

func (p *printer) expr(e Expr) {
	switch e := e.(type) {
	case *BinaryExpr:
		chain, first := LeftChain(e)
		p.expr(first)
		for i := len(chain) - 1; i >= 0; i-- {
			p.ws(" ")
			p.ws(chain[i].Op.String())
			p.ws(" ")
			p.expr(chain[i].Y)
		}
	case *UnaryExpr:
		p.ws(e.Op.String())
		if u, ok := e.X.(*UnaryExpr); ok && u.Op == e.Op && e.Op == OpNeg {
			p.ws(" ") // "- -k", not "--k"
		}
		p.expr(e.X)
	case *TernaryExpr:
		p.expr(e.Cond)
		p.ws(" ? ")
		p.expr(e.Then)
		p.ws(" : ")
		p.expr(e.Else)
	case *ParenExpr:
		p.ws("(")
		p.expr(e.X)
		p.ws(")")
	case *IntLit:
		if e.Text != "" {
			p.ws(e.Text)
		} else {
			p.ws(strconv.FormatInt(e.Value, 10))
		}
	case *Name:
		p.ws(e.Name)
	case *SelectorExpr:
		p.expr(e.X)
		if e.Arrow {
			p.ws("->")
		} else {
			p.ws(".")
		}
		p.ws(e.Sel)
	case *CallExpr:
		p.expr(e.Fun)
		p.args(e.Args)
	case *StringLit:
		p.ws(e.Raw)
	case *InlineCode:
		p.code(e.Code, false)
	case *RangeExpr:
		p.expr(e.From)
		p.ws(" .. ")
		p.expr(e.To)
		if e.Step != nil {
			p.ws(" .. ")
			p.expr(e.Step)
		}
	case *LocalSetExpr:
		p.named(e.Named)
		p.expr(e.X)
	}
}

// ExprString renders an expression in canonical JDF syntax, as Format prints it:
// "k + 1 .. MT - 1", "(k == 0) ? a : b". Code generators use it in comments and messages.
func ExprString(e Expr) string {
	var p printer
	p.expr(e)
	return p.buf.String()
}

// TargetString renders a dependency endpoint as Format prints it: "A TRSM(m, k)",
// "descA(k, k)", "NEW".
func TargetString(t *Target) string {
	var p printer
	p.target(t)
	return p.buf.String()
}

// lf returns text with its line breaks \r\n and \r turned into \n: the
// text of bodies and code blocks in the tree, as Go reads it and as fmt
// prints it.
func lf(text string) string {
	if strings.IndexByte(text, '\r') < 0 {
		return text
	}
	return strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
}
