package parser

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/alecthomas/participle/v2/lexer"
)

var (
	positionType = reflect.TypeOf(lexer.Position{})
	spanType     = reflect.TypeOf(Span{})
)

// equalAST compares two parse trees, ignoring positions and comments.
// It returns the path of the first difference, or "".
func equalAST(a, b reflect.Value, path string) string {
	if a.Type() != b.Type() {
		return path + ": types " + a.Type().String() + " != " + b.Type().String()
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path + ": nil mismatch"
			}
			return ""
		}
		return equalAST(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		if a.Type() == positionType || a.Type() == spanType {
			return ""
		}
		for i := 0; i < a.NumField(); i++ {
			f := a.Type().Field(i)
			if f.Name == "Comments" || !f.IsExported() {
				continue
			}
			if d := equalAST(a.Field(i), b.Field(i), path+"."+f.Name); d != "" {
				return d
			}
		}
		return ""
	case reflect.Slice:
		if a.Len() != b.Len() {
			return path + ": lengths differ"
		}
		for i := 0; i < a.Len(); i++ {
			if d := equalAST(a.Index(i), b.Index(i), path+"[]"); d != "" {
				return d
			}
		}
		return ""
	case reflect.Map:
		if a.Len() != b.Len() {
			return path + ": map lengths differ"
		}
		return ""
	}
	if !reflect.DeepEqual(a.Interface(), b.Interface()) {
		return path + ": values differ"
	}
	return ""
}

// roundTrip checks parse(fmt(x)) == parse(x) and fmt(fmt(x)) == fmt(x).
func roundTrip(t testing.TB, name string, src []byte) {
	t.Helper()
	prog, diags := Parse(name, src)
	if diags.HasErrors() {
		return
	}
	out := Format(prog)
	prog2, diags2 := Parse(name, out)
	if diags2.HasErrors() {
		t.Fatalf("formatted output does not parse: %v\n%s", diags2, out)
	}
	prog2.Filename = prog.Filename
	if d := equalAST(reflect.ValueOf(prog), reflect.ValueOf(prog2), "Program"); d != "" {
		t.Fatalf("parse(fmt(x)) != parse(x) at %s\ninput:\n%s\noutput:\n%s", d, src, out)
	}
	if out2 := Format(prog2); string(out2) != string(out) {
		t.Fatalf("fmt is not idempotent\nfirst:\n%s\nsecond:\n%s", out, out2)
	}
	for _, c := range prog.Comments {
		if !strings.Contains(string(out), strings.TrimSpace(c.Text)) {
			t.Fatalf("comment %q lost by fmt:\n%s", c.Text, out)
		}
	}
}

func TestFormatRoundTrip(t *testing.T) {
	files := corpus(t, "valid", "parsec", "fmt")
	ex, _ := filepath.Glob("../examples/*.jdf")
	for _, path := range append(files, ex...) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			roundTrip(t, filepath.Base(path), src)
		})
	}
}

// TestFormatGolden pins the canonical layout on testdata/fmt.
func TestFormatGolden(t *testing.T) {
	for _, path := range corpus(t, "fmt") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			prog, diags := Parse(filepath.Base(path), src)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			golden(t, strings.TrimSuffix(path, ".jdf")+".golden", Format(prog))
		})
	}
}

// TestExprTargetString checks the one-expression and one-endpoint forms of the printer that
// code generators use in comments and messages.
func TestExprTargetString(t *testing.T) {
	src := "N [type = \"int\"]\nT(k)\n  k = 0 .. N-1\n  : descA(k, k)\n  READ A <- (k==0) ? descA(k,k) : A T(k-1)\n         -> A T(k + 1 .. N - 1)\nBODY\n{\n}\nEND\n"
	prog, diags := Parse("t.jdf", []byte(src))
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	tc := prog.Items[1].(*TaskClass)
	in, out := tc.Flows[0].Deps[0], tc.Flows[0].Deps[1]
	for _, c := range []struct{ got, want string }{
		{ExprString(in.Guard), "(k == 0)"},
		{TargetString(in.Then), "descA(k, k)"},
		{TargetString(in.Else), "A T(k - 1)"},
		{TargetString(out.Then), "A T(k + 1 .. N - 1)"},
		{ExprString(tc.Defs[0].Value), "0 .. N - 1"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
