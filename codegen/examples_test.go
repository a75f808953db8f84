package codegen

import (
	"bytes"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	jdf "github.com/jdf2go/jdf2go/parser"
)

var genDirective = regexp.MustCompile(`(?m)^//go:generate go run github\.com/jdf2go/jdf2go/cmd/jdf2go gen (.*)$`)

// TestExamplesUpToDate regenerates every file that a //go:generate line of examples/
// produces, as jdf2go gen would, and fails when the committed file differs: regenerate
// with `go generate ./...` (make generate) and commit.
func TestExamplesUpToDate(t *testing.T) {
	var sources []string
	err := filepath.WalkDir("../examples", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_jdf.go") {
			sources = append(sources, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, src := range sources {
		text, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range genDirective.FindAllSubmatch(text, -1) {
			n++
			dir := filepath.Dir(src)
			args := strings.Fields(string(m[1]))
			var out, pkg, in string
			for i := 0; i < len(args); i++ {
				switch args[i] {
				case "-o":
					i++
					out = args[i]
				case "-pkg", "-package", "--package":
					i++
					pkg = args[i]
				default:
					in = args[i]
				}
			}
			if out == "" || in == "" {
				t.Errorf("%s: %q: want -o FILE and the .jdf", src, m[0])
				continue
			}
			outPath := filepath.Join(dir, out)
			committed, err := os.ReadFile(outPath)
			if err != nil {
				t.Errorf("%s: %v (run go generate ./...)", src, err)
				continue
			}
			if pkg == "" {
				f, err := parser.ParseFile(token.NewFileSet(), outPath, committed, parser.PackageClauseOnly)
				if err != nil {
					t.Fatal(err)
				}
				pkg = f.Name.Name
			}
			jdfPath := filepath.Join(dir, in)
			jdfSrc, err := os.ReadFile(jdfPath)
			if err != nil {
				t.Fatal(err)
			}
			prog, diags := jdf.ParseAndCheck(in, jdfSrc)
			if len(diags) > 0 {
				t.Errorf("%s: examples must check without diagnostics:\n%v", jdfPath, diags)
			}
			rel, err := filepath.Rel(filepath.Dir(outPath), jdfPath)
			if err != nil {
				t.Fatal(err)
			}
			files, err := Generate(prog, Options{Package: pkg, Source: filepath.ToSlash(rel), Output: filepath.Base(out)})
			if err != nil {
				t.Errorf("%s: %v", jdfPath, err)
				continue
			}
			if !bytes.Equal(files[0].Content, committed) {
				t.Errorf("%s is stale (-committed +generated):\n%s\nrun go generate ./... and commit", outPath,
					lineDiff(string(committed), string(files[0].Content)))
			}
		}
	}
	if n < 9 {
		t.Errorf("found %d go:generate lines in examples, want one per example (9)", n)
	}
}
