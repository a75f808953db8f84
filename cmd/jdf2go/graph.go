package main

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/jdf2go/jdf2go/parser"
	"github.com/spf13/cobra"
)

func init() { register(newGraphCmd) }

func newGraphCmd(s *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "graph FILE",
		Short: "Print the task-class graph of a JDF file as DOT",
		Long: `graph checks a JDF file and prints its task-class graph in Graphviz DOT:
one node per task class (labelled with its parameters), one box per data
collection, and one edge per output dependency labelled FLOW -> FLOW, plus
an edge from each collection a flow reads. CTL edges are dashed.`,
		Example: "  jdf2go graph examples/potrf.jdf | dot -Tsvg > potrf.svg",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			prog, err := loadChecked(s, args[0])
			if err != nil {
				return err
			}
			_, err = s.out.Write(dot(prog))
			return err
		},
	}
}

// dot renders the class graph. Edges are emitted in source order and
// deduplicated, so the output is deterministic.
func dot(prog *parser.Program) []byte {
	var b bytes.Buffer
	name := prog.OptionText("name", "")
	if name == "" {
		name = prog.Filename
	}
	fmt.Fprintf(&b, "digraph %s {\n", strconv.Quote(name))
	b.WriteString("  node [shape=ellipse];\n")
	for _, g := range prog.Globals {
		if g.Collection {
			fmt.Fprintf(&b, "  %s [shape=box];\n", strconv.Quote(g.Name))
		}
	}
	for _, tc := range prog.Classes {
		params := ""
		for i, p := range tc.Params {
			if i > 0 {
				params += ", "
			}
			params += p.Name
		}
		fmt.Fprintf(&b, "  %s [label=%s];\n", strconv.Quote(tc.Name), strconv.Quote(tc.Name+"("+params+")"))
	}
	seen := map[string]bool{}
	edge := func(from, to, label string, ctl bool) {
		line := fmt.Sprintf("  %s -> %s [label=%s", strconv.Quote(from), strconv.Quote(to), strconv.Quote(label))
		if ctl {
			line += " style=dashed"
		}
		line += "];\n"
		if !seen[line] {
			seen[line] = true
			b.WriteString(line)
		}
	}
	for _, tc := range prog.Classes {
		for _, f := range tc.Flows {
			ctl := f.Access == parser.AccessCTL
			for _, d := range f.Deps {
				for _, t := range []*parser.Target{d.Then, d.Else} {
					if t == nil {
						continue
					}
					switch {
					case d.Dir == parser.Out && t.Kind == parser.TargetTask:
						edge(tc.Name, t.Name, f.Name+" -> "+t.Flow, ctl)
					case d.Dir == parser.Out && t.Kind == parser.TargetCollection:
						edge(tc.Name, t.Name, f.Name, false)
					case d.Dir == parser.In && t.Kind == parser.TargetCollection:
						edge(t.Name, tc.Name, f.Name, false)
					}
				}
			}
		}
	}
	b.WriteString("}\n")
	return b.Bytes()
}
