package codegen

// The generated Go code goes through go/format, whose parser refuses code nested too deeply
// (parser.GoNestingErrors, which check applies too). checkNesting reports the JDF
// expressions whose translation would go past that, at their position, before anything is
// translated.

import "github.com/jdf2go/jdf2go/parser"

// maxGoNesting is the deepest translation accepted, in levels as parser.GoNesting counts
// them.
const maxGoNesting = parser.MaxNesting

// checkNesting reports every expression of the program too deep for Go; it returns false
// when there is one.
func (g *generator) checkNesting() bool {
	l := parser.GoNestingErrors(g.prog)
	g.diags = append(g.diags, l...)
	return len(l) == 0
}
