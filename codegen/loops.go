package codegen

// Loops over ranges: definitions of parameters (Space), named ranges and range arguments of
// dependencies (broadcasts and CTL gathers). Ranges are inclusive and ascending, as in
// jdf2c: `for v := from; v <= to; v += step`.

import (
	"strconv"

	"github.com/dave/jennifer/jen"
	"github.com/jdf2go/jdf2go/parser"
)

// forRange returns the loop over r with variable v around body. A bound that is not cheap
// to evaluate is computed once; a step that is not a literal is evaluated after each
// iteration, as jdf2c's loops do, and checked (a step below 1 would never end the loop).
func (s *scope) forRange(v string, r *parser.RangeExpr, owner string, body []jen.Code) []jen.Code {
	from := s.expr(r.From, parser.KindInt)
	to := s.expr(r.To, parser.KindInt)
	init := jen.Id(v).Op(":=").Add(from)
	cond := jen.Id(v).Op("<=").Add(to)
	if !isCheap(r.To) {
		end := v + "End"
		init = jen.List(jen.Id(v), jen.Id(end)).Op(":=").List(from, to)
		cond = jen.Id(v).Op("<=").Id(end)
	}
	post := jen.Id(v).Op("++")
	var pre []jen.Code
	if r.Step != nil {
		if lit, ok := r.Step.(*parser.IntLit); ok {
			if lit.Value < 1 {
				s.g.errorf(r.Step.Pos(), "the step of a range must be at least 1")
			} else if lit.Value != 1 {
				post = jen.Id(v).Op("+=").Lit(int(lit.Value))
			}
		} else {
			// As in jdf2c's loops, a step that is an expression is evaluated at each
			// iteration, after the body.
			step := v + "Step"
			pre = []jen.Code{
				jen.Id(step).Op(":=").Func().Params().Int().Block(
					jen.Id("n").Op(":=").Add(s.expr(r.Step, parser.KindInt)),
					jen.If(jen.Id("n").Op("<").Lit(1)).Block(jen.Panic(jen.Qual("fmt", "Sprintf").Call(
						jen.Lit(owner+": the step of the range at "+s.g.where(r.Pos())+" is %d, want at least 1"), jen.Id("n")))),
					jen.Return(jen.Id("n"))),
			}
			post = jen.Id(v).Op("+=").Id(step).Call()
		}
	}
	return append(pre, jen.For(init, cond, post).Block(body...))
}

// forNamed returns the loops over named ranges ([i = 0 .. N, j = 0 .. i]) around the code
// that inner builds in a scope where they are visible. A named index given a single value
// is a variable.
func (s *scope) forNamed(named []*parser.NamedRange, inner func(*scope) []jen.Code) []jen.Code {
	if len(named) == 0 {
		return inner(s)
	}
	nr := named[0]
	v := goVar(nr.Name)
	ns := s.withNamed(nr)
	ns.namedVar[nr] = jen.Id(v)
	body := ns.forNamed(named[1:], inner)
	if r, ok := nr.Value.(*parser.RangeExpr); ok {
		owner := "named range " + nr.Name
		if s.class != nil {
			owner = s.class.tc.Name + ": " + owner
		}
		return s.forRange(v, r, owner, body)
	}
	return append([]jen.Code{jen.Id(v).Op(":=").Add(s.expr(nr.Value, parser.KindInt))}, body...)
}

// forArgs enumerates the instances named by dependency arguments: a range argument is a
// loop, a local set (`[i = 0 .. 3] 2*i`) loops over its indices. inner receives the Go
// expression of each argument for one instance.
func (s *scope) forArgs(args []parser.Expr, inner func(s *scope, vals []jen.Code) []jen.Code) []jen.Code {
	vals := make([]jen.Code, len(args))
	var build func(s *scope, i int) []jen.Code
	build = func(s *scope, i int) []jen.Code {
		if i == len(args) {
			return inner(s, vals)
		}
		switch a := args[i].(type) {
		case *parser.RangeExpr:
			v := s.argVar(i)
			vals[i] = jen.Id(v)
			owner := "argument"
			if s.class != nil {
				owner = s.class.tc.Name
			}
			return s.forRange(v, a, owner, build(s, i+1))
		case *parser.LocalSetExpr:
			return s.forNamed(a.Named, func(ns *scope) []jen.Code {
				v := ns.argVar(i)
				vals[i] = jen.Id(v)
				return append([]jen.Code{jen.Id(v).Op(":=").Add(ns.expr(a.X, parser.KindInt))}, build(ns, i+1)...)
			})
		default:
			vals[i] = s.expr(a, parser.KindInt)
			return build(s, i+1)
		}
	}
	return build(s, 0)
}

// argVar names the loop variable of range argument i ("a0", "a1", ...), avoiding the Go
// names of the class's definitions and of the named indices in scope.
func (s *scope) argVar(i int) string {
	v := "a" + strconv.Itoa(i)
	for s.taken(v) {
		v += "_"
	}
	return v
}

func (s *scope) taken(v string) bool {
	if s.class != nil {
		for _, d := range s.class.tc.Defs {
			if goVar(d.Name) == v {
				return true
			}
		}
	}
	for _, nr := range s.named {
		if goVar(nr.Name) == v {
			return true
		}
	}
	return false
}

// index returns the rt.Index of a collection element: rt.Ix(...).
func (s *scope) index(args []parser.Expr) jen.Code {
	vals := make([]jen.Code, len(args))
	for i, a := range args {
		vals[i] = s.expr(a, parser.KindInt)
	}
	return indexLit(vals)
}

func indexLit(vals []jen.Code) jen.Code {
	return jen.Qual(rtPath, "Ix").Call(vals...)
}
