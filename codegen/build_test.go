package codegen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// notGo lists the programs of testdata/valid that are valid JDF but not valid Go programs
// for jdf2go gen, with the reason. TestBuild generates and compiles every other one.
var notGo = map[string]string{
	"arrow_names.jdf":       "calls descA.Tiles(), a method *rt.TiledMatrix does not have",
	"bodies.jdf":            "its stage_in, stage_out and evaluate functions have PaRSEC's signatures, not gpu.StageFn and func(*rt.Task) bool",
	"minimal.jdf":           "its body uses fmt without importing it",
	"named_range_call.jdf":  "declares a global of type *rt.Matrix, which does not exist",
	"named_range_dep.jdf":   "declares a global of type *rt.Matrix, which does not exist",
	"body_line_comment.jdf": "",
	"go_unknown_names.jdf":  "leaves the undeclared chunkSize to the Go compiler, on purpose",
}

// goEnv is the environment of the go commands the tests run: offline, against the module
// cache, allowed to complete the temporary module's go.mod.
func goEnv() []string {
	return append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
}

// goCmd runs the go command in dir and returns its combined output.
func goCmd(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = goEnv()
	return cmd.CombinedOutput()
}

// newModule writes a temporary module that requires this repository through a replace
// directive.
func newModule(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := "module gentest\n\ngo 1.25.0\n\nrequire github.com/jdf2go/jdf2go v0.0.0\n\nreplace github.com/jdf2go/jdf2go => " + root + "\n"
	write(t, filepath.Join(dir, "go.mod"), []byte(gomod))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "go.sum"), sum)
	return dir
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

var hasCase = regexp.MustCompile(`(?m)^func Case\(\) error`)

// TestBuild generates every Go program of testdata (the testdata/gen cases that generate,
// and testdata/valid but for notGo) into packages of one temporary module that replaces
// this module with the working tree, builds them with one go build, vets the testdata/gen
// packages, and runs the Case function of every case that has one, comparing what it
// returns with the case's result.txt.
func TestBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the generated programs")
	}
	mod := newModule(t)
	var cases []string // packages with a Case function, by case name
	for _, c := range genCases(t) {
		got, _ := generate(t, "in.jdf", c.src, pkgName(c.name), "want.go")
		if got == nil {
			continue
		}
		write(t, filepath.Join(mod, "p", c.name, "want.go"), got)
		write(t, filepath.Join(mod, "p", c.name, "in.jdf"), c.src)
		if hasCase.Match(c.src) {
			cases = append(cases, c.name)
		}
	}
	valid, _ := filepath.Glob("../testdata/valid/*.jdf")
	built := 0
	for _, path := range valid {
		name := filepath.Base(path)
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got, stderr := generate(t, name, src, "p", strings.TrimSuffix(name, ".jdf")+"_jdf.go")
		if got == nil {
			// check accepted it (parser's golden test), and check reports what gen would.
			t.Errorf("%s: generation failed:\n%s", name, stderr)
			continue
		}
		if why := notGo[name]; why != "" {
			continue
		}
		dir := filepath.Join(mod, "valid", pkgName(strings.TrimSuffix(name, ".jdf")))
		write(t, filepath.Join(dir, strings.TrimSuffix(name, ".jdf")+"_jdf.go"), got)
		write(t, filepath.Join(dir, name), src)
		built++
	}
	if built < 20 {
		t.Errorf("only %d programs of testdata/valid compiled", built)
	}

	// One main runs every Case and prints the results as JSON.
	var imports, calls strings.Builder
	for i, c := range cases {
		fmt.Fprintf(&imports, "\tc%d %q\n", i, "gentest/p/"+c)
		fmt.Fprintf(&calls, "\tres[%q] = run(c%d.Case)\n", c, i)
	}
	runall := "package main\n\nimport (\n\t\"encoding/json\"\n\t\"fmt\"\n\t\"os\"\n\n" + imports.String() + ")\n\n" +
		"func run(f func() error) (s string) {\n\tdefer func() {\n\t\tif r := recover(); r != nil {\n\t\t\ts = fmt.Sprint(\"panic: \", r)\n\t\t}\n\t}()\n\treturn fmt.Sprint(f())\n}\n\n" +
		"func main() {\n\tres := map[string]string{}\n" + calls.String() +
		"\tjson.NewEncoder(os.Stdout).Encode(res)\n}\n"
	write(t, filepath.Join(mod, "cmd", "runall", "main.go"), []byte(runall))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := goCmd(ctx, mod, "build", "./..."); err != nil {
		t.Fatalf("go build ./... of the generated programs: %v\n%s", err, out)
	}
	if out, err := goCmd(ctx, mod, "vet", "./p/..."); err != nil {
		t.Errorf("go vet of the testdata/gen programs: %v\n%s", err, out)
	}
	bin := filepath.Join(mod, "runall")
	if out, err := goCmd(ctx, mod, "build", "-o", bin, "./cmd/runall"); err != nil {
		t.Fatalf("go build runall: %v\n%s", err, out)
	}
	runCtx, cancelRun := context.WithTimeout(ctx, time.Minute)
	defer cancelRun()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(runCtx, bin)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("runall: %v\n%s%s", err, out, stderr.Bytes())
	}
	var res map[string]string
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("runall output: %v\n%s", err, out)
	}
	for _, c := range cases {
		t.Run(c, func(t *testing.T) {
			checkGolden(t, filepath.Join("../testdata/gen", c, "result.txt"), []byte(res[c]+"\n"))
		})
	}
}

