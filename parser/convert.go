package parser

// Conversion of the grammar tree (grammar.go) into the AST (ast.go).

import (
	"sort"

	"github.com/alecthomas/participle/v2/lexer"
)

type converter struct {
	toks  []lexer.Token // the tokens of the file from where the parse started (resync.go), EOF last
	first bool          // the parse started at the start of the file
	errs  ErrorList     // syntax errors of the parse
}

// endBefore returns the end of a node whose EndPos participle set to next,
// the position of the token after it: the end of the token before next.
func (c *converter) endBefore(next lexer.Position) lexer.Position {
	i := c.tokenAt(next.Offset)
	if i == 0 {
		return next
	}
	return tokenEnd(&c.toks[i-1])
}

// tokenAt returns the index of the first token at or after offset off.
func (c *converter) tokenAt(off int) int {
	return sort.Search(len(c.toks), func(i int) bool { return c.toks[i].Pos.Offset >= off })
}

func (c *converter) span(pos, next lexer.Position) Span {
	return newSpan(pos, c.endBefore(next))
}

// items converts the items of a parse. A failed parse holds only the
// items before the error, completely parsed.
func (c *converter) items(f *file) []Item {
	out := make([]Item, 0, len(f.Items))
	for _, it := range f.Items {
		switch it := it.(type) {
		case *taskClass:
			out = append(out, c.class(it))
		case *global:
			g := &Global{Span: newSpan(it.Name.Pos, tokenEnd(&it.Name)), Name: it.Name.Value, Props: c.props(it.Props)}
			if it.Def != nil {
				g.Def = it.Def.X
				g.setEnd(g.Def.End())
			}
			if g.Props != nil {
				g.setEnd(g.Props.End())
			}
			out = append(out, g)
		case *option:
			pr := it.Prop.X
			out = append(out, &Option{Span: newSpan(it.Pos, pr.End()), Prop: pr})
		}
	}
	return out
}

func (c *converter) props(ps *props) *Props {
	if ps == nil {
		return nil
	}
	return convertProps(ps, c.endBefore(ps.EndPos))
}

// convertProps converts a property list that ends at end.
func convertProps(ps *props, end lexer.Position) *Props {
	out := &Props{Span: newSpan(ps.Pos, end), List: make([]*Property, len(ps.List))}
	for i, p := range ps.List {
		out.List[i] = p.X
	}
	return out
}

func (c *converter) class(g *taskClass) *TaskClass {
	tc := &TaskClass{Span: openSpan(g.Name.Pos), Name: g.Name.Value, Props: c.props(g.Props)}
	// The nodes of a kind are allocated together: they live as long as
	// the class.
	params := make([]Param, 0, (len(g.Params)+1)/2) // the commas are tokens too
	tc.Params = make([]*Param, 0, cap(params))
	for i := range g.Params {
		if t := &g.Params[i]; t.Type == tIdent {
			params = append(params, Param{Span: newSpan(t.Pos, tokenEnd(t)), Name: t.Value})
			tc.Params = append(tc.Params, &params[len(params)-1])
		}
	}
	tc.Defs = make([]*Definition, len(g.Defs))
	for i, d := range g.Defs {
		tc.Defs[i] = d.X
	}
	if g.SimCost != nil {
		tc.SimCost = g.SimCost.X
	}
	a := g.Affinity
	tc.Affinity = &Affinity{Span: c.span(a.Pos, a.EndPos), Name: a.Name.Value, NamePos: a.Name.Pos, Args: make([]Expr, len(a.Args))}
	for i, x := range a.Args {
		tc.Affinity.Args[i] = x.X
	}
	if len(g.Flows) > 0 {
		tc.Flows = make([]*Flow, len(g.Flows))
		for i, f := range g.Flows {
			tc.Flows[i] = f.X
		}
	}
	if g.Priority != nil {
		tc.Priority = g.Priority.X
	}
	bodies := make([]Body, len(g.Bodies))
	tc.Bodies = make([]*Body, len(g.Bodies))
	for i, b := range g.Bodies {
		tc.Bodies[i] = &bodies[i]
		bodies[i] = Body{
			Span:    newSpan(b.Pos, tokenEnd(&b.End)),
			Props:   c.props(b.Props),
			Text:    lf(b.Text.Value),
			TextPos: b.Text.Pos,
			EndKw:   b.End.Pos,
		}
	}
	tc.setEnd(tc.Bodies[len(tc.Bodies)-1].End())
	return tc
}
