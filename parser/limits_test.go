package parser

import (
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
	_, diags := ParseAndCheck("deep.jdf", classWith(strings.Repeat("(", n)+"k"+strings.Repeat(")", n)))
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
	prog, diags := ParseAndCheck("long.jdf", classWith(expr))
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
		if _, diags := ParseAndCheck("long.jdf", src); diags.HasErrors() {
			b.Fatal(diags[0])
		}
	}
}
