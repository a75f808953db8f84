package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"
	"unicode"

	"github.com/spf13/cobra"
)

func init() { register(newNewCmd) }

// errWouldOverwrite is returned by new when one of the files it writes exists already.
var errWouldOverwrite = errors.New("new: would overwrite an existing file")

// newName is what new accepts as a program name: it is a file name and, capitalised,
// the name of the generated taskpool type.
var newName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

func newNewCmd(s *streams) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "new [flags] NAME",
		Short: "Start a program: NAME.jdf and a main.go that generates and runs it",
		Long: `new writes NAME.jdf, a small two-class pipeline, and main.go, a program in
package main that runs it. main.go carries the line

  //go:generate go tool jdf2go gen -o NAME_jdf.go NAME.jdf

so that, in a module whose go.mod has the line
tool github.com/jdf2go/jdf2go/cmd/jdf2go (go mod edit -tool adds it; see
docs/tutorial.md for the workspace that points it at a checkout),
"go generate && go run ." builds and runs the program. new never overwrites a file.`,
		Example: "  jdf2go new pipeline && go generate && go run .",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runNew(s, dir, args[0])
		},
	}
	cmd.Flags().StringVarP(&dir, "dir", "C", ".", "write the files into `DIR`")
	return cmd
}

func runNew(s *streams, dir, name string) error {
	if !newName.MatchString(name) {
		return usageError{fmt.Sprintf("new: %q is not a program name (a letter, then letters, digits or _)", name)}
	}
	data := struct{ Name, Type, Generate string }{name, exportedName(name), generateLine(name)}
	files := []struct {
		path string
		tmpl *template.Template
	}{
		{filepath.Join(dir, name+".jdf"), newJDF},
		{filepath.Join(dir, "main.go"), newMain},
	}
	for _, f := range files {
		if _, err := os.Lstat(f.path); err == nil {
			return failure{fmt.Errorf("%w: %s", errWouldOverwrite, f.path)}
		} else if !errors.Is(err, os.ErrNotExist) {
			return failure{err}
		}
	}
	for _, f := range files {
		var b strings.Builder
		if err := f.tmpl.Execute(&b, data); err != nil {
			return failure{err}
		}
		w, err := os.OpenFile(f.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) { // created since the check above
			return failure{fmt.Errorf("%w: %s", errWouldOverwrite, f.path)}
		}
		if err != nil {
			return failure{err}
		}
		_, err = w.WriteString(b.String())
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return failure{err}
		}
		fmt.Fprintln(s.out, "wrote", f.path)
	}
	fmt.Fprintln(s.out, "next: go generate && go run .")
	return nil
}

// generateLine is main.go's go:generate directive. It is built here, not written in the
// template, because go generate would run a directive that starts a line of this file.
func generateLine(name string) string {
	return "//go:" + "generate go tool jdf2go gen -o " + name + "_jdf.go " + name + ".jdf"
}

// exportedName turns a program name into the generated type's name: my_pipe -> MyPipe.
func exportedName(name string) string {
	var b strings.Builder
	up := true
	for _, r := range name {
		if r == '_' {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
		}
		b.WriteRune(r)
		up = false
	}
	return b.String()
}

var newJDF = template.Must(template.New("jdf").Parse(`// {{.Name}}: a two-class pipeline. Produce(k) fills block k of data with k+1,
// Consume(k) receives the block from Produce(k), doubles it and writes it back.
%option name = "{{.Type}}"

N    [type = "int"]         // number of blocks
data [type = "*rt.Vector"]  // N blocks

Produce(k)
  k = 0 .. N - 1
  : data(k)
  RW X <- data(k)
       -> X Consume(k)
BODY
{
    for i := range X {
        X[i] = float64(k + 1)
    }
}
END

Consume(k)
  k = 0 .. N - 1
  : data(k)
  RW X <- X Produce(k)
       -> data(k)
BODY
{
    for i := range X {
        X[i] *= 2
    }
}
END
`))

var newMain = template.Must(template.New("main").Parse(`// Command {{.Name}} runs {{.Name}}.jdf on all cores.
//
//	go generate && go run . -n 8
package main

{{.Generate}}

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/jdf2go/jdf2go/rt"
)

func main() {
	n := flag.Int("n", 8, "number of blocks")
	flag.Parse()
	sum, err := run(*n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "{{.Name}}:", err)
		os.Exit(1)
	}
	fmt.Printf("{{.Name}}: %d blocks, sum %g\n", *n, sum)
}

// run runs the pipeline on n blocks of 4 numbers and returns the sum of all blocks.
func run(n int) (float64, error) {
	ctx, err := rt.New()
	if err != nil {
		return 0, err
	}
	defer ctx.Close()
	data, err := rt.NewVector(4*n, 4, 1, 0)
	if err != nil {
		return 0, err
	}
	tp, err := New{{.Type}}(n, data)
	if err != nil {
		return 0, err
	}
	if err := ctx.Add(tp.Taskpool); err != nil {
		return 0, err
	}
	if err := tp.Wait(context.Background()); err != nil {
		return 0, err
	}
	var sum float64
	for k := range n {
		for _, x := range data.Block(k) {
			sum += x
		}
	}
	return sum, nil
}
`))
