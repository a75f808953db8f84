package parser

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// classWith returns a program whose class T has a local x defined as expr.
func classWith(expr string) []byte {
	return []byte("N [type = \"int\"]\nV [type = \"*rt.Vector\"]\nT(k)\n  k = 0 .. N\n  x = " + expr +
		"\n  : V(k)\n  ; x\nBODY\n{\n}\nEND\n")
}

// TestNestingLimit: an expression nested deeper than MaxNesting is a syntax error at the
// token past the limit, for every kind of nesting, and parsing it completes.
func TestNestingLimit(t *testing.T) {
	const deep = MaxNesting + 1000
	for name, expr := range map[string]string{
		"parens":  strings.Repeat("(", deep) + "k" + strings.Repeat(")", deep),
		"minus":   strings.Repeat("-", deep) + "k",
		"not":     strings.Repeat("!", deep) + "k",
		"ternary": strings.Repeat("k ? 1 : (", deep) + "k" + strings.Repeat(")", deep),
		"calls":   strings.Repeat("f(", deep) + "k" + strings.Repeat(")", deep),
	} {
		_, diags := ParseAndCheck("deep.jdf", classWith(expr))
		if len(diags) != 1 || !strings.Contains(diags[0].Msg, errTooDeep) || diags[0].Pos.Line != 5 {
			t.Errorf("%s: got %v, want one error %q on line 5", name, diags, errTooDeep)
		}
	}
}

// TestNestingAtLimit: nesting up to the limit is accepted.
func TestNestingAtLimit(t *testing.T) {
	n := MaxNesting - 10
	// Past MaxExprDepth, which check alone reports: this is about the parser.
	_, diags := ParseAndCheckWith("deep.jdf", classWith(strings.Repeat("(", n)+"k"+strings.Repeat(")", n)), CheckOptions{Unbounded: true})
	if diags.HasErrors() {
		t.Fatalf("%d nested parentheses: %v", n, diags)
	}
}

// TestLongChain: a flat chain of a million operators is no nesting: it parses, checks and
// prints (fmt) without exhausting the stack. gen cannot write it as Go (go/format counts a
// level per operator), so check reports that, where the expression is.
func TestLongChain(t *testing.T) {
	if testing.Short() {
		t.Skip("a million-term expression")
	}
	const terms = 1_000_000
	expr := strings.Repeat("k + ", terms-1) + "k & N"
	// Past MaxExprNodes, which check alone reports: this is about the recursive passes.
	prog, diags := ParseAndCheckWith("long.jdf", classWith(expr), CheckOptions{Unbounded: true})
	// The chain is too long for Go, and the single & is reported once, where it is.
	if len(diags) != 2 || diags[0].Severity != Error || !strings.Contains(diags[0].Msg, "too deep or too long for Go") ||
		diags[0].Pos.Line != 5 || !strings.Contains(diags[1].Msg, "logical operator") {
		t.Errorf("diagnostics: %v, want the error about Go's nesting and the warning about &", diags)
	}
	out := Format(prog)
	if got := strings.Count(string(out), "k + "); got != terms-1 {
		t.Errorf("fmt printed %d terms, want %d", got, terms-1)
	}
	n := 0
	Inspect(prog, func(n2 Node) bool {
		if _, ok := n2.(*BinaryExpr); ok {
			n++
		}
		return true
	})
	if n != terms {
		t.Errorf("Inspect visited %d binary expressions, want %d", n, terms)
	}
}

// TestWarnUnknownNames: the names left to the compiler of the file's code are listed under
// CheckOptions.WarnUnknownNames, and only then.
func TestWarnUnknownNames(t *testing.T) {
	for _, file := range []string{"parsec/c_header_names.jdf", "valid/go_unknown_names.jdf"} {
		src, err := os.ReadFile(filepath.Join(testdataDir, file))
		if err != nil {
			t.Fatal(err)
		}
		if _, diags := ParseAndCheck(file, src); len(diags) != 0 {
			t.Errorf("%s: %v, want no diagnostic", file, diags)
		}
		_, diags := ParseAndCheckWith(file, src, CheckOptions{WarnUnknownNames: true})
		var names []string
		for _, d := range diags {
			if d.Severity != Warning || !strings.Contains(d.Msg, "left to the") {
				t.Errorf("%s: unexpected %v", file, d)
			}
			names = append(names, strings.Split(d.Msg, `"`)[1])
		}
		want := map[string]string{
			"parsec/c_header_names.jdf":  "dplasmaUpper PARSEC_STEP PARSEC_MATRIX_UPPER MAX_TILE PRIO_BASE",
			"valid/go_unknown_names.jdf": "chunkSize",
		}[file]
		if got := strings.Join(names, " "); got != want {
			t.Errorf("%s: warned about %q, want %q", file, got, want)
		}
	}
}

// BenchmarkNestingError measures how long a 100,000-deep parenthesised expression takes to
// be refused (goal: under 2 s), and BenchmarkLongChain a million-term sum checked.
func BenchmarkNestingError(b *testing.B) {
	const n = 100_000
	src := classWith(strings.Repeat("(", n) + "k" + strings.Repeat(")", n))
	for b.Loop() {
		if _, diags := ParseAndCheck("deep.jdf", src); !diags.HasErrors() {
			b.Fatal("no error")
		}
	}
}

