package parser

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// TestParallelParse: parsing the chunks of a large file on several
// goroutines gives the same program and diagnostics as parsing them in
// order, syntax errors (and the limit of ten) included.
func TestParallelParse(t *testing.T) {
	good := genJDF(3000)
	// Break task classes: a second priority line, a bad dependency target.
	bad := bytes.Replace(good, []byte("; (N - k) * (N - k) + m % 3\n"), []byte("; (N - k) * (N - k) + m % 3\n  ; 1\n"), 3)
	bad = bytes.Replace(bad, []byte("CTL  X <- X"), []byte("CTL  X <- ) X"), 12)
	for name, src := range map[string][]byte{"good": good, "bad": bad} {
		t.Run(name, func(t *testing.T) {
			p1, d1 := parse("p.jdf", src, 1)
			p4, d4 := parse("p.jdf", src, 4)
			if !reflect.DeepEqual(d1, d4) {
				t.Fatalf("diagnostics differ:\n%v\n%v", d1, d4)
			}
			if d := equalAST(reflect.ValueOf(p1), reflect.ValueOf(p4), "Program"); d != "" {
				t.Fatalf("programs differ at %s", d)
			}
			if n := len(p1.Classes); n > 0 && p1.Classes[n-1].Span != p4.Classes[n-1].Span {
				t.Fatal("positions differ")
			}
			if name == "bad" && (len(d1) != maxSyntaxErrors || !strings.Contains(d1[0].Msg, `unexpected ")"`)) {
				t.Fatalf("want the first %d syntax errors, one per task class, got %v", maxSyntaxErrors, d1)
			}
		})
	}
}
