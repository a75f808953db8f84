package parser

// Names that jdf2go gen cannot give to Go. The rules live here so that `jdf2go check` (Check,
// for a file whose code is Go) and code generation (codegen, through GoNameErrors) report
// the same errors at the same positions.
//
// The taskpool type (`%option name`, else the file name in CamelCase) is a package-level
// type of the generated file; so are New<Name>, Err<Name>Argument, Err<Name>Graph and every
// identifier that starts with the program's prefix (TaskpoolPrefix) followed by anything but
// a lower-case letter. Globals are parameters of New<Name> and variables of the hooks,
// where generated code also refers to those identifiers, to the packages it imports
// (GeneratedImports) and to Go's predeclared identifiers.

import (
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2/lexer"
)

// GoKeywords are Go's keywords.
var GoKeywords = map[string]bool{
	"break": true, "case": true, "chan": true, "const": true, "continue": true, "default": true,
	"defer": true, "else": true, "fallthrough": true, "for": true, "func": true, "go": true,
	"goto": true, "if": true, "import": true, "interface": true, "map": true, "package": true,
	"range": true, "return": true, "select": true, "struct": true, "switch": true, "type": true,
	"var": true,
}

// GoPredeclared are all of Go's predeclared identifiers (types, constants, nil, builtins).
var GoPredeclared = map[string]bool{
	"any": true, "append": true, "bool": true, "byte": true, "cap": true, "clear": true,
	"close": true, "comparable": true, "complex": true, "complex128": true, "complex64": true,
	"copy": true, "delete": true, "error": true, "false": true, "float32": true, "float64": true,
	"imag": true, "int": true, "int16": true, "int32": true, "int64": true, "int8": true,
	"iota": true, "len": true, "make": true, "max": true, "min": true, "new": true, "nil": true,
	"panic": true, "print": true, "println": true, "real": true, "recover": true, "rune": true,
	"string": true, "true": true, "uint": true, "uint16": true, "uint32": true, "uint64": true,
	"uint8": true, "uintptr": true,
}

// GeneratedImports are the names of the packages a generated file imports besides those of
// its prologue and epilogue (codegen's tests check that the list is complete).
var GeneratedImports = map[string]bool{"rt": true, "gpu": true, "fmt": true, "errors": true, "io": true}

// ReservedInBodies are the names bodies and inline code receive from the generator.
var ReservedInBodies = map[string]bool{"tp": true, "task": true}

// GeneratedLocals are the parameters and variables of generated functions, whose types
// the taskpool type must not hide.
var GeneratedLocals = map[string]bool{
	"tp": true, "l": true, "e": true, "g": true, "flows": true, "yield": true, "task": true,
	"n": true, "pl": true, "err": true, "ok": true, "c": true, "dev": true, "v": true, "b": true,
	"d": true, "w": true,
}

// TaskpoolName returns the Go name of the taskpool type: `%option name`, else the file name
// in CamelCase ("ctl_gather.jdf" gives "CtlGather"). ok is false when it is not a Go
// identifier.
func TaskpoolName(prog *Program) (name string, ok bool) {
	if option := prog.OptionText("name", ""); option != "" {
		return option, isGoName(option)
	}
	base := strings.TrimSuffix(filepath.Base(prog.Filename), filepath.Ext(prog.Filename))
	var b strings.Builder
	up := true
	for _, r := range base {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ':
			up = true
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if up {
				r = unicode.ToUpper(r)
				up = false
			}
			b.WriteRune(r)
		}
	}
	name = b.String()
	return name, isGoName(name)
}

// TaskpoolPrefix lowers the leading run of capitals of the taskpool name: "Potrf" gives
// "potrf", "EP" gives "ep", "HTTPServer" gives "httpServer". Every unexported package-level
// identifier of the generated file starts with it.
func TaskpoolPrefix(name string) string {
	rs := []rune(name)
	n := 0
	for n < len(rs) && unicode.IsUpper(rs[n]) {
		n++
	}
	switch {
	case n == 0:
		return name
	case n == 1 || n == len(rs):
	default:
		n-- // keep the capital that starts the next word: HTTPServer -> httpServer
	}
	for i := 0; i < n; i++ {
		rs[i] = unicode.ToLower(rs[i])
	}
	return string(rs)
}

// isGoName reports whether s is a Go identifier and not a keyword.
func isGoName(s string) bool {
	if s == "" || GoKeywords[s] {
		return false
	}
	for i, r := range s {
		if !(unicode.IsLetter(r) || r == '_' || (i > 0 && unicode.IsDigit(r))) {
			return false
		}
	}
	return true
}

// GoNameErrors returns the errors of the names of prog that jdf2go gen cannot generate: a
// taskpool name that is not a Go identifier or collides in the generated file, globals
// that collide with what generated code refers to, definitions and flows named like what
// bodies receive. Check reports the same errors for a program whose code is Go.
func GoNameErrors(prog *Program) ErrorList {
	var l ErrorList
	goNames(prog, &l, true)
	return l
}

