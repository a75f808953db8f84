package parser

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/alecthomas/participle/v2/lexer"
)

// rulesLexer is participle's regexp interpretation of lexRules, which the
// generated lexer must equal.
var rulesLexer = lexer.MustStateful(lexRules)

// TestLexerRulesJSON keeps testdata/lexer.json, the input of the lexer
// generator, equal to lexRules (go test ./parser -run LexerRules -update
// rewrites it; see lexer_gen.go for the command that regenerates the lexer).
func TestLexerRulesJSON(t *testing.T) {
	b, err := json.MarshalIndent(rulesLexer, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/lexer.json", append(b, '\n'))
}

// TestGeneratedLexer checks that the generated lexer (lexer_gen.go) and the
// regexp-based lexer built from lexRules produce the same raw tokens, so
// that the generated file is neither stale nor different in meaning (it
// matches without backtracking).
func TestGeneratedLexer(t *testing.T) {
	for name, src := range lexerSamples(t) {
		if d := compareRawLexers(src); d != "" {
			t.Errorf("%s: %s", name, d)
		}
	}
}

// FuzzGeneratedLexer is TestGeneratedLexer on arbitrary input.
func FuzzGeneratedLexer(f *testing.F) {
	for _, src := range lexerSamples(f) {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > fuzzMaxInput {
			return
		}
		if d := compareRawLexers(src); d != "" {
			t.Error(d)
		}
	})
}

func lexerSamples(t testing.TB) map[string]string {
	m := map[string]string{"gen": string(genJDF(300))}
	for _, path := range corpus(t, "valid", "parsec", "invalid", "fmt") {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		m[path] = string(b)
	}
	for i, src := range []string{
		"\nbody\nEND\n", "x\n  Body [a = on]\nEND  \nend\nEND", "\"a\\\"b\\", "/*/* */ */ /* /* */",
		"%{ %%} %} %c{ } inline_c %{ %} extern \"Go\" %{ %}", "extern \"C\" %{", "%{", "\r\rBODY\r\r",
		"bodyx body.y body.5 %option %OPTION x", "~#@$'\\.{}]", "é\xff", "a<-1 a->b 1..2 <<= >>= ==!=&&||",
		"[ on OFF Yes NEW x.y ] ] [", "BODY // c\n{\nEND",
	} {
		m["sample"+string(rune('a'+i))] = src
	}
	return m
}

// compareRawLexers returns the first difference between the tokens of the
// two raw lexers on src (with the newlines scan adds), or "".
func compareRawLexers(src string) string {
	in := "\n" + strings.ReplaceAll(src, "\r", "\n") + "\n"
	a := rawTokens(rulesLexer, in)
	b := rawTokens(jdfLexer, in)
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y lexer.Token
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return "regexp lexer " + x.GoString() + ", generated lexer " + y.GoString()
		}
	}
	return ""
}

func rawTokens(def lexer.Definition, src string) []lexer.Token {
	l, err := def.(lexer.StringDefinition).LexString("x.jdf", src)
	if err != nil {
		return []lexer.Token{{Value: "error: " + err.Error()}}
	}
	var out []lexer.Token
	for {
		t, err := l.Next()
		if err != nil {
			return append(out, lexer.Token{Value: "error: " + err.Error()})
		}
		out = append(out, t)
		if t.EOF() {
			return out
		}
	}
}
