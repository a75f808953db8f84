package parser

import (
	"math"
	"sort"

	"github.com/alecthomas/participle/v2/lexer"
)

// Node is implemented by every AST node. Pos is the first byte of the node,
// End the position just after its last byte.
type Node interface {
	Pos() lexer.Position
	End() lexer.Position
}

// Span is embedded first in every node: the node's start and end positions,
// as its methods Pos and End return them. An AST holds one span per node, so
// a span keeps byte offsets only, in 32 bits, and the lines and columns come
// from the line table of its file.
type Span struct {
	file       *srcFile // set by parse once the node is built (srcFile.adopt)
	start, end int32    // byte offsets plus one; 0 for no position
}

// srcFile is the name and the line table of a parsed file, shared by the
// spans of its nodes.
type srcFile struct {
	name  string
	lines []int32 // the offsets where the lines after the first start
}

// newSrcFile returns the line table of src, whose line breaks are \n, \r\n
// and a lone \r, as the scanner counts them.
func newSrcFile(name string, src []byte) *srcFile {
	f := &srcFile{name: name}
	for i, c := range src {
		if c == '\n' || c == '\r' && (i+1 == len(src) || src[i+1] != '\n') {
			f.lines = append(f.lines, int32(i+1))
		}
	}
	return f
}

// position returns the position of offset off.
func (f *srcFile) position(off int) lexer.Position {
	n := sort.Search(len(f.lines), func(i int) bool { return int(f.lines[i]) > off })
	start := 0
	if n > 0 {
		start = int(f.lines[n-1])
	}
	return lexer.Position{Filename: f.name, Offset: off, Line: n + 1, Column: off - start + 1}
}

// adopt gives the nodes of the tree at n their file.
func (f *srcFile) adopt(n Node) {
	Inspect(n, func(n Node) bool {
		n.(interface{ span() *Span }).span().file = f
		return true
	})
}

func (s *Span) span() *Span { return s }

// spanAt returns the empty span at pos, a position of s's file.
func (s *Span) spanAt(pos lexer.Position) Span {
	sp := newSpan(pos, pos)
	sp.file = s.file
	return sp
}

// newSpan returns the span from start to end, positions of the file of the
// node (which the parse adopts). Until then only their offsets are known.
func newSpan(start, end lexer.Position) Span { return Span{start: offset32(start), end: offset32(end)} }

// openSpan returns a span that starts at start, whose end is set later.
func openSpan(start lexer.Position) Span { return newSpan(start, lexer.Position{}) }

func (s *Span) setStart(p lexer.Position) { s.start = offset32(p) }
func (s *Span) setEnd(p lexer.Position)   { s.end = offset32(p) }

// offset32 is the offset of p plus one, or 0 for the zero Position.
func offset32(p lexer.Position) int32 {
	if p == (lexer.Position{}) {
		return 0
	}
	return int32(min(p.Offset, math.MaxInt32-1) + 1) // parse rejects files whose offsets do not fit
}

// Pos returns the position of the node's first byte.
func (s Span) Pos() lexer.Position { return s.position(s.start) }

// End returns the position just after the node's last byte.
func (s Span) End() lexer.Position { return s.position(s.end) }

func (s Span) position(off int32) lexer.Position {
	switch {
	case off == 0:
		return lexer.Position{}
	case s.file == nil: // while the node is being built
		return lexer.Position{Offset: int(off - 1)}
	}
	return s.file.position(int(off - 1))
}

// ---------------------------------------------------------------------------
// Program level

// Program is a parsed JDF file, and after Check the checked program that
// codegen consumes:
//
//	file = CODE? item* CODE?
//	item = taskclass | global | OPTION property
type Program struct {
	Span
	Filename string
	Prologue *CodeBlock // first code block; or nil
	Epilogue *CodeBlock // last code block; or nil
	// Items lists globals, options and task classes in source order (for fmt).
	Items []Item
	// Globals in declaration order. After Check, implicit collections
	// (Global.Implicit) are prepended, as jdf2c does, and Index is set.
	Globals  []*Global
	Options  []*Option
	Classes  []*TaskClass // in source order; TaskClass.Index is the position here
	Comments []*Comment   // every comment, in source order (not part of the tree)

	// Filled by Check.
	GoPrologue map[string]bool // top-level names of a Go prologue (and its imports); nil when it is not Go
	checked    bool
}

