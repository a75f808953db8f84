package driver

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The driver package sits under rt/gpu and its backends: it may import the
// standard library and rt/blas (the BLAS flags) only, or rt/gpu could not
// import it.
func TestImportsOnlyStdlibAndBLAS(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(p, "/")
			if strings.Contains(first, ".") && p != "github.com/jdf2go/jdf2go/rt/blas" {
				t.Errorf("%s imports %s", name, p)
			}
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no source file found")
	}
}
