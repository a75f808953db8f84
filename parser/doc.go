// Package parser is the JDF front end of jdf2go: a participle stateful
// lexer with the modes of PaRSEC's flex scanner, a participle grammar for
// docs/language.md, "Grammar" plus the Go-dialect extensions, the
// semantic checks of docs/language.md, "Checks", and the canonical printer behind
// `jdf2go fmt`. It never imports the runtime.
//
// # Entry points
//
//	prog, diags := parser.ParseAndCheck("potrf.jdf", src) // parse, then check if no syntax error
//	prog, diags, err := parser.LoadFile("potrf.jdf")       // the same from a file; err only for I/O
//	prog, diags := parser.Parse(name, src)                 // syntax only (what fmt needs)
//	diags := parser.Check(prog)                            // semantic checks; fills resolution fields
//	out := parser.Format(prog)                             // canonical layout, comments kept
//	parser.Inspect(prog, func(n parser.Node) bool { ... }) // walk the tree in source order
//
// A program is ready for code generation when diags.Err() is nil (warnings
// alone are not errors). Diagnostics are sorted and print as
// `file.jdf:LINE:COL: error: message` (or `warning:`). Parse always returns
// a Program, partial after a syntax error; Check runs only on a program
// without syntax errors and always runs to the end.
//
// # The checked program (what codegen consumes)
//
// The AST is the checked program: Check fills in resolution fields on the
// nodes, as go/ast's Ident.Obj once did. Every node embeds Span, whose
// methods Pos() and End() return participle lexer.Positions (file, byte
// offset, line, byte column). Fields marked "Filled by Check" are zero before Check.
//
//	Program
//	  Filename
//	  Prologue, Epilogue *CodeBlock      // Lang ("Go", "C" or ""), Text (raw), TextPos (for //line)
//	  Globals []*Global                  // declaration order; implicit collections prepended
//	  Options []*Option                  // Option(name) Expr, OptionText(name, def) string
//	  Classes []*TaskClass               // source order; Class(name), Global(name) look-ups
//	  GoPrologue map[string]bool         // top-level names of a Go prologue/epilogue and its imports; nil if not Go
//	Global
//	  Name, Type (Go type text, "int" by default), Hidden, Default Expr (from `default` or `NAME = expr`),
//	  Aligned, Size Expr, Implicit, Index, Collection (used as affinity/endpoint), Arity
//	TaskClass
//	  Name, Index, Params []*Param (Param.Def), Props, Attrs ClassAttrs (high_priority, immediate,
//	  profile, count_deps, mask_deps, time_estimate, make_key_fn, ... typed),
//	  Defs []*Definition, SimCost Expr, Affinity *Affinity (Name, Args, Global),
//	  Flows []*Flow, Priority Expr, Bodies []*Body; Flow(name), Def(name)
//	Definition
//	  Name, Index, Param (nil for a local), Value Expr: *RangeExpr (From, To, Step),
//	  *LocalSetExpr (Named, X: the "local indices" set), or any other Expr (an *InlineCode included);
//	  Range() returns the *RangeExpr or nil
//	Flow
//	  Access (AccessRW, AccessRead, AccessWrite, AccessCTL), Name, Index (source order), Class,
//	  GoType (flow property gotype, else %option gotype, else "[]float64"; "" for CTL),
//	  Deps []*Dep in source order; In() and Out() filter them
//	Dep
//	  Dir (In, Out), Index, Named []*NamedRange (dep-level ranges), Guard Expr (nil: unconditional),
//	  Then, Else *Target (Else nil: no else branch), Props, Attrs DepAttrs (type, type_remote,
//	  type_data, layout, count, displ, warning = disable)
//	Target
//	  Kind (TargetTask, TargetCollection, TargetNew, TargetNull), Named (call-level ranges),
//	  Flow and Name as written, Args (elements may be *RangeExpr or *LocalSetExpr: broadcast/gather),
//	  Class *TaskClass and FlowRef *Flow (TargetTask: FlowRef.Index is the target flow index),
//	  Collection *Global (TargetCollection)
//	Body
//	  Index (order incarnations are tried), Type as written ("" = CPU), Device() ("CPU", "CUDA", "GPU",
//	  upper-cased), IsGPU(), Text and TextPos (raw body for //line), Props, Attrs BodyAttrs (Batch:
//	  BatchOff/BatchOn/BatchManual, BatchMax, BatchMatch, Sizes []*FlowSize{Flow, Value}, DataColls,
//	  StageIn, StageOut, Device, Evaluate, ProfileOff, Dyld, DyldType)
//
// Expressions are a sealed interface (Expr): *BinaryExpr (Op, X, Y),
// *UnaryExpr (OpNot, OpNeg), *TernaryExpr, *ParenExpr, *IntLit, *Name,
// *SelectorExpr (X.Sel, or X->Sel with Arrow set: gen rewrites it to '.'),
// *CallExpr (a Go function call), *StringLit (pasted verbatim as code),
// *InlineCode (a %{ %} block), and in range positions *RangeExpr and
// *LocalSetExpr. Dotted names arrive as a *Name wrapped in selectors;
// BaseName(e) returns the root *Name. After Check every *Name in a checked
// position carries its resolution: Ref = RefDef (Def: a parameter or local
// of the class), RefIndex (Index: a named-range index), RefGlobal (Global),
// RefGo (a prologue name, import or Go predeclared identifier), or
// RefUnresolved (unchecked places: exported class properties, dep counts).
// Names inside strings and code blocks are never resolved.
//
// JDF mixes numbers and conditions; Go does not. ResultKind(e) says whether
// an expression yields an int, a bool, or something opaque (a global, a call,
// a string or code block: the Go compiler decides), and WantKind(parent,
// child, ctx) says what the place of a child wants, guards wanting KindBool
// and every other root position KindInt. codegen converts where they differ
// (`x != 0`, or a 0/1 conversion of a bool). Op.GoString gives `&&` for the
// JDF logical `&`.
//
// # Dialect
//
// Everything PaRSEC's JDF accepts, plus the Go dialect: `extern "Go" %{ %}` prologues, unary
// minus on any operand, Go function calls (checked against a Go prologue when
// there is one), dotted selectors (`descA.MT`, `descA.Tiles()`), `gotype` as
// a flow property (`RW A [gotype = "[]float32"] <- ...`). Bodies and code
// blocks are opaque text, so PaRSEC files with C bodies parse and check. A
// prologue or epilogue written in Go is parsed with go/parser to learn its
// top-level names; an `extern "Go"` block that does not parse is an error,
// a plain `%{` block that does not parse is taken to be C.
//
// # Lexer and grammar
//
// The lexer (lexer.go) is a participle stateful lexer with one state per
// scanner mode (Root, Props, BodyInit, Body, Comment, String); the
// context flex gets from `^` is carried by the rules (BODY and %option carry
// the newline before them, body lines are whole-line rules). The parser runs
// the code participle generates from those rules (lexer_gen.go, regenerated
// as lexer.go says); TestGeneratedLexer checks that it matches the rules.
// A small assembler on top joins string, comment and body pieces into
// single tokens, computes positions (byte columns) and reports lexical
// errors; Lexer is the result as a participle lexer.Definition.
//
// The grammar (grammar.go) is one participle production per production of
// grammar, printed in testdata/grammar.ebnf; expressions, ranges and named
// ranges are custom productions (expr.go), as precedence climbing over the
// ten operator levels is one function where a struct per level
// would be ten productions deep for every operand, and so are flows with
// their dependencies, guards, targets and argument lists (flow.go), the
// most frequent structural production, and properties and definitions
// (property.go, definition.go), which are little more than an expression.
// participle still parses the structure: the file, its items, task
// classes, affinities, bodies, globals, options and property lists. The
// grammar is LL(1) (participle.UseLookahead(0)), with lookahead where a
// name starts two alternatives, so a syntax error is reported at the token
// where the input goes wrong; convert.go turns the grammar tree into the
// AST. Choices the grammar makes deliberately:
//
//   - `-> [i = 0 .. N] X T(i)`, which bison rejects as ambiguous, is accepted:
//     the range is read as dep-level; the call-level reading means the same.
//   - a dependency target without '?' that starts like a guard must be a
//     collection element `coll(args)`; `k + 1` alone is a syntax error.
//   - a line that starts with the word body begins a BODY anywhere, so a
//     definition named body at line start is a syntax error, with a hint.
//
// A file is parsed in one pass over its tokens. A syntax error stops the
// parse, as participle stops at the first error; parsing resumes after the
// task class that holds it (after an END that no BODY follows, resync.go),
// so each task class gets at most one syntax error, and a file at most ten.
// Syntax errors read like the Go compiler's ("syntax error: unexpected X,
// expected Y", see syntax.go), with Y in JDF terms.
//
// Limits: an expression nests at most MaxNesting levels (parentheses,
// conditionals, unary operators, calls), a located syntax error beyond; a
// chain of binary operators at one level is not nesting and is parsed,
// checked and printed in loops, however long.
//
// Throughput: participle parses by reflection, allocating for every
// production and alternative it tries, so it is several times slower than a
// hand-written parser. The custom productions above are the frequent ones
// for that reason. BenchmarkParseCheck measures parse+check on a generated
// file of at least 20,000 lines (floor: 50,000 lines/s), BenchmarkScan the
// scanner alone.
//
// # Where jdf2go deliberately differs from jdf2c
//
//	input                                  jdf2c                          jdf2go
//	-> [i = 0 .. N] X T(i)                 "syntax is ambiguous"          accepted: the range is dep-level (same meaning)
//	"6", "*", "  " (digits, one op,        INT 6 then "" (parse error)    the string it is
//	  blanks)
//	stray character (~ # @ $ { } ...)      silently dropped               dropped, with a warning
//	non-ASCII letter in a name (Tâche)     splits the name                part of the name (Go's identifiers)
//	other non-ASCII character, bad UTF-8   silently dropped               an error where it is
//	// comment on the BODY line            swallows the newline; the      ends the BODY line; the body starts on
//	                                       next line's { is dropped       the next line, unchanged
//	body line that is exactly /*           starts a JDF comment, drops    body text (a Go block comment)
//	                                       the body so far
//	body line of digits, or -> / <-        a token: parse error           body text
//	// comment on the last line, no \n     lexes as two '/'               a comment
//	extern "C++" (any language but C)      assertion abort                error (C and Go are accepted)
//	a file with one code block only        "ambiguous"                    the prologue
//	sanity-check failures                  printed, exit status 0         errors, exit status 1
//	default on a non-hidden global         silently overrides the arg     warning; the global is computed
//	-k, -(k), f(k)                         syntax errors                  unary minus, Go calls (Go dialect)
//	bodyx at line start                    IDENT; "  bodyx" is BODY + x   IDENT in both cases
//	a word starting with end on the        IDENT (then a parse error)     END (then a parse error)
//	  BODY line (BODY endx)
//
// Kept as jdf2c does (tested in lexer_test.go): `~k` reads `k`; `1.5` and
// `0x10` are syntax errors; `a<-1` is `a <- 1`; `%option` only in column 1;
// a line starting with the word body (any case) starts a BODY; `%%}` does not
// close a code block; only a line that is exactly blanks + END closes a body
// (`END  `, `END /* x */`, `endif`, `end;` are body text); inside a comment a
// `/*` at the start of a scanner token (line start, right after an opener or
// an inner closer) nests; on/off words are integers and keywords are names
// inside `[...]`; a code block between two items, a second `;` line, an
// unparenthesised ternary guard, `T()` and empty property lists are syntax
// errors; undeclared collections are declared implicitly, first (with a
// warning).
//
// # What the checker reports
//
// Errors: syntax and lexical errors; duplicate globals, classes, parameters,
// definitions and flows; names that are undefined or used before their
// definition (definitions see only earlier ones, globals only earlier
// globals), with "did you mean" suggestions; parameters without definition;
// affinity or endpoint collections that are task classes, scalars, or used
// with different arities; unknown classes and flows (with suggestions) and
// wrong argument counts; CTL flows connected to data flows, collections, NEW
// or NULL; NEW or NULL on an output; ranges and named ranges on the inputs of
// non-CTL flows; ranges as Go function arguments; more than one CPU body;
// ill-typed properties (on/off, identifiers, functions, X.size on a CTL or
// unknown flow, batch other than true, false or manual, dyld without
// dyldtype, BODY type not an identifier, find/alloc/free_deps_fn not all
// given, obsolete
// arena_index and nb_elt, type_remote with type_data); RW and READ flows
// without input, WRITE flows with an input other than NEW, READ flows from an
// unguarded NEW; a task endpoint whose target flow has no dependency at all
// in the other direction; an extern "Go" block that go/parser rejects; a
// class past jdf2go's limits (MaxFlows flows, MaxLocals definitions,
// MaxParams parameters). In a file whose code is Go (no C prologue or
// epilogue), also every error of jdf2go gen, with gen's message at gen's
// position (gonames.go, gorules.go, descriptor.go): names gen cannot generate,
// bodies and inline code that are not Go, strings pasted as code that are not
// Go expressions, locals defined as ranges, transfer properties of
// dependencies (count, displ, layout and their forms, type_remote, type_data),
// dependency types that name no arena, classes with only HIP bodies, names
// GPU and batched bodies receive, PaRSEC descriptor fields that
// *rt.TiledMatrix lacks, and expressions too deep for Go.
//
// Warnings: unknown global, flow, dependency and body properties, and class
// properties or options that look like a misspelt known one; a default on a
// non-hidden global; a class, definition or global masking another; a local
// defined as a range; flows with no dependencies; inputs after an input that
// always supplies the data; a WRITE flow without output; the class-level DAG
// check (an output whose target flow has no input naming this class and flow
// back, and the reverse, giving both locations); single `&` and `|`;
// implicitly declared collections; obsolete or conflicting body properties;
// stray characters.
//
// Not checked: the remote-reference warning (the runtime moves
// remote data), PaRSEC's flow and dependency count limits (the runtime has
// its own), the code of a C file's bodies, and the types of Go code, which the
// Go compiler checks after generation.
package parser