// Item is a top-level item: *Global, *Option or *TaskClass.
type Item interface {
	Node
	itemNode()
}

// CodeBlock is a CODE token: `extern "Go" %{ ... %}`, `%{ ... %}`,
// `inline_c %{ ... %}` or `%c{ ... %}`. Text is the raw content
// between the delimiters and TextPos the position of its first byte, for
// `//line` directives.
type CodeBlock struct {
	Span
	Lang    string // "C" or "Go" for the extern form; "" otherwise
	Text    string
	TextPos lexer.Position
}

// Global is a global declaration:
//
//	IDENT props?                 (declaration)
//	IDENT '=' expr props?        (defining expression, Def)
type Global struct {
	Span
	Name  string
	Def   Expr   // the `NAME = expr` value; or nil
	Props *Props // or nil

	// Filled by Check from the properties.
	Type     string // Go (or C) type text from `type`; "int" when absent; "" for an implicit collection
	TypePos  lexer.Position
	Hidden   bool // hidden = on: not a constructor parameter
	Default  Expr // `default` property, else Def; or nil
	Aligned  string
	Size     Expr // `size` property; or nil
	Implicit bool // not declared: created for an affinity or collection endpoint
	Index    int  // position in Program.Globals
	// Collection is set when the global is used as an affinity target or
	// dependency endpoint; Arity is then its number of arguments.
	Collection bool
	Arity      int
}

// Option is `%option name = expr`.
type Option struct {
	Span
	Prop *Property
}

// Props is a property list `[ name = value ... ]`, blank separated, never empty.
type Props struct {
	Span
	List []*Property
}

// Property is `IDENT? IDENT '=' expr`; TypeWord is the optional leading type
// word (`[ double flops = ... ]`).
type Property struct {
	Span
	TypeWord string
	Name     string
	NamePos  lexer.Position
	Value    Expr
}

// Get returns the last property named name, or nil (jdf2c keeps the last).
func (p *Props) Get(name string) *Property {
	if p == nil {
		return nil
	}
	for i := len(p.List) - 1; i >= 0; i-- {
		if p.List[i].Name == name {
			return p.List[i]
		}
	}
	return nil
}

// ---------------------------------------------------------------------------
// Task classes

// TaskClass is
//
//	IDENT '(' IDENT (',' IDENT)* ')' props? definition+ ('SIMCOST' expr)?
//	':' IDENT '(' expr (',' expr)* ')' flow* (';' expr)? body+
type TaskClass struct {
	Span
	Name     string
	Params   []*Param
	Props    *Props // or nil
	Defs     []*Definition
	SimCost  Expr // or nil
	Affinity *Affinity
	Flows    []*Flow
	Priority Expr // or nil
	Bodies   []*Body

	// Filled by Check.
	Index int        // position in Program.Classes
	Attrs ClassAttrs // typed class properties
}

// ClassAttrs are the class properties jdf2go knows, typed.
// Properties not listed here stay in TaskClass.Props (exported by name).
type ClassAttrs struct {
	HighPriority bool
	Immediate    bool
	ProfileOff   bool
	CountDeps    bool
	MaskDeps     bool
	TimeEstimate Expr // name or code; or nil
	MakeKeyFn    Expr
	HashStruct   Expr
	StartupFn    Expr
	FindDepsFn   Expr
	AllocDepsFn  Expr
	FreeDepsFn   Expr
}

// Param is a parameter of a task class. Def is its definition (after Check).
type Param struct {
	Span
	Name string
	Def  *Definition
}

// Definition is `IDENT '=' rangeexpr props?`. Value is a *RangeExpr
// (from .. to [.. step]), a *LocalSetExpr (`[i = 0 .. 4] 2*i+1`), or any
// other expression (a single value, possibly an *InlineCode).
type Definition struct {
	Span
	Name  string
	Value Expr
	Props *Props // accepted and ignored, as in jdf2c; or nil

	// Filled by Check.
	Param *Param // the parameter it defines; nil for a local
	Index int    // position in TaskClass.Defs
}

