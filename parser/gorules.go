package parser

// The rules jdf2go gen applies to a file whose code is Go, beyond its names (gonames.go):
// bodies and inline code must be Go, pasted strings Go expressions; dependency properties
// that describe a partial transfer cannot be honoured; a class needs a body other than
// HIP; GPU and batched bodies receive names from gen. They live here so that `jdf2go
// check` (Check, for a Go file) and code generation (codegen calls the same functions)
// report the same diagnostics at the same positions. A C file (checker.foreign) cannot be
// generated at all, so Check leaves these rules out for it: PaRSEC's own files keep
// checking clean.

import (
	goast "go/ast"
	goparser "go/parser"
	goscanner "go/scanner"
	gotoken "go/token"
	"slices"

	"github.com/alecthomas/participle/v2/lexer"
)

// ParseGoBody parses the text of a BODY, which starts at pos in the JDF file, as the
// statements of a Go function returning error. On failure it returns the diagnostic of the
// first syntax error, positioned in the JDF file.
func ParseGoBody(text string, pos lexer.Position) (*goast.BlockStmt, *Diagnostic) {
	const head = "package p\nfunc _() error {\n"
	f, err := goparser.ParseFile(gotoken.NewFileSet(), "", head+text+"\n}\n", goparser.SkipObjectResolution)
	if err != nil {
		return nil, GoSyntaxError(err, pos, 2, "BODY is not Go")
	}
	return f.Decls[0].(*goast.FuncDecl).Body, nil
}

// GoCodeError checks code that gen pastes into Go: inline code (%{ ... %}) must be Go
// statements, a string pasted as code a Go expression. text starts at pos. It returns nil
// when the code parses.
func GoCodeError(text string, pos lexer.Position, isString bool) *Diagnostic {
	if isString {
		if _, err := goparser.ParseExprFrom(gotoken.NewFileSet(), "", text, 0); err != nil {
			return GoSyntaxError(err, pos, 0, "string pasted as Go code is not a Go expression")
		}
		return nil
	}
	const head = "package p\nfunc _() {\n"
	if _, err := goparser.ParseFile(gotoken.NewFileSet(), "", head+text+"\n}\n", goparser.SkipObjectResolution); err != nil {
		return GoSyntaxError(err, pos, 2, "inline code is not Go")
	}
	return nil
}

// CodeText returns the text that gen pastes for inline code or a string used as code, and
// where that text starts in the JDF file; ok is false for any other expression.
func CodeText(e Expr) (text string, pos lexer.Position, isString, ok bool) {
	switch e := e.(type) {
	case *InlineCode:
		return e.Code.Text, e.Code.TextPos, false, true
	case *StringLit:
		p := e.Pos()
		p.Column++ // after the opening quote
		p.Offset++
		return e.Value, p, true, true
	}
	return "", lexer.Position{}, false, false
}

// GoSyntaxError turns the first go/parser error of user code that starts at pos, after
// skip lines of wrapper, into a diagnostic at its place in the JDF file.
func GoSyntaxError(err error, pos lexer.Position, skip int, what string) *Diagnostic {
	p := pos
	msg := err.Error()
	if list, ok := err.(goscanner.ErrorList); ok && len(list) > 0 {
		e := list[0]
		msg = e.Msg
		line := e.Pos.Line - skip
		if line <= 1 {
			p.Column += max(e.Pos.Column-1, 0)
		} else {
			p.Line += line - 1
			p.Column = e.Pos.Column
		}
	}
	return &Diagnostic{Pos: p, Severity: Error, Msg: what + ": " + msg}
}

// RangeLocalError reports definition d of tc when it is not a parameter but is defined as a
// range (from .. to): gen gives a local one value per task, so it cannot generate one.
func RangeLocalError(tc *TaskClass, d *Definition) *Diagnostic {
	if _, ok := d.Value.(*RangeExpr); !ok || d.Param != nil {
		return nil
	}
	return &Diagnostic{Pos: d.Pos(), Severity: Error,
		Msg: d.Name + " of " + tc.Name + " is not a parameter but is defined as a range; only parameters take ranges"}
}

// WalksRing reports whether a parsed body selects a Ring method (task.Ring()): it walks
// the ring of a batch of tasks.
func WalksRing(body *goast.BlockStmt) bool {
	ring := false
	goast.Inspect(body, func(n goast.Node) bool {
		if sel, ok := n.(*goast.SelectorExpr); ok && sel.Sel.Name == "Ring" {
			ring = true
		}
		return !ring
	})
	return ring
}

// A RingKind is the kind of bodies that receive a ring of tasks, and the names jdf2go
// gives them.
type RingKind struct {
	Bodies string   // the bodies, for messages
	Names  []string // the names they receive
}

