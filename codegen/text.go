package codegen

// JDF text of expressions and endpoints, for comments and messages of generated code:
// "A TRSM(k+1 .. MT-1, k)", "descA(m, n)".

import (
	"strconv"
	"strings"

	"github.com/jdf2go/jdf2go/parser"
)

// jdfText renders an expression in JDF syntax, with the parentheses of the source.
func jdfText(e parser.Expr) string {
	switch e := e.(type) {
	case *parser.IntLit:
		return strconv.FormatInt(e.Value, 10)
	case *parser.Name:
		return e.Name
	case *parser.SelectorExpr:
		sep := "."
		if e.Arrow {
			sep = "->"
		}
		return jdfText(e.X) + sep + e.Sel
	case *parser.CallExpr:
		return jdfText(e.Fun) + "(" + jdfList(e.Args) + ")"
	case *parser.ParenExpr:
		return "(" + jdfText(e.X) + ")"
	case *parser.UnaryExpr:
		return e.Op.String() + jdfText(e.X)
	case *parser.BinaryExpr:
		return jdfText(e.X) + " " + e.Op.String() + " " + jdfText(e.Y)
	case *parser.TernaryExpr:
		return jdfText(e.Cond) + " ? " + jdfText(e.Then) + " : " + jdfText(e.Else)
	case *parser.StringLit:
		return e.Raw
	case *parser.InlineCode:
		return "%{" + e.Code.Text + "%}"
	case *parser.RangeExpr:
		s := jdfText(e.From) + " .. " + jdfText(e.To)
		if e.Step != nil {
			s += " .. " + jdfText(e.Step)
		}
		return s
	case *parser.LocalSetExpr:
		return jdfNamed(e.Named) + " " + jdfText(e.X)
	}
	return "?"
}

func jdfList(es []parser.Expr) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = jdfText(e)
	}
	return strings.Join(parts, ", ")
}

func jdfNamed(nrs []*parser.NamedRange) string {
	parts := make([]string, len(nrs))
	for i, nr := range nrs {
		parts[i] = nr.Name + " = " + jdfText(nr.Value)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// targetText renders an endpoint: "A TRSM(m, k)", "descA(k, k)", "NEW".
func targetText(t *parser.Target) string {
	switch t.Kind {
	case parser.TargetNew:
		return "NEW"
	case parser.TargetNull:
		return "NULL"
	case parser.TargetTask:
		return t.Flow + " " + t.Name + "(" + jdfList(t.Args) + ")"
	}
	return t.Name + "(" + jdfList(t.Args) + ")"
}
