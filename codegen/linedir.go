package codegen

// User code in generated Go, with //line directives (docs/language.md, "Code blocks").
//
// Every piece of user code (a body, inline code, a string pasted as code, a JDF expression,
// the prologue and the epilogue) is preceded by `//line file.jdf:LINE`, so that `go build`
// errors and panics point at the .jdf, and followed by `//line file_jdf.go:LINE`, so that
// the generated code after it points at itself again. The directives carry no column:
// gofmt re-indents user code, so a column would be wrong after the first line.
//
// gofmt removes some blank lines (after `{`, before `}`, runs of several), which would
// shift the lines that follow. A directive is therefore also put before every line that
// follows a blank line, unless that line starts inside a raw string or a block comment,
// where a directive would change the text. The restoring directives are written with a
// placeholder line number and fixed as the formatted file is written out (restoreWriter).

import (
	"go/ast"
	"go/scanner"
	"go/token"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/jdf2go/jdf2go/parser"
)

// lineDirective returns `//line <source>:<line>` for the line of pos.
func (g *generator) lineDirective(pos posT) jen.Code {
	return jen.Comment("//line " + g.opts.Source + ":" + strconv.Itoa(pos.Line))
}

// restoreDirective returns the directive that makes the next line point at the generated
// file again; its number is fixed by restoreWriter.
func (g *generator) restoreDirective() jen.Code {
	return jen.Comment(g.restorePrefix() + "1")
}

func (g *generator) restorePrefix() string { return "//line " + g.opts.Output + ":" }

// userCode returns text, which starts at pos in the JDF file, as raw statements (or
// declarations) with line directives.
func (g *generator) userCode(text string, pos posT) []jen.Code {
	lines := strings.Split(text, "\n")
	inside := linesInsideTokens(text)
	var out []jen.Code
	start := 0
	flush := func(end int) {
		// Drop leading and trailing blank lines of the chunk; they carry nothing.
		for start < end && strings.TrimSpace(lines[start]) == "" {
			start++
		}
		last := end
		for last > start && strings.TrimSpace(lines[last-1]) == "" && !inside[last-1] {
			last--
		}
		if start >= last {
			return
		}
		// Leading // comments go before the directive: gofmt moves a directive that
		// starts a doc comment to its end, which would shift the lines after it.
		code := start
		for code < last && strings.HasPrefix(strings.TrimSpace(lines[code]), "//") && !inside[code] {
			code++
		}
		if code > start {
			out = append(out, jen.Op(strings.Join(lines[start:code], "\n")))
		}
		if code == last {
			return
		}
		p := pos
		p.Line += code
		out = append(out, g.lineDirective(p), jen.Op(strings.Join(lines[code:last], "\n")))
	}
	for i := 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i-1]) == "" && strings.TrimSpace(lines[i]) != "" && !inside[i] {
			flush(i)
			start = i
		}
	}
	flush(len(lines))
	return out
}

// linesInsideTokens reports, for each line of text, whether it starts inside a multi-line
// token (a raw string or a general comment). Text that does not scan as Go gives a best
// effort answer; the Go compiler reports the real error.
func linesInsideTokens(text string) []bool {
	n := strings.Count(text, "\n") + 1
	inside := make([]bool, n)
	fset := token.NewFileSet()
	f := fset.AddFile("", -1, len(text))
	var sc scanner.Scanner
	sc.Init(f, []byte(text), func(token.Position, string) {}, scanner.ScanComments)
	for {
		p, tok, lit := sc.Scan()
		if tok == token.EOF {
			break
		}
		if (tok == token.STRING || tok == token.COMMENT) && strings.Contains(lit, "\n") {
			first := fset.Position(p).Line
			for l := first; l < first+strings.Count(lit, "\n"); l++ {
				inside[l] = true // line index l is line l+1, the one after the token's start
			}
		}
	}
	return inside
}

