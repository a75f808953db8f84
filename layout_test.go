package jdf2go_test

import (
	"bufio"
	"bytes"
	"context"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The import rules of the repository's layout, checked with go list:
//   - the compiler (cmd/jdf2go, codegen, parser) does not link the runtime: no
//     package under rt/ is among their dependencies;
//   - nothing under rt/, its tests included, imports examples/ or bench/: the
//     runtime does not depend on the programs and harnesses built on it;
//   - no GPU backend under rt/gpu imports another backend, in its code or its
//     tests. The direct sub-packages of rt/gpu are its backends, except
//     test-support packages, whose names end in "test" (as rt/rttest's does);
//   - the runtime's code does not import those test-support packages (only tests
//     and the benchmark driver do).

const module = "github.com/jdf2go/jdf2go"

// goList runs go list with args in the repository and returns its output lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", append([]string{"list"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// under reports whether the import path p is the package dir of this module or below it.
func under(p, dir string) bool {
	d := module + "/" + dir
	return p == d || strings.HasPrefix(p, d+"/")
}

// rtImports returns, for every package under rt/, the packages it imports in
// its code and its tests.
func rtImports(t *testing.T) map[string][]string {
	t.Helper()
	imports := map[string][]string{}
	for _, l := range goList(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}} {{join .TestImports \" \"}} {{join .XTestImports \" \"}}", "./rt/...") {
		f := strings.Fields(l)
		imports[f[0]] = f[1:]
	}
	if len(imports) == 0 {
		t.Fatal("go list found no package under rt/")
	}
	return imports
}

func TestCompilerDoesNotLinkRuntime(t *testing.T) {
	for _, p := range goList(t, "-deps", "./cmd/jdf2go", "./codegen", "./parser") {
		if under(p, "rt") {
			t.Errorf("the compiler depends on the runtime package %s", p)
		}
	}
}

func TestRuntimeImportsNoExamplesOrBench(t *testing.T) {
	for pkg, imps := range rtImports(t) {
		for _, imp := range imps {
			if under(imp, "examples") || under(imp, "bench") {
				t.Errorf("%s imports %s", pkg, imp)
			}
		}
	}
}

func TestRuntimeCodeImportsNoTestSupport(t *testing.T) {
	isSupport := func(p string) bool { return under(p, "rt") && strings.HasSuffix(p, "test") }
	for _, l := range goList(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./rt/...") {
		f := strings.Fields(l)
		if isSupport(f[0]) {
			continue
		}
		for _, imp := range f[1:] {
			if isSupport(imp) {
				t.Errorf("runtime package %s imports the test-support package %s", f[0], imp)
			}
		}
	}
}

func TestGPUBackendsImportNoOtherBackend(t *testing.T) {
	imports := rtImports(t)
	backendOf := func(p string) string { // "" when p is in no backend
		rest, ok := strings.CutPrefix(p, module+"/rt/gpu/")
		if !ok {
			return ""
		}
		name, _, _ := strings.Cut(rest, "/")
		// driver is what every backend implements, not a backend.
		if strings.HasSuffix(name, "test") || name == "driver" {
			return ""
		}
		return name
	}
	var backends []string
	for pkg := range imports {
		if b := backendOf(pkg); b != "" && !slices.Contains(backends, b) {
			backends = append(backends, b)
		}
	}
	if len(backends) < 2 {
		t.Fatalf("found the GPU backends %v, want at least sim and cuda", backends)
	}
	for pkg, imps := range imports {
		own := backendOf(pkg)
		if own == "" {
			continue
		}
		// The code's dependencies, transitively: a backend may not reach
		// another one through a third package either.
		deps := goList(t, "-deps", pkg)
		for _, imp := range append(deps, imps...) {
			if b := backendOf(imp); b != "" && b != own {
				t.Errorf("backend package %s imports %s (backend %s)", pkg, imp, b)
			}
		}
	}
}

// TestArchitectureImports: the imports column of docs/architecture.md's package table names
// exactly the packages of this module that each package's code imports (its tests left
// out; the examples' row covers every package under examples/). Other names in the column
// (the standard library, third-party modules) are not checked.
func TestArchitectureImports(t *testing.T) {
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	actual := map[string]map[string]bool{} // package (module-relative) -> module packages it imports
	examples := map[string]bool{}
	for _, l := range goList(t, "-tags", "mpi", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...") {
		f := strings.Fields(l)
		pkg := strings.TrimPrefix(f[0], module+"/")
		set := map[string]bool{}
		for _, imp := range f[1:] {
			if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
				set[rel] = true
			}
		}
		actual[pkg] = set
		if under(f[0], "examples") {
			for imp := range set {
				if !strings.HasPrefix(imp, "examples/") {
					examples[imp] = true
				}
			}
		}
	}
	_, table, ok := strings.Cut(string(doc), "## Packages\n")
	if !ok {
		t.Fatal("docs/architecture.md has no Packages section")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	paren := regexp.MustCompile(`\([^)]*\)`)
	rows := 0
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 3 || !strings.HasPrefix(cells[0], "`") {
			continue
		}
		path := strings.Trim(strings.Fields(cells[0])[0], "`,")
		var want map[string]bool
		switch {
		case strings.HasPrefix(path, "examples/"):
			want = examples
		case path == "bench": // "everything"
			continue
		case actual[path] != nil:
			want = actual[path]
		default:
			continue // testdata, docs: no package
		}
		rows++
		named := map[string]bool{}
		for _, name := range strings.Split(paren.ReplaceAllString(cells[2], ""), ",") {
			if name = strings.TrimSpace(name); actual[name] != nil {
				named[name] = true
			}
		}
		for imp := range want {
			if !named[imp] {
				t.Errorf("docs/architecture.md: %s imports %s, which its row does not name", path, imp)
			}
		}
		for name := range named {
			if !want[name] {
				t.Errorf("docs/architecture.md: the row of %s names %s, which it does not import", path, name)
			}
		}
	}
	if rows < 10 {
		t.Fatalf("checked %d rows of the package table; the parse is broken", rows)
	}
}

