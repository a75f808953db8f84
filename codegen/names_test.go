package codegen

import (
	"bytes"
	"errors"
	"go/ast"
	"go/importer"
	goparser "go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jdf2go/jdf2go/parser"
)

// nameProgram is a small Go program whose taskpool name, global, definition and flow are
// chosen by the tests of names.
func nameProgram(option, global, def, flow string) []byte {
	use := flow + "[0] += 1"
	if parser.GoKeywords[flow] {
		use = "// the body cannot name the flow" // a body that does not parse is gen's error
	}
	return []byte(`%option name = "` + option + `"

` + global + ` [type = "int"]
V [type = "*rt.Vector"]

T(` + def + `)
  ` + def + ` = 0 .. ` + global + `
  : V(` + def + `)
  RW ` + flow + ` <- V(` + def + `)
       -> V(` + def + `)
BODY
{
    ` + use + `
}
END
`)
}

// checkAndGen runs what jdf2go check and jdf2go gen run on src: it returns the errors of
// the check, and those of generation when the check has none, each line as the CLI prints
// it (file:line:col: error: message), and the generated file.
func checkAndGen(t testing.TB, file string, src []byte) (checkErrs, genErrs string, out []byte) {
	t.Helper()
	prog, diags := parser.ParseAndCheck(file, src)
	var b strings.Builder
	for _, d := range diags {
		if d.Severity == parser.Error {
			b.WriteString(d.String() + "\n")
		}
	}
	if diags.HasErrors() {
		return b.String(), "", nil
	}
	files, err := Generate(prog, Options{Package: "p", Source: file})
	if err != nil {
		var list parser.ErrorList
		if !errors.As(err, &list) {
			return "", "", nil // not an error of the program: reported by typeCheck's caller
		}
		var g strings.Builder
		for _, d := range list {
			g.WriteString(d.String() + "\n")
		}
		return "", g.String(), nil
	}
	return "", "", files[0].Content
}

var (
	srcImporterOnce sync.Once
	srcImporter     types.Importer
	srcImporterMu   sync.Mutex
)

// typeCheck type-checks a generated file as package p, importing this module's packages
// from source (one importer for the whole test binary: it caches rt).
func typeCheck(src []byte) error {
	srcImporterMu.Lock()
	defer srcImporterMu.Unlock()
	fset := token.NewFileSet()
	srcImporterOnce.Do(func() { srcImporter = importer.ForCompiler(token.NewFileSet(), "source", nil) })
	f, err := goparser.ParseFile(fset, "in_jdf.go", src, goparser.SkipObjectResolution)
	if err != nil {
		return err
	}
	var errs []string
	conf := types.Config{Importer: srcImporter, Error: func(err error) { errs = append(errs, err.Error()) }}
	conf.Check("p", fset, []*ast.File{f}, nil)
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

// collidingNames are names that collide with something in a generated file of the program
// "Tpl" (prefix tpl), or did before the rules of parser/gonames.go.
var collidingNames = []string{
	// Go's predeclared identifiers.
	"nil", "true", "false", "iota", "int", "string", "error", "any", "len", "cap", "make", "new",
	"append", "copy", "delete", "panic", "recover", "print", "println", "close", "complex",
	"real", "imag", "min", "max", "clear", "bool", "byte", "rune", "float32", "float64", "int64",
	"uint8", "uintptr", "comparable",
	// Keywords, the blank identifier, init.
	"func", "type", "var", "range", "map", "_", "init",
	// Packages of the generated file, and names generated functions use.
	"rt", "gpu", "fmt", "errors", "io", "tp", "task", "g", "l", "e", "n", "flows", "yield", "pl",
	"err", "ok", "c", "dev", "v", "b", "d", "w", "x", "i", "k", "Ix", "tern1",
	// What the file of Tpl declares.
	"Tpl", "NewTpl", "ErrTplArgument", "ErrTplGraph", "tplT", "tplSource", "tplB2I", "tplTHook",
	"Taskpool", "Verify", "Name", "Err",
	// Harmless ones.
	"tplx", "N", "NB",
}

// TestNameCollisions: every name of collidingNames, as a global, as %option name, as a
// definition and as a flow, is either rejected by check (a positioned error) or generated into
// code that type-checks; generation never rejects what check accepts.
func TestNameCollisions(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks generated code (-short)")
	}
	pos := regexp.MustCompile(`^in\.jdf:\d+:\d+: error: `)
	for _, name := range collidingNames {
		for _, c := range []struct{ what, opt, gl, def, flow string }{
			{"global", "Tpl", name, "k", "A"},
			{"option", name, "NB", "k", "A"},
			{"definition", "Tpl", "NB", name, "A"},
			{"flow", "Tpl", "NB", "k", name},
		} {
			t.Run(c.what+"_"+name, func(t *testing.T) {
				src := nameProgram(c.opt, c.gl, c.def, c.flow)
				checkErrs, genErrs, out := checkAndGen(t, "in.jdf", src)
				switch {
				case checkErrs != "":
					for _, l := range strings.Split(strings.TrimSpace(checkErrs), "\n") {
						if !pos.MatchString(l) {
							t.Errorf("check error without position: %s", l)
						}
					}
				case genErrs != "":
					t.Errorf("check accepts it, gen rejects it:\n%s\n%s", genErrs, src)
				case out == nil:
					t.Errorf("generation failed")
				default:
					if err := typeCheck(out); err != nil {
						t.Errorf("check and gen accept it, the generated code does not type-check:\n%v\n%s", err, src)
					}
				}
			})
		}
	}
}

