package main

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/jdf2go/jdf2go/codegen"
	jdf "github.com/jdf2go/jdf2go/parser"
	"github.com/spf13/cobra"
)

func init() { register(newGenCmd) }

func newGenCmd(s *streams) *cobra.Command {
	var o genOptions
	cmd := &cobra.Command{
		Use:   "gen [flags] FILE.jdf",
		Short: "Generate Go from a JDF file",
		Long: `gen checks a JDF file and generates Go from it: the taskpool type with its
constructor New<Name>, Verify and WriteDOT, and one rt.TaskClass per task class.
Diagnostics are printed as file.jdf:LINE:COL: error: message.

The generated file's package is the -pkg flag's when given, else the package of
the Go files already in the output's folder (external test packages and files
jdf2go generated are not counted), else main.`,
		Example: "  jdf2go gen examples/chain.jdf\n" +
			"  //go:generate go tool jdf2go gen -o potrf_jdf.go potrf.jdf",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGen(s, o, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.out, "output", "o", "", "write to `FILE` (default <name>_jdf.go beside FILE.jdf; - for standard output)")
	f.StringVar(&o.pkg, "pkg", "", "package `NAME` of the generated file")
	f.StringVar(&o.pkg, "package", "", "same as -pkg")
	f.MarkHidden("package")
	return cmd
}

// genOptions are gen's flags.
type genOptions struct{ out, pkg string }

func runGen(s *streams, o genOptions, in string) error {
	src, err := readFile(s, in)
	if err != nil {
		return err
	}
	prog, diags := jdf.ParseAndCheck(in, src)
	for _, d := range diags {
		fmt.Fprintln(s.err, d)
	}
	if diags.HasErrors() {
		return errFailed
	}
	toStdout := o.out == "-"
	if o.out == "" {
		o.out = strings.TrimSuffix(in, filepath.Ext(in)) + "_jdf.go"
	}
	outDir := filepath.Dir(o.out)
	if toStdout {
		outDir = "."
	}
	if o.pkg == "" {
		o.pkg = packageOf(outDir, o.out)
	}
	rel, err := relPath(outDir, in)
	if err != nil {
		return failure{err}
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(genMemoryLimit()))
	opts := codegen.Options{
		Package: o.pkg,
		Source:  rel,
		Output:  filepath.Base(o.out),
		Version: headerVersion(jdf2goVersion()),
		Warn:    func(d *jdf.Diagnostic) { fmt.Fprintln(s.err, d) },
	}
	if toStdout {
		err = codegen.Write(s.out, prog, opts)
	} else {
		err = writeGenerated(o.out, prog, opts)
	}
	if err != nil {
		var list jdf.ErrorList
		if errors.As(err, &list) {
			for _, d := range list {
				fmt.Fprintln(s.err, d)
			}
			return errFailed
		}
		return failure{err}
	}
	return nil
}

// genMemoryLimit returns the soft memory limit for generating the checked program in memory:
// twice the live heap, which is mostly that program, and at least minGenMemoryLimit. What
// generation allocates beyond it is short-lived, and Go's default pacing would let the heap
// grow to twice the live heap and then return the freed pages to the system only slowly. A
// limit set with GOMEMLIMIT is kept.
func genMemoryLimit() int64 {
	if _, ok := os.LookupEnv("GOMEMLIMIT"); ok {
		return debug.SetMemoryLimit(-1)
	}
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return max(2*int64(m.HeapAlloc), minGenMemoryLimit)
}

// minGenMemoryLimit keeps the limit of a small program above what the runtime itself uses.
const minGenMemoryLimit = 64 << 20

// writeGenerated writes the file generated from prog to path through a temporary file beside
// it, so that a failed run leaves the previous file, and leaves the file untouched (and its
// modification time) when its content does not change.
func writeGenerated(path string, prog *jdf.Program, opts codegen.Options) error {
	tmp, err := createTemp(path)
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, there is nothing left to remove
	w := bufio.NewWriterSize(tmp, 256<<10)
	err = codegen.Write(w, prog, opts)
	if err == nil {
		err = w.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if same, err := sameContent(path, tmp.Name()); err != nil || same {
		return err
	}
	if fi, err := os.Stat(path); err == nil {
		// os.WriteFile keeps the mode of a file it replaces.
		if err := os.Chmod(tmp.Name(), fi.Mode().Perm()); err != nil {
			return err
		}
	}
	return os.Rename(tmp.Name(), path)
}

// createTemp creates a temporary file beside path with the mode os.WriteFile gives a new
// file (0644 less the umask). Its name starts with a dot, which the go tool ignores.
func createTemp(path string) (*os.File, error) {
	dir, base := filepath.Split(path)
	for i := 0; ; i++ {
		name := filepath.Join(dir, fmt.Sprintf(".%s.%d.%d.tmp", base, os.Getpid(), i))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil || !errors.Is(err, fs.ErrExist) || i == 99 {
			return f, err
		}
	}
}

// sameContent reports whether the file at old exists and holds what the file at path does.
func sameContent(old, path string) (bool, error) {
	a, err := os.Open(old)
	if err != nil {
		return false, nil // no old file: not the same
	}
	defer a.Close()
	b, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer b.Close()
	if fa, err := a.Stat(); err != nil || !fa.Mode().IsRegular() {
		return false, nil
	} else if fb, err := b.Stat(); err != nil || fa.Size() != fb.Size() {
		return false, err
	}
	bufA, bufB := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, errA := io.ReadFull(a, bufA)
		nb, errB := io.ReadFull(b, bufB)
		if !bytes.Equal(bufA[:na], bufB[:nb]) {
			return false, nil
		}
		if errA != nil || errB != nil {
			// Both at their end (the sizes are equal), or a read error.
			if errA == io.EOF || errA == io.ErrUnexpectedEOF {
				errA = nil
			}
			if errB == io.EOF || errB == io.ErrUnexpectedEOF {
				errB = nil
			}
			return errA == nil && errB == nil, errors.Join(errA, errB)
		}
	}
}

// pseudoVersion matches the commit part of a Go pseudo-version (v0.0.0-20260102150405-abcdef123456).
var pseudoVersion = regexp.MustCompile(`\d{14}-[0-9a-f]{12}`)

// headerVersion is the version written in generated headers: a release tag as it is, and
// "devel" for a build from a commit (a pseudo-version, +dirty), so that regenerating an
// unchanged .jdf gives the same file whatever commit jdf2go was built from (make
// check-generate compares them).
func headerVersion(v string) string {
	if strings.Contains(v, "+") || pseudoVersion.MatchString(v) {
		return "devel"
	}
	return v
}

// relPath returns the path of file relative to dir, with forward slashes, as the generated
// file's header and //line directives spell it (Go resolves //line paths from the
// directory of the file that holds them).
func relPath(dir, file string) (string, error) {
	ad, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	af, err := filepath.Abs(file)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(ad, af)
	if err != nil {
		return "", err
	}
	return filepath.ToSlash(rel), nil
}

// packageOf returns the package of the Go files in dir, or main when there are none.
// The output itself, files that jdf2go generated (their package came from this same
// choice), files excluded from every build (//go:build ignore) and external test
// packages (NAME_test) do not count; a test file of the package itself does, after the
// non-test files.
func packageOf(dir, output string) string {
	paths, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	isTest := func(p string) int {
		if strings.HasSuffix(p, "_test.go") {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(paths, func(a, b string) int { return cmp.Compare(isTest(a), isTest(b)) })
	for _, p := range paths {
		if filepath.Base(p) == filepath.Base(output) {
			continue
		}
		f, err := packageClause(p)
		if err != nil || strings.HasSuffix(f.Name.Name, "_test") || generatedByJDF2Go(f) || ignored(f) {
			continue
		}
		return f.Name.Name
	}
	return "main"
}

// packageClause parses the package clause of the Go file at path and the comments before it,
// from the start of the file: a generated file next to the output can be large.
func packageClause(path string) (*ast.File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	head := make([]byte, 64<<10)
	n, err := io.ReadFull(fh, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	fset := token.NewFileSet()
	const mode = parser.PackageClauseOnly | parser.ParseComments
	f, err := parser.ParseFile(fset, path, head[:n], mode)
	if n < len(head) || err == nil && fset.Position(f.Name.End()).Offset < n {
		return f, err
	}
	return parser.ParseFile(token.NewFileSet(), path, nil, mode) // the clause is further
}

// generatedByJDF2Go reports whether f starts with the header jdf2go writes.
func generatedByJDF2Go(f *ast.File) bool {
	return len(f.Comments) > 0 && strings.HasPrefix(f.Comments[0].Text(), "Code generated by jdf2go ")
}

// ignored reports whether f is built only with the tag "ignore" (//go:build ignore, the
// usual mark of a generator script): its constraint fails with that tag off and every
// other tag on, and holds with all of them on.
func ignored(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() > f.Package {
			break
		}
		for _, c := range g.List {
			expr, err := constraint.Parse(c.Text)
			if err != nil {
				continue
			}
			if !expr.Eval(func(tag string) bool { return tag != "ignore" }) && expr.Eval(func(string) bool { return true }) {
				return true
			}
		}
	}
	return false
}
