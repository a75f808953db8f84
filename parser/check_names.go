package parser

// Name resolution: named-range indices of the enclosing [...], then
// the class's definitions (only earlier ones inside a definition), then the
// globals, then (a jdf2go extension) the top-level names of a Go prologue or
// epilogue, its imports and Go's predeclared identifiers.

import (
	goast "go/ast"
	goparser "go/parser"
	gotoken "go/token"
	"path"
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// env is the scope an expression is resolved in.
type env struct {
	c     *checker
	class *TaskClass // or nil outside a class
	ndefs int        // Defs[:ndefs] are visible
	named []*NamedRange
	// globalsOnly, when non-nil, restricts globals to these names (the value
	// of a global sees only earlier globals).
	globalsOnly []string
	// lenient: unknown names are left unresolved without a diagnostic, for
	// the places jdf2c never checks (exported class properties, counts).
	lenient bool
	what    string // what is resolved, for the message about globalsOnly
}

// withNamed returns the scope e with the named ranges added, the value of
// each resolved in the scope before it. Scopes are values, so that they
// stay on the stack.
func (e env) withNamed(named []*NamedRange) env {
	for _, nr := range named {
		e.c.resolve(nr.Value, &e)
		e.named = append(append([]*NamedRange(nil), e.named...), nr)
	}
	return e
}

// lenientCopy returns the scope e where unknown names are left unresolved.
func (e env) lenientCopy() env {
	e.lenient = true
	return e
}

var goPredeclared = map[string]bool{
	"len": true, "cap": true, "min": true, "max": true, "make": true, "new": true, "append": true,
	"copy": true, "delete": true, "panic": true, "print": true, "println": true, "complex": true,
	"real": true, "imag": true, "clear": true, "int": true, "int8": true, "int16": true, "int32": true,
	"int64": true, "uint": true, "uint8": true, "uint16": true, "uint32": true, "uint64": true,
	"uintptr": true, "float32": true, "float64": true, "bool": true, "string": true, "byte": true,
	"rune": true, "true": true, "false": true, "nil": true,
}

// resolve resolves every name in x and reports the unknown ones.
func (c *checker) resolve(x Expr, e *env) {
	switch x := x.(type) {
	case nil, *IntLit:
	case *StringLit, *InlineCode:
		if !e.lenient {
			c.pasted = append(c.pasted, x)
		}
	case *Name:
		c.resolveName(x, e)
	case *SelectorExpr:
		if n := BaseName(x); n != nil {
			c.resolveName(n, e)
		}
		if !c.foreign {
			// descA->super.myrank: the descriptor's field is the innermost selector.
			inner := x
			for s, ok := x.X.(*SelectorExpr); ok; s, ok = s.X.(*SelectorExpr) {
				inner = s
			}
			c.descriptorField(inner)
		}
	case *CallExpr:
		switch fun := x.Fun.(type) {
		case *Name:
			c.resolveCallee(fun, e)
		default:
			if n := BaseName(fun); n != nil {
				c.resolveName(n, e)
			}
		}
		for _, a := range x.Args {
			if isRange(a) {
				c.errorf(a.Pos(), "a range is not allowed as a function argument")
			}
			c.resolve(a, e)
		}
	case *BinaryExpr:
		chain, first := LeftChain(x)
		c.resolve(first, e)
		for i := len(chain) - 1; i >= 0; i-- {
			b := chain[i]
			if b.Op == OpAnd1 || b.Op == OpOr1 {
				c.warnf(b.OpPos(), "%s is a logical operator in JDF; write %s", b.Op, b.Op.GoString())
			}
			c.resolve(b.Y, e)
			if v, ok := c.constant(b.Y); ok && v == 0 && (b.Op == OpDiv || b.Op == OpRem) {
				c.errorf(b.Y.Pos(), "division by zero")
			}
		}
	case *UnaryExpr:
		c.resolve(x.X, e)
	case *TernaryExpr:
		c.resolve(x.Cond, e)
		c.resolve(x.Then, e)
		c.resolve(x.Else, e)
	case *ParenExpr:
		c.resolve(x.X, e)
	case *RangeExpr:
		c.resolve(x.From, e)
		c.resolve(x.To, e)
		c.resolve(x.Step, e)
		if v, ok := c.constant(x.Step); ok && v < 1 {
			c.errorf(x.Step.Pos(), "the step of a range must be at least 1")
		}
	case *LocalSetExpr:
		inner := e.withNamed(x.Named)
		c.resolve(x.X, &inner)
	}
}

func (c *checker) resolveName(n *Name, e *env) {
	for i := len(e.named) - 1; i >= 0; i-- {
		if e.named[i].Name == n.Name {
			n.Ref, n.Index = RefIndex, e.named[i]
			return
		}
	}
	if e.class != nil {
		if d := e.class.Def(n.Name); d != nil {
			if d.Index < e.ndefs {
				n.Ref, n.Def = RefDef, d
				return
			}
			if !e.lenient {
				c.errorf(n.Pos(), "%q is used before its definition at %s", n.Name, short(d.Pos()))
				return
			}
		}
	}
	if g, ok := c.globals[n.Name]; ok {
		if e.globalsOnly == nil || contains(e.globalsOnly, n.Name) {
			n.Ref, n.Global = RefGlobal, g
			return
		}
		if !e.lenient {
			c.errorf(n.Pos(), "global %q is used in %s before its declaration", n.Name, e.what)
			return
		}
	}
	if c.prog.GoPrologue[n.Name] || goPredeclared[n.Name] {
		n.Ref = RefGo
		return
	}
	if e.lenient {
		return
	}
	c.unknown(n.Pos(), "name", n.Name, c.visible(e))
}

// unknown handles a name (what: "name" or "function") that neither the
// JDF nor a Go prologue declares. The code of the file may define it:
// the headers of a C file (enum constants, macros), or the packages of a
// Go file. So it is left to that language's compiler (the //line
// directives point its messages at the .jdf), unless it is a Go file and
// the name is a misspelling of one of candidates: that is an error with
// the suggestion. Under CheckOptions.WarnUnknownNames it is a warning.
func (c *checker) unknown(pos lexer.Position, what, name string, candidates []string) {
	if !c.foreign {
		if s := suggest(name, candidates); s != "" {
			c.errorf(pos, "undefined %s %q%s", what, name, s)
			return
		}
	}
	if c.opts.WarnUnknownNames {
		lang := "Go"
		if c.foreign {
			lang = "C"
		}
		c.warnf(pos, "%s %q is not declared in this file; it is left to the %s compiler", what, name, lang)
	}
}

// resolveCallee resolves the function of a call: a Go function of the
// prologue, a predeclared function, or a global holding a function.
func (c *checker) resolveCallee(n *Name, e *env) {
	if c.prog.GoPrologue[n.Name] || goPredeclared[n.Name] {
		n.Ref = RefGo
		return
	}
	if g, ok := c.globals[n.Name]; ok {
		n.Ref, n.Global = RefGlobal, g
		return
	}
	if e.lenient {
		return
	}
	c.unknown(n.Pos(), "function", n.Name, sortedKeys(c.prog.GoPrologue))
}

// resolveFunc checks a property that names a function.
func (c *checker) resolveFunc(x Expr) {
	n := BaseName(x)
	if n == nil {
		return
	}
	if _, sel := x.(*SelectorExpr); sel {
		c.resolveName(n, &env{c: c, lenient: c.prog.GoPrologue == nil})
		return
	}
	c.resolveCallee(n, &env{c: c})
}

func (c *checker) visible(e *env) []string {
	var out []string
	for _, nr := range e.named {
		out = append(out, nr.Name)
	}
	if e.class != nil {
		for _, d := range e.class.Defs[:e.ndefs] {
			out = append(out, d.Name)
		}
	}
	if e.globalsOnly != nil {
		out = append(out, e.globalsOnly...)
	} else {
		out = append(out, c.globalNames()...)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// checkGoCode parses the prologue and epilogue with go/parser when they are
// Go, and records their top-level names in Program.GoPrologue. An
// `extern "Go"` block that does not parse is an error; a plain `%{` block
// that does not parse is taken to be foreign (C) code, as bodies are, and
// so is an `extern "C"` block: the file's code is then C (checker.foreign).
func (c *checker) checkGoCode() {
	for _, cb := range []*CodeBlock{c.prog.Prologue, c.prog.Epilogue} {
		if cb == nil {
			continue
		}
		if cb.Lang == "C" {
			c.foreign = true
			continue
		}
		names, ok := c.goDecls(cb)
		if !ok {
			c.foreign = c.foreign || cb.Lang == ""
			continue
		}
		if c.prog.GoPrologue == nil {
			c.prog.GoPrologue = map[string]bool{}
		}
		for _, n := range names {
			c.prog.GoPrologue[n] = true
		}
	}
}

const goHeader = "package p;"

func (c *checker) goDecls(cb *CodeBlock) ([]string, bool) {
	fset := gotoken.NewFileSet()
	f, err := goparser.ParseFile(fset, "", goHeader+cb.Text, goparser.SkipObjectResolution)
	if err != nil {
		if cb.Lang == "Go" {
			msg := err.Error()
			pos := cb.TextPos
			if i := strings.Index(msg, ": "); i > 0 {
				// "LINE:COL: message"
				var line, col int
				lc := strings.SplitN(msg[:i], ":", 2)
				if len(lc) == 2 {
					line, _ = strconv.Atoi(lc[0])
					col, _ = strconv.Atoi(lc[1])
				}
				pos = goPos(cb.TextPos, line, col)
				msg = msg[i+2:]
			}
			c.errorf(pos, "Go code block: %s", msg)
		}
		return nil, false
	}
	var names []string
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := path.Base(p)
		if strings.HasPrefix(name, "v") && isAllDigits(name[1:]) && path.Dir(p) != "." {
			name = path.Base(path.Dir(p)) // import "x/y/v2" is package y
		}
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names = append(names, name)
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *goast.FuncDecl:
			if d.Recv == nil {
				names = append(names, d.Name.Name)
			}
		case *goast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *goast.ValueSpec:
					for _, n := range s.Names {
						names = append(names, n.Name)
					}
				case *goast.TypeSpec:
					names = append(names, s.Name.Name)
				}
			}
		}
	}
	return names, true
}

// goPos maps a go/parser position in goHeader+text to the JDF file.
func goPos(text lexer.Position, line, col int) lexer.Position {
	p := text
	if line <= 1 {
		p.Column += max(col-1-len(goHeader), 0)
		return p
	}
	p.Line += line - 1
	p.Column = col
	return p
}

func isAllDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}
