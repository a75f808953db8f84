package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/jdf2go/jdf2go/parser"
	"github.com/spf13/cobra"
)

func init() { register(newFmtCmd) }

func newFmtCmd(s *streams) *cobra.Command {
	var write, list, diff bool
	cmd := &cobra.Command{
		Use:   "fmt [flags] FILE...",
		Short: "Print JDF files in canonical layout",
		Long: `fmt prints each JDF file in canonical layout on standard output. Comments are
kept, code blocks and bodies are printed verbatim, and formatting twice gives
the same bytes. A file with syntax errors is left alone and its errors printed.

  -w  rewrite the files whose layout changes
  -l  list the files whose layout changes
  -d  print a unified diff of the changes`,
		Example: "  jdf2go fmt -d examples/potrf.jdf\n  jdf2go fmt -w examples/*.jdf",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if btoi(write)+btoi(list)+btoi(diff) > 1 {
				return fmt.Errorf("fmt: -w, -l and -d are exclusive")
			}
			failed := false
			for _, path := range args {
				src, err := readFile(s, path)
				if err != nil {
					return err
				}
				prog, diags := parser.Parse(path, src)
				if diags.HasErrors() {
					for _, d := range diags {
						if d.Severity == parser.Error {
							fmt.Fprintln(s.err, d)
						}
					}
					failed = true
					continue
				}
				out := parser.Format(prog)
				changed := !bytes.Equal(out, src)
				switch {
				case write:
					if changed && path != "-" {
						if err := os.WriteFile(path, out, 0o644); err != nil {
							return failure{err}
						}
					}
				case list:
					if changed {
						fmt.Fprintln(s.out, path)
					}
				case diff:
					if changed {
						s.out.Write(unifiedDiff(path, src, out))
					}
				default:
					s.out.Write(out)
				}
			}
			if failed {
				return errFailed
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&write, "write", "w", false, "rewrite files in place")
	cmd.Flags().BoolVarP(&list, "list", "l", false, "list files whose layout changes")
	cmd.Flags().BoolVarP(&diff, "diff", "d", false, "print a unified diff")
	return cmd
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
