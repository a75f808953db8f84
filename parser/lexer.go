package parser

// The JDF lexer is one participle stateful lexer, lexRules, compiled to Go
// by participle's generator (lexer_gen.go), with one state per mode of
// PaRSEC's flex scanner (docs/language.md, "Lexical rules"):
//
//	Root      INITIAL: keywords, code blocks, BODY and %option at line start
//	Props     after '[' until ']': no keywords, no '[', on/off words are integers
//	BodyInit  after BODY until the newline that ends the BODY line
//	Body      whole lines, up to a line that is exactly `ws* END`
//	Comment   /* ... */, with jdf2c's nesting rule
//
// A regexp rule sees only the text in front of it, so the context the flex
// rules get from `^` is carried by the rules themselves:
//
//   - Line-start tokens carry the newline before them: BODY is
//     `\n[ \t\v\f]*body`, %option is `\n%option`. The input gets one newline
//     in front, so the first line of the file is a line like the others,
//     and one at the end, so that every line ends with a newline.
//   - A lone carriage return is a line break; the rules see it as a
//     newline (it is replaced before lexing, offsets unchanged).
//   - Body lines are whole-line rules: BodyLine matches any line except one
//     that is blanks + END, spelled as a union of prefix-free alternatives,
//     so that BodyLine fails exactly on the END line. Body then returns to
//     BodyInit, whose first rule reads END and pops back to Root. Only a
//     line start can follow a body line, and a valid BODY line holds only
//     blanks, properties and comments, so END is not otherwise seen there.
//   - Whether a word is a keyword (Root) or an on/off integer (Props) is
//     decided by a switch (keywordType), as flex does with its keyword rules,
//     because the identifier rule (dotted names are one token) is longer.
//   - Code blocks are one rule each: `%` followed by anything but `}` is
//     consumed as a pair, so `%%}` does not close a block.
//   - Names are Go's identifiers; a word takes any non-ASCII character,
//     and the scanner reports those that are not letters or digits.
//   - Characters matched by no other rule are matched by Stray, and become
//     warnings instead of vanishing silently as in jdf2c.
//
// Every rule is written so that participle's generated lexer (lexer_gen.go),
// which matches greedily without backtracking, accepts exactly what the
// regexp engine accepts: alternatives are prefix-free or longest first, no
// pattern uses `.`, `\b`, `^`, `$` or counted repetition, which the
// generator gets wrong.
// TestGeneratedLexer checks that the two agree.
//
// The scanner (below) passes the lexer's tokens to the grammar. It joins
// what one token cannot hold: a comment (its pieces, as comments nest) and
// a body (its lines); it drops blanks and newlines, tells keywords from
// names, computes positions (byte columns, as go/token does) and reports
// lexical errors as diagnostics.

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2/lexer"
)

const (
	blanks = `[ \t\v\f]`
	nl     = `\r?\n`
	// Identifiers are Go's: a letter (any Unicode letter) or _, then letters,
	// digits (Unicode decimal digits) and _; a dotted name is one word. The
	// rules take any non-ASCII character into a word, and the scanner
	// checks that those are letters and digits (checkWord): Unicode's
	// classes would make the generated lexer four times longer.
	letter    = `[A-Za-z_\x{80}-\x{10FFFF}]`
	alnum     = `[A-Za-z0-9_\x{80}-\x{10FFFF}]`
	word      = letter + alnum + `*(?:\.` + letter + alnum + `*)*`
	codeBody  = `(?:[^%]|%[^}])*%\}` // the rest of a code block after its opening
	anyToEOF  = `[\x00-\x{10FFFF}]*` // an unterminated block runs to the end of the file
	externTag = `extern` + blanks + `*"[^"\n]*"` + blanks + `*%\{`
	inlineTag = `inline_c` + blanks + `*%\{`
	// A string ends at its closing quote, or unterminated at a newline.
	stringTok = `"(?:[^"\\\r\n]|\\[^\r\n]?)*"?`
)