// TestNoDiary: the tree holds results as data (bench/results/) and documents as they stand,
// not a diary: no non-test Go file, README.md or docs/*.md speaks of sessions, issue
// numbers or numbered device calls, and no Go comment or document cites a "#NN"; and no
// folder is named dist (a build-output name that tools skip, rt/remote's old name).
func TestNoDiary(t *testing.T) {
	words := regexp.MustCompile(`(?i)\bsessions?\b|\b(?:issues?|pull requests?|PRs?|tickets?)\s*#?\d+|\bcalls? \d+\b`)
	hash := regexp.MustCompile(`(?:^|[\s(\[,])#\d+(?:[\s)\].,;:]|$)`)
	check := func(path, text string, w, hashes bool) {
		for i, line := range strings.Split(text, "\n") {
			if m := words.FindString(line); w && m != "" {
				t.Errorf("%s:%d: %q: a diary's words (%s)", path, i+1, m, strings.TrimSpace(line))
			}
			if m := hash.FindString(line); hashes && m != "" {
				t.Errorf("%s:%d: %q: an issue number (%s)", path, i+1, strings.TrimSpace(m), strings.TrimSpace(line))
			}
		}
	}
	docs, _ := filepath.Glob("docs/*.md")
	files := append(docs, "README.md")
	if len(docs) == 0 {
		t.Fatal("no docs/*.md")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		check(f, string(b), true, true)
	}
	n := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if d.Name() == "dist" {
				t.Errorf("%s: a folder named dist", path)
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		check(path, string(b), true, false) // the words anywhere, strings included
		f, err := parser.ParseFile(token.NewFileSet(), path, b, parser.ParseComments)
		if err != nil {
			return nil // a source that does not parse (testdata) has no comments to read
		}
		for _, cg := range f.Comments {
			check(path+" (a comment)", cg.Text(), false, true)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("read %d Go files; the walk is broken", n)
	}
}
