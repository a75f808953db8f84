package codegen

import (
	"bytes"
	"errors"
	"fmt"
	"go/format"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
	"github.com/dave/jennifer/jen"
	"github.com/jdf2go/jdf2go/parser"
)

// Import paths of the packages generated code refers to.
const (
	rtPath = "github.com/jdf2go/jdf2go/rt"
)

type posT = lexer.Position

// Options configure Generate.
type Options struct {
	// Package is the package clause of the generated file. Required.
	Package string
	// Source is the path of the .jdf file as the header and the //line directives spell it:
	// relative to the directory of the generated file (Go resolves //line paths from
	// there). Default: the base name of the program's file name.
	Source string
	// Output is the base name of the generated file, used by the directives that point back
	// at it. Default: "<file>_jdf.go".
	Output string
	// Version is the jdf2go version written in the header. Default: "devel".
	Version string
	// Warn, when set, receives the warnings of code generation (unsupported properties,
	// skipped GPU bodies). Errors are returned.
	Warn func(*parser.Diagnostic)
}

// File is one generated file.
type File struct {
	Name    string
	Content []byte
}

// Generate compiles a checked program (parser.ParseAndCheck without errors) to Go. It
// returns the generated files and never writes to disk. JDF problems found while
// generating (Go that does not parse in a body, an unsupported construct) are returned as a
// parser.ErrorList, positioned in the .jdf file.
func Generate(prog *parser.Program, opts Options) ([]File, error) {
	var buf bytes.Buffer
	name, err := generateTo(&buf, prog, opts)
	if err != nil {
		return nil, err
	}
	return []File{{Name: name, Content: buf.Bytes()}}, nil
}

// Write is Generate for a program whose one generated file goes to w: the output of a large
// program need not be held in memory. Nothing is written when generation fails; an error
// of w can leave part of the file written.
func Write(w io.Writer, prog *parser.Program, opts Options) error {
	_, err := generateTo(w, prog, opts)
	return err
}

// generateTo generates the file of prog to w and returns its name.
func generateTo(w io.Writer, prog *parser.Program, opts Options) (string, error) {
	if prog == nil {
		return "", errors.New("codegen: nil program")
	}
	if opts.Package == "" || !isIdent(opts.Package) {
		return "", fmt.Errorf("codegen: package name %q is not a Go identifier", opts.Package)
	}
	base := strings.TrimSuffix(filepath.Base(prog.Filename), filepath.Ext(prog.Filename))
	if opts.Source == "" {
		opts.Source = filepath.Base(prog.Filename)
	}
	opts.Source = filepath.ToSlash(opts.Source)
	if opts.Output == "" {
		opts.Output = base + "_jdf.go"
	}
	if opts.Version == "" {
		opts.Version = "devel"
	}
	g := &generator{prog: prog, opts: opts, inlines: map[parser.Expr]*inlineFn{},
		helpers: map[helperKind]bool{}, file: filepath.Base(prog.Filename)}
	g.generate()
	for _, d := range g.diags {
		if d.Severity == parser.Warning && opts.Warn != nil {
			opts.Warn(d)
		}
	}
	if g.diags.HasErrors() {
		var errs parser.ErrorList
		for _, d := range g.diags {
			if d.Severity == parser.Error {
				errs = append(errs, d)
			}
		}
		return "", errs
	}
	return opts.Output, g.finish(w)
}

// generator holds the state of one Generate call.
type generator struct {
	prog  *parser.Program
	opts  Options
	file  string // base name of the .jdf file, for positions in messages
	name  string // taskpool type, e.g. "Potrf"
	pfx   string // prefix of unexported identifiers, e.g. "potrf"
	diags parser.ErrorList

	classes  []*classGen
	prologue *goBlock
	epilogue *goBlock

	inlines     map[parser.Expr]*inlineFn
	inlineDecls []jen.Code // made since they were last rendered
	ninline     int
	helpers     map[helperKind]bool
	fields      map[*parser.Global]string // struct fields of the globals (field)

	// The output: the renderer, and the parts of the file in file order (write.go).
	r     *renderer
	parts []*part
}

func (g *generator) errorf(pos posT, format string, args ...any) {
	g.diags.Errorf(pos, format, args...)
}

func (g *generator) warnf(pos posT, format string, args ...any) {
	g.diags.Warnf(pos, format, args...)
}

// where formats a JDF position for messages of generated code: "potrf.jdf:12:5".
func (g *generator) where(p posT) string {
	return g.file + ":" + strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Column)
}