// lexRules is the stateful lexer definition. Rules are tried in order and
// the first that matches wins. The rules that share no first character
// come in order of frequency (words, then operators), as each rule tried
// costs a call.
var lexRules = lexer.Rules{
	"Root": {
		{Name: "ExternCode", Pattern: externTag + codeBody},
		{Name: "ExternOpen", Pattern: externTag + anyToEOF},
		{Name: "InlineCode", Pattern: inlineTag + codeBody},
		{Name: "InlineOpen", Pattern: inlineTag + anyToEOF},
		{Name: "Word", Pattern: word},
		lexer.Include("Common"),
		// "body" followed by more of a name is a name, not BODY.
		{Name: "LineIdent", Pattern: nl + blanks + `*[Bb][Oo][Dd][Yy](?:` + alnum + `+(?:\.` + letter + alnum + `*)*|(?:\.` + letter + alnum + `*)+)`},
		{Name: "Body", Pattern: nl + blanks + `*[Bb][Oo][Dd][Yy]`, Action: lexer.Push("BodyInit")},
		{Name: "Option", Pattern: nl + `%[Oo][Pp][Tt][Ii][Oo][Nn]`},
		{Name: "Newline", Pattern: nl + blanks + `*`},
		{Name: "LBracket", Pattern: `\[`, Action: lexer.Push("Props")},
		{Name: "Blank", Pattern: blanks + `+`},
		lexer.Include("Stray"),
	},
	"Props": {
		{Name: "RBracket", Pattern: `\]`, Action: lexer.Pop()},
		{Name: "PropWord", Pattern: word},
		lexer.Include("Common"),
		{Name: "Newline", Pattern: nl + blanks + `*`},
		{Name: "Blank", Pattern: blanks + `+`},
		lexer.Include("Stray"),
	},
	"BodyInit": {
		{Name: "End", Pattern: blanks + `*[Ee][Nn][Dd]`, Action: lexer.Pop()},
		{Name: "Ident", Pattern: word},
		lexer.Include("Common"),
		{Name: "LBracket", Pattern: `\[`, Action: lexer.Push("Props")},
		{Name: "BodyNewline", Pattern: nl, Action: lexer.Push("Body")},
		{Name: "Blank", Pattern: blanks + `+`},
		lexer.Include("Stray"),
	},
	"Body": {
		// Any line but blanks + END: after the blanks, a first character
		// other than e; or e not followed by n; or en not followed by d; or
		// end followed by more.
		{Name: "BodyLine", Pattern: blanks + `*(?:[^eE \t\v\f\r\n][^\r\n]*|[eE](?:[^nN\r\n][^\r\n]*|[nN](?:[^dD\r\n][^\r\n]*|[dD][^\r\n]+)?)?)?` + nl},
		lexer.Return(),
	},
	"Comment": {
		{Name: "CommentClose", Pattern: `\*/`, Action: lexer.Pop()},
		// A /* that starts a fresh token nests: after the opener, a
		// newline, a star or a closer, but not inside a run of text.
		{Name: "CommentOpen", Pattern: `/\*`, Action: lexer.Push("Comment")},
		{Name: "CommentText", Pattern: `[^*\n]+`},
		{Name: "CommentStar", Pattern: `\*`},
		{Name: "CommentNewline", Pattern: `\n`},
	},
	// Common is never entered: it holds the rules Root, Props and BodyInit
	// share, which start with no letter, newline or bracket. An operator
	// comes after the rules that start with one of its characters.
	"Common": {
		{Name: "Arrow", Pattern: `(?:<-|->)`},
		{Name: "LineComment", Pattern: `//[^\r\n]*`},
		{Name: "CommentOpen", Pattern: `/\*`, Action: lexer.Push("Comment")},
		{Name: "Code", Pattern: `%c?\{` + codeBody},
		{Name: "CodeOpen", Pattern: `%c?\{` + anyToEOF},
		{Name: "Punct", Pattern: `(?:\.\.|==|!=|&&|\|\||<=|>=|<<|>>|[()&|^<>!+\-*/%=?:;,])`},
		{Name: "Int", Pattern: `[0-9]+`},
		{Name: "String", Pattern: stringTok},
	},
	// Stray is never entered either: any character no other rule matches,
	// last in the states that include it.
	"Stray": {
		{Name: "Stray", Pattern: `[\x00-\x{10FFFF}]`},
	},
}

