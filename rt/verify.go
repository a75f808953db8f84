package rt

// Verify and DOT output (docs/language.md, "Verify and graphs") walk the instance graph of a
// taskpool with its classes' own functions (Space, Complete, Goal, Successors, Predecessors)
// without running anything, so that a JDF mistake that would hang or fail a run becomes a report.
// Generated taskpools delegate their Verify and WriteDOT methods here, through a Source
// that holds the .jdf positions of their classes, flows and dependencies; the walk itself
// and the checks are in verify_graph.go, the hooks generated code calls for dependencies it
// drops in verify_edges.go.
//
// They allocate freely: they are tools, not the hot path.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ErrVerify is wrapped by the errors of Verify and WriteDOT.
var ErrVerify = errors.New("rt: verify")

// maxShownProblems bounds the problems a GraphError's message lists; a broken guard usually
// repeats over a whole range.
const maxShownProblems = 50

// Source says where the task classes of a taskpool come from, so that Verify's problems
// point at the program text. Generated code fills one per program with .jdf positions
// ("potrf.jdf:38:22"). The zero Source is valid: problems then carry no position. A table
// may be shorter than what it describes; a missing entry means no position. A data input
// with no true guard points at its input chain's position (InputChain.Pos).
type Source struct {
	// Err, when set, is wrapped by the errors of Verify and WriteDOT besides ErrVerify, and
	// its text starts their message (a generated program's Err<Name>Graph).
	Err error
	// Classes[class] is the position of a task class: problems of its enumeration and
	// cycles point here.
	Classes []string
	// Deps[class][flow][dep] is the position of a dependency, dep being the index that
	// Successors and Predecessors pass to Edges.Task and Edges.Instance: unmatched
	// dependencies and targets outside their space point here.
	Deps [][][]string
}

func (s *Source) class(c int) string {
	if s != nil && c >= 0 && c < len(s.Classes) {
		return s.Classes[c]
	}
	return ""
}

func (s *Source) dep(c, f, d int) string {
	if s != nil && c >= 0 && c < len(s.Deps) && f >= 0 && f < len(s.Deps[c]) && d >= 0 && d < len(s.Deps[c][f]) {
		return s.Deps[c][f][d]
	}
	return ""
}

// Problem is one inconsistency of a task graph.
type Problem struct {
	// Pos is where it comes from in the program text ("potrf.jdf:38:22"), or "" when the
	// Source has no position for it.
	Pos string
	// Msg names the task instances, flows and dependency involved:
	// "T(3) flow A -> A T(4): T(4) is outside the execution space of T, so the output goes nowhere".
	Msg string
}

// String returns "Pos: Msg", or Msg without a position.
func (p Problem) String() string {
	if p.Pos == "" {
		return p.Msg
	}
	return p.Pos + ": " + p.Msg
}

// GraphError is the error of Verify, and of WriteDOT when the walk fails. It matches
// ErrVerify, the Source's Err when set, and Cause, with errors.Is.
type GraphError struct {
	// Taskpool is the name of the taskpool.
	Taskpool string
	// Problems lists every inconsistency found, in a stable order: those of the enumeration
	// and of the dependencies each instance reports (in enumeration order), then outputs
	// without a matching input, inputs without a matching output, readiness goals that
	// disagree with the arrivals, and one cycle.
	Problems []Problem
	// Cause, when set, is why the walk itself failed: a descriptor that does not validate
	// (ErrBadTaskClass) or a panic in the classes' functions. Problems is then empty.
	Cause error

	src error // Source.Err
}

// Error starts with the Source's Err (or "rt: verify: taskpool <name>"), then gives the
// Cause, or the number of problems and at most 50 of them, one per line.
func (e *GraphError) Error() string {
	var b strings.Builder
	if e.src != nil {
		b.WriteString(e.src.Error())
	} else {
		b.WriteString(ErrVerify.Error() + ": taskpool " + e.Taskpool)
	}
	if e.Cause != nil {
		b.WriteString(": " + e.Cause.Error())
		return b.String()
	}
	n := len(e.Problems)
	if n == 1 {
		b.WriteString(": 1 problem:")
	} else {
		b.WriteString(": " + strconv.Itoa(n) + " problems:")
	}
	for i, p := range e.Problems {
		if i == maxShownProblems {
			fmt.Fprintf(&b, "\n... and %d more", n-maxShownProblems)
			break
		}
		b.WriteString("\n" + p.String())
	}
	return b.String()
}

// Unwrap returns ErrVerify, the Source's Err and the Cause, those that are set.
func (e *GraphError) Unwrap() []error {
	errs := []error{ErrVerify}
	if e.src != nil {
		errs = append(errs, e.src)
	}
	if e.Cause != nil {
		errs = append(errs, e.Cause)
	}
	return errs
}

// Verify enumerates the instance graph of tp for its actual globals and reports, in a
// *GraphError, each problem with the instances, flows and position involved:
//   - an instance enumerated twice by Space, or enumerated although Complete rejects it;
//   - a dependency on a single instance outside its class's space (Edges.Instance), or on
//     an instance that Complete accepts but Space does not enumerate;
//   - a data flow whose input guards are all false (its input chain selects nothing);
//   - an output without the input that names it back on the other side, and the reverse
//     (outputs to a class that has a Goal but no Predecessors are left to the goal check);
//   - a readiness goal that disagrees with the outputs reaching the instance (a number of
//     arrivals for Counter, a set of flows for Mask), for instances without a problem above;
//   - a cycle, as the chain of instances around it.
//
// It returns nil when the graph is consistent. It does not run anything; call it before
// Context.Add, not concurrently with a run of tp.
func (s *Source) Verify(tp *Taskpool) error {
	g, err := s.walk(tp)
	if err != nil {
		return err
	}
	g.check()
	if len(g.problems) == 0 {
		return nil
	}
	return &GraphError{Taskpool: tp.name, Problems: g.problems, src: s.Err}
}

// WriteDOT writes the instance graph of tp in Graphviz DOT: one node per instance, in
// enumeration order, and one edge per distinct output dependency between two instances,
// labelled "OUT -> IN" with the flow names and dashed for a CTL flow. Dependencies on
// instances that are not enumerated are left out (Verify reports them). Like Verify, it
// must not run concurrently with tp.
func (s *Source) WriteDOT(w io.Writer, tp *Taskpool) error {
	g, err := s.walk(tp)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "digraph %q {\n", tp.name)
	for i := range g.vertices {
		fmt.Fprintf(bw, "  t%d [label=%q];\n", i, g.name(i))
	}
	for _, a := range g.outs {
		style := ""
		if fl := g.vertices[a.src].class.Flows; a.srcFlow >= 0 && a.srcFlow < len(fl) && fl[a.srcFlow].Access == CTL {
			style = " style=dashed"
		}
		fmt.Fprintf(bw, "  t%d -> t%d [label=%q%s];\n", a.src, a.dst,
			g.flow(a.src, a.srcFlow)+" -> "+g.flow(a.dst, a.dstFlow), style)
	}
	fmt.Fprintln(bw, "}")
	return bw.Flush()
}

// walk builds the graph, or returns the *GraphError of a walk that failed.
func (s *Source) walk(tp *Taskpool) (*instanceGraph, error) {
	g, err := buildGraph(tp, s)
	if err != nil {
		return nil, &GraphError{Taskpool: tp.name, Cause: err, src: s.Err}
	}
	return g, nil
}