// goNames adds the errors of GoNameErrors to l; withIdent: also the error of an option
// name that is not an identifier (checkOptions reports it for every program).
func goNames(prog *Program, l *ErrorList, withIdent bool) {
	name, ok := TaskpoolName(prog)
	var opt *Property
	for _, o := range prog.Options {
		if o.Prop.Name == "name" {
			opt = o.Prop
		}
	}
	if opt != nil && prog.OptionText("name", "") != "" {
		what, pos := "%option name "+quote(name), opt.Value.Pos()
		switch {
		case !ok && GoKeywords[name]:
			l.Errorf(pos, "%s is a Go keyword; choose another name", what)
		case !ok:
			if withIdent {
				l.Errorf(pos, "%%option name %q is not a Go identifier", name)
			}
		default:
			badTaskpoolName(l, pos, what, name)
		}
	} else if !ok {
		l.Errorf(prog.Pos(), "cannot derive a Go name from %q: set %%option name", prog.Filename)
	} else {
		badTaskpoolName(l, prog.Pos(), "taskpool name "+quote(name)+" (from the file name)", name)
	}
	if !ok {
		name = ""
	}
	pfx := TaskpoolPrefix(name)
	for _, gl := range prog.Globals {
		if gl.Implicit {
			continue
		}
		n, pos := gl.Name, gl.Pos()
		switch {
		case ReservedInBodies[n]:
			l.Errorf(pos, "global %q: bodies and inline code receive %q from jdf2go; rename it", n, n)
		case n == "_":
			l.Errorf(pos, "global \"_\" is Go's blank identifier: its value could not be read; rename it")
		case GoPredeclared[n]:
			l.Errorf(pos, "global %q collides with Go's predeclared identifier %s; rename it", n, n)
		case GeneratedImports[n]:
			l.Errorf(pos, "global %q has the name of a package the generated code imports; rename it", n)
		case name == "":
		case n == name:
			l.Errorf(pos, "global %q has the name of the generated taskpool type (%%option name or the file name); rename one of them", n)
		case n == "New"+name || n == "Err"+name+"Argument" || n == "Err"+name+"Graph":
			l.Errorf(pos, "global %q collides with %s, declared by the generated file; rename it", n, n)
		case generatedPrefixed(n, pfx):
			l.Errorf(pos, "global %q collides with the identifiers the generated file declares (%s followed by a capital, a digit or _); rename it", n, pfx)
		}
	}
	for _, tc := range prog.Classes {
		for _, d := range tc.Defs {
			switch {
			case ReservedInBodies[d.Name]:
				l.Errorf(d.Pos(), "definition %q: bodies and inline code receive %q from jdf2go; rename it", d.Name, d.Name)
			case d.Name == "_":
				l.Errorf(d.Pos(), "definition \"_\" of %s is Go's blank identifier: its value could not be read; rename it", tc.Name)
			}
		}
		for _, f := range tc.Flows {
			// Hooks bind the flows as variables beside code that uses Go's predeclared
			// identifiers.
			switch {
			case ReservedInBodies[f.Name]:
				l.Errorf(f.NamePos, "flow %q: bodies and inline code receive %q from jdf2go; rename it", f.Name, f.Name)
			case f.Name == "_":
				l.Errorf(f.NamePos, "flow \"_\" of %s is Go's blank identifier: bodies could not refer to it; rename it", tc.Name)
			case GoPredeclared[f.Name]:
				l.Errorf(f.NamePos, "flow %q of %s collides with Go's predeclared identifier %s; rename it", f.Name, tc.Name, f.Name)
			}
			if d := tc.Def(f.Name); d != nil {
				l.Errorf(f.NamePos, "flow %q of %s has the name of the definition at %s", f.Name, tc.Name, where(prog, d.Pos()))
			}
		}
	}
}

// where formats a position of prog's file as "potrf.jdf:12:5".
func where(prog *Program, p lexer.Position) string {
	return filepath.Base(prog.Filename) + ":" + strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Column)
}

// badTaskpoolName reports a taskpool name (an identifier) that collides in the generated
// file.
func badTaskpoolName(l *ErrorList, pos lexer.Position, what, name string) {
	switch {
	case name == "_":
		l.Errorf(pos, "%s is Go's blank identifier; choose another name", what)
	case name == "init":
		l.Errorf(pos, "%s: Go reserves init for package initialisation functions; choose another name", what)
	case GoPredeclared[name]:
		l.Errorf(pos, "%s collides with Go's predeclared identifier %s; choose another name", what, name)
	case GeneratedImports[name]:
		l.Errorf(pos, "%s has the name of a package the generated code imports; choose another name", what)
	case GeneratedLocals[name]:
		l.Errorf(pos, "%s has the name of a variable of the generated functions; choose another name", what)
	}
}

// generatedPrefixed reports whether n has the form of an unexported identifier of the
// generated file: the prefix, then something that does not start with a lower-case letter.
func generatedPrefixed(n, pfx string) bool {
	rest, ok := strings.CutPrefix(n, pfx)
	if !ok || rest == "" || pfx == "" {
		return false
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return !unicode.IsLower(r)
}

func quote(s string) string { return strconv.Quote(s) }