// The lexer is lexRules compiled to Go: jdfLexer, generated into
// lexer_gen.go by participle's command
// (github.com/alecthomas/participle/v2/cmd/participle); it is the only
// lexer that runs. After changing lexRules, regenerate it with
//
//	go test ./parser -run TestLexerRulesJSON -update
//	participle gen lexer --name jdf parser parser/testdata/lexer.json | gofmt > parser/lexer_gen.go
//
// TestLexerRulesJSON fails while testdata/lexer.json is stale, and
// TestGeneratedLexer while lexer_gen.go is: it compares the generated
// lexer with participle's regexp interpretation of lexRules.
var rawLexer lexer.StringDefinition = jdfLexer.(lexer.StringDefinition)

// The token types of the assembled stream the grammar reads.
const (
	tEOF lexer.TokenType = lexer.EOF - iota
	tIdent
	tInt     // decimal digits
	tOnOff   // on yes true off no false, inside [...]: an integer
	tString  // "...", raw
	tCode    // a code block, raw: extern "Go" %{ ... %}, %{ ... %}, inline_c %{ ... %}, %c{ ... %}
	tAccess  // CTL READ RO WRITE WO RW
	tKeyword // NEW NULL SIMCOST
	tBody    // BODY at the start of a line
	tBodyText
	tEnd // END closing a body
	tOption
	tArrow // <- and ->
	tPunct // operators, parentheses, brackets
	tComment
)

var tokenTypes = map[string]lexer.TokenType{
	"EOF": tEOF, "Ident": tIdent, "Int": tInt, "OnOff": tOnOff, "String": tString, "Code": tCode,
	"Access": tAccess, "Keyword": tKeyword, "Body": tBody, "BodyText": tBodyText, "End": tEnd,
	"Option": tOption, "Arrow": tArrow, "Punct": tPunct, "Comment": tComment,
}

// keywordType classifies the words of Root: Access, Keyword, or 0 for an
// Ident.
func keywordType(word string) lexer.TokenType {
	switch word {
	case "CTL", "READ", "RO", "WRITE", "WO", "RW":
		return tAccess
	case "NEW", "NULL", "SIMCOST":
		return tKeyword
	}
	return 0
}

// onOffValue returns the integer that properties mode turns an on/off
// word (any case) into.
func onOffValue(word string) (v int64, ok bool) {
	switch len(word) {
	case 2:
		if strings.EqualFold(word, "on") {
			return 1, true
		}
		if strings.EqualFold(word, "no") {
			return 0, true
		}
	case 3:
		if strings.EqualFold(word, "yes") {
			return 1, true
		}
		if strings.EqualFold(word, "off") {
			return 0, true
		}
	case 4:
		if strings.EqualFold(word, "true") {
			return 1, true
		}
	case 5:
		if strings.EqualFold(word, "false") {
			return 0, true
		}
	}
	return 0, false
}

// Comment is a comment kept for `jdf2go fmt`; Text includes the delimiters,
// its line breaks are \n.
type Comment struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Text   string
}