// Range returns the definition's range, or nil when it is not a range.
func (d *Definition) Range() *RangeExpr {
	r, _ := d.Value.(*RangeExpr)
	return r
}

// Affinity is `':' IDENT '(' expr (',' expr)* ')'`.
type Affinity struct {
	Span
	Name    string
	NamePos lexer.Position
	Args    []Expr
	Global  *Global // after Check
}

// Access is the access type of a flow.
type Access int

// Access types; RO is READ and WO is WRITE, and a flow without one is RW.
const (
	AccessRW Access = iota
	AccessRead
	AccessWrite
	AccessCTL
)

func (a Access) String() string {
	return [...]string{"RW", "READ", "WRITE", "CTL"}[a]
}

// Flow is `ACCESS? IDENT props? dep*`. The props (a jdf2go extension)
// carry `gotype`.
type Flow struct {
	Span
	Access  Access
	Name    string
	NamePos lexer.Position
	Props   *Props // or nil
	Deps    []*Dep // in source order

	// Filled by Check.
	Index  int    // position in TaskClass.Flows
	GoType string // Go type of the flow's value; "" for CTL
	Class  *TaskClass
}

// In returns the input dependencies in source order.
func (f *Flow) In() []*Dep { return f.deps(In) }

// Out returns the output dependencies in source order.
func (f *Flow) Out() []*Dep { return f.deps(Out) }

// hasDeps reports whether f has a dependency in direction d.
func (f *Flow) hasDeps(d Direction) bool {
	for _, dep := range f.Deps {
		if dep.Dir == d {
			return true
		}
	}
	return false
}

func (f *Flow) deps(d Direction) []*Dep {
	var out []*Dep
	for _, dep := range f.Deps {
		if dep.Dir == d {
			out = append(out, dep)
		}
	}
	return out
}

// Direction of a dependency.
type Direction int

const (
	// In is `<-`: where the data comes from.
	In Direction = iota
	// Out is `->`: where the data goes.
	Out
)

func (d Direction) String() string {
	if d == Out {
		return "->"
	}
	return "<-"
}

// Dep is `ARROW named? target props?` with
//
//	target = call | expr '?' call (':' call)?
type Dep struct {
	Span
	Dir   Direction
	Named []*NamedRange // dep-level named ranges (scope: guard and targets); or nil
	Guard Expr          // or nil when unconditional
	Then  *Target
	Else  *Target // or nil
	Props *Props  // apply to both targets; or nil

	// Filled by Check.
	Attrs DepAttrs
	Index int // position in Flow.Deps
}

// DepAttrs are the typed dependency properties (docs/language.md, "Dependencies").
type DepAttrs struct {
	Type       Expr // `type`: arena name (identifier, string or code); nil = DEFAULT
	TypeRemote Expr
	TypeData   Expr
	Layout     Expr
	Count      Expr
	Displ      Expr
	NoWarning  bool // warning = disable
}

// TargetKind says what a dependency endpoint is.
type TargetKind int

const (
	// TargetTask is `FLOW Class(args)`.
	TargetTask TargetKind = iota
	// TargetCollection is `coll(args)`, an element of a data collection.
	TargetCollection
	// TargetNew is NEW.
	TargetNew
	// TargetNull is NULL.
	TargetNull
)

// Target is a dependency endpoint (`call` in the grammar):
//
//	'NEW' | 'NULL' | IDENT '(' arg (',' arg)* ')' | named? IDENT IDENT '(' arg (',' arg)* ')'
type Target struct {
	Span
	Kind  TargetKind
	Named []*NamedRange // call-level named ranges; or nil
	Flow  string        // TargetTask: the flow name
	Name  string        // the class (TargetTask) or collection (TargetCollection)
	Args  []Expr        // elements may be *RangeExpr or *LocalSetExpr

	flowPos, namePos int32 // as in Span (FlowPos, NamePos): targets are many

	// Filled by Check.
	Class      *TaskClass // TargetTask
	FlowRef    *Flow      // TargetTask: the target flow (FlowRef.Index is the flow index)
	Collection *Global    // TargetCollection
}

// FlowPos returns the position of the flow name (TargetTask).
func (t *Target) FlowPos() lexer.Position { return t.position(t.flowPos) }