// generate renders and formats the file into g.parts, class by class. It stops early at
// errors of the program found before the classes are emitted; with errors (g.diags), the
// parts are not written.
func (g *generator) generate() {
	// The name rules that Check also applies to Go programs (parser.GoNameErrors).
	g.diags = append(g.diags, parser.GoNameErrors(g.prog)...)
	var ok bool
	g.name, ok = parser.TaskpoolName(g.prog)
	if !ok {
		return
	}
	g.pfx = lowerPrefix(g.name)
	if !g.checkNesting() {
		return
	}
	if g.prog.Prologue != nil {
		g.prologue = g.codeBlock(g.prog.Prologue, "the prologue")
	}
	if g.prog.Epilogue != nil {
		g.epilogue = g.codeBlock(g.prog.Epilogue, "the epilogue")
	}
	g.unsupportedOptions()
	g.ignoredGlobalProps()
	ids := map[string]bool{}
	for _, tc := range g.prog.Classes {
		g.classes = append(g.classes, newClassGen(g, tc, ids))
	}
	if g.diags.HasErrors() {
		return
	}

	f := jen.NewFile(g.opts.Package)
	f.NoFormat = true
	f.ImportName(rtPath, "rt")
	f.ImportName(gpuPath, "gpu")
	g.pinImports(f)
	f.HeaderComment("Code generated by jdf2go " + g.opts.Version + " from " + g.opts.Source + "; DO NOT EDIT.")
	g.r = &renderer{f: f}

	// The file's parts, in file order. Every render below ends with a blank line, where the
	// part may be cut.
	fm := startFormatter()
	defer fm.stop()
	head := newPart(fm)
	items := jen.NewFile("")
	if g.prologue != nil {
		g.topLevelCode(items, g.prologue)
	}
	items.Comment("A stale generated file fails to build here against an incompatible rt: regenerate it with jdf2go gen.")
	items.Const().Id("_").Op("=").Qual(rtPath, "APIv3")
	items.Line()
	g.render(head, items)
	items = jen.NewFile("")
	g.taskpool(items)
	g.render(head, items)
	items = jen.NewFile("")
	g.constructor(items)
	g.render(head, items)
	g.descriptorVars(head)
	head.end()

	// The descriptors go in init functions of up to initClasses classes each, before the
	// functions of every class: the Go compiler's cost of one function grows faster than its
	// size, so one init for every class would make the build superlinear in the number of
	// classes, and one init per class would lengthen every small program. Inline code
	// functions go after everything but the helpers and the epilogue: every part may have
	// created some.
	init, decls, inlines := newPart(fm), newPart(fm), newPart(fm)
	var descs []jen.Code
	for i, c := range g.classes {
		fns := c.emit()
		descs = append(descs, c.descriptor)
		c.descriptor = nil
		if len(descs) == initClasses || i == len(g.classes)-1 {
			g.render(init, jen.Func().Id("init").Params().Block(descs...), jen.Line())
			descs = descs[:0]
		}
		g.render(decls, fns...)
		g.renderInlines(inlines)
	}
	verify := newPart(fm)
	g.verifier(verify)
	g.classProperties(verify)
	g.renderInlines(inlines)
	end := newPart(fm)
	items = jen.NewFile("")
	g.emitHelpers(items)
	if g.epilogue != nil {
		g.topLevelCode(items, g.epilogue)
	}
	g.render(end, items)
	g.parts = []*part{head, init, decls, verify, inlines, end}
	for _, p := range g.parts[1:] {
		p.end()
	}
}

// initClasses is the number of class descriptors one init function assigns.
const initClasses = 16

// render renders code (one *jen.File holding top-level code, or declarations and statements)
// into p.
func (g *generator) render(p *part, code ...jen.Code) {
	items, ok := code[0].(*jen.File)
	if !ok || len(code) > 1 {
		items = jen.NewFile("")
		for _, c := range code {
			items.Add(c) // one item each: Add(code...) would make one statement of them
		}
	}
	text, err := g.r.render(items)
	if err != nil {
		g.errorf(g.prog.Pos(), "codegen: rendering: %v", err)
		return
	}
	p.add(text)
}

// renderInlines renders the inline code functions made since the last call.
func (g *generator) renderInlines(p *part) {
	if len(g.inlineDecls) > 0 {
		g.render(p, g.inlineDecls...)
		g.inlineDecls = nil
	}
}

// codeBlock splits the prologue or the epilogue; C code blocks cannot be generated.
func (g *generator) codeBlock(cb *parser.CodeBlock, what string) *goBlock {
	if cb.Lang == "C" {
		g.errorf(cb.Pos(), "%s is C (extern \"C\"): jdf2go gen needs Go code blocks", what)
		return nil
	}
	b, ok := g.splitGoBlock(cb, what)
	if !ok {
		return nil
	}
	return &b
}

// pinImports makes jennifer use the prologue's names for the packages it also imports.
func (g *generator) pinImports(f *jen.File) {
	for _, b := range []*goBlock{g.prologue, g.epilogue} {
		if b == nil {
			continue
		}
		for _, s := range b.imports {
			if s.name != "" && s.name != "_" && s.name != "." {
				f.ImportAlias(s.path, s.name)
			}
		}
	}
}

// topLevelCode adds the declarations of a prologue or epilogue.
func (g *generator) topLevelCode(f *jen.File, b *goBlock) {
	code := g.userCode(b.decls, b.pos)
	if len(code) == 0 {
		return
	}
	for _, c := range code {
		f.Add(c)
	}
	f.Add(g.restoreDirective())
	f.Line()
}

// finish writes the file: the header and the imports, which are known now that every part
// is rendered, then the parts.
func (g *generator) finish(w io.Writer) error {
	for _, p := range g.parts {
		if p.err != nil {
			return fmt.Errorf("codegen: generated code for %s does not format: %w", g.opts.Source, p.err)
		}
	}
	src, err := g.r.header()
	if err != nil {
		return fmt.Errorf("codegen: rendering: %w", err)
	}
	var extra []importSpec
	for _, b := range []*goBlock{g.prologue, g.epilogue} {
		if b != nil {
			extra = append(extra, b.imports...)
		}
	}
	merged, err := mergeImports(src, extra)
	if err != nil {
		return err
	}
	head, err := format.Source(merged)
	if err != nil {
		return fmt.Errorf("codegen: generated code for %s does not format: %w\n%s", g.opts.Source, err, merged)
	}
	out := newRestoreWriter(w, g.restorePrefix())
	if _, err := out.Write(head); err != nil {
		return err
	}
	for _, p := range g.parts {
		if p.empty() {
			continue
		}
		if err := p.writeTo(out); err != nil {
			return err
		}
	}
	return out.Flush()
}
