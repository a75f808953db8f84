package codegen

// Identifiers derived from JDF names. Every generated top-level identifier starts with the
// program's prefix (the taskpool name with its leading capitals lowered: "Potrf" gives
// "potrf", "EP" gives "ep"), so that several generated files can share a package.

import (
	"unicode"
	"unicode/utf8"

	"github.com/jdf2go/jdf2go/parser"
)

// lowerPrefix returns the prefix of the unexported identifiers of a program whose taskpool
// type is name (parser.TaskpoolPrefix).
func lowerPrefix(name string) string { return parser.TaskpoolPrefix(name) }

// upperFirst capitalises the first letter: "gemm" -> "Gemm", "POTRF" stays.
func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// isIdent reports whether s is a Go identifier (and not a keyword).
func isIdent(s string) bool {
	if s == "" || goKeywords[s] {
		return false
	}
	for i, r := range s {
		if !(unicode.IsLetter(r) || r == '_' || (i > 0 && unicode.IsDigit(r))) {
			return false
		}
	}
	return true
}