// NamePos returns the position of the class or collection name.
func (t *Target) NamePos() lexer.Position { return t.position(t.namePos) }

// NamedRange is one `IDENT '=' rangeexpr` of a `[...]` named-range list.
type NamedRange struct {
	Span
	Name  string
	Value Expr // *RangeExpr, or a single expression
}

// BatchMode is the value of the `batch` body property (A.7).
type BatchMode int

const (
	// BatchOff: the incarnation does not batch.
	BatchOff BatchMode = iota
	// BatchOn (`batch = true`): the generated hook collects the batch.
	BatchOn
	// BatchManual (`batch = manual`): the body calls CollectBatch itself.
	BatchManual
)

// Body is `'BODY' props? NEWLINE text 'END'`. Text is the raw body (up to
// the word END, blanks before it included) and TextPos its first byte.
type Body struct {
	Span
	Props   *Props // or nil
	Text    string
	TextPos lexer.Position
	EndKw   lexer.Position // position of END

	// Filled by Check.
	Type  string // device type as written ("" for a plain CPU body)
	Attrs BodyAttrs
	Index int // position in TaskClass.Bodies (the order incarnations are tried)
}

// Device returns the upper-cased device type, "CPU" for a body without type.
func (b *Body) Device() string {
	if b.Type == "" {
		return "CPU"
	}
	return upper(b.Type)
}

// IsGPU reports whether the body is a GPU incarnation (CUDA, HIP or GPU).
func (b *Body) IsGPU() bool {
	switch b.Device() {
	case "CUDA", "HIP", "GPU":
		return true
	}
	return false
}

// BodyAttrs are the typed body properties (docs/language.md, "Bodies").
type BodyAttrs struct {
	Batch      BatchMode
	BatchMax   Expr // or nil
	BatchMatch Expr // function name or code; or nil
	Sizes      []*FlowSize
	DataColls  []*FlowDC
	StageIn    Expr
	StageOut   Expr
	Device     Expr
	Evaluate   Expr
	ProfileOff bool
	Dyld       string
	DyldType   string
}

// FlowSize is an `X.size = expr` body property.
type FlowSize struct {
	Pos   lexer.Position
	Flow  *Flow
	Value Expr
}

// FlowDC is an `X.dc = coll` body property.
type FlowDC struct {
	Pos        lexer.Position
	Flow       *Flow
	Collection string
}

// ---------------------------------------------------------------------------
// Expressions

// Expr is an expression node. The set is sealed: *BinaryExpr, *UnaryExpr,
// *TernaryExpr, *ParenExpr, *IntLit, *Name, *SelectorExpr, *CallExpr,
// *StringLit, *InlineCode, *RangeExpr, *LocalSetExpr.
type Expr interface {
	Node
	exprNode()
}

// Op is a binary or unary operator.
type Op int

// Operators, by the spelling the source used.
const (
	OpLOr  Op = iota // ||
	OpOr1            // | (logical in JDF)
	OpLAnd           // &&
	OpAnd1           // & (logical in JDF)
	OpXor            // ^
	OpEq             // ==
	OpNe             // !=
	OpLt             // <
	OpLe             // <=
	OpGt             // >
	OpGe             // >=
	OpShl            // <<
	OpShr            // >>
	OpAdd            // +
	OpSub            // -
	OpMul            // *
	OpDiv            // /
	OpRem            // %
	OpNot            // ! (unary)
	OpNeg            // - (unary)
)

var opText = [...]string{"||", "|", "&&", "&", "^", "==", "!=", "<", "<=", ">", ">=", "<<", ">>", "+", "-", "*", "/", "%", "!", "-"}

func (o Op) String() string { return opText[o] }

// GoString returns the Go spelling of the operator (`&&` for `&`, `||` for `|`).
func (o Op) GoString() string {
	switch o {
	case OpOr1:
		return "||"
	case OpAnd1:
		return "&&"
	}
	return opText[o]
}