func isBlank(c byte) bool  { return c == ' ' || c == '\t' || c == '\v' || c == '\f' }
func isLetter(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// rawSymbols maps the rule names of lexRules to their token types.
var rawSymbols = jdfLexer.Symbols()

// raw token types, looked up once.
var (
	rLineIdent    = rawSymbols["LineIdent"]
	rBody         = rawSymbols["Body"]
	rOption       = rawSymbols["Option"]
	rNewline      = rawSymbols["Newline"]
	rExternCode   = rawSymbols["ExternCode"]
	rExternOpen   = rawSymbols["ExternOpen"]
	rInlineCode   = rawSymbols["InlineCode"]
	rInlineOpen   = rawSymbols["InlineOpen"]
	rWord         = rawSymbols["Word"]
	rLBracket     = rawSymbols["LBracket"]
	rRBracket     = rawSymbols["RBracket"]
	rPropWord     = rawSymbols["PropWord"]
	rEnd          = rawSymbols["End"]
	rBodyNewline  = rawSymbols["BodyNewline"]
	rIdent        = rawSymbols["Ident"]
	rBodyLine     = rawSymbols["BodyLine"]
	rCommentClose = rawSymbols["CommentClose"]
	rCommentOpen  = rawSymbols["CommentOpen"]
	rBlank        = rawSymbols["Blank"]
	rLineComment  = rawSymbols["LineComment"]
	rCode         = rawSymbols["Code"]
	rCodeOpen     = rawSymbols["CodeOpen"]
	rString       = rawSymbols["String"]
	rInt          = rawSymbols["Int"]
	rArrow        = rawSymbols["Arrow"]
	rPunct        = rawSymbols["Punct"]
	rStray        = rawSymbols["Stray"]
)

// scanner turns the tokens of the lexer into the tokens the grammar reads.
// It is a lexer.Lexer: participle's PeekingLexer pulls the tokens from it,
// so that they are stored only once.
type scanner struct {
	file string
	src  string // the original source
	raw  lexer.Lexer

	queue []lexer.Token // tokens ready for Next
	qi    int
	count int  // tokens returned by Next, up to the first EOF
	done  bool // EOF queued

	onBodyLine bool // after BODY, before the newline that ends its line

	// Position of offset off: its line, and the offset where that line starts.
	off, line, lineStart int

	peeked    rawToken // a raw token read ahead, if hasPeeked
	hasPeeked bool

	keepComments bool // emit Comment tokens too (the Lexer definition)
	comments     []*Comment
	diags        ErrorList
}

// newScanner prepares to lex a whole file. Scanning never fails: lexical
// errors and stray characters become diagnostics, and the token stream
// always ends with EOF.
func newScanner(file, src string, keepComments bool) *scanner {
	// One newline in front, so that the first line starts after a newline
	// like every other; one at the end, so that every line ends with one.
	// A lone \r is a line break: the rules see it as \n.
	b := make([]byte, 0, len(src)+2)
	b = append(b, '\n')
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c == '\r' && (i+1 == len(src) || src[i+1] != '\n') {
			c = '\n'
		}
		b = append(b, c)
	}
	b = append(b, '\n')
	raw, err := rawLexer.LexString(file, string(b))
	if err != nil {
		panic(err) // LexString of a stateful lexer does not fail
	}
	return &scanner{file: file, src: src, raw: raw, line: 1, keepComments: keepComments, queue: make([]lexer.Token, 0, 4)}
}

// Next returns the next token; after EOF it keeps returning EOF.
func (s *scanner) Next() (lexer.Token, error) {
	for s.qi == len(s.queue) {
		if s.done {
			return s.queue[len(s.queue)-1], nil
		}
		s.queue, s.qi = s.queue[:0], 0
		s.step()
	}
	t := s.queue[s.qi]
	s.qi++
	s.count++
	return t, nil
}

// rawToken is a raw token as an offset range of the original source (the
// newlines added in front and at the end clipped); at the end, typ is
// lexer.EOF and the range empty.
type rawToken struct {
	typ        lexer.TokenType
	start, end int
}

// next returns the next raw token, or ok=false at the end.
func (s *scanner) next() (typ lexer.TokenType, start, end int, ok bool) {
	var t rawToken
	if s.hasPeeked {
		t, s.hasPeeked = s.peeked, false
	} else {
		t = s.rawNext()
	}
	return t.typ, t.start, t.end, t.typ != lexer.EOF
}

// peek returns the type of the next raw token, lexer.EOF at the end.
func (s *scanner) peek() lexer.TokenType {
	if !s.hasPeeked {
		s.peeked, s.hasPeeked = s.rawNext(), true
	}
	return s.peeked.typ
}

func (s *scanner) rawNext() rawToken {
	t, err := s.raw.Next()
	if err != nil {
		// Stray matches any character in every state that can be left
		// without a match, so no input is rejected.
		panic(fmt.Sprintf("jdf lexer: %v", err))
	}
	if t.Type == lexer.EOF {
		return rawToken{lexer.EOF, len(s.src), len(s.src)}
	}
	start := max(t.Pos.Offset-1, 0)
	end := min(t.Pos.Offset-1+len(t.Value), len(s.src))
	return rawToken{t.Type, start, end}
}

// pos returns the position of offset off, which must not be before the
// last offset asked for. Line breaks are \n, \r\n and a lone \r.
func (s *scanner) pos(off int) lexer.Position {
	for i := s.off; i < off; i++ {
		switch s.src[i] {
		case '\n':
			s.line++
			s.lineStart = i + 1
		case '\r':
			if i+1 < len(s.src) && s.src[i+1] == '\n' {
				continue
			}
			s.line++
			s.lineStart = i + 1
		}
	}
	s.off = off
	return lexer.Position{Filename: s.file, Offset: off, Line: s.line, Column: off - s.lineStart + 1}
}

