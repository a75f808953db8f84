package codegen

import (
	"fmt"
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
	prog, diags := parser.ParseAndCheck("deep.jdf", src)
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
// literal, one if/else-if chain on one temporary, no nested blocks. (Nested literals took
// superlinear time in go/format, and nested blocks make the file quadratic in size.)
func TestNestedTernariesGenerate(t *testing.T) {
	const n = 10000
	start := time.Now()
	out, err := genSource(t, nestedTernaries(n))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d nested ternaries: %v", n, time.Since(start))
	// The local x and the priority each translate the expression once.
	if got := strings.Count(string(out), "\t\t\t\t\t\t\t\t\t"); got > 0 {
		t.Errorf("%d lines indented 9 levels or more, want no nested blocks", got)
	}
	if got := strings.Count(string(out), "func() int {"); got > 4 {
		t.Errorf("%d function literals, want the ternaries flat", got)
	}
	if got := strings.Count(string(out), "} else if "); got < n-1 {
		t.Errorf("%d else-if, want the else branches chained", got)
	}
}

// TestTooDeepForGo: an expression that parses but would nest too deeply in Go (a chain of
// more operators than go/format accepts) is a located error of check and of gen, the same
// one, not a failure of go/format or of the stack.
func TestTooDeepForGo(t *testing.T) {
	n := maxGoNesting + 10
	src := []byte("N [type = \"int\"]\nV [type = \"*rt.Vector\"]\nT(k)\n  k = 0 .. N\n  x = " +
		strings.Repeat("k + ", n) + "k\n  : V(k)\nBODY\n{\n}\nEND\n")
	prog, diags := parser.ParseAndCheck("deep.jdf", src)
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
				prog, diags := parser.ParseAndCheck("deep.jdf", src)
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
