package parser

// A file is parsed in chunks that end after a task class (after an END
// that no BODY follows). A chunk is where parsing resumes after a syntax
// error, as the bodies of a task class end it. Chunks are independent, so
// a large file is parsed on several cores while it is being scanned:
// participle's reflective parser is much slower than the scanner.
//
// participle parses from a lexer.PeekingLexer, which holds every token of
// its input in one array. lexer.Upgrade, its only constructor, builds that
// array by appending token after token, so each chunk parsed through it
// allocated three to four times the size of its tokens, and the
// allocation, the copying and the garbage collection it caused were a
// quarter of the time of a parse. A tokenBuffer is a PeekingLexer made
// once and reused from chunk to chunk instead: the scanner writes a
// chunk's tokens into its array, which PeekingLexer.Range exposes, and the
// parse starts again from the checkpoint of its first token. A chunk's
// tokens end with EOF, and a PeekingLexer reads nothing past EOF, so what
// the array holds after it is never seen. TestTokenBufferReuse checks that
// participle reads the tokens written there.

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
	// free holds the token buffers not in use: one being filled by the
	// scanner, the others parsed or waiting, two for each worker.
	free := make(chan *tokenBuffer, 2*workers+1)
	for range cap(free) {
		free <- nil // made when first needed, at the size of a chunk
	}
	var work chan *chunk
	var wg sync.WaitGroup
	if workers > 1 {
		work = make(chan *chunk, cap(free))
		for range workers {
			wg.Go(func() {
				for ch := range work {
					free <- ch.parse()
				}
			})
		}
	}
	for ch := (&chunker{s: sc}); !ch.last; ch.index++ {
		c := &chunk{first: ch.index == 0}
		chunks = append(chunks, c)
		c.buf = ch.fill(<-free)
		c.last = ch.last
		if work == nil {
			free <- c.parse()
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
	buf         *tokenBuffer // the chunk's tokens until it is parsed
	first, last bool         // the chunk at the start, at the end of the file
	c           *converter
	f           *file
	items       []Item
}

// parse parses the chunk's tokens and converts them, recording syntax
// errors in c.errs. It returns the token buffer, free again.
func (ch *chunk) parse() *tokenBuffer {
	b := ch.buf
	ch.buf = nil
	c := &converter{toks: b.toks[:b.n], first: ch.first}
	ch.c = c
	defer func() { c.toks = nil }() // the buffer is reused
	b.peek.LoadCheckpoint(b.start)
	f, err := grammar.ParseFromLexer(b.peek)
	ch.f = f
	if f.Prologue != nil && !c.first && !c.toks[1].EOF() {
		// The rest of the chunk is skipped, as after a syntax error.
		c.errs.Add(f.Prologue.Pos, Error, codeBetween)
		return b
	}
	ch.items = c.items(f)
	switch {
	case err != nil:
		c.errs = append(c.errs, c.syntaxError(err, f))
	case f.Epilogue != nil && !ch.last:
		c.errs.Add(f.Epilogue.Pos, Error, codeBetween)
	}
	return b
}

// tokenBuffer is a PeekingLexer whose token array is reused for chunk
// after chunk (see the top of the file).
type tokenBuffer struct {
	peek  *lexer.PeekingLexer
	start lexer.Checkpoint // at the first token
	toks  []lexer.Token    // peek's whole token array
	n     int              // the tokens of the current chunk, EOF included
}

// newTokenBuffer returns a buffer for chunks of up to size tokens, EOF
// included.
func newTokenBuffer(size int) *tokenBuffer {
	peek, err := lexer.Upgrade(&placeholders{n: size - 1})
	if err != nil {
		panic(err) // placeholders do not fail
	}
	return &tokenBuffer{peek: peek, start: peek.MakeCheckpoint(), toks: peek.Range(0, lexer.RawCursor(size))}
}

// placeholders is a lexer.Lexer that returns n tokens and EOF, to size a
// tokenBuffer.
type placeholders struct{ n int }

func (p *placeholders) Next() (lexer.Token, error) {
	if p.n == 0 {
		return lexer.Token{Type: lexer.EOF}, nil
	}
	p.n--
	return lexer.Token{Type: tPunct}, nil
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
// EOF token at the position of the token after it.
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

// fill reads the next chunk into b, or into a larger buffer that it
// returns when the chunk does not fit (or when b is nil).
func (ch *chunker) fill(b *tokenBuffer) *tokenBuffer {
	if b == nil {
		b = newTokenBuffer(max(2*ch.size, 512))
	}
	for i := 0; ; i++ {
		if i == len(b.toks) {
			bigger := newTokenBuffer(2 * len(b.toks))
			copy(bigger.toks, b.toks)
			b = bigger
		}
		t, _ := ch.Next()
		b.toks[i] = t
		if t.EOF() {
			b.n = i + 1
			return b
		}
	}
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