// TestNameMessages pins the messages of a few rejected names: check's, positioned at the
// name, are gen's (GoNameErrors).
func TestNameMessages(t *testing.T) {
	for _, c := range []struct{ opt, gl, want string }{
		{"Tpl", "nil", `in.jdf:3:1: error: global "nil" collides with Go's predeclared identifier nil; rename it`},
		{"Tpl", "_", `in.jdf:3:1: error: global "_" is Go's blank identifier: its value could not be read; rename it`},
		{"Tpl", "ErrTplArgument", `in.jdf:3:1: error: global "ErrTplArgument" collides with ErrTplArgument, declared by the generated file; rename it`},
		{"Tpl", "tplT", `in.jdf:3:1: error: global "tplT" collides with the identifiers the generated file declares (tpl followed by a capital, a digit or _); rename it`},
		{"Tpl", "rt", `in.jdf:3:1: error: global "rt" has the name of a package the generated code imports; rename it`},
		{"rt", "NB", `in.jdf:1:16: error: %option name "rt" has the name of a package the generated code imports; choose another name`},
		{"func", "NB", `in.jdf:1:16: error: %option name "func" is a Go keyword; choose another name`},
		{"init", "NB", `in.jdf:1:16: error: %option name "init": Go reserves init for package initialisation functions; choose another name`},
		{"string", "NB", `in.jdf:1:16: error: %option name "string" collides with Go's predeclared identifier string; choose another name`},
	} {
		src := nameProgram(c.opt, c.gl, "k", "A")
		checkErrs, _, _ := checkAndGen(t, "in.jdf", src)
		if strings.TrimSpace(checkErrs) != c.want {
			t.Errorf("option %q, global %q: check reports\n%s\nwant\n%s", c.opt, c.gl, checkErrs, c.want)
		}
		// Generation of the same program (bypassing check's verdict) reports the same.
		prog, _ := parser.ParseAndCheck("in.jdf", src)
		var got string
		if _, err := Generate(prog, Options{Package: "p"}); err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, strings.TrimPrefix(c.want, "in.jdf:")) {
			t.Errorf("option %q, global %q: Generate reports %q, want %q", c.opt, c.gl, got, c.want)
		}
	}
}

// TestGeneratedImports: the packages codegen refers to are those parser.GeneratedImports
// names, which the name rules protect.
func TestGeneratedImports(t *testing.T) {
	paths := map[string]bool{rtPath: true, gpuPath: true}
	files, _ := filepath.Glob("*.go")
	qual := regexp.MustCompile(`Qual\("([a-z/]+)"`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range qual.FindAllSubmatch(b, -1) {
			paths[string(m[1])] = true
		}
	}
	for p := range paths {
		if name := filepath.Base(p); !parser.GeneratedImports[name] {
			t.Errorf("codegen imports %s: add %q to parser.GeneratedImports", p, name)
		}
	}
}

// FuzzGen is a structured fuzz of names: it puts the fuzzed strings in the taskpool name, a
// global, a definition and a flow of nameProgram; when check accepts the program, gen must
// generate it and the result must type-check. (Not a generator of arbitrary JDF.)
func FuzzGen(f *testing.F) {
	for _, s := range [][4]string{
		{"Tpl", "NB", "k", "A"},
		{"rt", "nil", "int", "string"},
		{"Chain", "chainTask", "tp", "task"},
		{"func", "_", "l", "g"},
		{"X", "ErrXArgument", "xT", "NewX"},
		{"init", "fmt", "errors", "io"},
		{"Tpl", "float64", "tern1", "flows"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	ident := regexp.MustCompile(`^[A-Za-z_][A-Za-z_0-9]{0,15}$`)
	f.Fuzz(func(t *testing.T, opt, gl, def, flow string) {
		for _, s := range []string{opt, gl, def, flow} {
			if !ident.MatchString(s) {
				t.Skip()
			}
		}
		src := nameProgram(opt, gl, def, flow)
		checkErrs, genErrs, out := checkAndGen(t, "in.jdf", src)
		switch {
		case checkErrs != "":
		case genErrs != "":
			t.Fatalf("check accepts it, gen rejects it:\n%s\n%s", genErrs, src)
		case out == nil:
			t.Fatalf("generation failed:\n%s", src)
		default:
			if err := typeCheck(out); err != nil {
				t.Fatalf("check and gen accept it, the generated code does not type-check:\n%v\n%s\n%s", err, src, numbered(out))
			}
		}
	})
}

func numbered(b []byte) string {
	var out bytes.Buffer
	for i, l := range bytes.Split(b, []byte("\n")) {
		out.WriteString(strconv.Itoa(i+1) + "\t" + string(l) + "\n")
	}
	return out.String()
}