var (
	// GPURing: GPU bodies receive their device, stream, ring member and match decision.
	GPURing = RingKind{Bodies: "GPU bodies", Names: []string{"dev", "stream", "member", "match"}}
	// CPURing: batched CPU bodies receive their ring member and match decision.
	CPURing = RingKind{Bodies: "batched CPU bodies", Names: []string{"member", "match"}}
)

// RingNameErrors reports the names of class tc (definitions, flows and the globals its
// bodies see) that bodies of kind k would see and that jdf2go gives those bodies itself.
func RingNameErrors(prog *Program, tc *TaskClass, k RingKind) ErrorList {
	var l ErrorList
	for _, d := range tc.Defs {
		if slices.Contains(k.Names, d.Name) {
			l.Errorf(d.Pos(), "definition %q of %s: %s receive %q from jdf2go; rename it", d.Name, tc.Name, k.Bodies, d.Name)
		}
	}
	for _, f := range tc.Flows {
		if slices.Contains(k.Names, f.Name) {
			l.Errorf(f.NamePos, "flow %q of %s: %s receive %q from jdf2go; rename it", f.Name, tc.Name, k.Bodies, f.Name)
		}
	}
	for _, gl := range BodyGlobals(prog, tc) {
		if slices.Contains(k.Names, gl.Name) {
			l.Errorf(gl.Pos(), "global %q: the %s of %s receive %q from jdf2go; rename it", gl.Name, k.Bodies, tc.Name, gl.Name)
		}
	}
	return l
}

// BodyGlobals returns the globals the bodies of tc can see: those no definition or flow
// of the class hides.
func BodyGlobals(prog *Program, tc *TaskClass) []*Global {
	var out []*Global
	for _, gl := range prog.Globals {
		if tc.Def(gl.Name) == nil && tc.Flow(gl.Name) == nil {
			out = append(out, gl)
		}
	}
	return out
}

// HIPBodyDiagnostic handles a HIP body b of tc: jdf2go has no HIP backend, so the body is
// skipped with a warning when the class has another body, and is an error otherwise.
func HIPBodyDiagnostic(tc *TaskClass, b *Body) *Diagnostic {
	for _, o := range tc.Bodies {
		if o.Device() != "HIP" {
			return &Diagnostic{Pos: b.Pos(), Severity: Warning, Msg: "BODY [type=" + b.Type + "] of " + tc.Name +
				" skipped: jdf2go has no HIP backend (the " + o.Device() + " body and the others run)"}
		}
	}
	return &Diagnostic{Pos: b.Pos(), Severity: Error, Msg: "BODY [type=" + b.Type + "] of " + tc.Name +
		": jdf2go has no HIP backend, and the class has no other body"}
}

// The dependency properties that describe what a transfer carries (PaRSEC's datatypes):
// count, displ and layout, in their local, _remote and _data forms, type_remote and
// type_data. jdf2go sends a flow's whole value, locally and across ranks, so a successor
// would silently get more, or another shape, than the property names: gen rejects them,
// except count where it sizes a buffer that the dependency allocates (AllocatingDeps).
// type names the arena of an allocation; on a dependency that allocates nothing it has no
// effect, which is worth a warning.
var transferProps = []string{"count", "displ", "layout", "count_remote", "displ_remote", "layout_remote",
	"count_data", "displ_data", "layout_data", "type_remote", "type_data"}

// DepPropDiagnostics reports the dependency properties of tc that jdf2go cannot honour,
// and dependency types that name no arena.
func DepPropDiagnostics(tc *TaskClass) ErrorList {
	var l ErrorList
	for _, f := range tc.Flows {
		alloc := map[*Dep]bool{}
		if f.Access != AccessCTL {
			for _, d := range AllocatingDeps(f) {
				alloc[d] = true
			}
		}
		for _, d := range f.Deps {
			if d.Props == nil {
				continue
			}
			for _, p := range d.Props.List {
				switch {
				case p.Name == "count" && alloc[d]:
				case p.Name == "type":
					name, ok := ConstArenaName(p.Value)
					if _, code := p.Value.(*InlineCode); !ok && !code {
						l.Errorf(p.Value.Pos(), "a dependency type must be an arena name, a string or inline code returning one")
					} else if !alloc[d] && (!ok || name != "DEFAULT") {
						l.Warnf(p.NamePos, "type on a dependency that allocates nothing has no effect in jdf2go: the value "+
							"is sent as it is (type names the arena of NEW inputs and WRITE flows)")
					}
				case slices.Contains(transferProps, p.Name):
					l.Errorf(p.NamePos, "dependency property %s is not supported by jdf2go: the flow's whole value is sent, "+
						"so the other side would not get what %s describes; send a value of the shape it needs", p.Name, p.Name)
				}
			}
		}
	}
	return l
}

