package parser

// Syntax errors. The grammar is LL(1) (grammar.go), so participle stops at
// the token where the input goes wrong; its message names the rest of the
// production it was reading, in EBNF (`unexpected token ":" (expected
// Affinity Flow* ...)`). syntaxError turns that into the Go compiler's
// wording, "syntax error: unexpected X, expected Y", with Y said in JDF
// terms, from the production participle expected and, where one production
// is used in two places, from the tokens around the error. The custom
// productions (expr.go, flow.go) word their errors themselves.

import (
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

const (
	codeBetween  = "syntax error: code block between items: a file has at most a prologue (first) and an epilogue (last)"
	bodyNoEnd    = "BODY without END (a line holding only END closes a body)"
	itemExpected = "task class, global, %option or code block"
	targetWords  = "dependency target (FLOW Class(args), collection(args), NEW or NULL)"
)

// expectations maps the start of what participle expected (the EBNF of the
// rest of a production) to what to say, for the productions used in one
// place only.
var expectations = []struct{ prefix, say string }{
	{`(<ident> ("," <ident>)*) ")"`, "parameter name"},
	{`")" Props? definition+`, "',' or ')' in the parameter list"},
	{`Affinity`, "another definition, SIMCOST or ':' (affinity)"},
	{`<ident> "(" expr`, "the data collection of the affinity"},
	{`"(" expr`, "'(' after the affinity collection"},
	{`<bodytext>`, "a property list or the end of the BODY line"},
	{`property`, "property name"},
	{`expr`, "expression"},
	{`rangeExpr`, "expression"},
	{`")"`, "',' or ')'"},
}

// syntaxError converts the error of a parse into a diagnostic; f is the
// partial tree.
func (c *converter) syntaxError(err error, f *file) *Diagnostic {
	pe, ok := err.(participle.Error)
	if !ok { // not from the grammar: an invariant of participle broke
		panic(err)
	}
	pos := pe.Position()
	at := c.tokenAt(pos.Offset)
	tok := &c.toks[at]
	msg := pe.Message()
	switch e := err.(type) {
	case *syntaxError:
		msg = e.msg
	case *participle.UnexpectedTokenError:
		expected := ""
		if i := strings.Index(msg, " (expected "); i >= 0 {
			expected = msg[i+len(" (expected ") : len(msg)-1]
		}
		tok = &e.Unexpected
		at = c.tokenAt(tok.Pos.Offset)
		se := c.explain(tok, at, expected, f)
		pos, msg = se.pos, se.msg
	}
	if tok.Type == tPunct && tok.Value == "%" && at+1 < len(c.toks) {
		if n := &c.toks[at+1]; n.Type == tIdent && strings.EqualFold(n.Value, "option") && strings.HasPrefix(msg, "syntax error: unexpected") {
			msg += " (%option must start in column 1)"
		}
	}
	return &Diagnostic{Pos: pos, Severity: Error, Msg: msg}
}

// explain words an unexpected token tok (the at'th) where participle
// expected the EBNF expected, in the parse of f.
func (c *converter) explain(tok *lexer.Token, at int, expected string, f *file) *syntaxError {
	switch {
	case expected == "":
		// The end of the file was expected: after the epilogue, or
		// something that cannot start an item.
		if f.Epilogue != nil { // a code block, then more items
			return &syntaxError{pos: f.Epilogue.Pos, msg: codeBetween}
		}
		return unexpected(tok, itemExpected)
	case tok.EOF() && (strings.HasPrefix(expected, "<bodytext>") || strings.HasPrefix(expected, "<end>")):
		for i := at; i >= 0; i-- { // said about the last BODY
			if c.toks[i].Type == tBody {
				return &syntaxError{pos: c.toks[i].Pos, msg: bodyNoEnd}
			}
		}
	case strings.HasPrefix(expected, "property+"):
		if tok.Type == tPunct && tok.Value == "]" {
			return &syntaxError{pos: tok.Pos, msg: "syntax error: empty property list"}
		}
		return unexpected(tok, "property name or ]")
	case strings.HasPrefix(expected, "definition+"):
		return unexpected(tok, "a definition (NAME = range) for each parameter of "+c.className(at))
	case strings.HasPrefix(expected, "Body+"):
		if c.afterPriority(at) {
			return unexpected(tok, "BODY")
		}
		return unexpected(tok, "a flow, ';' (priority) or BODY")
	case expected == "<ident>": // after a comma in the parameter list
		return unexpected(tok, "parameter name")
	case expected == `"]"`: // of a property list
		return unexpected(tok, "property name or ]")
	case strings.HasPrefix(expected, `"=" expr`) && at > 0:
		return unexpected(tok, "= after property "+strconv.Quote(c.toks[at-1].Value))
	}
	for _, e := range expectations {
		if strings.HasPrefix(expected, e.prefix) {
			return unexpected(tok, e.say)
		}
	}
	return unexpected(tok, expected)
}

// className returns the name of the task class whose header ends just
// before token at: NAME '(' params ')' props?.
func (c *converter) className(at int) string {
	i, depth := at-1, 0
	for ; i > 0; i-- {
		if t := &c.toks[i]; t.Type == tPunct {
			switch t.Value {
			case ")", "]":
				depth++
			case "(", "[":
				depth--
			}
			if depth == 0 && t.Value == "(" {
				return c.toks[i-1].Value
			}
		}
	}
	return "the task class"
}

// afterPriority reports whether token at follows a priority line: the
// tokens before it are an expression that follows a ';'.
func (c *converter) afterPriority(at int) bool {
	for i := at - 1; i >= 0; i-- {
		t := &c.toks[i]
		switch t.Type {
		case tIdent, tInt, tOnOff, tString, tCode, tArrow: // a->b is a name
			continue
		case tPunct:
			if t.Value == ";" {
				return true
			}
			if _, ok := binOp(t); ok {
				continue
			}
			switch t.Value {
			case "(", ")", "?", ":", ",", "!":
				continue
			}
		}
		return false
	}
	return false
}
