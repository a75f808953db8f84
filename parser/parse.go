package parser

import (
	"fmt"
	"os"
	"runtime"
	"sync"

	"github.com/alecthomas/participle/v2/lexer"
)

// maxSyntaxErrors bounds the syntax errors reported for one file.
const maxSyntaxErrors = 10

// parallelBytes is the size from which Parse parses chunks on several
// cores: below it, starting goroutines costs more than it saves.
const parallelBytes = 64 << 10

// Parse parses one JDF file. It always returns a Program, partial when there
// are syntax errors, and the sorted diagnostics of scanning and parsing.
// filename is used in positions only.
//
// The file is parsed in chunks that end after a task class (after an END
// that no BODY follows). A chunk is where parsing resumes after a syntax
// error, as the bodies of a task class end it. Chunks are independent, so
// a large file is parsed on several cores while it is being scanned:
// participle's reflective parser is much slower than the scanner, and it
// copies the tokens it reads into one slice, which is cheap for a chunk and
// not for a whole file.
func Parse(filename string, src []byte) (*Program, ErrorList) {
	sc := newScanner(filename, string(src), false)
	var chunks []*chunk
	work := make(chan *chunk, 64)
	var wg sync.WaitGroup
	if workers := runtime.GOMAXPROCS(0); workers > 1 && len(src) >= parallelBytes {
		for range workers {
			wg.Go(func() {
				for ch := range work {
					ch.parse()
				}
			})
		}
	} else {
		work = nil
	}
	for ch := (&chunker{s: sc}); !ch.last; ch.reset() {
		peek, err := lexer.Upgrade(ch)
		if err != nil {
			panic(err) // the scanner does not fail
		}
		c := &chunk{peek: peek, c: &converter{toks: peek.Range(0, lexer.RawCursor(ch.n)), first: ch.index == 0}, last: ch.last}
		chunks = append(chunks, c)
		if work == nil {
			c.parse()
		} else {
			work <- c
		}
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
	peek  *lexer.PeekingLexer
	c     *converter
	last  bool // the chunk at the end of the file
	f     *file
	items []Item
}

// parse parses and converts the chunk, recording syntax errors in c.errs.
func (ch *chunk) parse() {
	c := ch.c
	f, err := grammar.ParseFromLexer(ch.peek)
	ch.f, ch.peek = f, nil
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

// chunker reads the tokens of one chunk from the scanner: up to an END
// that no BODY follows, or the end of the file. The chunk ends with an
// EOF token at the position of the token after it.
type chunker struct {
	s        *scanner
	index    int  // chunk number
	n        int  // tokens returned in this chunk, EOF included
	afterEnd bool // the last token returned was END
	held     lexer.Token
	hasHeld  bool // held starts the next chunk
	ended    bool // the chunk's EOF was returned
	last     bool // the real end of the file was reached
}

func (ch *chunker) Next() (lexer.Token, error) {
	if ch.ended {
		return lexer.EOFToken(ch.held.Pos), nil
	}
	var t lexer.Token
	if ch.hasHeld {
		t, ch.hasHeld = ch.held, false
	} else {
		t, _ = ch.s.Next()
	}
	ch.n++
	switch {
	case t.EOF():
		ch.ended, ch.last = true, true
		ch.held = t
	case ch.afterEnd && t.Type != tBody:
		ch.ended, ch.held, ch.hasHeld = true, t, true
		return lexer.EOFToken(t.Pos), nil
	}
	ch.afterEnd = t.Type == tEnd
	return t, nil
}

// reset starts the next chunk.
func (ch *chunker) reset() {
	ch.index++
	ch.n, ch.afterEnd, ch.ended = 0, false, false
}

// ParseAndCheck parses src and, when it has no syntax error, checks it.
// The diagnostics of both passes are returned together, sorted. The program
// is ready for codegen when diags.Err() is nil.
func ParseAndCheck(filename string, src []byte) (*Program, ErrorList) {
	prog, diags := Parse(filename, src)
	if diags.HasErrors() {
		return prog, diags
	}
	diags = append(diags, Check(prog)...)
	diags.Sort()
	return prog, diags
}

// LoadFile reads, parses and checks the file at path. The error is non-nil
// only when the file cannot be read; JDF problems are in the ErrorList.
func LoadFile(path string) (*Program, ErrorList, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("jdf2go: %w", err)
	}
	prog, diags := ParseAndCheck(path, src)
	return prog, diags, nil
}
