package parser

// The scanner mirrors the flex scanner modes of jdf-language.md Part B §1.1:
//
//	INITIAL     start mode; keywords, code blocks, BODY and %option at line start
//	properties  after '[' until ']': no keywords, no '[', on/off words are integers
//	body-init   after BODY until the first newline outside properties
//	body        whole lines up to a line that is exactly `ws* END`
//	comment     /* ... */ with jdf2c's nesting rule (§1.7)
//	string      "..." with C escapes
//
// It is hand-written rather than a lexer.MustStateful rule table because three
// rules of the flex scanner need context a regexp rule cannot see (BODY and
// %option only at the start of a line, END only as a whole line), because
// dropped characters must become warnings instead of vanishing, and because a
// regexp tried per rule per token is an order of magnitude too slow for the
// throughput goal. Tokens carry participle lexer.Positions, and the scanner
// is also exposed as a participle lexer.Definition (Lexer, lexer_participle.go).

import (
	"fmt"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tInt
	tString
	tCode     // %{ ... %}; val = text, raw = extern language or ""
	tAccess   // CTL READ RO WRITE WO RW
	tNew      // NEW
	tNull     // NULL
	tSimcost  // SIMCOST
	tArrowIn  // <-
	tArrowOut // ->
	tBody     // BODY at line start
	tBodyText // the raw lines of a body; val = text
	tEnd      // END closing a body
	tOption   // %option in column 1
	tLBrack
	tRBrack
	tLParen
	tRParen
	tEq     // ==
	tNe     // !=
	tLAnd   // &&
	tAnd1   // &
	tLOr    // ||
	tOr1    // |
	tXor    // ^
	tLt     // <
	tLe     // <=
	tGt     // >
	tGe     // >=
	tNot    // !
	tPlus   // +
	tMinus  // -
	tStar   // *
	tSlash  // /
	tPct    // %
	tShl    // <<
	tShr    // >>
	tDotDot // ..
	tAssign // =
	tQuest  // ?
	tColon  // :
	tSemi   // ;
	tComma  // ,
)

var tokNames = [...]string{
	tEOF: "end of file", tIdent: "identifier", tInt: "integer", tString: "string",
	tCode: "code block", tAccess: "access type", tNew: "NEW", tNull: "NULL",
	tSimcost: "SIMCOST", tArrowIn: "<-", tArrowOut: "->", tBody: "BODY",
	tBodyText: "body text", tEnd: "END", tOption: "%option", tLBrack: "[", tRBrack: "]",
	tLParen: "(", tRParen: ")", tEq: "==", tNe: "!=", tLAnd: "&&", tAnd1: "&",
	tLOr: "||", tOr1: "|", tXor: "^", tLt: "<", tLe: "<=", tGt: ">", tGe: ">=",
	tNot: "!", tPlus: "+", tMinus: "-", tStar: "*", tSlash: "/", tPct: "%",
	tShl: "<<", tShr: ">>", tDotDot: "..", tAssign: "=", tQuest: "?", tColon: ":",
	tSemi: ";", tComma: ",",
}

func (k tokKind) String() string { return tokNames[k] }

// tpos is a compact source position; lexer.Position is built from it only
// for AST nodes and diagnostics.
type tpos struct{ off, line, col int32 }

// token is a pointer-free 36-byte record: its spelling is src[pos.off:end.off]
// and its value is derived from it (see tokens.val), so that a large file's
// token slice costs the garbage collector nothing to scan.
type token struct {
	kind  tokKind
	flags uint8 // tokUnterminated
	pos   tpos  // first byte
	end   tpos  // just after the last byte
	aux   int32 // tCode: offset of the text; tString: 1 + index in strs of the unescaped value, or 0
	lang  int32 // tCode: 1 + index in strs of the extern language, or 0
}

const tokUnterminated = 1

// tokens is the output of the scanner: the token slice plus what is needed
// to recover token values.
type tokens struct {
	src  string
	strs []string // unescaped strings and extern languages
	list []token
}

// raw returns the token's source spelling.
func (ts *tokens) raw(t *token) string { return ts.src[t.pos.off:t.end.off] }

