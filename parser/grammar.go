package parser

// The grammar of docs/language.md, "Grammar" plus the Go-dialect extensions, as
// participle productions: one struct per production, alternatives as sealed
// interfaces joined with participle.Union. testdata/grammar.ebnf holds the
// EBNF participle derives from these types (TestGrammarEBNF), so that every
// grammar change shows in review.
//
// Expressions (expr, rangeexpr, and the named ranges of a local set) are
// custom productions (expr and rangeExpr in expr.go): precedence climbing
// over the ten operator levels is one small function there, where
// one struct per level would be ten productions deep for every operand, and
// expressions are most of the tokens of a JDF file. A flow with its
// dependencies (ACCESS? IDENT props? dep*) is a custom production too (flow
// in flow.go): flows are most of a task class, and as structs their
// optional parts and the union of target forms cost more than the rest of
// the class; their property lists are the production props here. So are a
// property (property in property.go) and a definition (definition in
// definition.go), which are little more than an expression.
//
// The grammar tree is converted into the AST of ast.go by convert.go.
// participle fills Pos, and EndPos (the position of the next token), where
// no captured token gives them.

import (
	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// file is `file = CODE? item* CODE?`: the first code block is the
// prologue, the last the epilogue.
type file struct {
	Prologue *lexer.Token `parser:"@Code?"`
	Items    []item       `parser:"@@*"`
	Epilogue *lexer.Token `parser:"@Code?"`
}

// item is `item = taskclass | global | OPTION property`.
type item interface{ item() }

// global is `IDENT ('=' expr)? props?`.
type global struct {
	Name  lexer.Token `parser:"@Ident"`
	Def   *expr       `parser:"('=' @@)?"`
	Props *props      `parser:"@@?"`
}

// option is `OPTION property`.
type option struct {
	Pos  lexer.Position
	Prop *property `parser:"Option @@"`
}

// props is `props = '[' property+ ']'` (blank separated, never empty).
type props struct {
	Pos    lexer.Position
	List   []*property `parser:"'[' @@+ ']'"`
	EndPos lexer.Position
}

// taskClass is
//
//	taskclass = IDENT '(' IDENT (',' IDENT)* ')' props? definition+ ('SIMCOST' expr)?
//	            affinity flow* (';' expr)? body+
type taskClass struct {
	Name     lexer.Token   `parser:"(?= Ident '(') @Ident '('"`
	Params   []lexer.Token `parser:"@(Ident (',' Ident)*) ')'"` // the commas too
	Props    *props        `parser:"@@?"`
	Defs     []*definition `parser:"@@+"`
	SimCost  *expr         `parser:"('SIMCOST':Keyword @@)?"`
	Affinity *affinity     `parser:"@@"`
	Flows    []*flow       `parser:"@@*"`
	Priority *expr         `parser:"(';' @@)?"`
	Bodies   []*body       `parser:"@@+"`
}

// affinity is `affinity = ':' IDENT '(' expr (',' expr)* ')'`.
type affinity struct {
	Pos    lexer.Position
	Name   lexer.Token `parser:"':' @Ident '('"`
	Args   []*expr     `parser:"@@ (',' @@)* ')'"`
	EndPos lexer.Position
}

// body is `body = 'BODY' props? NEWLINE text 'END'`.
type body struct {
	Pos   lexer.Position
	Props *props      `parser:"Body @@?"`
	Text  lexer.Token `parser:"@BodyText"`
	End   lexer.Token `parser:"@End"`
}

func (*global) item()    {}
func (*option) item()    {}
func (*taskClass) item() {}

// grammar is the JDF parser, built once. It is LL(1): a production that
// has read a token and then fails is an error at that point, with no
// backtracking, so errors point where the input goes wrong. Where one
// token is not enough, a lookahead group decides: a task class and a
// global both start with a name. (The definitions end before a name not
// followed by '=': the custom production definition looks ahead itself.)
var grammar = participle.MustBuild[file](
	participle.Lexer(Lexer),
	participle.Union[item](&taskClass{}, &global{}, &option{}),
	participle.UseLookahead(0),
)

// propsGrammar parses a property list for the custom productions (a flow,
// a dependency, a definition), with the production props.
var propsGrammar = func() *participle.Parser[props] {
	p, err := participle.ParserForProduction[props](grammar)
	if err != nil {
		panic(err)
	}
	return p
}()