// goBody is a BODY checked as Go.
type goBody struct {
	terminates bool // the last statement is terminating: no `return nil` may follow
	ring       bool // it selects a Ring method (task.Ring()): it walks a ring of tasks
}

// parseBody checks that a body is a Go statement list (parser.ParseGoBody, the rule check
// applies too) and reports whether it ends in a terminating statement.
func (g *generator) parseBody(text string, pos posT) (goBody, bool) {
	body, d := parser.ParseGoBody(text, pos)
	if d != nil {
		g.diags = append(g.diags, d)
		return goBody{}, false
	}
	list := body.List
	return goBody{terminates: len(list) > 0 && terminating(list[len(list)-1]), ring: parser.WalksRing(body)}, true
}

// checkCode checks that inline code is Go statements (or, for a pasted string, an
// expression), by the rule check applies too (parser.GoCodeError).
func (g *generator) checkCode(text string, pos posT, isString bool) bool {
	if d := parser.GoCodeError(text, pos, isString); d != nil {
		g.diags = append(g.diags, d)
		return false
	}
	return true
}

// terminating reports whether s is a terminating statement (The Go Programming Language
// Specification, "Terminating statements"), so that nothing may follow it.
func terminating(s ast.Stmt) bool { return terminatingLabeled(s, "") }

// terminatingLabeled is terminating for a statement carrying label ("" if none), which a
// break inside it may name.
func terminatingLabeled(s ast.Stmt, label string) bool {
	switch s := s.(type) {
	case *ast.ReturnStmt:
		return true
	case *ast.BranchStmt:
		return s.Tok == token.GOTO || s.Tok == token.FALLTHROUGH
	case *ast.ExprStmt:
		if c, ok := s.X.(*ast.CallExpr); ok {
			if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "panic" {
				return true
			}
		}
	case *ast.BlockStmt:
		return len(s.List) > 0 && terminating(s.List[len(s.List)-1])
	case *ast.IfStmt:
		return s.Else != nil && terminating(s.Body) && terminating(s.Else)
	case *ast.LabeledStmt:
		return terminatingLabeled(s.Stmt, s.Label.Name)
	case *ast.ForStmt:
		return s.Cond == nil && !hasBreak(s.Body, label)
	case *ast.SwitchStmt:
		return clausesTerminate(s.Body, label, true)
	case *ast.TypeSwitchStmt:
		return clausesTerminate(s.Body, label, true)
	case *ast.SelectStmt:
		return clausesTerminate(s.Body, label, false)
	}
	return false
}

func clausesTerminate(body *ast.BlockStmt, label string, needDefault bool) bool {
	hasDefault := !needDefault
	for _, c := range body.List {
		var list []ast.Stmt
		switch c := c.(type) {
		case *ast.CaseClause:
			if c.List == nil {
				hasDefault = true
			}
			list = c.Body
		case *ast.CommClause:
			list = c.Body
		}
		if len(list) == 0 || hasBreak(&ast.BlockStmt{List: list}, label) {
			return false
		}
		last := list[len(list)-1]
		if !terminating(last) {
			return false
		}
	}
	return hasDefault
}

// hasBreak reports whether body contains a break that leaves the enclosing statement: an
// unlabeled break not nested in another for, switch or select, or a labeled one.
func hasBreak(body ast.Node, label string) bool {
	found := false
	var walk func(n ast.Node, nested bool)
	walk = func(n ast.Node, nested bool) {
		ast.Inspect(n, func(x ast.Node) bool {
			if found {
				return false
			}
			switch x := x.(type) {
			case *ast.FuncLit:
				return false
			case *ast.ForStmt, *ast.RangeStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
				if x != n {
					walk(x, true)
					return false
				}
			case *ast.BranchStmt:
				if x.Tok == token.BREAK && ((x.Label == nil && !nested) || (x.Label != nil && x.Label.Name == label)) {
					found = true
				}
			}
			return true
		})
	}
	walk(body, false)
	return found
}
