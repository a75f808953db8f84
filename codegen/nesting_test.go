package codegen

import (
	"fmt"
	"go/ast"
	goparser "go/parser"
	"go/token"
	"strings"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/parser"
)

// nestedTernaries returns a program whose local x is n nested ternaries, the nesting
// alternating between the else branch (an else-if chain) and the then branch (a block).
func nestedTernaries(n int) []byte {
	var b strings.Builder
	for i := range n {
		if i%2 == 0 {
			fmt.Fprintf(&b, "k > %d ? %d : (", i, i)
		} else {
			fmt.Fprintf(&b, "k != %d ? (", i)
		}
	}
	b.WriteString("k")
	for i := n - 1; i >= 0; i-- {
		if i%2 == 0 {
			b.WriteString(")")
		} else {
			b.WriteString(") : 0")
		}
	}
	return []byte("N [type = \"int\"]\nV [type = \"*rt.Vector\"]\nT(k)\n  k = 0 .. N\n  x = " + b.String() +
		"\n  : V(k)\n  ; x\nBODY\n{\n}\nEND\n")
}

func genSource(t *testing.T, src []byte) ([]byte, error) {
	t.Helper()
	// Beyond the limits of check on purpose: this is what gen does past them.
	prog, diags := parser.ParseAndCheckWith("deep.jdf", src, parser.CheckOptions{Unbounded: true})
	if diags.HasErrors() {
		t.Fatalf("check: %v", diags[:min(3, len(diags))])
	}
	files, err := Generate(prog, Options{Package: "deep"})
	if err != nil {
		return nil, err
	}
	return files[0].Content, nil
}

// TestNestedTernariesGenerate: ten thousand nested ternaries generate flat code: one function
// literal of ternaries, switches on one temporary (in runs, see chunkedSwitch), no deeply
// nested blocks. (Nested literals took superlinear time in go/format, nested blocks make the
// file quadratic in size, and an else-if chain made the Go compiler quadratic in its length.)
func TestNestedTernariesGenerate(t *testing.T) {
	const n = 10000
	start := time.Now()
	out, err := genSource(t, nestedTernaries(n))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d nested ternaries: %v", n, time.Since(start))
	// The local x and the priority each translate the expression once.
	// Two levels of runs (chunkedSwitch) nest 4 blocks more than a single switch would.
	if got := strings.Count(string(out), "\t\t\t\t\t\t\t\t\t\t\t\t\t"); got > 0 {
		t.Errorf("%d lines indented 13 levels or more, want no nested blocks", got)
	}
	if got := strings.Count(string(out), "func() int {"); got > 4 {
		t.Errorf("%d function literals, want the ternaries flat", got)
	}
	if got := strings.Count(string(out), "\tcase "); got < n {
		t.Errorf("%d cases, want one per ternary", got)
	}
	if got := strings.Count(string(out), " else if "); got > 0 {
		t.Errorf("%d else-if, want none", got)
	}
}

// elseChain returns a program whose local x is n ternaries chained in else position.
func elseChain(n int) []byte {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "k == %d ? %d : ", i, i+1)
	}
	b.WriteString("0")
	return []byte("N [type = \"int\"]\nV [type = \"*rt.Vector\"]\nT(k)\n  k = 0 .. N\n  x = " + b.String() +
		"\n  : V(k)\n  ; x\nBODY\n{\n}\nEND\n")
}

// astDepth returns the deepest nesting of the syntax tree of a Go file, as go/ast counts it.
func astDepth(t *testing.T, src []byte) int {
	t.Helper()
	f, err := goparser.ParseFile(token.NewFileSet(), "deep_jdf.go", src, goparser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	depth, deepest := 0, 0
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			depth--
			return true
		}
		depth++
		deepest = max(deepest, depth)
		return true
	})
	return deepest
}

// TestTernaryChainsFlat: the syntax tree of the generated code is as deep for a long chain of
// ternaries as for a short one, in else position (c1 ? a : c2 ? b : ...), in then position
// (c1 ? (c2 ? a : b) : d) and alternating: the Go compiler's cost grows with that depth. (The
// chains are longer than one run of cases and shorter than maxSwitchCases runs, past which
// chunkedSwitch adds a level of function literals.)
func TestTernaryChainsFlat(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  func(int) []byte
	}{{"else", elseChain}, {"alternating", nestedTernaries}} {
		t.Run(tc.name, func(t *testing.T) {
			var depths []int
			for _, n := range []int{2 * maxSwitchCases, 10 * maxSwitchCases, 40 * maxSwitchCases} {
				out, err := genSource(t, tc.src(n))
				if err != nil {
					t.Fatal(err)
				}
				depths = append(depths, astDepth(t, out))
			}
			if depths[0] != depths[1] || depths[1] != depths[2] {
				t.Errorf("depth of the generated syntax tree for %d, %d and %d ternaries: %v, want one depth",
					2*maxSwitchCases, 10*maxSwitchCases, 40*maxSwitchCases, depths)
			}
		})
	}
}

