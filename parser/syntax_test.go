package parser

import (
	"strings"
	"testing"
)

// TestSyntaxMessages covers the wording of syntax errors where the corpus
// (testdata/invalid) does not: each place the grammar can stop, said in
// JDF terms, at the token where the input goes wrong.
func TestSyntaxMessages(t *testing.T) {
	const (
		head = "V [type = \"*rt.Vector\"]\nT(k)\n  k = 0 .. 3\n  : V(k)\n"
		body = "BODY\n{\n}\nEND\n"
	)
	tests := []struct{ src, want string }{
		{"T(k m)\n k = 0\n : V(k)\n" + body, `1:5: error: syntax error: unexpected identifier "m", expected ',' or ')' in the parameter list`},
		{"T(k)\n k = 0\n : (k)\n" + body, `3:4: error: syntax error: unexpected "(", expected the data collection of the affinity`},
		{"T(k)\n k = 0\n : V k\n" + body, `3:6: error: syntax error: unexpected identifier "k", expected '(' after the affinity collection`},
		{"T(k)\n k = 0\n : V(k k)\n" + body, `3:8: error: syntax error: unexpected identifier "k", expected ',' or ')'`},
		{"T(k)\n k = 0\n SIMCOST\n : V(k)\n" + body, `4:2: error: syntax error: unexpected ":", expected expression`},
		{head + "  READ <- V(k)\n" + body, `5:8: error: syntax error: unexpected "<-", expected flow name`},
		{head + "  READ X <- A T k\n" + body, `5:13: error: syntax error: expected dependency target (FLOW Class(args), collection(args), NEW or NULL), or a guard followed by '?'`},
		{head + "  READ X <- )\n" + body, `5:13: error: syntax error: unexpected ")", expected dependency target (FLOW Class(args), collection(args), NEW or NULL) or a guard`},
		{head + "  READ X <- V()\n" + body, `5:13: error: syntax error: expected dependency target (FLOW Class(args), collection(args), NEW or NULL), or a guard followed by '?'`},
		{head + "  READ X <- k ? A T(k) : \n" + body, `6:1: error: syntax error: unexpected BODY, expected dependency target (FLOW Class(args), collection(args), NEW or NULL) (a line that starts with the word body begins a BODY)`},
		{head + "  READ X <- k ? A T() : V(0)\n" + body, `5:19: error: syntax error: T() needs at least one argument`},
		{head + "  READ X <- k ? A T : V(0)\n" + body, `5:21: error: syntax error: unexpected ":", expected '(' and the arguments of T`},
		{head + "  READ X <- k ? [i = 1] V(i) : V(0)\n" + body, `5:25: error: syntax error: unexpected identifier "V", expected FLOW Class(args) after a named range`},
		{head + "  READ X <- [ = 1] A T(k)\n" + body, `5:15: error: syntax error: unexpected "=", expected index name of a named range`},
		{head + "  READ X <- [i = 1 j] A T(k)\n" + body, `5:20: error: syntax error: unexpected identifier "j", expected ',' or ']' in a named range`},
		{head + "  READ X <- [i 1] A T(k)\n" + body, `5:16: error: syntax error: unexpected integer 1, expected '=' after "i"`},
		{head + "  READ X <- V(k, (1)\n" + body, `6:1: error: syntax error: unexpected BODY, expected ',' or ')' (a line that starts with the word body begins a BODY)`},
		{head + "  READ X <- V(k) [type = ]\n" + body, `5:26: error: syntax error: unexpected "]", expected expression`},
		{head + "  READ X <- k ? V(k ? 1) : V(0)\n" + body, `5:24: error: syntax error: unexpected ")", expected ':' of the conditional expression`},
		{head + "  READ X <- V(99999999999999999999)\n" + body, `5:15: error: integer 99999999999999999999 out of range`},
		{head + "  READ X <- V(k)\n  ; k\n  foo\n" + body, `7:3: error: syntax error: unexpected identifier "foo", expected BODY`},
		{head + "  READ X <- V(k)\nBODY x\n{\n}\nEND\n", `6:6: error: syntax error: unexpected identifier "x", expected a property list or the end of the BODY line`},
		{"V [type \"x\"]\n", `1:9: error: syntax error: unexpected string "x", expected = after property "type"`},
		{"V [= 1]\n", `1:4: error: syntax error: unexpected "=", expected property name or ]`},
		{"%option = 1\n", `1:9: error: syntax error: unexpected "=", expected property name`},
		{"V [a = 1 = 2]\n", `1:10: error: syntax error: unexpected "=", expected property name or ]`},
		{"V = \n", `2:1: error: syntax error: unexpected end of file, expected expression`},
		{"%option x 3\n", `1:11: error: syntax error: unexpected integer 3, expected = after property "x"`},
		{"N\n%{ x %}\n%{ y %}\n", `2:1: error: syntax error: code block between items: a file has at most a prologue (first) and an epilogue (last)`},
		{"%{ x %}\n%{ y %}\nN\n", `2:1: error: syntax error: code block between items: a file has at most a prologue (first) and an epilogue (last)`},
		{"V\n)\n", `2:1: error: syntax error: unexpected ")", expected task class, global, %option or code block`},
	}
	for _, tt := range tests {
		_, diags := Parse("x.jdf", []byte(tt.src))
		if len(diags) == 0 || !strings.HasPrefix(diags[0].String(), "x.jdf:") || diags[0].String()[len("x.jdf:"):] != tt.want {
			t.Errorf("%q:\n got %v\nwant x.jdf:%s", tt.src, diags, tt.want)
		}
	}
}
