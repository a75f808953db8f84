package codegen

// The generated Go code goes through go/format, whose parser refuses code nested more than
// about 100,000 levels deep and counts every operand of a chain of binary operators as one
// level. checkNesting reports the JDF expressions whose translation would go past that, at
// their position, before anything is translated.

import (
	"fmt"

	"github.com/jdf2go/jdf2go/parser"
)

// maxGoNesting is the deepest translation accepted, in levels as goNesting counts them: half
// of go/parser's limit, as a level of JDF can take two in Go.
const maxGoNesting = parser.MaxNesting

// checkNesting reports every expression of the program too deep for Go; it returns false
// when there is one.
func (g *generator) checkNesting() bool {
	ok := true
	parser.Inspect(g.prog, func(n parser.Node) bool {
		e, isExpr := n.(parser.Expr)
		if !isExpr {
			return true
		}
		if d := goNesting(e); d > maxGoNesting {
			g.errorf(e.Pos(), "%s", fmt.Sprintf("expression too deep or too long for Go (%d levels, at most %d; a chain of binary operators counts one level per operator): split it, with a local or inline code", d, maxGoNesting))
			ok = false
		}
		return false // the children are counted in e
	})
	return ok
}

// goNesting returns how deeply the translation of e nests in Go, with an explicit stack:
// one level per operator of a chain, per unary operator, call and selector, and per
// ternary (the blocks of expr.go, and its switches, counted as if they nested).
func goNesting(e parser.Expr) int {
	type item struct {
		x parser.Expr
		d int
	}
	deepest := 0
	stack := []item{{e, 1}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		deepest = max(deepest, it.d)
		push := func(x parser.Expr, d int) {
			if x != nil {
				stack = append(stack, item{x, d})
			}
		}
		switch x := it.x.(type) {
		case *parser.BinaryExpr:
			push(x.X, it.d+1)
			push(x.Y, it.d+1)
		case *parser.UnaryExpr:
			push(x.X, it.d+1)
		case *parser.ParenExpr:
			push(x.X, it.d)
		case *parser.TernaryExpr:
			push(x.Cond, it.d+1)
			push(x.Then, it.d+1)
			push(x.Else, it.d+1)
		case *parser.SelectorExpr:
			push(x.X, it.d+1)
		case *parser.CallExpr:
			push(x.Fun, it.d+1)
			for _, a := range x.Args {
				push(a, it.d+1)
			}
		case *parser.RangeExpr:
			push(x.From, it.d+1)
			push(x.To, it.d+1)
			push(x.Step, it.d+1)
		case *parser.LocalSetExpr:
			for _, nr := range x.Named {
				push(nr.Value, it.d+1)
			}
			push(x.X, it.d+1)
		}
	}
	return deepest
}
