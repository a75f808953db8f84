package parser

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// testdataDir is the repository's JDF corpus.
const testdataDir = "../testdata"

// corpus returns the .jdf files of the named testdata folders.
func corpus(t testing.TB, dirs ...string) []string {
	t.Helper()
	var files []string
	for _, d := range dirs {
		m, err := filepath.Glob(filepath.Join(testdataDir, d, "*.jdf"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatalf("no .jdf files in %v", dirs)
	}
	return files
}

// checkOutput is what `jdf2go check FILE` prints when run in FILE's folder.
func checkOutput(t *testing.T, path string) (string, ErrorList) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, diags := ParseAndCheck(filepath.Base(path), src)
	var b strings.Builder
	for _, d := range diags {
		b.WriteString(d.String())
		b.WriteByte('\n')
	}
	return b.String(), diags
}

// golden compares got with the golden file, or rewrites it under -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./parser -update to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs (-want +got):\n-%s\n+%s", path, strings.ReplaceAll(string(want), "\n", "\n-"), strings.ReplaceAll(string(got), "\n", "\n+"))
	}
}

func TestGoldenDiagnostics(t *testing.T) {
	for _, dir := range []string{"valid", "parsec", "invalid"} {
		for _, path := range corpus(t, dir) {
			t.Run(dir+"/"+filepath.Base(path), func(t *testing.T) {
				out, diags := checkOutput(t, path)
				if dir == "invalid" && !diags.HasErrors() {
					t.Errorf("invalid case has no error:\n%s", out)
				}
				if dir != "invalid" && diags.HasErrors() {
					t.Errorf("valid case has errors:\n%s", out)
				}
				golden(t, strings.TrimSuffix(path, ".jdf")+".err", []byte(out))
			})
		}
	}
}

// TestExamplesCheck: the examples must pass `jdf2go check` without warnings.
func TestExamplesCheck(t *testing.T) {
	files, _ := filepath.Glob("../examples/*.jdf")
	if len(files) < 4 {
		t.Fatalf("want at least 4 examples, have %d", len(files))
	}
	for _, path := range files {
		out, diags := checkOutput(t, path)
		if len(diags) > 0 {
			t.Errorf("%s:\n%s", path, out)
		}
	}
}