// val returns the token's value: the spelling for names, keywords and
// operators; "1" or "0" for an on/off word; the unescaped value of a string;
// the text of a code block or body.
func (ts *tokens) val(t *token) string {
	raw := ts.raw(t)
	switch t.kind {
	case tInt:
		if isLetter(raw[0]) {
			return onOff[strings.ToLower(raw)]
		}
	case tString:
		if t.aux > 0 {
			return ts.strs[t.aux-1]
		}
		if t.flags&tokUnterminated != 0 {
			return raw[1:]
		}
		return raw[1 : len(raw)-1]
	case tCode:
		if t.flags&tokUnterminated != 0 {
			return ts.src[t.aux:t.end.off]
		}
		return ts.src[t.aux : t.end.off-2]
	}
	return raw
}

// onOffWord returns the on/off word of an integer token, or "".
func (ts *tokens) onOffWord(t *token) string {
	if raw := ts.raw(t); t.kind == tInt && isLetter(raw[0]) {
		return raw
	}
	return ""
}

// lang returns the extern language of a code token, or "".
func (ts *tokens) lang(t *token) string {
	if t.lang == 0 {
		return ""
	}
	return ts.strs[t.lang-1]
}

// textPos returns the position of the text of a code or body token. A code
// block's text starts on the line of its opening delimiter.
func (t *token) textPos() tpos {
	if t.kind != tCode {
		return t.pos
	}
	p := t.pos
	p.col += t.aux - p.off
	p.off = t.aux
	return p
}

// Comment is a comment kept for `jdf2go fmt`; Text includes the delimiters.
type Comment struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Text   string
}

type lexMode uint8

const (
	modeInitial lexMode = iota
	modeProps
	modeBodyInit
)

type scanner struct {
	file      string
	src       string
	off       int
	line      int
	lineStart int // offset of the first byte of the current line
	mode      lexMode
	propsRet  lexMode // mode to return to at ']'
	lineHead  bool    // only blanks since the start of the line (for BODY)
	ts        *tokens // tokens scanned and not yet dropped by the parser
	done      bool    // EOF has been appended
	comments  []*Comment
	diags     *ErrorList
}

func (s *scanner) here() tpos {
	return tpos{int32(s.off), int32(s.line), int32(s.off - s.lineStart + 1)}
}

func (s *scanner) position(p tpos) lexer.Position {
	return lexer.Position{Filename: s.file, Offset: int(p.off), Line: int(p.line), Column: int(p.col)}
}

