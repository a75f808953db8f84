package parser

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/alecthomas/participle/v2/lexer"
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

// TestTokenBufferReuse: participle reads the tokens written into a
// tokenBuffer's array, chunk after chunk (chunk.go relies on
// PeekingLexer.Range exposing the array it reads).
func TestTokenBufferReuse(t *testing.T) {
	b := newTokenBuffer(8)
	for i, word := range []string{"first", "second"} {
		b.toks[0] = lexer.Token{Type: tIdent, Value: word}
		b.toks[1] = lexer.EOFToken(lexer.Position{})
		b.peek.LoadCheckpoint(b.start)
		if got := b.peek.Next(); got.Value != word {
			t.Fatalf("chunk %d: participle read %q, want %q: the PeekingLexer no longer reads the array Range returns", i, got.Value, word)
		}
		if !b.peek.Peek().EOF() {
			t.Fatalf("chunk %d: no EOF after the token", i)
		}
	}
	// Two different programs parsed through one buffer parse as they do
	// through fresh ones.
	srcs := []string{string(genJDF(60)), "N [type = \"int\"]\n"}
	for _, src := range srcs {
		want, wantDiags := Parse("a.jdf", []byte(src))
		sc := newScanner("a.jdf", src, false)
		ch := &chunker{s: sc}
		c := &chunk{first: true}
		c.buf = ch.fill(b)
		c.last = ch.last
		b = c.parse()
		if len(wantDiags) != len(c.c.errs) {
			t.Fatalf("diagnostics %v, want %v", c.c.errs, wantDiags)
		}
		got := &Program{}
		c.merge(got)
		if len(got.Items) == 0 || len(got.Items) > len(want.Items) {
			t.Fatalf("%d items, want at most %d and at least one", len(got.Items), len(want.Items))
		}
		if d := equalAST(reflect.ValueOf(got.Items[0]), reflect.ValueOf(want.Items[0]), "Item"); d != "" {
			t.Fatalf("first item differs at %s", d)
		}
	}
}
