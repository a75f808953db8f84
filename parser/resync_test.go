package parser

import (
	"bytes"
	"strings"
	"testing"
)

// TestResync: after a syntax error the parse resumes after the task class that holds it, so
// one run reports one error per broken class, up to maxSyntaxErrors, and keeps the classes
// that parse.
func TestResync(t *testing.T) {
	good := genJDF(3000)
	bad := bytes.Replace(good, []byte("CTL  X <- X"), []byte("CTL  X <- ) X"), 12)
	prog, diags := Parse("p.jdf", bad)
	if len(diags) != maxSyntaxErrors {
		t.Fatalf("%d diagnostics, want %d: %v", len(diags), maxSyntaxErrors, diags)
	}
	line := 0
	for _, d := range diags {
		if !strings.Contains(d.Msg, `unexpected ")"`) || (line != 0 && d.Pos.Line-line < classLines-2) {
			t.Fatalf("want one error per class, got %v", diags)
		}
		line = d.Pos.Line
	}
	// With fewer broken classes, every error is reported and every other class is kept.
	goodProg, _ := Parse("p.jdf", good)
	bad = bytes.Replace(good, []byte("CTL  X <- X"), []byte("CTL  X <- ) X"), 3)
	prog, diags = Parse("p.jdf", bad)
	if len(diags) != 3 || len(prog.Classes) != len(goodProg.Classes)-3 {
		t.Errorf("%d diagnostics and %d classes, want 3 and %d", len(diags), len(prog.Classes), len(goodProg.Classes)-3)
	}
}
