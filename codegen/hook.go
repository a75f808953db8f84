package codegen

// A body in its hook. When nothing stands in the way, a BODY is emitted inside the function
// that rt or rt/gpu calls, after the bindings of the names it uses, rather than in a body
// function of its own that the hook calls with every global, definition and flow:
//
//	// <c>Hook runs the CPU body of <Class>(<params>) at <file.jdf:L:C>.
//	func <c>Hook(task *rt.Task) error {
//		g, l := rt.TaskGlobals[*<Name>](task)
//		<global>, ..., <def>, ... := g.<global>, ..., l[<i>], ...   // those the body uses
//		var err error
//		<F>, _, ... := rt.FlowAs[<gotype>](task, <flow>, &err), ... // every data flow: its type is checked
//		if err != nil {
//			return err
//		}
//	//line <file.jdf>:<L>
//		<body text>
//	//line <file_jdf.go>:<restored>
//		return nil
//	}
//
// and for a GPU body the submit hook binds the globals and definitions the same way, and the
// flows with task.Buffer. The body keeps its own block, so its declarations hide the
// bindings exactly as they hid the parameters of a body function. The hook's own names (g,
// l and, in a CPU hook, err) would capture a body that refers to a global or package-level
// name spelled the same: such a body, and one that names a binding only as the key of a
// composite literal (a struct field or a map key: only the type decides, and a binding
// that the body does not use does not compile), get the body function instead.

import (
	"go/ast"
	goparser "go/parser"
	"go/token"
	"strings"

	"github.com/dave/jennifer/jen"
)

// binding is one name a hook binds for the body it runs in place.
type binding struct {
	name string
	val  jen.Code
}

// freeUses reports which of names the Go statements text refers to without declaring them
// itself. ok is false when text does not parse, or names one of them only as the key of a
// composite literal. It relies on go/parser's resolution of identifiers (ast.Object), which
// follows Go's block scoping without type information: the body's imports are not known here.
func freeUses(text string, names []string) (used map[string]bool, ok bool) {
	src := "package p\nfunc _(" + strings.Join(names, ", ") + " int) {\n" + text + "\n}\n"
	f, err := goparser.ParseFile(token.NewFileSet(), "", src, 0)
	if err != nil {
		return nil, false
	}
	fn := f.Decls[0].(*ast.FuncDecl)
	params := map[*ast.Object]string{}
	for _, fld := range fn.Type.Params.List {
		for _, id := range fld.Names {
			params[id.Obj] = id.Name
		}
	}
	keys := map[*ast.Ident]bool{}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if cl, ok := n.(*ast.CompositeLit); ok {
			for _, e := range cl.Elts {
				if kv, ok := e.(*ast.KeyValueExpr); ok {
					if id, ok := kv.Key.(*ast.Ident); ok {
						keys[id] = true
					}
				}
			}
		}
		return true
	})
	used = map[string]bool{}
	asKey := map[string]bool{}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		id, isID := n.(*ast.Ident)
		if !isID || id.Obj == nil {
			return true
		}
		if name, isParam := params[id.Obj]; isParam {
			if keys[id] {
				asKey[name] = true
			} else {
				used[name] = true
			}
		}
		return true
	})
	for name := range asKey {
		if !used[name] {
			return nil, false
		}
	}
	return used, true
}

// inPlace decides whether a body runs in its hook. own are the hook's own names, binds the
// candidate bindings of globals and definitions, and flows the names of the data flows. It
// returns the bindings the body uses and the set of names it uses, or ok false.
func inPlace(text string, own []string, binds []binding, flows []string) (used []binding, uses map[string]bool, ok bool) {
	names := append([]string{}, own...)
	for _, b := range binds {
		names = append(names, b.name)
	}
	names = append(names, flows...)
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return nil, nil, false
		}
		seen[n] = true
	}
	uses, ok = freeUses(text, names)
	if !ok {
		return nil, nil, false
	}
	for _, n := range own {
		if uses[n] {
			return nil, nil, false
		}
	}
	for _, b := range binds {
		if uses[b.name] {
			used = append(used, b)
		}
	}
	return used, uses, true
}

