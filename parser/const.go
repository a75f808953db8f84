package parser

// Constant folding for the checks that gen would otherwise be the first to
// fail on, or go build after it: a range step below 1 and a division by a
// constant zero.

// constValue is the value of a constant expression; ok is false when the
// expression is not constant (or its value is undefined, as x / 0).
type constValue struct {
	v  int64
	ok bool
}

// constant returns the value of x when it is an integer constant: literals
// combined with arithmetic and comparison operators, parentheses,
// ternaries. Values are cached, so that the checks of nested expressions
// stay linear; chains of binary operators are folded in a loop.
func (c *checker) constant(x Expr) (int64, bool) {
	if x == nil {
		return 0, false
	}
	if r, ok := c.consts[x]; ok {
		return r.v, r.ok
	}
	var r constValue
	switch x := x.(type) {
	case *IntLit:
		r = constValue{x.Value, true}
	case *ParenExpr:
		r.v, r.ok = c.constant(x.X)
	case *UnaryExpr:
		if v, ok := c.constant(x.X); ok {
			r.ok = true
			if x.Op == OpNeg {
				r.v = -v
			} else {
				r.v = b2i(v == 0)
			}
		}
	case *TernaryExpr:
		if cond, ok := c.constant(x.Cond); ok {
			if cond != 0 {
				r.v, r.ok = c.constant(x.Then)
			} else {
				r.v, r.ok = c.constant(x.Else)
			}
		}
	case *BinaryExpr:
		chain, first := LeftChain(x)
		v, ok := c.constant(first)
		for i := len(chain) - 1; i >= 0 && ok; i-- {
			var y int64
			if y, ok = c.constant(chain[i].Y); ok {
				v, ok = fold(chain[i].Op, v, y)
			}
		}
		r = constValue{v, ok}
	}
	c.consts[x] = r
	return r.v, r.ok
}

// fold applies a binary operator to constants, as generated Go code
// computes it; ok is false for a division by zero.
func fold(op Op, x, y int64) (int64, bool) {
	switch op {
	case OpAdd:
		return x + y, true
	case OpSub:
		return x - y, true
	case OpMul:
		return x * y, true
	case OpDiv, OpRem:
		if y == 0 {
			return 0, false
		}
		if op == OpDiv {
			return x / y, true
		}
		return x % y, true
	case OpShl, OpShr:
		if y < 0 || y > 63 {
			return 0, false
		}
		if op == OpShl {
			return x << y, true
		}
		return x >> y, true
	case OpXor:
		return x ^ y, true
	case OpEq:
		return b2i(x == y), true
	case OpNe:
		return b2i(x != y), true
	case OpLt:
		return b2i(x < y), true
	case OpLe:
		return b2i(x <= y), true
	case OpGt:
		return b2i(x > y), true
	case OpGe:
		return b2i(x >= y), true
	case OpLAnd, OpAnd1:
		return b2i(x != 0 && y != 0), true
	case OpLOr, OpOr1:
		return b2i(x != 0 || y != 0), true
	}
	return 0, false
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
