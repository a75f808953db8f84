package parser

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

const fuzzMaxInput = 4 << 10

// addCorpus seeds a fuzz target with the testdata programs and examples,
// besides the committed corpus under testdata/fuzz.
func addCorpus(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(testdataDir, "*", "*.jdf"))
	ex, _ := filepath.Glob("../examples/*.jdf")
	for _, path := range append(files, ex...) {
		if src, err := os.ReadFile(path); err == nil && len(src) <= fuzzMaxInput {
			f.Add(src)
		}
	}
}

// FuzzParse: parsing and checking never panic, report positions inside the
// input, and take well under a second on inputs up to 4 KiB.
func FuzzParse(f *testing.F) {
	addCorpus(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > fuzzMaxInput {
			return
		}
		start := time.Now()
		wd := time.AfterFunc(5*time.Second, func() { panic(fmt.Sprintf("HANG on %q", src)) })
		defer wd.Stop()
		prog, diags := ParseAndCheck("fuzz.jdf", src)
		if prog == nil {
			t.Fatal("nil program")
		}
		for _, d := range diags {
			if d.Pos.Line < 1 || d.Pos.Column < 1 || d.Pos.Offset < 0 || d.Pos.Offset > len(src) {
				t.Fatalf("diagnostic outside the input: %v", d)
			}
		}
		if !diags.HasErrors() {
			Format(prog)
		}
		if el := time.Since(start); el > time.Second {
			t.Fatalf("took %v", el)
		}
	})
}

// FuzzFmtRoundTrip: for every input that parses, parse(fmt(x)) == parse(x)
// and fmt is idempotent.
func FuzzFmtRoundTrip(f *testing.F) {
	addCorpus(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > fuzzMaxInput {
			return
		}
		start := time.Now()
		roundTrip(t, "fuzz.jdf", src)
		if el := time.Since(start); el > time.Second {
			t.Fatalf("took %v", el)
		}
	})
}
