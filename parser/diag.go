package parser

import (
	"fmt"
	"sort"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// Severity says whether a Diagnostic fails the check.
type Severity int

const (
	// Error diagnostics make `jdf2go check` exit 1 and stop code generation.
	Error Severity = iota
	// Warning diagnostics are printed; they fail the check only with -Werror.
	Warning
)

func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// A Diagnostic is one message about the JDF source, at a position.
// It implements participle.Error, so syntax and semantic errors print alike.
type Diagnostic struct {
	Pos      lexer.Position
	Severity Severity
	Msg      string
}

// String formats the diagnostic the way the Go compiler does:
// "file.jdf:LINE:COL: error: message".
func (d *Diagnostic) String() string {
	return fmt.Sprintf("%s:%d:%d: %s: %s", d.Pos.Filename, d.Pos.Line, d.Pos.Column, d.Severity, d.Msg)
}

func (d *Diagnostic) Error() string { return d.String() }

// Message is the message without position (participle.Error).
func (d *Diagnostic) Message() string { return d.Msg }

// Position is where the diagnostic points (participle.Error).
func (d *Diagnostic) Position() lexer.Position { return d.Pos }

// ErrorList collects diagnostics. The zero value is an empty list, ready to use.
type ErrorList []*Diagnostic

// Add appends a diagnostic.
func (l *ErrorList) Add(pos lexer.Position, sev Severity, msg string) {
	*l = append(*l, &Diagnostic{Pos: pos, Severity: sev, Msg: msg})
}

// Errorf appends an error.
func (l *ErrorList) Errorf(pos lexer.Position, format string, args ...any) {
	l.Add(pos, Error, fmt.Sprintf(format, args...))
}

// Warnf appends a warning.
func (l *ErrorList) Warnf(pos lexer.Position, format string, args ...any) {
	l.Add(pos, Warning, fmt.Sprintf(format, args...))
}

// Len, Swap and Less make ErrorList a sort.Interface ordered by file, line,
// column, severity (errors first) and message.
func (l ErrorList) Len() int      { return len(l) }
func (l ErrorList) Swap(i, j int) { l[i], l[j] = l[j], l[i] }
func (l ErrorList) Less(i, j int) bool {
	a, b := l[i], l[j]
	if a.Pos.Filename != b.Pos.Filename {
		return a.Pos.Filename < b.Pos.Filename
	}
	if a.Pos.Line != b.Pos.Line {
		return a.Pos.Line < b.Pos.Line
	}
	if a.Pos.Column != b.Pos.Column {
		return a.Pos.Column < b.Pos.Column
	}
	if a.Severity != b.Severity {
		return a.Severity < b.Severity
	}
	return a.Msg < b.Msg
}

// Sort orders the list by position (stable, so equal keys keep their order).
func (l ErrorList) Sort() { sort.Stable(l) }

// RemoveMultiples sorts the list and keeps only the first diagnostic of each
// severity per line, as go/scanner does, so that one mistake is reported once.
func (l *ErrorList) RemoveMultiples() {
	l.Sort()
	out := (*l)[:0]
	for i, d := range *l {
		if i > 0 {
			p := out[len(out)-1]
			if p.Pos.Filename == d.Pos.Filename && p.Pos.Line == d.Pos.Line && p.Severity == d.Severity {
				continue
			}
		}
		out = append(out, d)
	}
	*l = out
}

// HasErrors reports whether the list holds an Error (not only warnings).
func (l ErrorList) HasErrors() bool {
	for _, d := range l {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Err returns nil when the list holds no Error, and the list otherwise,
// so that callers can write `return list.Err()`. Warnings alone are not errors.
func (l ErrorList) Err() error {
	if !l.HasErrors() {
		return nil
	}
	return l
}

// Error prints every diagnostic, one per line.
func (l ErrorList) Error() string {
	var b strings.Builder
	for i, d := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(d.String())
	}
	return b.String()
}
