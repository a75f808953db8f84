package parser

// The checker: docs/language.md, "Checks" where it applies to jdf2go, plus the
// Go-dialect rules. Check always runs to the end, fills the resolution fields of
// the tree and returns every diagnostic it found.

import (
	"fmt"
	"sort"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

type checker struct {
	prog *Program
	opts CheckOptions
	// foreign: the file's code is C (a C prologue or epilogue), whose names
	// jdf2go cannot know.
	foreign bool
	diags   ErrorList
	globals map[string]*Global
	classes map[string]*TaskClass
	// collUse remembers the first use of each collection, for the arity check.
	collUse  map[*Global]lexer.Position
	implicit []*Global

	// consts caches constant (const.go) for the operands of divisions and
	// range steps.
	consts map[Expr]constValue

	// pasted collects the inline code and strings that gen pastes into Go as they are
	// resolved, for checkGoRules.
	pasted []Expr

	// The names of the class being checked, kept from class to class.
	params map[string]*Param
	defs   map[string]*Definition
	flows  map[string]*Flow
}

// Check runs the semantic checks on a parsed program and fills in its
// resolution fields (see the package documentation). It returns the sorted
// diagnostics; the program is usable by codegen when they hold no Error.
// Check must be called at most once per Program.
func Check(prog *Program) ErrorList { return CheckWith(prog, CheckOptions{}) }

// CheckOptions select optional diagnostics of Check.
type CheckOptions struct {
	// WarnUnknownNames reports the names in expressions that neither the
	// JDF nor a Go prologue declares, which are otherwise left silently to
	// the compiler of the file's code (C headers, Go packages).
	WarnUnknownNames bool
	// Unbounded skips the limits on the size of a program (MaxClasses,
	// MaxExprDepth, MaxExprNodes), for the tests and benchmarks that measure
	// jdf2go beyond them. The limits of the runtime still apply.
	Unbounded bool
}

// CheckWith is Check with options.
func CheckWith(prog *Program, opts CheckOptions) ErrorList {
	if prog.checked {
		return nil
	}
	prog.checked = true
	c := &checker{
		prog:    prog,
		opts:    opts,
		globals: map[string]*Global{},
		classes: map[string]*TaskClass{},
		collUse: map[*Global]lexer.Position{},
		params:  map[string]*Param{},
		defs:    map[string]*Definition{},
		flows:   map[string]*Flow{},
		consts:  map[Expr]constValue{},
	}
	c.checkGoCode()
	c.checkOptions()
	c.checkGlobals()
	for i, tc := range prog.Classes {
		tc.Index = i
		if prev, ok := c.classes[tc.Name]; ok {
			c.errorf(tc.Pos(), "task class %q redeclared (previous declaration at %s)", tc.Name, short(prev.Pos()))
			continue
		}
		c.classes[tc.Name] = tc
		if g, ok := c.globals[tc.Name]; ok {
			c.warnf(tc.Pos(), "task class %q has the name of the global declared at %s", tc.Name, short(g.Pos()))
		}
	}
	for _, tc := range prog.Classes {
		c.checkClass(tc)
	}
	if !opts.Unbounded {
		c.checkSize()
	}
	for _, tc := range prog.Classes {
		for _, f := range tc.Flows {
			c.checkMatching(tc, f)
		}
	}
	if !c.foreign {
		// The names jdf2go gen cannot generate, reported here too (GoNameErrors), and
		// gen's other rules for Go code (gorules.go).
		goNames(prog, &c.diags, false)
		c.checkGoRules()
	}
	if len(c.implicit) > 0 {
		// jdf2c prepends implicit collections to the global list.
		prog.Globals = append(append([]*Global{}, c.implicit...), prog.Globals...)
	}
	for i, g := range prog.Globals {
		g.Index = i
	}
	c.diags.Sort()
	return c.diags
}

func (c *checker) errorf(pos lexer.Position, format string, args ...any) {
	c.diags.Errorf(pos, format, args...)
}

func (c *checker) warnf(pos lexer.Position, format string, args ...any) {
	c.diags.Warnf(pos, format, args...)
}

// short prints a position as LINE:COL in the same file, for "previous
// declaration at" notes.
func short(p lexer.Position) string {
	return fmt.Sprintf("%s:%d:%d", p.Filename, p.Line, p.Column)
}

// ---------------------------------------------------------------------------
// Globals and options

func (c *checker) checkGlobals() {
	for _, g := range c.prog.Globals {
		if prev, ok := c.globals[g.Name]; ok {
			c.errorf(g.Pos(), "global %q redeclared (previous declaration at %s)", g.Name, short(prev.Pos()))
		} else {
			c.globals[g.Name] = g
		}
	}
	earlier := []string{}
	for _, g := range c.prog.Globals {
		c.globalProps(g)
		// A global's value may use only earlier globals.
		env := &env{c: c, globalsOnly: earlier, what: "the value of global " + g.Name}
		if g.Def != nil {
			c.resolve(g.Def, env)
		}
		if d := g.Props.Get("default"); d != nil {
			c.resolve(d.Value, env)
		}
		if g.Props.Get("size") != nil {
			c.resolve(g.Size, env)
		}
		earlier = append(earlier, g.Name)
	}
}

func (c *checker) globalProps(g *Global) {
	g.Type = "int"
	for _, p := range propList(g.Props) {
		switch p.Name {
		case "type":
			if s, ok := c.textValue(p); ok {
				g.Type, g.TypePos = s, p.Value.Pos()
			}
		case "hidden":
			g.Hidden = c.boolValue(p)
		case "default":
			g.Default = p.Value
		case "aligned":
			g.Aligned, _ = c.textValue(p)
		case "size":
			g.Size = p.Value
		default:
			c.warnf(p.NamePos, "unknown global property %q%s", p.Name, suggest(p.Name, globalPropNames))
		}
	}
	if g.Default == nil {
		g.Default = g.Def
	} else if g.Def != nil {
		c.warnf(g.Props.Get("default").NamePos, "global %q has both a value and a default; the default is used", g.Name)
	}
	if g.Default != nil && !g.Hidden {
		c.warnf(g.Default.Pos(), "global %q has a value but is not hidden: the value is used and the constructor does not take it as a parameter (add hidden = on)", g.Name)
		// The Go dialect: the default is used, so the global is computed, not a parameter.
		g.Hidden = true
	}
}

var globalPropNames = []string{"type", "hidden", "default", "aligned", "size"}

var knownOptions = []string{"name", "gotype", "no_taskpool_instance", "termdet", "nb_local_tasks_fn", "PARSEC_ARENA_STRUT"}

func (c *checker) checkOptions() {
	termdet := "local"
	var nbLocal *Property
	for _, o := range c.prog.Options {
		p := o.Prop
		switch p.Name {
		case "name", "gotype":
			if s, ok := c.textValue(p); ok && p.Name == "name" && !isGoIdent(s) {
				c.errorf(p.Value.Pos(), "%%option name %q is not a Go identifier", s)
			}
		case "termdet":
			if s, ok := c.textValue(p); ok {
				switch s {
				case "local", "dynamic", "user-triggered":
					termdet = s
				default:
					c.warnf(p.Value.Pos(), "unknown termdet %q (want \"local\", \"dynamic\" or \"user-triggered\"); using \"local\"", s)
				}
			}
		case "nb_local_tasks_fn":
			nbLocal = p
		case "PARSEC_ARENA_STRUT":
			if _, ok := p.Value.(*IntLit); !ok {
				c.errorf(p.Value.Pos(), "%%option PARSEC_ARENA_STRUT takes an integer")
			}
		case "no_taskpool_instance":
		default:
			if s := suggest(p.Name, knownOptions); s != "" {
				c.warnf(p.NamePos, "unknown %%option %q%s", p.Name, s)
			}
		}
	}
	if nbLocal != nil && termdet != "local" {
		c.warnf(nbLocal.NamePos, "nb_local_tasks_fn is ignored unless termdet is \"local\"")
	}
}

// Option returns the value of `%option name = ...` (the last one), or nil.
func (p *Program) Option(name string) Expr {
	for i := len(p.Options) - 1; i >= 0; i-- {
		if p.Options[i].Prop.Name == name {
			return p.Options[i].Prop.Value
		}
	}
	return nil
}

// OptionText returns the text of a string or identifier option, or def.
func (p *Program) OptionText(name, def string) string {
	switch v := p.Option(name).(type) {
	case *StringLit:
		return v.Value
	case *Name:
		return v.Name
	}
	return def
}

// Global returns the global named name, or nil.
func (p *Program) Global(name string) *Global {
	for _, g := range p.Globals {
		if g.Name == name {
			return g
		}
	}
	return nil
}

// Class returns the task class named name, or nil.
func (p *Program) Class(name string) *TaskClass {
	for _, c := range p.Classes {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Flow returns the flow named name, or nil.
func (tc *TaskClass) Flow(name string) *Flow {
	for _, f := range tc.Flows {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// Def returns the definition named name, or nil.
func (tc *TaskClass) Def(name string) *Definition {
	for _, d := range tc.Defs {
		if d.Name == name {
			return d
		}
	}
	return nil
}

func isGoIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isLetter(s[i]) && (i == 0 || !isDigit(s[i])) {
			return false
		}
	}
	return true
}

// ---------------------------------------------------------------------------
// Task classes

func (c *checker) checkClass(tc *TaskClass) {
	params, defs, flows := c.params, c.defs, c.flows
	clear(params)
	clear(defs)
	clear(flows)
	for _, p := range tc.Params {
		if _, dup := params[p.Name]; dup {
			c.errorf(p.Pos(), "parameter %q of %s declared twice", p.Name, tc.Name)
			continue
		}
		params[p.Name] = p
	}
	for i, d := range tc.Defs {
		d.Index = i
		if prev, dup := defs[d.Name]; dup {
			c.errorf(d.Pos(), "%q defined twice in %s (previous definition at %s)", d.Name, tc.Name, short(prev.Pos()))
			continue
		}
		defs[d.Name] = d
		if p := params[d.Name]; p != nil {
			p.Def, d.Param = d, p
		} else if e := RangeLocalError(tc, d); e != nil && !c.foreign {
			c.diags = append(c.diags, e) // gen cannot generate it
		} else if isRange(d.Value) {
			c.warnf(d.Pos(), "%q is not a parameter of %s but is defined as a range: it takes one value per task", d.Name, tc.Name)
		}
		if g, ok := c.globals[d.Name]; ok {
			c.warnf(d.Pos(), "%q of %s masks the global declared at %s", d.Name, tc.Name, short(g.Pos()))
		}
		c.resolve(d.Value, &env{c: c, class: tc, ndefs: i})
	}
	for _, p := range tc.Params {
		if p.Def == nil {
			c.errorf(p.Pos(), "parameter %q of %s has no definition (add %s = FROM .. TO)", p.Name, tc.Name, p.Name)
		}
	}
	all := &env{c: c, class: tc, ndefs: len(tc.Defs)}
	if tc.SimCost != nil {
		c.resolve(tc.SimCost, all)
	}
	c.checkAffinity(tc, all)
	c.classProps(tc)
	for i, f := range tc.Flows {
		f.Index, f.Class = i, tc
		if prev, dup := flows[f.Name]; dup {
			c.errorf(f.NamePos, "flow %q of %s declared twice (previous declaration at %s)", f.Name, tc.Name, short(prev.NamePos))
		} else {
			flows[f.Name] = f
		}
		if g, ok := c.globals[f.Name]; ok {
			c.errorf(f.NamePos, "flow %q of %s cannot shadow the global declared at %s", f.Name, tc.Name, short(g.Pos()))
		}
		c.flowProps(f)
		for j, d := range f.Deps {
			d.Index = j
			c.checkDep(tc, f, d)
		}
		c.checkFlowConsistency(tc, f)
	}
	if tc.Priority != nil {
		c.resolve(tc.Priority, all)
	}
	c.checkLimits(tc)
	cpu := 0
	for i, b := range tc.Bodies {
		b.Index = i
		c.bodyProps(tc, b)
		if b.Device() == "CPU" {
			cpu++
			if cpu == 2 {
				c.errorf(b.Pos(), "%s has more than one CPU body", tc.Name)
			}
		}
	}
}

// Limits of jdf2go's runtime: a task's parameters, definitions and flows live in fixed-size
// arrays (rt.MaxParams, rt.MaxLocals, rt.MaxFlows), and so do the coordinates of a
// collection element (rt.MaxIndex), so gen cannot emit a class past them.
// Check reports them, so that check and gen agree (codegen re-exports the constants, and
// a test of rt compares them with rt's).
const (
	// MaxLocals is the number of definitions (parameters and derived locals) of a class.
	MaxLocals = 20
	// MaxFlows is the number of flows of a class, data and CTL together.
	MaxFlows = 20
	// MaxParams is the number of parameters of a class.
	MaxParams = 8
	// MaxIndex is the number of coordinates of a collection element (rt.Index).
	MaxIndex = 4
)

// checkLimits reports a class past the limits of jdf2go's runtime.
func (c *checker) checkLimits(tc *TaskClass) {
	if n := len(tc.Defs); n > MaxLocals {
		c.errorf(tc.Pos(), "%s has %d definitions; jdf2go allows %d per class", tc.Name, n, MaxLocals)
	}
	if n := len(tc.Params); n > MaxParams {
		c.errorf(tc.Pos(), "%s has %d parameters; jdf2go allows %d per class", tc.Name, n, MaxParams)
	}
	if n := len(tc.Flows); n > MaxFlows {
		c.errorf(tc.Pos(), "%s has %d flows; jdf2go allows %d per class (data and CTL together)", tc.Name, n, MaxFlows)
	}
}

// Limits of jdf2go's compiler: the Go compiler's time and memory on the generated file
// grow with the number of classes and with the size of each expression, so check bounds
// them, far above what programs write, where building the generated code still takes
// seconds. gen runs check, so both report them.
const (
	// MaxClasses is the number of task classes of a program.
	MaxClasses = 256
	// MaxExprDepth is how deeply one expression nests: one level per conditional,
	// parenthesis, unary operator, call, selector and range (a chain of binary operators
	// at one level is not nesting).
	MaxExprDepth = 1000
	// MaxExprNodes is the size of one expression: its operators and operands.
	MaxExprNodes = 20000
)

// checkSize reports a program past the limits of the compiler: the first class past
// MaxClasses, and each expression past MaxExprDepth (at the first operand too deep) or
// MaxExprNodes.
func (c *checker) checkSize() {
	if n := len(c.prog.Classes); n > MaxClasses {
		c.errorf(c.prog.Classes[MaxClasses].Pos(), "the program has %d task classes; jdf2go allows %d (MaxClasses)", n, MaxClasses)
	}
	Inspect(c.prog, func(n Node) bool {
		e, ok := n.(Expr)
		if !ok {
			return true
		}
		nodes, deep := exprSize(e)
		if deep != nil {
			c.errorf(deep.Pos(), "expression nested more than %d levels deep; jdf2go allows %d (MaxExprDepth)", MaxExprDepth, MaxExprDepth)
		}
		if nodes > MaxExprNodes {
			c.errorf(e.Pos(), "expression of %d operators and operands; jdf2go allows %d (MaxExprNodes)", nodes, MaxExprNodes)
		}
		return false // the children are counted in e
	})
}

// exprSize returns the number of operators and operands of e, and its first operand nested
// deeper than MaxExprDepth (nil when none), with an explicit stack: the expression may be
// too deep for recursion.
func exprSize(e Expr) (nodes int, deep Expr) {
	type item struct {
		x Expr
		d int
	}
	stack := []item{{e, 1}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		nodes++
		if it.d > MaxExprDepth && deep == nil {
			deep = it.x
		}
		push := func(d int, xs ...Expr) {
			for i := len(xs) - 1; i >= 0; i-- { // source order: the first is popped first
				if xs[i] != nil {
					stack = append(stack, item{xs[i], d})
				}
			}
		}
		switch x := it.x.(type) {
		case *BinaryExpr:
			push(it.d, x.X, x.Y)
		case *UnaryExpr:
			push(it.d+1, x.X)
		case *ParenExpr:
			push(it.d+1, x.X)
		case *TernaryExpr:
			push(it.d+1, x.Cond, x.Then, x.Else)
		case *SelectorExpr:
			push(it.d+1, x.X)
		case *CallExpr:
			push(it.d+1, append([]Expr{x.Fun}, x.Args...)...)
		case *RangeExpr:
			push(it.d+1, x.From, x.To, x.Step)
		case *LocalSetExpr:
			for _, nr := range x.Named {
				push(it.d+1, nr.Value)
			}
			push(it.d+1, x.X)
		}
	}
	return nodes, deep
}

func isRange(e Expr) bool {
	switch e.(type) {
	case *RangeExpr, *LocalSetExpr:
		return true
	}
	return false
}

func (c *checker) checkAffinity(tc *TaskClass, all *env) {
	a := tc.Affinity
	a.Global = c.collection(a.Name, a.NamePos, len(a.Args))
	for _, e := range a.Args {
		c.resolve(e, all)
	}
}

// collection resolves a data-collection reference (affinity or endpoint)
// used with arity arguments, declaring it implicitly when unknown.
func (c *checker) collection(name string, pos lexer.Position, arity int) *Global {
	if _, ok := c.classes[name]; ok {
		c.errorf(pos, "task class %q used as a data collection", name)
		return nil
	}
	g, ok := c.globals[name]
	if !ok {
		c.warnf(pos, "data collection %q is not declared%s; it is declared implicitly, first among the constructor parameters, as jdf2c does",
			name, suggest(name, c.globalNames()))
		g = &Global{Span: c.prog.spanAt(pos), Name: name, Implicit: true, Type: ""}
		c.globals[name] = g
		c.implicit = append(c.implicit, g)
	}
	if isScalarType(g.Type) && !g.Implicit {
		c.errorf(pos, "%q is not a data collection (its type is %s)", name, g.Type)
		return nil
	}
	if !g.Collection {
		g.Collection, g.Arity = true, arity
		c.collUse[g] = pos
		if arity > MaxIndex && !c.foreign {
			// gen would index the element with more coordinates than an rt.Index holds.
			c.errorf(pos, "data collection %q used with %d arguments; jdf2go allows %d (the coordinates of an rt.Index)", name, arity, MaxIndex)
		}
	} else if g.Arity != arity {
		c.errorf(pos, "data collection %q used with %s here, but with %d at %s", name, plural(arity, "argument"), g.Arity, short(c.collUse[g]))
	}
	return g
}

func (c *checker) globalNames() []string {
	out := make([]string, 0, len(c.globals))
	for n := range c.globals {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (c *checker) classNames() []string {
	out := make([]string, 0, len(c.classes))
	for n := range c.classes {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// isScalarType reports whether a global's type is a Go or C scalar, which
// can never be a data collection.
func isScalarType(t string) bool {
	t = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(t), "const "))
	switch t {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
		"uintptr", "float32", "float64", "complex64", "complex128", "bool", "string", "byte", "rune",
		"long", "short", "char", "unsigned", "unsigned int", "long long", "double", "float", "size_t",
		"int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t":
		return true
	}
	return false
}

// propList returns the properties of ps, or nil.
func propList(ps *Props) []*Property {
	if ps == nil {
		return nil
	}
	return ps.List
}

// boolValue reads an on/off property (on yes true 1 / off no false 0).
func (c *checker) boolValue(p *Property) bool {
	if lit, ok := p.Value.(*IntLit); ok && (lit.Value == 0 || lit.Value == 1) {
		return lit.Value == 1
	}
	c.errorf(p.Value.Pos(), "property %q takes on or off", p.Name)
	return false
}

// textValue reads a property whose value is a string or a (dotted) name.
func (c *checker) textValue(p *Property) (string, bool) {
	switch v := p.Value.(type) {
	case *StringLit:
		return v.Value, true
	case *Name, *SelectorExpr:
		return exprText(v), true
	}
	c.errorf(p.Value.Pos(), "property %q takes a string or a name", p.Name)
	return "", false
}

// funcValue checks a property naming a function: a name or a code block.
func (c *checker) funcValue(p *Property) Expr {
	switch p.Value.(type) {
	case *Name, *SelectorExpr, *InlineCode, *StringLit:
		if _, _, _, code := CodeText(p.Value); code {
			c.pasted = append(c.pasted, p.Value)
		}
		c.resolveFunc(p.Value)
		return p.Value
	}
	c.errorf(p.Value.Pos(), "property %q takes a function name or a code block", p.Name)
	return nil
}

// exprText renders a name or selector chain as written.
func exprText(e Expr) string {
	switch v := e.(type) {
	case *Name:
		return v.Name
	case *SelectorExpr:
		sep := "."
		if v.Arrow {
			sep = "->"
		}
		return exprText(v.X) + sep + v.Sel
	}
	return ""
}

var classPropNames = []string{"high_priority", "immediate", "profile", "count_deps", "mask_deps", "time_estimate",
	"make_key_fn", "hash_struct", "startup_fn", "find_deps_fn", "alloc_deps_fn", "free_deps_fn", "nb_local_tasks_fn"}

func (c *checker) classProps(tc *TaskClass) {
	a := &tc.Attrs
	for _, p := range propList(tc.Props) {
		switch p.Name {
		case "high_priority":
			a.HighPriority = c.boolValue(p)
		case "immediate":
			a.Immediate = c.boolValue(p)
		case "profile":
			a.ProfileOff = !c.boolValue(p)
		case "count_deps":
			a.CountDeps = c.boolValue(p)
		case "mask_deps":
			a.MaskDeps = c.boolValue(p)
		case "time_estimate":
			a.TimeEstimate = c.funcValue(p)
		case "make_key_fn":
			a.MakeKeyFn = c.funcValue(p)
		case "hash_struct":
			a.HashStruct = c.funcValue(p)
		case "startup_fn":
			a.StartupFn = c.funcValue(p)
		case "find_deps_fn":
			a.FindDepsFn = c.funcValue(p)
		case "alloc_deps_fn":
			a.AllocDepsFn = c.funcValue(p)
		case "free_deps_fn":
			a.FreeDepsFn = c.funcValue(p)
		case "nb_local_tasks_fn":
			c.warnf(p.NamePos, "nb_local_tasks_fn is only read from %%option nb_local_tasks_fn")
		default:
			// Other class properties are exported by name; only a
			// near miss of a known one is worth a warning.
			if s := suggest(p.Name, classPropNames); s != "" {
				c.warnf(p.NamePos, "unknown task class property %q%s", p.Name, s)
			}
			c.resolve(p.Value, &env{c: c, class: tc, ndefs: len(tc.Defs), lenient: true})
		}
	}
	n := 0
	for _, f := range []Expr{a.FindDepsFn, a.AllocDepsFn, a.FreeDepsFn} {
		if f != nil {
			n++
		}
	}
	if n != 0 && n != 3 {
		c.errorf(tc.Props.Pos(), "find_deps_fn, alloc_deps_fn and free_deps_fn go together: give all three or none")
	}
	if a.CountDeps && a.MaskDeps {
		c.errorf(tc.Props.Pos(), "count_deps and mask_deps cannot both be on")
	}
}

func (c *checker) flowProps(f *Flow) {
	if f.Access != AccessCTL {
		f.GoType = c.prog.OptionText("gotype", "[]float64")
	}
	for _, p := range propList(f.Props) {
		switch p.Name {
		case "gotype":
			if s, ok := c.textValue(p); ok {
				if f.Access == AccessCTL {
					c.errorf(p.NamePos, "CTL flow %q carries no value: gotype does not apply", f.Name)
				} else {
					f.GoType = s
				}
			}
		default:
			c.warnf(p.NamePos, "unknown flow property %q%s", p.Name, suggest(p.Name, []string{"gotype"}))
		}
	}
}

var bodyPropNames = []string{"type", "batch", "batch_max", "batch_match", "stage_in", "stage_out", "device",
	"evaluate", "profile", "dyld", "dyldtype", "weight", "hook"}

func (c *checker) bodyProps(tc *TaskClass, b *Body) {
	a := &b.Attrs
	all := &env{c: c, class: tc, ndefs: len(tc.Defs)}
	for _, p := range propList(b.Props) {
		if flow, prop, ok := strings.Cut(p.Name, "."); ok && (prop == "size" || prop == "dc") {
			f := tc.Flow(flow)
			if f == nil {
				c.errorf(p.NamePos, "%s: %s has no flow %q%s", p.Name, tc.Name, flow, suggest(flow, flowNames(tc)))
				continue
			}
			if prop == "size" {
				if f.Access == AccessCTL {
					c.errorf(p.NamePos, "%s: CTL flow %q has no data", p.Name, flow)
					continue
				}
				c.resolve(p.Value, all)
				a.Sizes = append(a.Sizes, &FlowSize{Pos: p.Pos(), Flow: f, Value: p.Value})
			} else if s, ok := c.textValue(p); ok {
				a.DataColls = append(a.DataColls, &FlowDC{Pos: p.Pos(), Flow: f, Collection: s})
			}
			continue
		}
		switch p.Name {
		case "type":
			n, ok := p.Value.(*Name)
			if !ok {
				c.errorf(p.Value.Pos(), "BODY type must be an identifier such as CPU, CUDA or GPU")
				continue
			}
			b.Type = n.Name
		case "batch":
			switch v := p.Value.(type) {
			case *Name:
				if v.Name == "manual" {
					a.Batch = BatchManual
					continue
				}
			case *IntLit:
				if v.Value == 0 || v.Value == 1 {
					a.Batch = BatchMode(v.Value)
					continue
				}
			}
			c.errorf(p.Value.Pos(), "batch takes true, false or manual")
		case "batch_max":
			c.resolve(p.Value, all)
			a.BatchMax = p.Value
		case "batch_match":
			a.BatchMatch = c.funcValue(p)
		case "stage_in":
			a.StageIn = c.funcValue(p)
		case "stage_out":
			a.StageOut = c.funcValue(p)
		case "evaluate":
			a.Evaluate = c.funcValue(p)
		case "device":
			c.resolve(p.Value, all)
			a.Device = p.Value
		case "profile":
			a.ProfileOff = !c.boolValue(p)
		case "dyld":
			a.Dyld, _ = c.textValue(p)
		case "dyldtype":
			a.DyldType, _ = c.textValue(p)
		case "weight":
			c.warnf(p.NamePos, "body property weight is obsolete and ignored")
		case "hook":
		default:
			c.warnf(p.NamePos, "unknown body property %q%s", p.Name, suggest(p.Name, bodyPropNames))
		}
	}
	if a.Batch == BatchOff && (a.BatchMax != nil || a.BatchMatch != nil) {
		c.warnf(b.Pos(), "batch_max and batch_match have no effect without batch = true or batch = manual")
	}
	if a.Device != nil && a.Evaluate != nil {
		c.warnf(a.Device.Pos(), "device overrides evaluate")
	}
	if a.Dyld != "" && a.DyldType == "" {
		c.errorf(b.Pos(), "dyld needs dyldtype")
	}
}

func flowNames(tc *TaskClass) []string {
	out := make([]string, len(tc.Flows))
	for i, f := range tc.Flows {
		out[i] = f.Name
	}
	return out
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
