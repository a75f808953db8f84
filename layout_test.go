package jdf2go_test

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
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
