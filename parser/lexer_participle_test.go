package parser

import (
	"strings"
	"testing"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// globals is a toy participle grammar over Lexer: a list of global
// declarations with properties, enough to show the tokens fit participle.
type globals struct {
	Items []*struct {
		Name  string `parser:"@Ident"`
		Props []*struct {
			Key   string `parser:"@Ident '='"`
			Value string `parser:"@(String | Ident | Int | OnOff)"`
		} `parser:"('[' @@+ ']')?"`
	} `parser:"@@*"`
}

func TestParticipleLexer(t *testing.T) {
	p := participle.MustBuild[globals](participle.Lexer(Lexer), participle.Elide("Comment"), participle.Unquote("String"))
	src := "// globals\nNB [type = \"int\" hidden = on]\ndescA /* c */ [type = \"*rt.TiledMatrix\"]\n"
	g, err := p.ParseString("g.jdf", src)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Items) != 2 || g.Items[0].Props[0].Value != "int" || g.Items[0].Props[1].Value != "on" || g.Items[1].Name != "descA" {
		t.Errorf("parsed %+v", g.Items)
	}
	lx, err := Lexer.Lex("b.jdf", strings.NewReader("T(k)\nBODY\n{ }\nEND\n"))
	if err != nil {
		t.Fatal(err)
	}
	toks, err := lexer.ConsumeAll(lx)
	if err != nil {
		t.Fatal(err)
	}
	sym := lexer.SymbolsByRune(Lexer)
	var kinds []string
	for _, tk := range toks {
		kinds = append(kinds, sym[tk.Type])
	}
	want := "Ident Punct Ident Punct Body BodyText End EOF"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("token kinds %s, want %s", got, want)
	}
	if _, err := Lexer.Lex("bad.jdf", strings.NewReader("\"open")); err == nil {
		t.Error("an unterminated string must fail lexing")
	}
}