// emit queues a token. Comments go to the comment list, and are tokens
// only with keepComments.
func (s *scanner) emit(typ lexer.TokenType, start, end int) {
	if typ == tComment {
		p := s.pos(start)
		s.comments = append(s.comments, &Comment{Pos: p, EndPos: advance(p, s.src[start:end]), Text: lf(s.src[start:end])})
		if !s.keepComments {
			return
		}
	}
	p := s.pos(start)
	if typ == tIdent {
		s.checkWord(p, s.src[start:end])
	}
	s.queue = append(s.queue, lexer.Token{Type: typ, Value: s.src[start:end], Pos: p})
}

// checkWord reports the characters of a name other than letters, digits,
// _ and the dots between its parts, as Go's identifiers have them: the
// rules take any non-ASCII character into a word, so that a name is never
// split around one.
func (s *scanner) checkWord(p lexer.Position, w string) {
	for i := 0; i < len(w); {
		if w[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(w[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			s.diags.Errorf(shift(p, i), "invalid UTF-8 encoding in a name")
		case !unicode.IsLetter(r) && !(unicode.IsDigit(r) && i > 0 && w[i-1] != '.'):
			s.diags.Errorf(shift(p, i), "invalid character %U %q in a name (names are made of letters, digits and _)", r, r)
		}
		i += n
	}
}

// step handles the next raw token, or construct of raw tokens.
func (s *scanner) step() {
	if s.onBodyLine {
		s.bodyLine()
		return
	}
	typ, start, end, ok := s.next()
	if !ok {
		s.queue = append(s.queue, lexer.EOFToken(s.pos(len(s.src))))
		s.done = true
		return
	}
	switch typ {
	case rLineIdent, rBody, rOption:
		// The newline and blanks in front are whitespace.
		w := start
		for w < end && (s.src[w] == '\n' || s.src[w] == '\r' || isBlank(s.src[w])) {
			w++
		}
		switch typ {
		case rLineIdent:
			s.emit(tIdent, w, end)
		case rBody:
			s.emit(tBody, w, end)
			s.onBodyLine = true
		default:
			s.emit(tOption, w, end)
		}
	case rWord:
		t := tIdent
		if k := keywordType(s.src[start:end]); k != 0 {
			t = k
		}
		s.emit(t, start, end)
	case rExternCode, rExternOpen, rInlineCode, rInlineOpen:
		s.code(start, end)
	default:
		s.one(typ, start, end)
	}
}

// bodyLine handles a raw token of the BODY line (BodyInit state). The
// newline that ends the line starts the body.
func (s *scanner) bodyLine() {
	switch s.peek() {
	case lexer.EOF:
		s.onBodyLine = false
	case rEnd:
		// END on the BODY line: only malformed input gets here.
		s.onBodyLine = false
		_, _, end, _ := s.next()
		s.emit(tEnd, end-3, end)
	case rBodyNewline:
		s.onBodyLine = false
		_, start, end, _ := s.next()
		if start < len(s.src) { // not the newline added at the end
			s.body(end)
		}
	default:
		typ, start, end, _ := s.next()
		s.one(typ, start, end)
	}
}

// one handles a raw token of the rules Root, Props and BodyInit share, and
// of the words of Props and BodyInit.
func (s *scanner) one(typ lexer.TokenType, start, end int) {
	switch typ {
	case rBlank, rNewline:
	case rIdent:
		s.emit(tIdent, start, end)
	case rPropWord:
		t := tIdent
		if _, ok := onOffValue(s.src[start:end]); ok {
			t = tOnOff
		}
		s.emit(t, start, end)
	case rInt:
		s.emit(tInt, start, end)
	case rPunct, rLBracket, rRBracket:
		s.emit(tPunct, start, end)
	case rArrow:
		s.emit(tArrow, start, end)
	case rCode, rCodeOpen:
		s.code(start, end)
	case rString:
		s.string(start, end)
	case rCommentOpen:
		s.comment(start)
	case rLineComment:
		s.emit(tComment, start, end)
	case rStray:
		s.stray(start, end)
	default:
		panic(fmt.Sprintf("jdf lexer: unexpected raw token %d at offset %d", typ, start))
	}
}

// body assembles the lines of a body into one BodyText token, from offset
// textStart (the line after BODY) to the word END, blanks before END
// included, followed by the End token.
func (s *scanner) body(textStart int) {
	for s.peek() == rBodyLine {
		s.next()
	}
	if s.peek() != rEnd {
		// No END before the end of the file: the parser reports it.
		s.emit(tBodyText, textStart, len(s.src))
		return
	}
	_, _, end, _ := s.next()
	word := end - 3
	s.emit(tBodyText, textStart, word)
	s.emit(tEnd, word, end)
}

// code emits a code block token and reports an unterminated block or an
// extern language other than C and Go.
func (s *scanner) code(start, end int) {
	cb := splitCode(s.src[start:end])
	p := s.pos(start)
	s.emit(tCode, start, end)
	// The prefix (extern "L", inline_c) never spans lines.
	if cb.langOff > 0 && cb.lang != "C" && cb.lang != "Go" {
		s.diags.Errorf(shift(p, cb.langOff), "unsupported code block language %q in extern (want \"Go\" or \"C\")", cb.lang)
	}
	if !cb.closed {
		s.diags.Errorf(shift(p, cb.brace), "code block not terminated: missing %%}")
	}
}

// shift moves p n bytes to the right on its line.
func shift(p lexer.Position, n int) lexer.Position {
	p.Offset += n
	p.Column += n
	return p
}

// string emits a string token and reports its errors. A string ends at
// its closing quote, or unterminated at a newline or at the end of the
// file.
func (s *scanner) string(start, end int) {
	raw := s.src[start:end]
	closed := len(raw) > 1 && raw[len(raw)-1] == '"' && !escapedAt(raw, len(raw)-1)
	p := s.pos(start)
	s.emit(tString, start, end)
	_, bad := unquote(s.src[start:end])
	for _, b := range bad {
		n := 0
		for esc := s.src[start+b+1:]; n < len(esc) && n < 3 && esc[n] >= '0' && esc[n] <= '7'; n++ {
		}
		s.diags.Errorf(shift(p, b), "octal escape \\%s out of range (max \\377)", s.src[start+b+1:start+b+1+n])
	}
	if !closed {
		s.diags.Errorf(p, "string not terminated")
	}
}

// comment reads a /* comment after its opener, with nesting.
func (s *scanner) comment(start int) {
	depth, maxDepth := 1, 1
	end := start + 2
	for depth > 0 {
		typ, _, e, ok := s.next()
		if !ok {
			break
		}
		end = e
		switch typ {
		case rCommentOpen:
			depth++
			maxDepth = max(maxDepth, depth)
		case rCommentClose:
			depth--
		}
	}
	p := s.pos(start)
	if depth > 0 {
		msg := "comment not terminated: missing */"
		if maxDepth > 1 {
			msg += " (a /* at the start of a line inside a comment opens a nested comment that needs its own */)"
		}
		s.diags.Errorf(p, "%s", msg)
	}
	s.emit(tComment, start, end)
}

// stray reports characters that no rule matches: flex drops them silently;
// we drop them too, but say so, once per byte. Only ASCII gets here:
// a word takes any other character (checkWord).
func (s *scanner) stray(start, end int) {
	p := s.pos(start)
	for i := start; i < end; i++ {
		s.diags.Warnf(shift(p, i-start), "stray character %q ignored", s.src[i])
	}
}

// advance returns the position just after text, which starts at p.
func advance(p lexer.Position, text string) lexer.Position {
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			p.Line++
			p.Column = 0
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				p.Column++
				continue
			}
			p.Line++
			p.Column = 0
		}
		p.Column++
	}
	p.Offset += len(text)
	return p
}

