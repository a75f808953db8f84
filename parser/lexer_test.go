package parser

import (
	"strconv"
	"strings"
	"testing"
)

// lexString renders the tokens of src compactly: kinds, with values for
// identifiers, integers, strings and code.
func lexString(src string) (string, ErrorList) {
	sc := scan("x.jdf", src, false)
	var parts []string
	for _, t := range sc.toks {
		switch t.Type {
		case tEOF, tComment:
		case tIdent:
			parts = append(parts, "ID("+t.Value+")")
		case tInt:
			parts = append(parts, "INT("+t.Value+")")
		case tOnOff:
			v, _ := onOffValue(t.Value)
			parts = append(parts, "INT("+strconv.FormatInt(v, 10)+")")
		case tString:
			v, _ := unquote(t.Value)
			parts = append(parts, "STR("+v+")")
		case tCode:
			c := splitCode(t.Value)
			parts = append(parts, "CODE("+t.Value[c.text:c.textEnd]+")")
		case tBodyText:
			parts = append(parts, "TEXT("+t.Value+")")
		case tAccess:
			parts = append(parts, "access type")
		case tBody:
			parts = append(parts, "BODY")
		case tEnd:
			parts = append(parts, "END")
		case tOption:
			parts = append(parts, "%option")
		default:
			parts = append(parts, t.Value)
		}
	}
	return strings.Join(parts, " "), sc.diags
}

// TestLexerQuirks covers the lexical rules marked (tested) in
// docs/language.md, "Lexical rules", with jdf2go's documented choice where it
// deliberately differs from jdf2c.
func TestLexerQuirks(t *testing.T) {
	tests := []struct {
		name, src, want string
		diag            string // substring of the only diagnostic, or ""
	}{
		{"stray char dropped", "~k", "ID(k)", "stray character '~' ignored"},
		{"no floats", "1.5", "INT(1) INT(5)", "stray character '.' ignored"},
		{"no hex", "0x10", "INT(0) ID(x10)", ""},
		{"a<-1 is an arrow", "a<-1", "ID(a) <- INT(1)", ""},
		{"a->b", "a->b", "ID(a) -> ID(b)", ""},
		{"option in column 1", "%option name = x", "%option ID(name) = ID(x)", ""},
		{"option any case", "%OPTION a = 1", "%option ID(a) = INT(1)", ""},
		{"option indented", " %option name = x", "% ID(option) ID(name) = ID(x)", ""},
		{"body at line start", "body = 1\n", "BODY = INT(1) TEXT()", ""},
		{"body indented any case", "x\n  Body\nfoo\nEND\n", "ID(x) BODY TEXT(foo\n) END", ""},
		{"bodyx is a name", "bodyx = 1", "ID(bodyx) = INT(1)", ""},
		{"body not at line start", "x body", "ID(x) ID(body)", ""},
		{"extern C", "extern \"C\" %{\nint x;\n%}", "CODE(\nint x;\n)", ""},
		{"extern Go", "extern \"Go\" %{\nvar x int\n%}", "CODE(\nvar x int\n)", ""},
		{"extern C++", "extern \"C++\" %{\n%}", "CODE(\n)", "unsupported code block language \"C++\""},
		{"extern alone is a name", "extern x", "ID(extern) ID(x)", ""},
		{"%% does not close", "%{ a %%} b %}", "CODE( a %%} b )", ""},
		{"inline_c", "inline_c %{ return 1; %}", "CODE( return 1; )", ""},
		{"%c{", "%c{ return 1; %}", "CODE( return 1; )", ""},
		{"unterminated code", "%{ x", "CODE( x)", "code block not terminated"},
		{"string of digits", `"6"`, "STR(6)", ""},
		{"string of an operator", `"*"`, "STR(*)", ""},
		{"string of blanks", `"  "`, "STR(  )", ""},
		{"string escapes", `"\101\n\q"`, "STR(A\nq)", ""},
		{"octal out of range", `"\777"`, "STR(\xff)", "octal escape \\777 out of range"},
		{"newline in string", "\"ab\ncd", "STR(ab) ID(cd)", "string not terminated"},
		{"dotted names", "descA.mt A.size x.y.z", "ID(descA.mt) ID(A.size) ID(x.y.z)", ""},
		{"range dots", "k..N 0..1", "ID(k) .. ID(N) INT(0) .. INT(1)", ""},
		{"keywords", "CTL READ RO WRITE WO RW NEW NULL SIMCOST", "access type access type access type access type access type access type NEW NULL SIMCOST", ""},
		{"props mode", "[type = NEW x = on y = OFF z = yes w = no v = true u = false]",
			"[ ID(type) = ID(NEW) ID(x) = INT(1) ID(y) = INT(0) ID(z) = INT(1) ID(w) = INT(0) ID(v) = INT(1) ID(u) = INT(0) ]", ""},
		{"on is a name outside props", "on", "ID(on)", ""},
		{"bracket dropped outside props", "]", "", "stray character ']' ignored"},
		{"operators", "== != & && | || ^ < <= > >= ! + - * / % << >> = ? : ; , ( )",
			"== != & && | || ^ < <= > >= ! + - * / % << >> = ? : ; , ( )", ""},
		{"comment nesting at line start", "/* a\n/* b\n*/ still comment */ x", "ID(x)", ""},
		{"comment nesting right after opener", "/*/* a */ b */ x", "ID(x)", ""},
		{"mid-line opener does not nest", "/* a /* b */ x", "ID(x)", ""},
		{"nested unterminated", "/* a\n/* b\n*/ x", "", "nested comment"},
		{"line comment", "a // b\nc", "ID(a) ID(c)", ""},
		{"line comment at EOF", "a // b", "ID(a)", ""},
		{"END must be alone", "x\nBODY\nEND  \nEND /* x */\nendif\nend;\nEND\n",
			"ID(x) BODY TEXT(END  \nEND /* x */\nendif\nend;\n) END", ""},
		{"END any case, indented", "x\nBODY\na\n  end\n", "ID(x) BODY TEXT(a\n  ) END", ""},
		{"END at EOF", "x\nBODY\na\nEND", "ID(x) BODY TEXT(a\n) END", ""},
		{"BODY props over lines", "x\nBODY [type = CUDA\n  batch = true]\nb\nEND\n",
			"ID(x) BODY [ ID(type) = ID(CUDA) ID(batch) = INT(1) ] TEXT(b\n) END", ""},
		{"line comment ends the BODY line", "x\nBODY // c\n{\n}\nEND\n", "ID(x) BODY TEXT({\n}\n) END", ""},
		{"body line /* is text", "x\nBODY\n/*\na\nEND\n", "ID(x) BODY TEXT(/*\na\n) END", ""},
		{"body digits line is text", "x\nBODY\n42\n->\nEND\n", "ID(x) BODY TEXT(42\n->\n) END", ""},
		{"no END", "x\nBODY\na\n", "ID(x) BODY TEXT(a\n)", ""},
		{"CRLF", "a\r\nBODY\r\nb\r\nEND\r\nc", "ID(a) BODY TEXT(b\r\n) END ID(c)", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, diags := lexString(tt.src)
			if got != tt.want {
				t.Errorf("tokens of %q:\n got %s\nwant %s", tt.src, got, tt.want)
			}
			switch {
			case tt.diag == "" && len(diags) > 0:
				t.Errorf("unexpected diagnostics: %v", diags)
			case tt.diag != "" && (len(diags) == 0 || !strings.Contains(diags[0].Msg, tt.diag)):
				t.Errorf("want a diagnostic containing %q, got %v", tt.diag, diags)
			}
		})
	}
}

