package codegen

// Identifiers derived from JDF names. Every generated top-level identifier starts with the
// program's prefix (the taskpool name with its leading capitals lowered: "Potrf" gives
// "potrf", "EP" gives "ep"), so that several generated files can share a package.

import (
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// taskpoolName returns the Go name of the taskpool type: `%option name`, else the file name
// in CamelCase ("ctl_gather.jdf" gives "CtlGather"). ok is false when no Go identifier can
// be derived.
func taskpoolName(option, filename string) (string, bool) {
	if option != "" {
		return option, isIdent(option)
	}
	base := strings.TrimSuffix(filepath.Base(filename), filepath.Ext(filename))
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
	name := b.String()
	return name, isIdent(name)
}

// lowerPrefix lowers the leading run of capitals of a Go name: "Potrf" -> "potrf",
// "EP" -> "ep", "HTTPServer" -> "httpServer".
func lowerPrefix(name string) string {
	rs := []rune(name)
	n := 0
	for n < len(rs) && unicode.IsUpper(rs[n]) {
		n++
	}
	switch {
	case n == 0:
		return name
	case n == 1 || n == len(rs):
		n = min(n, len(rs))
	default:
		n-- // keep the capital that starts the next word: HTTPServer -> httpServer
	}
	for i := 0; i < n; i++ {
		rs[i] = unicode.ToLower(rs[i])
	}
	return string(rs)
}

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
