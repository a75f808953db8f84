package parser

// Conversion of the grammar tree (grammar.go) into the AST (ast.go).

import (
	"sort"

	"github.com/alecthomas/participle/v2/lexer"
)

type converter struct {
	toks  []lexer.Token // the tokens of a chunk of the file (parse.go), EOF last
	first bool          // the first chunk
	errs  ErrorList     // syntax errors of the chunk
}

// end returns the end of a node whose EndPos participle set to next, the
// position of the token after it: the end of the token before next.
func (c *converter) end(next lexer.Position) lexer.Position {
	i := sort.Search(len(c.toks), func(i int) bool { return c.toks[i].Pos.Offset >= next.Offset })
	if i == 0 {
		return next
	}
	t := &c.toks[i-1]
	return advance(t.Pos, t.Value)
}

// tokenAt returns the index of the first token at or after offset off.
func (c *converter) tokenAt(off int) int {
	return sort.Search(len(c.toks), func(i int) bool { return c.toks[i].Pos.Offset >= off })
}

func (c *converter) span(pos, next lexer.Position) Span {
	return Span{Pos: pos, EndPos: c.end(next)}
}

// items converts the items of f that were completely parsed.
func (c *converter) items(f *file) []Item {
	var out []Item
	for _, it := range f.Items {
		switch it := it.(type) {
		case *taskClass:
			if it.EndPos.Line == 0 {
				continue // incomplete: a syntax error follows
			}
			out = append(out, c.class(it))
		case *global:
			if it.EndPos.Line == 0 {
				continue
			}
			g := &Global{Span: c.span(it.Name.Pos, it.EndPos), Name: it.Name.Value, Props: c.props(it.Props)}
			if it.Def != nil {
				g.Def = it.Def.X
			}
			out = append(out, g)
		case *option:
			if it.EndPos.Line == 0 {
				continue
			}
			out = append(out, &Option{Span: c.span(it.Pos, it.EndPos), Prop: c.property(it.Prop)})
		}
	}
	return out
}

func (c *converter) props(ps *props) *Props {
	if ps == nil {
		return nil
	}
	out := &Props{Span: c.span(ps.Pos, ps.EndPos), List: make([]*Property, len(ps.List))}
	for i, p := range ps.List {
		out.List[i] = c.property(p)
	}
	return out
}

func (c *converter) property(p *property) *Property {
	pr := &Property{Span: c.span(p.First.Pos, p.EndPos), Name: p.First.Value, NamePos: p.First.Pos, Value: p.Value.X}
	if p.Second != nil {
		pr.TypeWord = pr.Name
		pr.Name, pr.NamePos = p.Second.Value, p.Second.Pos
	}
	return pr
}

func (c *converter) class(g *taskClass) *TaskClass {
	tc := &TaskClass{Span: c.span(g.Name.Pos, g.EndPos), Name: g.Name.Value, Props: c.props(g.Props)}
	for i := range g.Params {
		if t := &g.Params[i]; t.Type == tIdent {
			tc.Params = append(tc.Params, &Param{Span: Span{Pos: t.Pos, EndPos: advance(t.Pos, t.Value)}, Name: t.Value})
		}
	}
	tc.Defs = make([]*Definition, len(g.Defs))
	for i, d := range g.Defs {
		tc.Defs[i] = &Definition{Span: c.span(d.Name.Pos, d.EndPos), Name: d.Name.Value, Value: d.Value.X, Props: c.props(d.Props)}
	}
	if g.SimCost != nil {
		tc.SimCost = g.SimCost.X
	}
	a := g.Affinity
	tc.Affinity = &Affinity{Span: c.span(a.Pos, a.EndPos), Name: a.Name.Value, NamePos: a.Name.Pos, Args: make([]Expr, len(a.Args))}
	for i, x := range a.Args {
		tc.Affinity.Args[i] = x.X
	}
	for _, f := range g.Flows {
		tc.Flows = append(tc.Flows, c.flow(f))
	}
	if g.Priority != nil {
		tc.Priority = g.Priority.X
	}
	tc.Bodies = make([]*Body, len(g.Bodies))
	for i, b := range g.Bodies {
		tc.Bodies[i] = &Body{
			Span:    Span{Pos: b.Pos, EndPos: advance(b.End.Pos, b.End.Value)},
			Props:   c.props(b.Props),
			Text:    b.Text.Value,
			TextPos: b.Text.Pos,
			EndKw:   b.End.Pos,
		}
	}
	return tc
}

var accessOf = map[string]Access{"CTL": AccessCTL, "READ": AccessRead, "RO": AccessRead, "WRITE": AccessWrite, "WO": AccessWrite, "RW": AccessRW}

func (c *converter) flow(g *flow) *Flow {
	f := &Flow{Span: c.span(g.Name.Pos, g.EndPos), Access: AccessRW, Name: g.Name.Value, NamePos: g.Name.Pos, Props: c.props(g.Props)}
	if g.Access != nil {
		f.Access = accessOf[g.Access.Value]
		f.Span.Pos = g.Access.Pos
	}
	for _, d := range g.Deps {
		f.Deps = append(f.Deps, c.dep(d))
	}
	return f
}

func (c *converter) dep(g *dep) *Dep {
	d := &Dep{Span: c.span(g.Arrow.Pos, g.EndPos), Dir: In, Named: convertNamed(g.Named)}
	if g.Arrow.Value == "->" {
		d.Dir = Out
	}
	switch t := g.Target.(type) {
	case *call:
		d.Then = c.call(t)
	case *guarded:
		if t.Then != nil {
			d.Guard = t.Guard.X
			d.Then = c.call(t.Then)
			if t.Else != nil {
				d.Else = c.call(t.Else)
			}
			break
		}
		d.Then = collection(t.Guard.X)
	}
	d.Props = c.props(g.Props)
	return d
}

func (c *converter) call(g *call) *Target {
	t := &Target{Span: c.span(g.Pos, g.EndPos)}
	switch {
	case g.New:
		t.Kind = TargetNew
		return t
	case g.Null:
		t.Kind = TargetNull
		return t
	}
	t.Named = convertNamed(g.Named)
	name := g.First
	t.Kind = TargetCollection
	if g.Second != nil {
		t.Kind = TargetTask
		t.Flow, t.FlowPos = g.First.Value, g.First.Pos
		name = g.Second
	}
	t.Name, t.NamePos = name.Value, name.Pos
	t.Args = g.Args.List
	return t
}

// convertNamed converts a named range list; nil stays nil.
func convertNamed(n *named) []*NamedRange {
	if n == nil {
		return nil
	}
	out := make([]*NamedRange, len(n.List))
	for i, r := range n.List {
		out[i] = &NamedRange{Span: Span{Pos: r.Name.Pos, EndPos: r.Value.X.End()}, Name: r.Name.Value, Value: r.Value.X}
	}
	return out
}