// AllocatingDeps returns the dependencies of f that allocate its value: its NEW inputs,
// or, for a WRITE flow without any, its outputs.
func AllocatingDeps(f *Flow) []*Dep {
	var out []*Dep
	for _, d := range f.In() {
		if (d.Then != nil && d.Then.Kind == TargetNew) || (d.Else != nil && d.Else.Kind == TargetNew) {
			out = append(out, d)
		}
	}
	if len(out) == 0 && f.Access == AccessWrite {
		out = f.Out()
	}
	return out
}

// ConstArenaName returns the arena a dependency's type property names when it is a
// constant: none (DEFAULT), a name, or a string.
func ConstArenaName(e Expr) (string, bool) {
	switch v := e.(type) {
	case nil:
		return "DEFAULT", true
	case *Name:
		return v.Name, true
	case *StringLit:
		return v.Value, true
	}
	return "", false
}

// checkGoRules applies the rules above to a file whose code is Go, for every body and
// every piece of code gen pastes (c.pasted, collected as expressions are resolved).
func (c *checker) checkGoRules() {
	add := func(d *Diagnostic) {
		if d != nil {
			c.diags = append(c.diags, d)
		}
	}
	c.diags = append(c.diags, GoNestingErrors(c.prog)...)
	seen := map[Expr]bool{}
	for _, e := range c.pasted {
		if seen[e] {
			continue
		}
		seen[e] = true
		if text, pos, isString, ok := CodeText(e); ok {
			add(GoCodeError(text, pos, isString))
		}
	}
	for _, tc := range c.prog.Classes {
		c.diags = append(c.diags, DepPropDiagnostics(tc)...)
		for _, f := range tc.Flows {
			for _, d := range f.Deps {
				if t, ok := d.Attrs.Type.(*InlineCode); ok {
					add(GoCodeError(t.Code.Text, t.Code.TextPos, false))
				}
			}
		}
		for _, b := range tc.Bodies {
			switch b.Device() {
			case "HIP":
				add(HIPBodyDiagnostic(tc, b))
				continue
			case "GPU", "CUDA":
				c.diags = append(c.diags, RingNameErrors(c.prog, tc, GPURing)...)
			}
			body, d := ParseGoBody(b.Text, b.TextPos)
			add(d)
			if d == nil && !b.IsGPU() && (b.Attrs.Batch == BatchManual || (b.Attrs.Batch == BatchOn && WalksRing(body))) {
				c.diags = append(c.diags, RingNameErrors(c.prog, tc, CPURing)...)
			}
		}
	}
}

// GoNestingErrors reports every expression of prog whose translation would nest too deeply
// for go/format, whose parser refuses code nested more than about 100,000 levels deep and
// counts every operand of a chain of binary operators as one level: the chain parses in
// JDF (parseChain) but cannot be generated. The limit is MaxNesting, half of go/parser's,
// as a level of JDF can take two in Go.
func GoNestingErrors(prog *Program) ErrorList {
	var l ErrorList
	Inspect(prog, func(n Node) bool {
		e, isExpr := n.(Expr)
		if !isExpr {
			return true
		}
		if d := GoNesting(e); d > MaxNesting {
			l.Errorf(e.Pos(), "expression too deep or too long for Go (%d levels, at most %d; a chain of binary operators counts one level per operator): split it, with a local or inline code", d, MaxNesting)
		}
		return false // the children are counted in e
	})
	return l
}

// GoNesting returns how deeply the translation of e nests in Go, with an explicit stack:
// one level per operator of a chain, per unary operator, call and selector, and per
// ternary (the else-if chains and blocks gen writes).
func GoNesting(e Expr) int {
	type item struct {
		x Expr
		d int
	}
	deepest := 0
	stack := []item{{e, 1}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		deepest = max(deepest, it.d)
		push := func(x Expr, d int) {
			if x != nil {
				stack = append(stack, item{x, d})
			}
		}
		switch x := it.x.(type) {
		case *BinaryExpr:
			push(x.X, it.d+1)
			push(x.Y, it.d+1)
		case *UnaryExpr:
			push(x.X, it.d+1)
		case *ParenExpr:
			push(x.X, it.d)
		case *TernaryExpr:
			push(x.Cond, it.d+1)
			push(x.Then, it.d+1)
			push(x.Else, it.d+1)
		case *SelectorExpr:
			push(x.X, it.d+1)
		case *CallExpr:
			push(x.Fun, it.d+1)
			for _, a := range x.Args {
				push(a, it.d+1)
			}
		case *RangeExpr:
			push(x.From, it.d+1)
			push(x.To, it.d+1)
			push(x.Step, it.d+1)
		case *LocalSetExpr:
			for _, nr := range x.Named {
				push(nr.Value, it.d+1)
			}
			push(x.X, it.d+1)
		}
	}
	return deepest
}
