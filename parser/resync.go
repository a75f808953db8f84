package parser

// A file is parsed in one pass over its tokens, one segment at a time:
// a segment ends after an END that a name or %option follows, where a task
// class ends and the next item starts, so that the tokens and the grammar
// tree of one segment are dropped once its items are converted, and the
// memory of a parse is that of its AST. After a syntax error the parse
// resumes after the task class where it happened, at the first token after
// an END that no BODY follows (the bodies of a task class end it), so that
// one run reports the errors of several classes, up to maxSyntaxErrors.

import (
	"math"

	"github.com/alecthomas/participle/v2/lexer"
)

// maxSyntaxErrors bounds the syntax errors reported for one file.
const maxSyntaxErrors = 10

// parse parses a file.
func parse(filename string, src []byte) (*Program, ErrorList) {
	prog := &Program{Filename: filename}
	var syntax ErrorList
	if len(src) > math.MaxInt32 {
		// Spans keep offsets in 32 bits.
		syntax.Errorf(lexer.Position{Filename: filename, Line: 1, Column: 1}, "file too large: %d bytes, at most %d", len(src), math.MaxInt32)
		return prog, syntax
	}
	sc := newScanner(filename, string(src), false)
	file := newSrcFile(filename, src)
	seg := &segmenter{sc: sc}
	for first := true; len(syntax) < maxSyntaxErrors; first = false {
		// The PeekingLexer reads every token of the segment and keeps them
		// in one array, which resumption after an error shares.
		peek, err := lexer.Upgrade(seg)
		if err != nil {
			panic(err) // the scanner does not fail
		}
		origin := peek.MakeCheckpoint()
		toks := peek.Range(0, lexer.RawCursor(seg.n))
		for start := 0; len(syntax) < maxSyntaxErrors; {
			peek.LoadCheckpoint(origin)
			if start > 0 {
				peek.FastForward(lexer.RawCursor(start - 1))
			}
			p := &part{toks: toks[start:], first: first && start == 0}
			p.parse(peek)
			p.merge(prog, file)
			if len(p.c.errs) == 0 {
				break
			}
			syntax = append(syntax, p.c.errs...)
			next := resumeAt(toks, start+p.c.tokenAt(p.c.errs[len(p.c.errs)-1].Pos.Offset))
			if next < 0 {
				break
			}
			start = next
		}
		if !seg.nextSegment() {
			break
		}
	}
	// The rest of the file after too many errors is scanned still, for its
	// lexical errors, its comments and its end.
	eof := seg.last
	for !eof.EOF() {
		eof, _ = sc.Next()
	}
	prog.Span = newSpan(lexer.Position{Filename: filename, Offset: 0, Line: 1, Column: 1}, eof.Pos)
	prog.file = file
	prog.Comments = sc.comments
	diags := append(sc.diags, syntax...)
	diags.Sort()
	return prog, diags
}

// segmenter passes the scanner's tokens to the grammar one segment at a
// time: at the end of a segment it returns EOF, at the position of the
// next token, which starts the next segment.
type segmenter struct {
	sc       *scanner
	n        int         // tokens returned in this segment, its EOF included
	last     lexer.Token // the last token read from the scanner
	afterEnd bool        // the last token returned was END
	cut      bool        // the segment ended before last
	resumed  bool        // last is the next token of the segment
}

// Next returns the next token of the segment.
func (s *segmenter) Next() (lexer.Token, error) {
	s.n++
	switch {
	case s.cut:
		return lexer.EOFToken(s.last.Pos), nil
	case s.resumed:
		s.resumed = false
	default:
		s.last, _ = s.sc.Next() // the scanner does not fail
		if s.afterEnd && (s.last.Type == tIdent || s.last.Type == tOption) {
			s.cut = true
			return lexer.EOFToken(s.last.Pos), nil
		}
	}
	s.afterEnd = s.last.Type == tEnd
	return s.last, nil
}

// nextSegment starts the next segment; it reports false at the end of the
// file.
func (s *segmenter) nextSegment() bool {
	if !s.cut {
		return false
	}
	s.n, s.cut, s.resumed, s.afterEnd = 0, false, true, false
	return true
}

// resumeAt returns the index of the first token after the task class that
// holds token i: the first token after an END that no BODY follows, or
// -1 when the file ends first.
func resumeAt(toks []lexer.Token, i int) int {
	for j := i + 1; j < len(toks); j++ {
		if toks[j-1].Type == tEnd && toks[j].Type != tBody {
			if toks[j].EOF() {
				return -1
			}
			return j
		}
	}
	return -1
}

// part is the tokens of the file from the start or from where the parse
// resumed after an error, EOF last, and the result of parsing them.
type part struct {
	toks  []lexer.Token
	first bool // the part at the start of the file
	c     *converter
	f     *file
	items []Item
}

// parse parses the part's tokens from peek, which is at the first of
// them, and converts them, recording syntax errors in c.errs.
func (p *part) parse(peek *lexer.PeekingLexer) {
	c := &converter{toks: p.toks, first: p.first}
	p.c = c
	f, err := grammar.ParseFromLexer(peek)
	p.f = f
	if f.Prologue != nil && !p.first && !p.toks[1].EOF() {
		// A code block between items; the parse resumes after the next class.
		c.errs.Add(f.Prologue.Pos, Error, codeBetween)
		return
	}
	p.items = c.items(f)
	if err != nil {
		c.errs = append(c.errs, c.syntaxError(err, f))
	}
}

// merge adds the part's code blocks and items to prog, whose file they
// adopt.
func (p *part) merge(prog *Program, file *srcFile) {
	f, ok := p.f, len(p.c.errs) == 0
	switch {
	case f.Prologue == nil:
	case p.first:
		prog.Prologue = codeBlock(f.Prologue)
	case ok: // parse checked that the part holds only a code block: the last one
		prog.Epilogue = codeBlock(f.Prologue)
	}
	for _, it := range p.items {
		file.adopt(it)
		prog.Items = append(prog.Items, it)
		switch it := it.(type) {
		case *Global:
			prog.Globals = append(prog.Globals, it)
		case *Option:
			prog.Options = append(prog.Options, it)
		case *TaskClass:
			prog.Classes = append(prog.Classes, it)
		}
	}
	if f.Epilogue != nil && ok {
		prog.Epilogue = codeBlock(f.Epilogue)
	}
	for _, cb := range []*CodeBlock{prog.Prologue, prog.Epilogue} {
		if cb != nil {
			file.adopt(cb)
		}
	}
}