// codeParts describes the raw spelling of a code block.
type codeParts struct {
	lang    string // extern language, or ""
	langOff int    // offset of the language's opening quote; 0 without extern
	brace   int    // offset of the opening %{ or %c{
	text    int    // offset of the first byte of the text
	textEnd int    // offset just after the text
	closed  bool
}

// splitCode takes apart a code block token: extern "L" %{ ... %},
// inline_c %{ ... %}, %c{ ... %} or %{ ... %}. The text ends at the first
// %} that is not the second half of a %-pair.
func splitCode(raw string) codeParts {
	var c codeParts
	i := 0
	switch {
	case strings.HasPrefix(raw, "extern"):
		q := strings.IndexByte(raw, '"')
		r := q + 1 + strings.IndexByte(raw[q+1:], '"')
		c.lang, c.langOff = raw[q+1:r], q
		i = r + 1
	case strings.HasPrefix(raw, "inline_c"):
		i = len("inline_c")
	}
	for raw[i] != '%' {
		i++
	}
	c.brace = i
	i += 2
	if raw[i-1] == 'c' {
		i++
	}
	c.text = i
	for i < len(raw) {
		if raw[i] == '%' {
			if i+1 < len(raw) && raw[i+1] == '}' {
				c.textEnd, c.closed = i, true
				return c
			}
			i += 2
			continue
		}
		i++
	}
	c.textEnd = len(raw)
	return c
}

