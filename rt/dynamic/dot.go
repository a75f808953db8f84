package dynamic

import (
	"bufio"
	"fmt"
	"io"
)

// kept is the graph inserted so far, recorded under Graph.mu when KeepGraph is on.
type kept struct {
	names []string   // by insertion number - 1
	edges [][2]int64 // predecessor, successor
}

func (k *kept) add(t *task) { k.names = append(k.names, t.Name()) }

func (k *kept) edge(from, to int64) { k.edges = append(k.edges, [2]int64{from, to}) }

// WriteDOT writes the graph inserted so far in Graphviz's DOT language: one node per task,
// named as errors name it, and one edge per dependency the graph inferred (a dependency on a
// task already done when its successor was inserted included). It needs KeepGraph.
func (g *Graph) WriteDOT(w io.Writer) error {
	if g.keep == nil {
		return ErrNotKept
	}
	g.mu.Lock()
	names := g.keep.names[:len(g.keep.names):len(g.keep.names)]
	edges := g.keep.edges[:len(g.keep.edges):len(g.keep.edges)]
	g.mu.Unlock()
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "digraph %q {\n", g.tp.Name())
	for i, n := range names {
		fmt.Fprintf(b, "  t%d [label=%q];\n", i+1, n)
	}
	for _, e := range edges {
		fmt.Fprintf(b, "  t%d -> t%d;\n", e[0], e[1])
	}
	fmt.Fprintln(b, "}")
	return b.Flush()
}
