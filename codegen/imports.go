package codegen

// Imports. The prologue (and the epilogue) may start with import declarations
// (docs/language.md, "Code blocks"). They are parsed with go/parser; their declarations go after
// the imports of the generated file, and their imports are merged with the ones jennifer
// collected (from Qual) and deduplicated. jennifer only emits imports that generated code uses
// through Qual, so the merge happens on the rendered file: its import block is replaced by the
// union, printed from a go/ast declaration.

import (
	"bytes"
	"fmt"
	"go/ast"
	goparser "go/parser"
	"go/printer"
	"go/token"
	"sort"
	"strconv"
	"strings"

	"github.com/jdf2go/jdf2go/parser"
)

// importSpec is one import: its path and its explicit name ("" when none).
type importSpec struct {
	name, path string
}

// specOf returns the path and name of a parsed import.
func specOf(is *ast.ImportSpec) importSpec {
	path, _ := strconv.Unquote(is.Path.Value)
	spec := importSpec{path: path}
	if is.Name != nil {
		spec.name = is.Name.Name
	}
	return spec
}

// goBlock is a prologue or epilogue split into its imports and the rest.
type goBlock struct {
	imports []importSpec
	decls   string // the declarations after the imports
	pos     posT   // where decls starts in the JDF file
}

// splitGoBlock parses a Go code block. ok is false (and an error is reported) when it is
// not Go.
func (g *generator) splitGoBlock(cb *parser.CodeBlock, what string) (goBlock, bool) {
	const head = "package p\n"
	fset := token.NewFileSet()
	f, err := goparser.ParseFile(fset, "", head+cb.Text, goparser.ImportsOnly|goparser.ParseComments)
	if err == nil {
		// ImportsOnly stops early; parse everything to report errors in the declarations.
		_, err = goparser.ParseFile(token.NewFileSet(), "", head+cb.Text, goparser.SkipObjectResolution)
	}
	if err != nil {
		g.diags = append(g.diags, parser.GoSyntaxError(err, cb.TextPos, 1, what+" is not Go"))
		return goBlock{}, false
	}
	var b goBlock
	end := 0 // offset in cb.Text after the last import declaration
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.IMPORT {
			break
		}
		for _, s := range gd.Specs {
			b.imports = append(b.imports, specOf(s.(*ast.ImportSpec)))
		}
		end = fset.Position(gd.End()).Offset - len(head)
	}
	b.decls = cb.Text[end:]
	b.pos = cb.TextPos
	b.pos.Line += bytes.Count([]byte(cb.Text[:end]), []byte("\n"))
	return b, true
}

// mergeImports replaces the import declarations of src (rendered by jennifer) with the union
// of its imports and extra, deduplicated and sorted by path.
func mergeImports(src []byte, extra []importSpec) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := goparser.ParseFile(fset, "", src, goparser.ImportsOnly)
	if err != nil {
		return nil, fmt.Errorf("codegen: rendered file does not parse: %w", err)
	}
	seen := map[importSpec]bool{}
	var all []importSpec
	add := func(s importSpec) {
		if !seen[s] {
			seen[s] = true
			all = append(all, s)
		}
	}
	start, end := -1, -1
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.IMPORT {
			continue
		}
		if start < 0 {
			start = fset.Position(gd.Pos()).Offset
		}
		end = fset.Position(gd.End()).Offset
		for _, s := range gd.Specs {
			add(specOf(s.(*ast.ImportSpec)))
		}
	}
	for _, s := range extra {
		add(s)
	}
	if len(all) == 0 {
		return src, nil
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if isStd(a.path) != isStd(b.path) {
			return isStd(a.path)
		}
		if a.path != b.path {
			return a.path < b.path
		}
		return a.name < b.name
	})
	decl := importDecl(all)
	var buf bytes.Buffer
	if err := printer.Fprint(&buf, decl.fset, decl.decl); err != nil {
		return nil, fmt.Errorf("codegen: printing imports: %w", err)
	}
	if start < 0 {
		// No import yet: insert after the package clause.
		start = fset.Position(f.Name.End()).Offset
		end = start
		buf.WriteString("\n")
		buf = *bytes.NewBuffer(append([]byte("\n\n"), buf.Bytes()...))
	}
	out := make([]byte, 0, len(src)+buf.Len())
	out = append(out, src[:start]...)
	out = append(out, buf.Bytes()...)
	out = append(out, src[end:]...)
	return out, nil
}

// printableDecl is an import declaration with the file set its positions refer to.
type printableDecl struct {
	fset *token.FileSet
	decl *ast.GenDecl
}

// importDecl builds the import declaration of specs (sorted by path), with the standard
// library first and a blank line before the other packages, as goimports groups them. The
// positions are made up so that go/printer puts each spec on its own line and keeps the
// blank line between the groups.
func importDecl(specs []importSpec) printableDecl {
	fset := token.NewFileSet()
	const width = 8
	n := len(specs) + 4
	tf := fset.AddFile("", -1, n*width)
	lines := make([]int, n)
	for i := range lines {
		lines[i] = i * width
	}
	tf.SetLines(lines)
	at := func(line int) token.Pos { return tf.Pos(line * width) }
	decl := &ast.GenDecl{Tok: token.IMPORT, TokPos: at(0), Lparen: at(0)}
	line := 1
	for i, s := range specs {
		if i > 0 && isStd(specs[i-1].path) && !isStd(s.path) {
			line++
		}
		is := &ast.ImportSpec{Path: &ast.BasicLit{ValuePos: at(line), Kind: token.STRING, Value: strconv.Quote(s.path)}}
		if s.name != "" {
			is.Name = &ast.Ident{NamePos: at(line), Name: s.name}
		}
		decl.Specs = append(decl.Specs, is)
		line++
	}
	decl.Rparen = at(line)
	return printableDecl{fset: fset, decl: decl}
}

// isStd reports whether an import path is in the standard library (no dot in its first
// element).
func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}
