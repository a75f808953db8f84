package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// streams are the I/O of one run, passed to every subcommand constructor.
type streams struct {
	in       io.Reader
	out, err io.Writer
}

// commands lists the subcommand constructors, in the order help shows them.
// Each subcommand's file appends its constructor from an init function with
// register, so adding a subcommand (e.g. gen.go) touches no other file.
var commands []func(*streams) *cobra.Command

func register(newCmd func(*streams) *cobra.Command) { commands = append(commands, newCmd) }

// exitError carries an exit status out of a subcommand; the message, if
// any, has already been printed.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// errFailed is returned by a subcommand that printed its own diagnostics.
var errFailed = &exitError{code: 1}

// usageError is a usage mistake that cobra cannot see (a malformed argument): run exits 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// failure wraps an operational error (I/O) so that run exits 1, not 2.
type failure struct{ err error }

func (f failure) Error() string { return f.err.Error() }
func (f failure) Unwrap() error { return f.err }

// run is the whole CLI: main only calls it with the process's arguments
// and streams, and tests call it in-process.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	s := &streams{in: stdin, out: stdout, err: stderr}
	root := &cobra.Command{
		Use:   "jdf2go",
		Short: "Compile JDF task-graph programs to Go",
		Long: `jdf2go reads JDF (PaRSEC's Parameterized Task Graph language, with Go bodies),
checks it, formats it, draws its task-class graph, and generates Go.

Long flags may be written with one dash or two, as in Go's tools: -pkg or --pkg.
Exit status: 0 on success, 1 when diagnostics include an error (or a warning under
-Werror) or a file cannot be read or written, 2 on a usage error.`,
		Example:       "  jdf2go check examples/*.jdf\n  jdf2go fmt -d examples/potrf.jdf",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.CompletionOptions.DisableDefaultCmd = true
	for _, newCmd := range commands {
		root.AddCommand(newCmd(s))
	}
	root.SetArgs(goStyleLongFlags(root, args))
	err := root.Execute()
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	fmt.Fprintf(stderr, "jdf2go: %v\n", err)
	var f failure
	if errors.As(err, &f) {
		return 1
	}
	return 2 // cobra's own errors: unknown command or flag, wrong arguments
}

// goStyleLongFlags lets every long flag of every command also be written with one
// dash, as Go's own tools and compilers spell them (-pkg NAME, -Werror): pflag reads a
// single dash as a cluster of one-letter flags, so an argument "-NAME" or "-NAME=VALUE"
// whose NAME is a long flag of some command (two letters or more) becomes "--NAME...".
// Arguments after "--" are left alone. This is the only place that knows about it.
func goStyleLongFlags(root *cobra.Command, args []string) []string {
	long := map[string]bool{}
	var collect func(c *cobra.Command)
	collect = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if len(f.Name) > 1 {
				long[f.Name] = true
			}
		})
		for _, sub := range c.Commands() {
			collect(sub)
		}
	}
	collect(root)
	out := make([]string, len(args))
	for i, a := range args {
		if a == "--" {
			copy(out[i:], args[i:])
			break
		}
		if name, _, _ := strings.Cut(strings.TrimPrefix(a, "-"), "="); len(a) > 2 && a[0] == '-' && a[1] != '-' && long[name] {
			a = "-" + a
		}
		out[i] = a
	}
	return out
}

// readFile reads a JDF file; "-" is standard input.
func readFile(s *streams, path string) ([]byte, error) {
	if path == "-" {
		b, err := io.ReadAll(s.in)
		if err != nil {
			return nil, failure{fmt.Errorf("reading standard input: %w", err)}
		}
		return b, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, failure{err}
	}
	return b, nil
}
