package parser

// Kind is the Go type class of a JDF expression. JDF, like C, mixes numbers
// and conditions (A.4): a number used as a condition means != 0 and a
// comparison used as a number means 0 or 1. codegen emits Go, which does
// not, so it converts where the kind an expression produces differs from
// the kind its place wants.
type Kind int

const (
	// KindOpaque: the expression's Go type is not known to the parser (a
	// global, a call, a selector, a string pasted as code); codegen emits it
	// as it is and lets the Go compiler check it. An *InlineCode is opaque
	// too: codegen generates it to return the wanted kind.
	KindOpaque Kind = iota
	// KindInt: a Go int.
	KindInt
	// KindBool: a Go bool.
	KindBool
)

func (k Kind) String() string {
	return [...]string{"opaque", "int", "bool"}[k]
}

// ResultKind returns the kind an expression produces by itself. Names must
// have been resolved by Check: parameters, locals and named-range indices
// are int, globals are opaque.
func ResultKind(e Expr) Kind {
	switch e := e.(type) {
	case *IntLit:
		return KindInt
	case *BinaryExpr:
		switch e.Op {
		case OpLOr, OpOr1, OpLAnd, OpAnd1, OpEq, OpNe, OpLt, OpLe, OpGt, OpGe:
			return KindBool
		}
		return KindInt
	case *UnaryExpr:
		if e.Op == OpNot {
			return KindBool
		}
		return KindInt
	case *ParenExpr:
		return ResultKind(e.X)
	case *TernaryExpr:
		a, b := ResultKind(e.Then), ResultKind(e.Else)
		if a == b {
			return a
		}
		if a == KindOpaque || b == KindOpaque {
			return KindOpaque
		}
		return KindInt // int and bool branches: the bool one is converted
	case *Name:
		if e.Ref == RefDef || e.Ref == RefIndex {
			return KindInt
		}
	}
	return KindOpaque
}

// OperandKind returns the kind an operator wants for its operands: bool for
// the logical operators and `!`, int for all others (comparisons included:
// `(a < b) == (c < d)` compares two 0/1 numbers, as in C).
func (o Op) OperandKind() Kind {
	switch o {
	case OpLOr, OpOr1, OpLAnd, OpAnd1, OpNot:
		return KindBool
	}
	return KindInt
}

// WantKind returns the kind that child wants to be in its parent: the
// operand kind of an operator, bool for the condition of a ternary, and the
// kind the parent itself is wanted as (ctx) for the branches of a ternary
// and the inside of parentheses. At the root, a guard wants KindBool and
// every other expression position (ranges, arguments, priority, affinity,
// properties) wants KindInt.
func WantKind(parent, child Expr, ctx Kind) Kind {
	switch p := parent.(type) {
	case *BinaryExpr:
		return p.Op.OperandKind()
	case *UnaryExpr:
		return p.Op.OperandKind()
	case *TernaryExpr:
		if child == p.Cond {
			return KindBool
		}
		return ctx
	case *ParenExpr:
		return ctx
	}
	return KindInt // call and range arguments
}
