package parser

// A file is parsed in chunks that end after a task class (after an END
// that no BODY follows). A chunk is where parsing resumes after a syntax
// error, as the bodies of a task class end it. Chunks are independent, so
// a large file is parsed on several cores while it is being scanned:
// participle's reflective parser is much slower than the scanner, and it
// copies the tokens it reads into one slice, which is cheap for a chunk and
// not for a whole file.

import (
	"sync"

	"github.com/alecthomas/participle/v2/lexer"
)

// maxSyntaxErrors bounds the syntax errors reported for one file.
const maxSyntaxErrors = 10

// parallelBytes is the size from which Parse parses chunks on several
// cores: below it, starting goroutines costs more than it saves.
const parallelBytes = 64 << 10

// parse is Parse with the given number of goroutines parsing chunks; with
// one, the chunks are parsed as they are read.
func parse(filename string, src []byte, workers int) (*Program, ErrorList) {
	sc := newScanner(filename, string(src), false)
	var chunks []*chunk
	var work chan *chunk
	var wg sync.WaitGroup
	if workers > 1 {
		work = make(chan *chunk, 64)
		for range workers {
			wg.Go(func() {
				for ch := range work {
					ch.parse()
				}
			})
		}
	}
	for ch := (&chunker{s: sc}); !ch.last; ch.index++ {
		// participle's PeekingLexer keeps its own copy of the tokens:
		// reading them into it here is their only copy.
		peek, err := lexer.Upgrade(ch)
		if err != nil {
			panic(err) // the chunker does not fail
		}
		c := &chunk{peek: peek, toks: peek.Range(0, lexer.RawCursor(ch.size)), first: ch.index == 0, last: ch.last}
		chunks = append(chunks, c)
		if work == nil {
			c.parse()
			continue
		}
		work <- c
	}
	if work != nil {
		close(work)
		wg.Wait()
	}

	prog := &Program{
		Span:     Span{Pos: lexer.Position{Filename: filename, Offset: 0, Line: 1, Column: 1}, EndPos: sc.pos(len(sc.src))},
		Filename: filename,
		Comments: sc.comments,
	}
	diags := sc.diags
	nsyntax := 0
	for _, ch := range chunks {
		if nsyntax >= maxSyntaxErrors {
			break // as if parsing had stopped there
		}
		ch.merge(prog)
		nsyntax += len(ch.c.errs)
		diags = append(diags, ch.c.errs...)
	}
	diags.Sort()
	return prog, diags
}

// chunk is a part of the file that ends after a task class, and the
// result of parsing it.
type chunk struct {
	peek        *lexer.PeekingLexer // the chunk's tokens, EOF last
	toks        []lexer.Token       // the same tokens, as a slice
	first, last bool                // the chunk at the start, at the end of the file
	c           *converter
	f           *file
	items       []Item
}

// parse parses the chunk's tokens and converts them, recording syntax
// errors in c.errs.
func (ch *chunk) parse() {
	c := &converter{toks: ch.toks, first: ch.first}
	ch.c = c
	f, err := grammar.ParseFromLexer(ch.peek)
	ch.peek = nil // the tokens stay reachable from toks only
	ch.f = f
	if f.Prologue != nil && !c.first && !c.toks[1].EOF() {
		// The rest of the chunk is skipped, as after a syntax error.
		c.errs.Add(f.Prologue.Pos, Error, codeBetween)
		return
	}
	ch.items = c.items(f)
	switch {
	case err != nil:
		c.errs = append(c.errs, c.syntaxError(err, f))
	case f.Epilogue != nil && !ch.last:
		c.errs.Add(f.Epilogue.Pos, Error, codeBetween)
	}
}

// merge adds the chunk's code blocks and items to prog.
func (ch *chunk) merge(prog *Program) {
	f, ok := ch.f, len(ch.c.errs) == 0
	switch {
	case f.Prologue == nil:
	case ch.c.first:
		prog.Prologue = codeBlock(f.Prologue)
	case ok: // parse checked that the chunk holds only a code block: the last one
		prog.Epilogue = codeBlock(f.Prologue)
	}
	for _, it := range ch.items {
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
	if f.Epilogue != nil && ok { // parse checked that this is the last chunk
		prog.Epilogue = codeBlock(f.Epilogue)
	}
}

// chunker reads the tokens of one chunk at a time from the scanner: up to
// an END that no BODY follows, or the end of the file. A chunk ends with an
// EOF token at the position of the token after it. As a lexer.Lexer, it
// returns the tokens of the current chunk.
type chunker struct {
	s     *scanner
	index int  // chunk number
	n     int  // tokens of the current chunk returned so far
	size  int  // tokens of the last chunk, EOF included
	last  bool // the end of the file was reached
	held  lexer.Token
	hold  bool // held starts the next chunk
	ended bool // the current chunk's EOF was returned
	end   bool // the last token returned was END
}

func (ch *chunker) Next() (lexer.Token, error) {
	if ch.ended {
		return lexer.EOFToken(ch.held.Pos), nil
	}
	var t lexer.Token
	if ch.hold {
		t, ch.hold = ch.held, false
	} else {
		t, _ = ch.s.Next()
	}
	ch.n++
	switch {
	case t.EOF():
		ch.ended, ch.last, ch.held = true, true, t
	case ch.end && t.Type != tBody:
		ch.ended, ch.held, ch.hold = true, t, true
		t = lexer.EOFToken(t.Pos)
	}
	ch.end = t.Type == tEnd
	if ch.ended {
		ch.size, ch.n = ch.n, 0
		ch.end, ch.ended = false, ch.last
	}
	return t, nil
}
