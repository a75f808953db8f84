package codegen

import (
	"bytes"
	"errors"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jdf2go/jdf2go/parser"
)

// withSizes runs f with pieceSize and listBatch set.
func withSizes(piece, batch int, f func()) {
	defer func(p, b int) { pieceSize, listBatch = p, b }(pieceSize, listBatch)
	pieceSize, listBatch = piece, batch
	f()
}

// manyClasses is a program of n classes with what makes pieces and lists: a prologue and an
// epilogue, inline code (functions after the classes), exported properties (Property),
// bodies with blank lines and a raw string (line directives), ranges, broadcasts, gathers
// and names of several widths (the columns of the descriptor variables).
func manyClasses(n int) []byte {
	var b strings.Builder
	b.WriteString("extern \"Go\" %{\nimport \"strings\"\n\nfunc f(k int) int { return k }\n%}\n\n")
	b.WriteString("N [type = \"int\"]\nV [type = \"*rt.Vector\"]\n\n")
	for i := range n {
		name := fmt.Sprintf("T%d", i)
		if i%3 == 1 {
			name = fmt.Sprintf("Step%dOfTheLongChain", i)
		}
		fmt.Fprintf(&b, `%[1]s(k) [flops = %%{ return k * %[2]d %%}]
  k = 0 .. N - 1
  m = %%{ return f(k) %%}
  : V(k)
  RW A <- (k == 0) ? V(k) : A %[1]s(k - 1)
       -> (k < N - 1) ? A %[1]s(k + 1) : V(k)
  CTL X <- (k > 0) ? X %[1]s(0 .. k - 1)
        -> [i = k + 1 .. N - 1] X %[1]s(i)
  ; N - k + m
BODY
{
    s := `+"`"+`a

b`+"`"+`

    for i := range A {
        A[i] += float64(len(strings.TrimSpace(s)) + m)
    }
}
END

`, name, i)
	}
	b.WriteString("%{\nfunc g() int { return 0 }\n%}\n")
	return []byte(b.String())
}

// TestPieces generates with the smallest pieces and list batches: every render formatted on
// its own, every element of a list in a batch of its own. The goldens, formatted whole, and a
// program of many classes, formatted in the default sizes and in one piece, must come out the
// same: the cuts and the batches change nothing gofmt does.
func TestPieces(t *testing.T) {
	for _, c := range genCases(t) {
		want, err := os.ReadFile(filepath.Join(c.dir, "want.go"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		withSizes(1, 1, func() {
			got, _ := generate(t, "in.jdf", c.src, pkgName(c.name), "want.go")
			if !bytes.Equal(got, want) {
				t.Errorf("%s in the smallest pieces differs from want.go:\n%s", c.name, lineDiff(string(want), string(got)))
			}
		})
	}

	src := manyClasses(parser.MaxClasses) // as many as check allows
	var outs [3][]byte
	for i, sizes := range [][2]int{{1, 1}, {pieceSize, listBatch}, {1 << 30, 1 << 30}} {
		withSizes(sizes[0], sizes[1], func() {
			got, stderr := generate(t, "many.jdf", src, "many", "many_jdf.go")
			if len(got) == 0 {
				t.Fatalf("no file:\n%s", stderr)
			}
			outs[i] = got
		})
	}
	if !bytes.Equal(outs[0], outs[2]) || !bytes.Equal(outs[1], outs[2]) {
		t.Errorf("the pieces change the file (smallest, default, one piece):\n%s\n%s",
			lineDiff(string(outs[2]), string(outs[0])), lineDiff(string(outs[2]), string(outs[1])))
	}
	if formatted, err := format.Source(outs[2]); err != nil || !bytes.Equal(formatted, outs[2]) {
		t.Errorf("the file is not gofmt-clean (%v):\n%s", err, lineDiff(string(formatted), string(outs[2])))
	}
	n := parser.MaxClasses - 1
	n -= (n - 1) % 3 // the last class with a long name (manyClasses)
	last := fmt.Sprintf("manyStep%dOfTheLongChainInline", n)
	for _, want := range []string{"func (tp *Many) Property(", last, "func g() int"} {
		if !bytes.Contains(outs[2], []byte(want)) {
			t.Errorf("the program lacks %q", want)
		}
	}
}

// TestRestoreDirectives: every directive back to the generated file names the line after it,
// across the pieces.
func TestRestoreDirectives(t *testing.T) {
	var out []byte
	withSizes(1, 1, func() {
		out, _ = generate(t, "many.jdf", manyClasses(20), "many", "many_jdf.go")
	})
	n := 0
	for i, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "//line many_jdf.go:"); ok {
			n++
			if want := fmt.Sprint(i + 2); rest != want {
				t.Errorf("line %d: %s, want %s", i+1, line, want)
			}
		}
	}
	if n == 0 {
		t.Error("no directive back to the generated file")
	}
}

// TestWriteErrors: Write writes nothing when generation fails, and reports the error of the
// writer.
func TestWriteErrors(t *testing.T) {
	bad := []byte("V [type = \"*rt.Vector\"]\nT(k)\n  k = 0 .. 1\n  : V(k)\nBODY\n{\n  x :=\n}\nEND\n")
	// Check reports the body too (it says what gen will say); Write must still refuse it.
	prog, diags := parser.ParseAndCheck("bad.jdf", bad)
	if !diags.HasErrors() {
		t.Fatal("check accepts a body that is not Go")
	}
	var buf bytes.Buffer
	err := Write(&buf, prog, Options{Package: "p"})
	var list parser.ErrorList
	if !errors.As(err, &list) || buf.Len() != 0 {
		t.Errorf("Write of a body that is not Go: %v, %d bytes written", err, buf.Len())
	}

	prog, _ = parser.ParseAndCheck("many.jdf", manyClasses(3))
	w := &failingWriter{after: 100}
	if err := Write(w, prog, Options{Package: "p"}); !errors.Is(err, errWrite) {
		t.Errorf("Write to a failing writer: %v", err)
	}
}

var errWrite = errors.New("disk full")

// failingWriter fails once it has taken after bytes.
type failingWriter struct{ after int }

func (w *failingWriter) Write(b []byte) (int, error) {
	if len(b) > w.after {
		n := w.after
		w.after = 0
		return n, errWrite
	}
	w.after -= len(b)
	return len(b), nil
}
