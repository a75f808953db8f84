package parser

import (
	"errors"
	"testing"

	"github.com/alecthomas/participle/v2/lexer"
)

func TestErrorList(t *testing.T) {
	var l ErrorList
	if l.Err() != nil {
		t.Fatal("empty list is an error")
	}
	at := func(line, col int) lexer.Position { return lexer.Position{Filename: "a.jdf", Line: line, Column: col} }
	l.Warnf(at(3, 1), "w3")
	l.Errorf(at(2, 5), "e2b")
	l.Errorf(at(2, 1), "e2a")
	l.Warnf(at(1, 1), "w1")
	if l.Err() == nil || !l.HasErrors() {
		t.Fatal("errors not reported")
	}
	l.Sort()
	want := "a.jdf:1:1: warning: w1\na.jdf:2:1: error: e2a\na.jdf:2:5: error: e2b\na.jdf:3:1: warning: w3"
	if l.Error() != want {
		t.Errorf("sorted:\n%s\nwant\n%s", l.Error(), want)
	}
	l.RemoveMultiples()
	if len(l) != 3 || l[1].Msg != "e2a" {
		t.Errorf("RemoveMultiples kept %v", l)
	}
	var d *Diagnostic
	if !errors.As(l[1], &d) || d.Message() != "e2a" || d.Position().Line != 2 {
		t.Errorf("Diagnostic does not act as participle.Error: %v", l[1])
	}
	warnOnly := ErrorList{{Pos: at(1, 1), Severity: Warning, Msg: "w"}}
	if warnOnly.Err() != nil {
		t.Error("warnings alone are an error")
	}
}

func TestSuggest(t *testing.T) {
	cands := []string{"SYRK", "GEMM", "POTRF", "name", "descA"}
	for in, want := range map[string]string{
		"SYRKK": ` (did you mean "SYRK"?)`,
		"nmae":  ` (did you mean "name"?)`,
		"DESCA": ` (did you mean "descA"?)`,
		"xyz":   "",
		"GEMM":  "",
	} {
		if got := suggest(in, cands); got != want {
			t.Errorf("suggest(%q) = %q, want %q", in, got, want)
		}
	}
}
