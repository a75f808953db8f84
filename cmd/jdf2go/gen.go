package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
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
	files, err := codegen.Generate(prog, codegen.Options{
		Package: o.pkg,
		Source:  rel,
		Output:  filepath.Base(o.out),
		Version: headerVersion(jdf2goVersion()),
		Warn:    func(d *jdf.Diagnostic) { fmt.Fprintln(s.err, d) },
	})
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
	for _, f := range files {
		if toStdout {
			if _, err := s.out.Write(f.Content); err != nil {
				return failure{err}
			}
			continue
		}
		path := filepath.Join(outDir, f.Name)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, f.Content) {
			continue // unchanged: keep the file's modification time
		}
		if err := os.WriteFile(path, f.Content, 0o644); err != nil {
			return failure{err}
		}
	}
	return nil
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
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil || strings.HasSuffix(f.Name.Name, "_test") || generatedByJDF2Go(f) || ignored(f) {
			continue
		}
		return f.Name.Name
	}
	return "main"
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
