package parser

// Inspect traverses the tree rooted at n in source order, calling f for
// each node; when f returns false the node's children are skipped. Nil
// children are not visited. Resolution fields (Name.Global, Target.Class...)
// are references, not children, and are not followed.
func Inspect(n Node, f func(Node) bool) {
	if n == nil {
		return
	}
	if b, ok := n.(*BinaryExpr); ok {
		inspectChain(b, f)
		return
	}
	if !f(n) {
		return
	}
	walkList := func(list []Expr) {
		for _, x := range list {
			Inspect(x, f)
		}
	}
	switch n := n.(type) {
	case *Program:
		if n.Prologue != nil {
			Inspect(n.Prologue, f)
		}
		for _, it := range n.Items {
			Inspect(it, f)
		}
		if n.Epilogue != nil {
			Inspect(n.Epilogue, f)
		}
	case *Global:
		inspectExpr(n.Def, f)
		inspectProps(n.Props, f)
	case *Option:
		Inspect(n.Prop, f)
	case *Props:
		for _, p := range n.List {
			Inspect(p, f)
		}
	case *Property:
		inspectExpr(n.Value, f)
	case *TaskClass:
		for _, p := range n.Params {
			Inspect(p, f)
		}
		inspectProps(n.Props, f)
		for _, d := range n.Defs {
			Inspect(d, f)
		}
		inspectExpr(n.SimCost, f)
		Inspect(n.Affinity, f)
		for _, fl := range n.Flows {
			Inspect(fl, f)
		}
		inspectExpr(n.Priority, f)
		for _, b := range n.Bodies {
			Inspect(b, f)
		}
	case *Definition:
		inspectExpr(n.Value, f)
		inspectProps(n.Props, f)
	case *Affinity:
		walkList(n.Args)
	case *Flow:
		inspectProps(n.Props, f)
		for _, d := range n.Deps {
			Inspect(d, f)
		}
	case *Dep:
		for _, nr := range n.Named {
			Inspect(nr, f)
		}
		inspectExpr(n.Guard, f)
		Inspect(n.Then, f)
		if n.Else != nil {
			Inspect(n.Else, f)
		}
		inspectProps(n.Props, f)
	case *Target:
		for _, nr := range n.Named {
			Inspect(nr, f)
		}
		walkList(n.Args)
	case *NamedRange:
		inspectExpr(n.Value, f)
	case *Body:
		inspectProps(n.Props, f)
	case *UnaryExpr:
		Inspect(n.X, f)
	case *TernaryExpr:
		Inspect(n.Cond, f)
		Inspect(n.Then, f)
		Inspect(n.Else, f)
	case *ParenExpr:
		Inspect(n.X, f)
	case *SelectorExpr:
		Inspect(n.X, f)
	case *CallExpr:
		Inspect(n.Fun, f)
		walkList(n.Args)
	case *InlineCode:
		Inspect(n.Code, f)
	case *RangeExpr:
		Inspect(n.From, f)
		Inspect(n.To, f)
		inspectExpr(n.Step, f)
	case *LocalSetExpr:
		for _, nr := range n.Named {
			Inspect(nr, f)
		}
		Inspect(n.X, f)
	case *Param, *CodeBlock, *IntLit, *Name, *StringLit:
	default:
		panic("parser.Inspect: unknown node type")
	}
}

func inspectExpr(e Expr, f func(Node) bool) {
	if e != nil {
		Inspect(e, f)
	}
}

func inspectProps(p *Props, f func(Node) bool) {
	if p != nil {
		Inspect(p, f)
	}
}

// inspectChain is Inspect of a binary expression, with its left operands
// visited in a loop: a long chain such as a + b + c + ... is a tree as
// deep as it is long, on its left side.
func inspectChain(b *BinaryExpr, f func(Node) bool) {
	var chain []*BinaryExpr
	var x Expr = b
	for {
		b, ok := x.(*BinaryExpr)
		if !ok {
			Inspect(x, f) // the operand at the bottom
			break
		}
		if !f(b) {
			break // b and its operands skipped
		}
		chain = append(chain, b)
		x = b.X
	}
	for i := len(chain) - 1; i >= 0; i-- {
		Inspect(chain[i].Y, f)
	}
}

// LeftChain returns the binary expressions on the left side of b, b first,
// and the operand at the bottom of the chain: for a + b + c, the two sums
// and a. Recursive passes over expressions use it to walk long chains in a
// loop.
func LeftChain(b *BinaryExpr) ([]*BinaryExpr, Expr) {
	var chain []*BinaryExpr
	var x Expr = b
	for {
		b, ok := x.(*BinaryExpr)
		if !ok {
			return chain, x
		}
		chain = append(chain, b)
		x = b.X
	}
}
