package parser

import "testing"

// TestGrammarEBNF keeps testdata/grammar.ebnf equal to the grammar
// participle derives from the productions of grammar.go, so that every
// grammar change shows in review (go test ./parser -run GrammarEBNF -update
// rewrites it).
func TestGrammarEBNF(t *testing.T) {
	golden(t, "testdata/grammar.ebnf", []byte(grammar.String()+"\n"))
}