// bindStmts returns `a, b, c := x, y, z` for binds, five a statement.
func bindStmts(binds []binding) []jen.Code {
	var out []jen.Code
	for len(binds) > 0 {
		n := min(len(binds), 5)
		var names, vals []jen.Code
		for _, b := range binds[:n] {
			names, vals = append(names, jen.Id(b.name)), append(vals, b.val)
		}
		out = append(out, jen.List(names...).Op(":=").List(vals...))
		binds = binds[n:]
	}
	return out
}

// globalsStmt returns `g, l := rt.TaskGlobals[*<Name>](ec)` for the bindings that need g
// (those read from the globals) and l (definitions), with _ for one that none needs; nil when
// neither is needed.
func (c *classGen) globalsStmt(ec jen.Code, needG, needL bool) []jen.Code {
	if !needG && !needL {
		return nil
	}
	gv, lv := jen.Id("g"), jen.Id("l")
	if !needG {
		gv = jen.Id("_")
	}
	if !needL {
		lv = jen.Id("_")
	}
	return []jen.Code{jen.List(gv, lv).Op(":=").Qual(rtPath, "TaskGlobals").Types(jen.Op("*").Id(c.g.name)).Call(ec)}
}

// hookBinds returns the candidate bindings of a hook: tp when the body mentions it, the
// globals it mentions, and every definition; g and l stand for the taskpool and the locals.
func (c *classGen) hookBinds(mentions map[string]bool) (globals, defs []binding) {
	if mentions["tp"] {
		globals = append(globals, binding{"tp", jen.Id("g")})
	}
	for _, gl := range c.usedGlobals(mentions) {
		globals = append(globals, binding{userParam(gl.Name), jen.Id("g").Dot(c.g.field(gl))})
	}
	for _, d := range c.tc.Defs {
		defs = append(defs, binding{userParam(d.Name), jen.Id("l").Index(jen.Lit(d.Index))})
	}
	return globals, defs
}

// usedBinds splits the bindings the body uses into those of globals and of definitions.
func usedBinds(used, globals []binding) (g, l []binding) {
	isGlobal := map[string]bool{}
	for _, b := range globals {
		isGlobal[b.name] = true
	}
	for _, b := range used {
		if isGlobal[b.name] {
			g = append(g, b)
		} else {
			l = append(l, b)
		}
	}
	return g, l
}

// unwrap returns the statements of a body that is one block (the JDF custom: BODY { ... }
// END) without the braces, and the position of the text it returns, when none of the
// block's own declarations is a name in taken: the hook's scope then holds the body's
// declarations as the block did. Otherwise it returns text and pos unchanged.
func unwrap(text string, pos posT, taken map[string]bool) (string, posT) {
	trimmed := strings.TrimSpace(text)
	if !strings.HasPrefix(trimmed, "{") || !strings.HasSuffix(trimmed, "}") {
		return text, pos
	}
	f, err := goparser.ParseFile(token.NewFileSet(), "", "package p\nfunc _() {\n"+text+"\n}\n", goparser.SkipObjectResolution)
	if err != nil {
		return text, pos
	}
	list := f.Decls[0].(*ast.FuncDecl).Body.List
	if len(list) != 1 {
		return text, pos
	}
	block, ok := list[0].(*ast.BlockStmt)
	if !ok {
		return text, pos
	}
	for _, s := range block.List {
		for _, name := range declared(s) {
			if taken[name] {
				return text, pos
			}
		}
	}
	open, end := strings.Index(text, "{"), strings.LastIndex(text, "}")
	p := pos
	p.Line += strings.Count(text[:open], "\n")
	return text[open+1 : end], p
}

// declared returns the names that statement s declares in the block that holds it.
func declared(s ast.Stmt) []string {
	var out []string
	switch s := s.(type) {
	case *ast.AssignStmt:
		if s.Tok == token.DEFINE {
			for _, e := range s.Lhs {
				if id, ok := e.(*ast.Ident); ok {
					out = append(out, id.Name)
				}
			}
		}
	case *ast.DeclStmt:
		for _, spec := range s.Decl.(*ast.GenDecl).Specs {
			switch spec := spec.(type) {
			case *ast.ValueSpec:
				for _, id := range spec.Names {
					out = append(out, id.Name)
				}
			case *ast.TypeSpec:
				out = append(out, spec.Name.Name)
			}
		}
	case *ast.LabeledStmt:
		return declared(s.Stmt)
	}
	return out
}