// TestLineDirectivesBuild: a type error in a body, after blank lines that gofmt removes,
// and one in a GPU body, are reported by go build at their .jdf lines.
func TestLineDirectivesBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	src := []byte(`V [type = "*rt.Vector"]

T(k)
  k = 0 .. 3
  : V(k)
BODY
{


    var s string = k
    _ = s

}
END

U(k)
  k = 0 .. 3
  : V(k)
BODY [type = GPU]
{
    var b gpu.Buffer = k
    _ = b
}
END
BODY
{
}
END
`)
	got, stderr := generate(t, "bad.jdf", src, "bad", "bad_jdf.go")
	if got == nil {
		t.Fatal(stderr)
	}
	mod := newModule(t)
	write(t, filepath.Join(mod, "_bad", "bad_jdf.go"), got)
	out, err := goCmd(context.Background(), mod, "build", "./_bad")
	if err == nil {
		t.Fatal("go build accepted a body with a type error")
	}
	if !strings.Contains(string(out), "bad.jdf:10: cannot use k") {
		t.Errorf("go build does not point at bad.jdf:10:\n%s", out)
	}
	if !strings.Contains(string(out), "bad.jdf:21: cannot use k") {
		t.Errorf("go build does not point at bad.jdf:21 (the GPU body):\n%s", out)
	}
}

// TestLineDirectives checks, in every generated testdata/gen file, that each identifier
// the //line directives attribute to a line of in.jdf does appear on that line (generated
// helper names aside), and that the directives back to the generated file name the line
// they stand before.
func TestLineDirectives(t *testing.T) {
	for _, c := range genCases(t) {
		got, _ := generate(t, "in.jdf", c.src, pkgName(c.name), "want.go")
		if got == nil {
			continue
		}
		name := regexp.MustCompile(`func New(\w+)\(`).FindSubmatch(got)
		if name == nil {
			t.Fatalf("%s: no constructor", c.name)
		}
		t.Run(c.name, func(t *testing.T) { checkLines(t, c.src, got, lowerPrefix(string(name[1]))) })
	}
}

var identRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

func checkLines(t *testing.T, src, gen []byte, pfx string) {
	jdf := strings.Split(string(src), "\n")
	lines := strings.Split(string(gen), "\n")
	file, line := "want.go", 0
	for i, l := range lines {
		if rest, ok := strings.CutPrefix(l, "//line "); ok {
			j := strings.LastIndexByte(rest, ':')
			n, err := strconv.Atoi(rest[j+1:])
			if err != nil {
				t.Fatalf("bad directive %q", l)
			}
			file, line = rest[:j], n
			if file == "want.go" && n != i+2 {
				t.Errorf("line %d: %q should name line %d", i+1, l, i+2)
			}
			continue
		}
		if file == "in.jdf" {
			if line < 1 || line > len(jdf) {
				t.Fatalf("line %d of want.go points at in.jdf:%d, past the end", i+1, line)
			}
			// A call of generated inline code passes the definitions in scope.
			for _, id := range identRE.FindAllString(stripStrings(l), -1) {
				if strings.Contains(l, "Inline") {
					break
				}
				// A hidden global with a value is an unexported field: MT becomes g.mt.
				src := strings.ToLower(jdf[line-1])
				if !strings.Contains(src, strings.ToLower(strings.TrimSuffix(id, "_"))) && !generatedName(id, pfx) {
					t.Errorf("want.go:%d %q: %s is attributed to in.jdf:%d %q", i+1, l, id, line, jdf[line-1])
					break
				}
			}
		}
		line++
	}
}

// stripStrings removes string literals and comments from a line of Go.
func stripStrings(l string) string {
	l = regexp.MustCompile(`"(\\.|[^"\\])*"|'(\\.|[^'\\])*'`).ReplaceAllString(l, `""`)
	if i := strings.Index(l, "//"); i >= 0 {
		l = l[:i]
	}
	return l
}

// generatedName reports identifiers that translated JDF expressions contain although the
// JDF text does not: the taskpool variable, conversions and the program's helpers.
func generatedName(id, pfx string) bool {
	return slices.Contains([]string{"g", "return", "var", "int32", "int", "uint64", "int64", "bool", "func", "if",
		"tp", "task", "dev", "rt", "Ix", "true", "false", "batchMax", "batchMatch"}, id) ||
		strings.HasPrefix(id, pfx)
}

// TestGenerateFails checks the positioned errors of programs that cannot be generated.
func TestGenerateFails(t *testing.T) {
	var buf bytes.Buffer
	for _, c := range genCases(t) {
		got, stderr := generate(t, "in.jdf", c.src, pkgName(c.name), "want.go")
		if strings.HasPrefix(c.name, "err_") != (got == nil) {
			t.Errorf("%s: generated %v, want generation to fail exactly for err_ cases:\n%s", c.name, got != nil, stderr)
		}
		if got == nil {
			if !regexp.MustCompile(`(?m)^in\.jdf:\d+:\d+: error: `).MatchString(stderr) {
				t.Errorf("%s: no positioned error:\n%s", c.name, stderr)
			}
			buf.WriteString(stderr)
		}
	}
}