// Precedence returns the operator level (docs/language.md, "Expressions"; 3 = `||` ... 11 = prefix).
func (o Op) Precedence() int {
	switch o {
	case OpLOr, OpOr1:
		return 3
	case OpLAnd, OpAnd1:
		return 4
	case OpXor:
		return 5
	case OpEq, OpNe:
		return 6
	case OpLt, OpLe, OpGt, OpGe:
		return 7
	case OpShl, OpShr:
		return 8
	case OpAdd, OpSub:
		return 9
	case OpMul, OpDiv, OpRem:
		return 10
	}
	return 11
}

// BinaryExpr is `X Op Y`.
type BinaryExpr struct {
	Span
	X     Expr
	Op    Op
	Y     Expr
	opPos int32 // as in Span (OpPos): binary expressions are many
}

// OpPos returns the position of the operator.
func (b *BinaryExpr) OpPos() lexer.Position { return b.position(b.opPos) }

// UnaryExpr is `!X` or `-X`.
type UnaryExpr struct {
	Span
	Op Op
	X  Expr
}

// TernaryExpr is `Cond ? Then : Else`.
type TernaryExpr struct {
	Span
	Cond, Then, Else Expr
}

// ParenExpr is `(X)`.
type ParenExpr struct {
	Span
	X Expr
}

// IntLit is a decimal integer; Text is the source word when it was an
// on/off word of properties mode (`on` is 1), else "".
type IntLit struct {
	Span
	Value int64
	Text  string
}

// RefKind says what a Name refers to (after Check).
type RefKind int

const (
	// RefUnresolved: not resolved (unchecked context, or an error was reported).
	RefUnresolved RefKind = iota
	// RefGlobal: a global (Name.Global).
	RefGlobal
	// RefDef: a parameter or local definition of the class (Name.Def).
	RefDef
	// RefIndex: a named-range index (Name.Index).
	RefIndex
	// RefGo: a top-level name of the Go prologue, an import, or a Go builtin.
	RefGo
)

// Name is an identifier in an expression. Dotted and arrow forms become
// *SelectorExpr around a Name.
type Name struct {
	Span
	Name string

	// Filled by Check.
	Ref    RefKind
	Global *Global
	Def    *Definition
	Index  *NamedRange
}

// SelectorExpr is `X.Sel` or, in PaRSEC's spelling, `X->Sel` (Arrow).
type SelectorExpr struct {
	Span
	X     Expr
	Sel   string
	Arrow bool

	// Filled by Check: the field of rt.TiledMatrix that generated Go selects for a PaRSEC
	// descriptor field (descA->mt is descA.MT; descriptor.go); or "" for Sel itself.
	Field string
}

// CallExpr is `Fun(Args)`, a call of a Go function (a Go-dialect extension).
type CallExpr struct {
	Span
	Fun  Expr // *Name or *SelectorExpr
	Args []Expr
}

// StringLit is a string; Value is unescaped, Raw the quoted source.
// In expressions its value is pasted verbatim as code.
type StringLit struct {
	Span
	Value string
	Raw   string
}

// InlineCode is a code block used as an expression (`%{ return k %}`).
type InlineCode struct {
	Span
	Code *CodeBlock
}

// RangeExpr is `From .. To [.. Step]`; only in range positions.
type RangeExpr struct {
	Span
	From, To Expr
	Step     Expr // or nil
}

// LocalSetExpr is the "local indices" form `[i = 0 .. 4] 2*i+1`.
type LocalSetExpr struct {
	Span
	Named []*NamedRange
	X     Expr
}

func (*BinaryExpr) exprNode()   {}
func (*UnaryExpr) exprNode()    {}
func (*TernaryExpr) exprNode()  {}
func (*ParenExpr) exprNode()    {}
func (*IntLit) exprNode()       {}
func (*Name) exprNode()         {}
func (*SelectorExpr) exprNode() {}
func (*CallExpr) exprNode()     {}
func (*StringLit) exprNode()    {}
func (*InlineCode) exprNode()   {}
func (*RangeExpr) exprNode()    {}
func (*LocalSetExpr) exprNode() {}

func (*Global) itemNode()    {}
func (*Option) itemNode()    {}
func (*TaskClass) itemNode() {}

// BaseName returns the Name at the root of a selector chain, or nil.
func BaseName(e Expr) *Name {
	for {
		switch x := e.(type) {
		case *Name:
			return x
		case *SelectorExpr:
			e = x.X
		default:
			return nil
		}
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}
