package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"

	"github.com/jdf2go/jdf2go/codegen"
	jdf "github.com/jdf2go/jdf2go/parser"
	"github.com/spf13/cobra"
)

func init() { register(newGenCmd) }

const genUsage = `usage: jdf2go gen [-o FILE] [-pkg NAME] FILE.jdf

gen checks a JDF file and generates Go from it: the taskpool type with its
constructor New<Name>, Verify and WriteDOT, and one rt.TaskClass per task
class. Diagnostics are printed as file.jdf:LINE:COL: error: message.

  -o FILE     output file (default: <name>_jdf.go beside FILE.jdf; - for stdout)
  -pkg NAME   package clause (default: the package of the Go files already in
              the output directory, else the directory's name)

Use it from go generate:

  //go:generate go run github.com/jdf2go/jdf2go/cmd/jdf2go gen -o potrf_jdf.go ../potrf.jdf
`

func newGenCmd(s *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "gen [-o FILE] [-pkg NAME] FILE.jdf",
		Short: "Generate Go from a JDF file",
		Long: `gen checks a JDF file and generates Go from it: the taskpool type with its
constructor New<Name>, Verify and WriteDOT, and one rt.TaskClass per task class.

  -o FILE     output file (default: <name>_jdf.go beside FILE.jdf; - for stdout)
  -pkg NAME   package clause (default: the package of the Go files already in the
              output directory, else the directory's name)`,
		Example: "  jdf2go gen examples/chain.jdf\n" +
			"  //go:generate go run github.com/jdf2go/jdf2go/cmd/jdf2go gen -o potrf_jdf.go ../potrf.jdf",
		// The Go-style single-dash flags (-pkg) are parsed by the flag package, not by pflag.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGen(s, args)
		},
	}
}

// usageError makes run exit 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func runGen(s *streams, args []string) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	fs.SetOutput(s.err)
	fs.Usage = func() { fmt.Fprint(s.err, genUsage) }
	out := fs.String("o", "", "output file")
	pkg := fs.String("pkg", "", "package clause")
	fs.StringVar(pkg, "package", "", "package clause (same as -pkg)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{"gen: " + err.Error()}
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usageError{"gen: want exactly one FILE.jdf"}
	}
	in := fs.Arg(0)
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
	toStdout := *out == "-"
	if *out == "" {
		*out = strings.TrimSuffix(in, filepath.Ext(in)) + "_jdf.go"
	}
	outDir := filepath.Dir(*out)
	if toStdout {
		outDir = "."
	}
	if *pkg == "" {
		*pkg = packageOf(outDir, *out)
	}
	rel, err := relPath(outDir, in)
	if err != nil {
		return failure{err}
	}
	files, err := codegen.Generate(prog, codegen.Options{
		Package: *pkg,
		Source:  rel,
		Output:  filepath.Base(*out),
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

// packageOf returns the package of the Go files in dir (test files and the output itself
// excepted), or a name made from the directory's name.
func packageOf(dir, output string) string {
	paths, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") || filepath.Base(p) == filepath.Base(output) {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.PackageClauseOnly)
		if err == nil {
			return f.Name.Name
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "main"
	}
	var b strings.Builder
	for _, r := range strings.ToLower(filepath.Base(abs)) {
		if unicode.IsLetter(r) || (b.Len() > 0 && unicode.IsDigit(r)) {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "main"
	}
	return b.String()
}