// unquote returns the value of a raw string token (C escapes: \n \t \r \b
// \f, octal \ooo, and \x for any other x), and the offsets in raw of the
// octal escapes above \377. raw may lack its closing quote.
func unquote(raw string) (string, []int) {
	body := raw[1:]
	if len(body) > 0 && body[len(body)-1] == '"' && !escapedAt(body, len(body)-1) {
		body = body[:len(body)-1]
	}
	if strings.IndexByte(body, '\\') < 0 {
		return body, nil
	}
	var bad []int
	b := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' {
			b = append(b, c)
			continue
		}
		i++
		if i >= len(body) {
			break
		}
		switch e := body[i]; e {
		case 'n':
			b = append(b, '\n')
		case 't':
			b = append(b, '\t')
		case 'r':
			b = append(b, '\r')
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v, j := 0, i
			for j < len(body) && j < i+3 && body[j] >= '0' && body[j] <= '7' {
				v = v*8 + int(body[j]-'0')
				j++
			}
			if v > 0377 {
				bad = append(bad, i) // the backslash, in raw (which has the quote in front)
				v &= 0xff
			}
			b = append(b, byte(v))
			i = j - 1
		default:
			b = append(b, e)
		}
	}
	return string(b), bad
}

// escapedAt reports whether s[i] is preceded by an odd number of backslashes.
func escapedAt(s string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// Lexer is the JDF scanner as a participle lexer.Definition: the tokens the
// grammar reads, with these symbol names:
//
//	Ident Int OnOff String Code Access Keyword Body BodyText End Option Arrow Punct Comment
//
// Access covers CTL READ RO WRITE WO RW, Keyword NEW NULL SIMCOST, Arrow
// <- and ->, Punct the operators, parentheses and brackets, and OnOff the
// words on yes true off no false inside [...]. Every value is the source spelling:
// strings keep their quotes and escapes (unquote them with Unquote), code
// blocks their delimiters; BodyText is the raw body. Comments are tokens,
// to be elided or kept; blanks, newlines and stray characters are dropped.
// Lexing fails with the first lexical error as a *Diagnostic; warnings
// (stray characters) are not reported.
var Lexer lexer.Definition = lexDefinition{}

type lexDefinition struct{}

func (lexDefinition) Symbols() map[string]lexer.TokenType {
	m := make(map[string]lexer.TokenType, len(tokenTypes))
	for k, v := range tokenTypes {
		m[k] = v
	}
	return m
}

func (d lexDefinition) Lex(filename string, r io.Reader) (lexer.Lexer, error) {
	src, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return d.LexString(filename, string(src))
}

// LexString implements lexer.StringDefinition.
func (lexDefinition) LexString(filename, src string) (lexer.Lexer, error) {
	sc := scan(filename, src, true)
	for _, d := range sc.diags {
		if d.Severity == Error {
			return nil, d
		}
	}
	return &tokenStream{toks: sc.toks}, nil
}

// scanned is a whole token stream, for the Lexer definition and tests.
type scanned struct {
	toks     []lexer.Token
	comments []*Comment
	diags    ErrorList
}

func scan(file, src string, keepComments bool) *scanned {
	s := newScanner(file, src, keepComments)
	var toks []lexer.Token
	for {
		t, _ := s.Next()
		toks = append(toks, t)
		if t.EOF() {
			return &scanned{toks: toks, comments: s.comments, diags: s.diags}
		}
	}
}

// tokenStream replays scanned tokens as a lexer.Lexer.
type tokenStream struct {
	toks []lexer.Token
	i    int
}

func (l *tokenStream) Next() (lexer.Token, error) {
	t := l.toks[l.i]
	if l.i < len(l.toks)-1 {
		l.i++
	}
	return t, nil
}
