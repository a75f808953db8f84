package main

import (
	"fmt"

	"github.com/jdf2go/jdf2go/parser"
	"github.com/spf13/cobra"
)

func init() { register(newCheckCmd) }

func newCheckCmd(s *streams) *cobra.Command {
	var werror, unknownNames bool
	cmd := &cobra.Command{
		Use:   "check [flags] FILE...",
		Short: "Parse and check JDF files",
		Long: `check parses and checks each JDF file and prints its diagnostics on standard
error, as file.jdf:LINE:COL: error: message (or warning:). Bodies and code
blocks are opaque, so PaRSEC files with C bodies check too.

Names that neither the JDF nor a Go prologue declares are left to the
compiler of the file's code (C headers, Go packages); -Wunknown-names
lists them as warnings. In a Go file, a misspelled JDF name is an error.

It exits 1 when any file has an error, or a warning under -Werror.`,
		Example: "  jdf2go check examples/*.jdf\n  jdf2go check -Werror potrf.jdf",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			failed := false
			for _, path := range args {
				src, err := readFile(s, path)
				if err != nil {
					return err
				}
				_, diags := parser.ParseAndCheckWith(path, src, parser.CheckOptions{WarnUnknownNames: unknownNames})
				for _, d := range diags {
					fmt.Fprintln(s.err, d)
				}
				if diags.HasErrors() || (werror && len(diags) > 0) {
					failed = true
				}
			}
			if failed {
				return errFailed
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&werror, "Werror", false, "treat warnings as errors")
	cmd.Flags().BoolVar(&unknownNames, "Wunknown-names", false, "warn about names the file does not declare")
	return cmd
}

// loadChecked parses and checks one file for the commands that need a
// checked program; it prints the diagnostics when there is an error.
func loadChecked(s *streams, path string) (*parser.Program, error) {
	src, err := readFile(s, path)
	if err != nil {
		return nil, err
	}
	prog, diags := parser.ParseAndCheck(path, src)
	if diags.HasErrors() {
		for _, d := range diags {
			fmt.Fprintln(s.err, d)
		}
		return nil, errFailed
	}
	return prog, nil
}
