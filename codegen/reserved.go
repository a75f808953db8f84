package codegen

// Clashes between JDF names and Go. JDF allows any identifier, Go keywords included, and the
// generated functions use a few names of their own. A JDF name that would clash is renamed
// in generated code by appending "_"; user code (bodies, inline code) sees JDF names only
// through parameters and bindings that keep their spelling, so the renaming never shows
// there. Names that user code must see under their own spelling and that the generated code
// also needs (tp and task in bodies) are reported as errors instead.

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jdf2go/jdf2go/parser"
)

// goKeywords and goPredeclared are Go's keywords and predeclared identifiers; generated
// code uses several of the latter, so a JDF local bound under one of these names is renamed.
var (
	goKeywords    = parser.GoKeywords
	goPredeclared = parser.GoPredeclared
)

// internalNames are the variables and packages that generated functions use besides the JDF
// names: the parameters of rt.TaskClass functions, scratch variables, and the packages the
// generated file refers to.
var internalNames = map[string]bool{
	"tp": true, "l": true, "e": true, "g": true, "flows": true, "yield": true, "task": true,
	"n": true, "pl": true, "err": true, "ok": true, "c": true, "dev": true, "v": true,
	"rt": true, "fmt": true, "errors": true, "io": true,
}

// isFileName reports whether id follows the program's prefix in one of the generated file's
// own top-level identifiers (<p>Source and the helpers): a task class with such a name takes
// a "_" in its identifiers, as two classes whose names differ only in case do.
func isFileName(id string) bool { return id == sourceSuffix || slices.Contains(helperNames[:], id) }

// goVar returns the Go variable name for a JDF local, parameter or named-range index inside
// a generated function.
func goVar(name string) string {
	if goKeywords[name] || goPredeclared[name] || internalNames[name] || isTempName(name) {
		return name + "_"
	}
	return name
}

// userParam returns the Go name under which user code sees a JDF name: its own spelling,
// unless that is a Go keyword (user code cannot refer to such a name anyway).
func userParam(name string) string {
	if goKeywords[name] {
		return name + "_"
	}
	return name
}

// fieldName returns the struct field of a global: its JDF name, unless it clashes with a
// method or field of the generated taskpool type or is a keyword.
func fieldName(name string) string {
	if taskpoolMembers[name] {
		return name + "_"
	}
	return userParam(name)
}

// field returns the struct field of gl. A hidden global that the constructor computes is
// unexported, so that no caller changes it after the constructor: a name in capitals is
// lowered ("GEMM_BATCH" gives "gemm_batch"), another loses the capital of its first letter
// ("Name" gives "name"). The fields of the other globals keep the JDF name (fieldName): the
// caller gives them, or sets them (a hidden global without a value). A field that would
// clash with another gets underscores.
func (g *generator) field(gl *parser.Global) string {
	if g.fields == nil {
		g.fields = globalFields(g.prog.Globals)
	}
	return g.fields[gl]
}

// globalFields names the struct fields of the globals (generator.field).
func globalFields(globals []*parser.Global) map[*parser.Global]string {
	out := map[*parser.Global]string{}
	taken := map[string]bool{}
	for _, gl := range globals {
		if !(gl.Hidden && gl.Default != nil) {
			out[gl] = fieldName(gl.Name)
			taken[out[gl]] = true
		}
	}
	for _, gl := range globals {
		if _, ok := out[gl]; ok {
			continue
		}
		name := gl.Name
		if r, n := utf8.DecodeRuneInString(name); unicode.IsUpper(r) {
			if strings.ToUpper(name) == name {
				name = strings.ToLower(name)
			} else {
				name = string(unicode.ToLower(r)) + name[n:]
			}
		}
		name = userParam(name)
		for taken[name] {
			name += "_"
		}
		out[gl], taken[name] = name, true
	}
	return out
}

// taskpoolMembers are the methods and fields of the generated taskpool type, including those
// promoted from the embedded *rt.Taskpool: a global with one of these names would hide it.
var taskpoolMembers = map[string]bool{
	"Taskpool": true, "Verify": true, "WriteDOT": true, "Property": true,
	"Name": true, "Globals": true, "Classes": true, "SetPriority": true, "Context": true,
	"SetArena": true, "Arena": true, "NewCopy": true, "Total": true, "Remaining": true,
	"Done": true, "Err": true, "Wait": true, "Cancel": true, "VisitSuccessors": true,
	"VisitPredecessors": true,
}

// isTempName reports whether name has the form of the temporaries of ternaries (expr.go):
// tern followed by digits.
func isTempName(name string) bool {
	digits := strings.TrimPrefix(name, tempPrefix)
	if len(digits) == len(name) || digits == "" {
		return false
	}
	for _, r := range digits {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