func TestPositions(t *testing.T) {
	src := "N [type = \"int\"]\r\nT(k)\n  k = 0 .. N\n  : V(k)\nBODY\n\tbody text\nEND\n"
	prog, diags := Parse("p.jdf", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	tc := prog.Classes[0]
	checks := []struct {
		what       string
		line, col  int
		gotL, gotC int
	}{
		{"class", 2, 1, tc.Pos().Line, tc.Pos().Column},
		{"definition", 3, 3, tc.Defs[0].Pos().Line, tc.Defs[0].Pos().Column},
		{"range end", 3, 12, tc.Defs[0].Value.(*RangeExpr).To.Pos().Line, tc.Defs[0].Value.(*RangeExpr).To.Pos().Column},
		{"affinity name", 4, 5, tc.Affinity.NamePos.Line, tc.Affinity.NamePos.Column},
		{"body", 5, 1, tc.Bodies[0].Pos().Line, tc.Bodies[0].Pos().Column},
		{"body text", 6, 1, tc.Bodies[0].TextPos.Line, tc.Bodies[0].TextPos.Column},
		{"END", 7, 1, tc.Bodies[0].EndKw.Line, tc.Bodies[0].EndKw.Column},
	}
	for _, c := range checks {
		if c.gotL != c.line || c.gotC != c.col {
			t.Errorf("%s at %d:%d, want %d:%d", c.what, c.gotL, c.gotC, c.line, c.col)
		}
	}
	if got := src[tc.Bodies[0].TextPos.Offset:][:len("\tbody")]; got != "\tbody" {
		t.Errorf("body text offset points at %q", got)
	}
}

// TestLexerLineBreaks: a lone \r is a line break like \n and \r\n,
// for BODY, END, %option and positions.
func TestLexerLineBreaks(t *testing.T) {
	for _, nl := range []string{"\n", "\r\n", "\r"} {
		src := strings.ReplaceAll("a\nBODY\nb\nEND\n%option x = 1\n  c", "\n", nl)
		sc := scan("x.jdf", src, false)
		got, _ := lexString(src)
		if want := "ID(a) BODY TEXT(b" + nl + ") END %option ID(x) = INT(1) ID(c)"; got != want {
			t.Errorf("%q: tokens %s, want %s", nl, got, want)
		}
		if c := sc.toks[len(sc.toks)-2]; c.Pos.Line != 6 || c.Pos.Column != 3 {
			t.Errorf("%q: c at %d:%d, want 6:3", nl, c.Pos.Line, c.Pos.Column)
		}
	}
}

// TestLexerEndOnBodyLine pins a difference with jdf2c that only malformed
// input shows: a word starting with end on the BODY line (after BODY, where
// only properties and comments belong) is read as END. Both are errors.
func TestLexerEndOnBodyLine(t *testing.T) {
	if got, _ := lexString("x\nBODY end\n"); got != "ID(x) BODY END" {
		t.Errorf("tokens %s", got)
	}
	if _, diags := Parse("x.jdf", []byte("V\nT(k)\n k = 0\n : V(k)\nBODY end\n{\n}\nEND\n")); !diags.HasErrors() {
		t.Error("END on the BODY line must be a syntax error")
	}
}