// advanceTo moves to offset end, counting the newlines in between.
func (s *scanner) advanceTo(end int) {
	for i := s.off; i < end; i++ {
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
	s.off = end
}

func (s *scanner) emit(kind tokKind, start tpos) *token {
	s.ts.list = append(s.ts.list, token{kind: kind, pos: start, end: s.here()})
	s.lineHead = false
	return &s.ts.list[len(s.ts.list)-1]
}

func isBlank(c byte) bool  { return c == ' ' || c == '\t' || c == '\v' || c == '\f' }
func isLetter(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

func newScanner(file, src string, diags *ErrorList) *scanner {
	return &scanner{file: file, src: src, line: 1, lineHead: true, diags: diags,
		ts: &tokens{src: src, list: make([]token, 0, 1024)}}
}

// fill scans until at least one more token is available; at the end of the
// input it appends EOF, once. Lexical errors and stray characters go to
// diags; scanning always reaches the end.
func (s *scanner) fill() {
	for n := len(s.ts.list); len(s.ts.list) == n; {
		if s.off >= len(s.src) {
			if !s.done {
				s.ts.list = append(s.ts.list, token{kind: tEOF, pos: s.here(), end: s.here()})
				s.done = true
			}
			return
		}
		s.next()
	}
}

// scan lexes the whole source at once (for tests and the participle Lexer).
func scan(file, src string, diags *ErrorList) (*tokens, []*Comment) {
	s := newScanner(file, src, diags)
	for !s.done {
		s.fill()
	}
	return s.ts, s.comments
}

func (s *scanner) next() {
	c := s.src[s.off]
	start := s.here()
	switch {
	case isBlank(c):
		s.off++
		return
	case c == '\n' || c == '\r':
		n := 1
		if c == '\r' && s.off+1 < len(s.src) && s.src[s.off+1] == '\n' {
			n = 2
		}
		s.advanceTo(s.off + n)
		s.lineHead = true
		if s.mode == modeBodyInit {
			s.scanBody()
		}
		return
	case isLetter(c):
		s.scanWord(start)
		return
	case isDigit(c):
		end := s.off
		for end < len(s.src) && isDigit(s.src[end]) {
			end++
		}
		s.off = end
		s.emit(tInt, start)
		return
	case c == '"':
		s.scanString(start)
		return
	}
	two := ""
	if s.off+1 < len(s.src) {
		two = s.src[s.off : s.off+2]
	}
	switch two {
	case "/*":
		s.scanComment(start)
		return
	case "//":
		end := strings.IndexAny(s.src[s.off:], "\r\n")
		if end < 0 {
			end = len(s.src)
		} else {
			end += s.off
		}
		text := s.src[s.off:end]
		s.off = end
		s.comments = append(s.comments, &Comment{Pos: s.position(start), EndPos: s.position(s.here()), Text: text})
		s.lineHead = false
		return
	case "%{":
		s.scanCode(start, start, "", 2)
		return
	case "<-":
		s.off += 2
		s.emit(tArrowIn, start)
		return
	case "->":
		s.off += 2
		s.emit(tArrowOut, start)
		return
	case "..":
		s.off += 2
		s.emit(tDotDot, start)
		return
	case "==", "!=", "&&", "||", "<=", ">=", "<<", ">>":
		s.off += 2
		s.emit(twoCharOps[two], start)
		return
	}
	if c == '%' {
		if s.mode == modeInitial && s.off == s.lineStart && len(s.src)-s.off >= 7 && strings.EqualFold(s.src[s.off:s.off+7], "%option") {
			s.off += 7
			s.emit(tOption, start)
			return
		}
		if strings.HasPrefix(s.src[s.off:], "%c{") {
			s.scanCode(start, start, "", 3)
			return
		}
	}
	switch c {
	case '[':
		if s.mode != modeProps {
			s.off++
			s.emit(tLBrack, start)
			s.propsRet = s.mode
			s.mode = modeProps
			return
		}
	case ']':
		if s.mode == modeProps {
			s.off++
			s.emit(tRBrack, start)
			s.mode = s.propsRet
			return
		}
	default:
		if k, ok := oneCharOps[c]; ok {
			s.off++
			s.emit(k, start)
			return
		}
	}
	// flex drops characters that no rule matches (§1.1); we drop them too but say so.
	s.off++
	s.lineHead = false
	what := fmt.Sprintf("%q", c)
	if c >= 0x80 {
		what = "non-ASCII byte"
	}
	s.diags.Warnf(s.position(start), "stray character %s ignored", what)
}

var twoCharOps = map[string]tokKind{
	"==": tEq, "!=": tNe, "&&": tLAnd, "||": tLOr, "<=": tLe, ">=": tGe, "<<": tShl, ">>": tShr,
}

var oneCharOps = map[byte]tokKind{
	'(': tLParen, ')': tRParen, '&': tAnd1, '|': tOr1, '^': tXor, '<': tLt, '>': tGt,
	'!': tNot, '+': tPlus, '-': tMinus, '*': tStar, '/': tSlash, '%': tPct, '=': tAssign,
	'?': tQuest, ':': tColon, ';': tSemi, ',': tComma,
}

var accessWords = map[string]bool{"CTL": true, "READ": true, "RO": true, "WRITE": true, "WO": true, "RW": true}

// onOff holds the words that properties mode turns into integers.
var onOff = map[string]string{"on": "1", "yes": "1", "true": "1", "off": "0", "no": "0", "false": "0"}

func (s *scanner) scanWord(start tpos) {
	end := s.off
	for {
		for end < len(s.src) && (isLetter(s.src[end]) || isDigit(s.src[end])) {
			end++
		}
		// Dotted names are one token: descA.mt, A.size (§1.3).
		if end+1 < len(s.src) && s.src[end] == '.' && isLetter(s.src[end+1]) {
			end++
			continue
		}
		break
	}
	word := s.src[s.off:end]
	lineHead := s.lineHead
	s.off = end
	switch s.mode {
	case modeProps:
		if _, ok := onOff[strings.ToLower(word)]; ok {
			s.emit(tInt, start)
			return
		}
		s.emit(tIdent, start)
		return
	case modeBodyInit:
		s.emit(tIdent, start)
		return
	}
	switch {
	case lineHead && strings.EqualFold(word, "body"):
		s.emit(tBody, start)
		s.mode = modeBodyInit
		return
	case accessWords[word]:
		s.emit(tAccess, start)
		return
	case word == "NEW":
		s.emit(tNew, start)
		return
	case word == "NULL":
		s.emit(tNull, start)
		return
	case word == "SIMCOST":
		s.emit(tSimcost, start)
		return
	case word == "inline_c":
		if brace := s.skipBlanksTo("%{"); brace >= 0 {
			s.off = brace
			s.scanCode(start, s.here(), "", 2)
			return
		}
	case word == "extern":
		if s.scanExtern(start) {
			return
		}
	}
	s.emit(tIdent, start)
}

// skipBlanksTo returns the offset of lit after optional blanks, or -1.
func (s *scanner) skipBlanksTo(lit string) int {
	i := s.off
	for i < len(s.src) && isBlank(s.src[i]) {
		i++
	}
	if strings.HasPrefix(s.src[i:], lit) {
		return i
	}
	return -1
}

// scanExtern recognises `extern "LANG" %{`; on failure it consumes nothing.
func (s *scanner) scanExtern(start tpos) bool {
	i := s.off
	for i < len(s.src) && isBlank(s.src[i]) {
		i++
	}
	if i >= len(s.src) || s.src[i] != '"' {
		return false
	}
	j := i + 1
	for j < len(s.src) && s.src[j] != '"' && s.src[j] != '\n' {
		j++
	}
	if j >= len(s.src) || s.src[j] != '"' {
		return false
	}
	lang := s.src[i+1 : j]
	save := s.off
	s.off = j + 1
	brace := s.skipBlanksTo("%{")
	if brace < 0 {
		s.off = save
		return false
	}
	if lang != "C" && lang != "Go" {
		s.diags.Errorf(s.position(tpos{int32(i), start.line, start.col + int32(i-int(start.off))}),
			"unsupported code block language %q in extern (want \"Go\" or \"C\")", lang)
	}
	s.off = brace
	s.scanCode(start, s.here(), lang, 2)
	return true
}

// scanCode scans a code block whose opening delimiter (open bytes) is at
// brace. A '%' followed by anything but '}' is consumed as a pair, so `%%}`
// does not close the block (§1.4).
func (s *scanner) scanCode(start, brace tpos, lang string, open int) {
	text := int(brace.off) + open
	i := text
	for i < len(s.src) {
		if s.src[i] == '%' {
			if i+1 < len(s.src) && s.src[i+1] == '}' {
				break
			}
			i += 2
			continue
		}
		i++
	}
	if i >= len(s.src) {
		s.diags.Errorf(s.position(brace), "code block not terminated: missing %%}")
		i = len(s.src)
	}
	s.advanceTo(i)
	if i < len(s.src) {
		s.advanceTo(i + 2)
	}
	t := s.emit(tCode, start)
	t.aux = int32(text)
	if lang != "" {
		s.ts.strs = append(s.ts.strs, lang)
		t.lang = int32(len(s.ts.strs))
	}
	if i >= len(s.src) {
		t.flags |= tokUnterminated
	}
}

// scanComment scans a /* comment. Inside it, a "/*" that starts a fresh
// scanner token (right after the opening, after a newline or after an inner
// "*/") opens a nested level, as jdf2c's flex rules do (§1.7).
func (s *scanner) scanComment(start tpos) {
	depth, maxDepth := 1, 1
	i := s.off + 2
	fresh := true
	for depth > 0 && i < len(s.src) {
		c := s.src[i]
		switch {
		case c == '*' && i+1 < len(s.src) && s.src[i+1] == '/':
			depth--
			i += 2
			fresh = true
		case fresh && c == '/' && i+1 < len(s.src) && s.src[i+1] == '*':
			depth++
			maxDepth = max(maxDepth, depth)
			i += 2
			fresh = true
		case c == '\n' || c == '*':
			i++
			fresh = true
		default:
			i++
			fresh = false
		}
	}
	if depth > 0 {
		msg := "comment not terminated: missing */"
		if maxDepth > 1 {
			msg += " (a /* at the start of a line inside a comment opens a nested comment that needs its own */)"
		}
		s.diags.Errorf(s.position(start), "%s", msg)
	}
	s.advanceTo(i)
	s.comments = append(s.comments, &Comment{Pos: s.position(start), EndPos: s.position(s.here()), Text: s.src[start.off:i]})
	s.lineHead = false
}

// scanString scans a "..." string with C escapes. Unlike jdf2c, a string made
// only of digits, blanks or one operator is a string too (§1.5).
func (s *scanner) scanString(start tpos) {
	i := s.off + 1
	var b []byte // nil while the value is a plain substring
	plain := i
	unterminated := false
	for {
		if i >= len(s.src) || s.src[i] == '\n' || s.src[i] == '\r' {
			s.diags.Errorf(s.position(start), "string not terminated")
			unterminated = true
			break
		}
		c := s.src[i]
		if c == '"' {
			break
		}
		if c != '\\' {
			if b != nil {
				b = append(b, c)
			}
			i++
			continue
		}
		if b == nil {
			b = append([]byte{}, s.src[plain:i]...)
		}
		i++
		if i >= len(s.src) {
			continue
		}
		e := s.src[i]
		switch e {
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
			for j < len(s.src) && j < i+3 && s.src[j] >= '0' && s.src[j] <= '7' {
				v = v*8 + int(s.src[j]-'0')
				j++
			}
			if v > 0377 {
				s.diags.Errorf(s.position(tpos{int32(i - 1), start.line, start.col + int32(i-1-int(start.off))}),
					"octal escape \\%s out of range (max \\377)", s.src[i:j])
				v &= 0xff
			}
			b = append(b, byte(v))
			i = j
			continue
		case '\n', '\r':
			continue // reported as unterminated at the top of the loop
		default:
			b = append(b, e)
		}
		i++
	}
	if !unterminated {
		i++
	}
	s.off = i
	t := s.emit(tString, start)
	if b != nil {
		s.ts.strs = append(s.ts.strs, string(b))
		t.aux = int32(len(s.ts.strs))
	}
	if unterminated {
		t.flags |= tokUnterminated
	}
}

// scanBody captures the lines of a body after the newline that ends the BODY
// line, up to a line that is exactly blanks + END (any case). It emits the
// text and the END token (§1.6).
func (s *scanner) scanBody() {
	s.mode = modeInitial
	textStart := s.here()
	i := s.off
	for i < len(s.src) {
		eol := strings.IndexAny(s.src[i:], "\r\n")
		lineEnd := len(s.src)
		if eol >= 0 {
			lineEnd = i + eol
		}
		j := i
		for j < lineEnd && isBlank(s.src[j]) {
			j++
		}
		if lineEnd-j == 3 && strings.EqualFold(s.src[j:lineEnd], "end") {
			s.advanceTo(j)
			s.emit(tBodyText, textStart)
			endPos := s.here()
			s.off = lineEnd
			s.emit(tEnd, endPos)
			return
		}
		if eol < 0 {
			break
		}
		i = lineEnd + 1
		if s.src[lineEnd] == '\r' && i < len(s.src) && s.src[i] == '\n' {
			i++
		}
	}
	s.advanceTo(len(s.src))
	s.emit(tBodyText, textStart)
	// The parser reports the missing END at the BODY keyword.
}