func BenchmarkLongChain(b *testing.B) {
	src := classWith(strings.Repeat("k + ", 999_999) + "k")
	for b.Loop() {
		if _, diags := ParseAndCheckWith("long.jdf", src, CheckOptions{Unbounded: true}); diags.HasErrors() {
			b.Fatal(diags[0])
		}
	}
}

// classes returns a program of n task classes, each a chain over V.
func classes(n int) []byte {
	var b strings.Builder
	b.WriteString("N [type = \"int\"]\nV [type = \"*rt.Vector\"]\n")
	for i := range n {
		fmt.Fprintf(&b, "T%d(k)\n  k = 0 .. N\n  : V(k)\n  RW A <- V(k)\n       -> V(k)\nBODY\n{\n}\nEND\n", i)
	}
	return []byte(b.String())
}

// TestSizeLimits: a program one past each limit of the compiler is an error of check at the
// class or operand past it, naming the limit; at the limit, and past it with
// CheckOptions.Unbounded, it is accepted.
func TestSizeLimits(t *testing.T) {
	parens := func(n int) []byte {
		return classWith(strings.Repeat("(", n-1) + "k" + strings.Repeat(")", n-1))
	}
	chain := func(n int) []byte { // n conditionals in else position, 4n+1 nodes
		return classWith(strings.Repeat("k ? 1 : ", n) + "k")
	}
	sum := func(n int) []byte { return classWith(strings.Repeat("k + ", (n-1)/2) + "k") }
	for _, tc := range []struct {
		name  string
		src   func(n int) []byte
		limit int
		// where the error is: line and column of the first item past the limit
		line, col int
		msg       string
	}{
		{"classes", classes, MaxClasses, 3 + 9*MaxClasses, 1, "(MaxClasses)"},
		{"depth", parens, MaxExprDepth, 5, 7 + MaxExprDepth, "(MaxExprDepth)"},
		{"conditionals", func(n int) []byte { return chain(n - 1) }, MaxExprDepth, 5, 7 + 8*(MaxExprDepth-1), "(MaxExprDepth)"},
		{"nodes", sum, MaxExprNodes, 5, 7, "(MaxExprNodes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, diags := ParseAndCheck("limit.jdf", tc.src(tc.limit)); diags.HasErrors() {
				t.Fatalf("at the limit: %v", diags[:min(3, len(diags))])
			}
			_, all := ParseAndCheck("limit.jdf", tc.src(tc.limit+1))
			var diags ErrorList
			for _, d := range all {
				if d.Severity == Error {
					diags = append(diags, d)
				}
			}
			if len(diags) != 1 || !strings.Contains(diags[0].Msg, tc.msg) || diags[0].Pos.Line != tc.line || diags[0].Pos.Column != tc.col {
				t.Fatalf("past the limit: got %v, want one error naming %s at %d:%d", diags[:min(3, len(diags))], tc.msg, tc.line, tc.col)
			}
			if _, diags := ParseAndCheckWith("limit.jdf", tc.src(tc.limit+1), CheckOptions{Unbounded: true}); diags.HasErrors() {
				t.Errorf("unbounded: %v", diags[:min(3, len(diags))])
			}
		})
	}
}

// TestCorpusFarBelowLimits: the programs of testdata and examples, PaRSEC's and DPLASMA's
// among them, stay below a tenth of each limit of the compiler.
func TestCorpusFarBelowLimits(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testdataDir, "*", "*.jdf"))
	examples, _ := filepath.Glob("../examples/*.jdf")
	files = append(files, examples...)
	var classes, depth, nodes int
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		prog, diags := Parse(file, src)
		if diags.HasErrors() {
			continue // the invalid cases
		}
		classes = max(classes, len(prog.Classes))
		Inspect(prog, func(n Node) bool {
			e, ok := n.(Expr)
			if !ok {
				return true
			}
			nodes = max(nodes, exprNodes(e))
			depth = max(depth, exprDepth(e))
			return false
		})
	}
	t.Logf("%d files: at most %d classes, expressions %d deep and of %d nodes", len(files), classes, depth, nodes)
	if classes > MaxClasses/10 || depth > MaxExprDepth/10 || nodes > MaxExprNodes/10 {
		t.Errorf("the corpus comes near the limits: %d classes, expressions %d deep and of %d nodes", classes, depth, nodes)
	}
}

// exprNodes and exprDepth are what exprSize counts, by recursion.
func exprNodes(e Expr) int {
	n := 0
	Inspect(e, func(x Node) bool {
		if _, ok := x.(Expr); ok {
			n++
		}
		return true
	})
	return n
}

func exprDepth(e Expr) int {
	deeper := 0
	sub := func(xs ...Expr) {
		for _, x := range xs {
			if x != nil {
				deeper = max(deeper, exprDepth(x))
			}
		}
	}
	switch x := e.(type) {
	case *BinaryExpr:
		sub(x.X, x.Y) // operands at the same level
		return deeper
	case *UnaryExpr:
		sub(x.X)
	case *ParenExpr:
		sub(x.X)
	case *TernaryExpr:
		sub(x.Cond, x.Then, x.Else)
	case *SelectorExpr:
		sub(x.X)
	case *CallExpr:
		sub(append([]Expr{x.Fun}, x.Args...)...)
	case *RangeExpr:
		sub(x.From, x.To, x.Step)
	case *LocalSetExpr:
		for _, nr := range x.Named {
			sub(nr.Value)
		}
		sub(x.X)
	default:
		return 1
	}
	return 1 + deeper
}