// largestFunc returns the size, in syntax nodes, of the largest function of a Go file,
// counting neither the function literals inside it (the Go compiler compiles them as
// functions of their own) nor comments, and the name of the function declaration it is in.
func largestFunc(t *testing.T, src []byte) (int, string) {
	t.Helper()
	f, err := goparser.ParseFile(token.NewFileSet(), "deep_jdf.go", src, goparser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	size := func(body ast.Node) int {
		n := 0
		ast.Inspect(body, func(x ast.Node) bool {
			if x == nil {
				return false
			}
			if _, lit := x.(*ast.FuncLit); lit && x != body {
				return false
			}
			n++
			return true
		})
		return n
	}
	largest, where := 0, ""
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		ast.Inspect(fd, func(x ast.Node) bool {
			var n int
			switch x := x.(type) {
			case *ast.FuncDecl:
				n = size(x.Body)
			case *ast.FuncLit:
				n = size(x)
			default:
				return true
			}
			if n > largest {
				largest, where = n, fd.Name.Name
			}
			return true
		})
	}
	return largest, where
}

// TestLargestFunctionBounded: the largest function of the generated code is no larger for a
// chain of thousands of ternaries than for a chain of two runs of cases, in else position
// and alternating, past maxSwitchCases runs too: the Go compiler's cost for one function
// grows faster than its size.
func TestLargestFunctionBounded(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  func(int) []byte
	}{{"else", elseChain}, {"alternating", nestedTernaries}} {
		t.Run(tc.name, func(t *testing.T) {
			base := 2 * maxSwitchCases
			out, err := genSource(t, tc.src(base))
			if err != nil {
				t.Fatal(err)
			}
			bound, _ := largestFunc(t, out)
			for _, n := range []int{10 * maxSwitchCases, maxSwitchCases*maxSwitchCases + 3*maxSwitchCases} {
				out, err := genSource(t, tc.src(n))
				if err != nil {
					t.Fatal(err)
				}
				if got, where := largestFunc(t, out); got > bound {
					t.Errorf("%d ternaries: a function of %d syntax nodes (in %s), want at most %d as for %d ternaries",
						n, got, where, bound, base)
				}
			}
		})
	}
}

// TestTooDeepForGo: an expression that parses but would nest too deeply in Go (a chain of
// more operators than go/format accepts) is a located error of check and of gen, the same
// one, not a failure of go/format or of the stack.
func TestTooDeepForGo(t *testing.T) {
	n := maxGoNesting + 10
	src := []byte("N [type = \"int\"]\nV [type = \"*rt.Vector\"]\nT(k)\n  k = 0 .. N\n  x = " +
		strings.Repeat("k + ", n) + "k\n  : V(k)\nBODY\n{\n}\nEND\n")
	// Past MaxExprNodes too, which check alone reports (Unbounded lifts it): this is about Go.
	prog, diags := parser.ParseAndCheckWith("deep.jdf", src, parser.CheckOptions{Unbounded: true})
	if len(diags) != 1 || diags[0].Pos.Line != 5 || !strings.Contains(diags[0].Msg, "too deep or too long for Go") {
		t.Fatalf("check: got %v, want one located error on line 5", diags)
	}
	_, err := Generate(prog, Options{Package: "deep"})
	var list parser.ErrorList
	if err == nil || !asList(err, &list) || len(list) != 1 || list[0].String() != diags[0].String() {
		t.Fatalf("gen: got %v, want check's %v", err, diags[0])
	}
}

func asList(err error, list *parser.ErrorList) bool {
	l, ok := err.(parser.ErrorList)
	*list = l
	return ok
}

// BenchmarkGenNestedTernaries measures gen on n nested ternaries, to show that its time is
// linear in the nesting (goal: 10,000 in under 5 s).
func BenchmarkGenNestedTernaries(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		src := nestedTernaries(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				prog, diags := parser.ParseAndCheckWith("deep.jdf", src, parser.CheckOptions{Unbounded: true})
				if diags.HasErrors() {
					b.Fatal(diags)
				}
				if _, err := Generate(prog, Options{Package: "deep"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
