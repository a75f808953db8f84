package codegen

// Piecewise output. A large program makes a large file, and rendering its whole jennifer tree
// and then formatting the whole text would hold all of them in memory at once. Instead, the
// code is rendered and formatted a few declarations at a time, and the formatted text is kept
// compressed until the end: the imports, which come first in the file, are known only once
// every declaration has been rendered, and the parts of the file are not produced in file
// order (the init functions that assign the descriptors come before the functions of the
// first class, but emit builds a class's descriptor with its functions).
//
// The result is the text that formatting the whole file would give. gofmt lays out top-level
// code on either side of a blank line independently (alignment does not cross a blank line,
// and one blank line stays one), so text is cut only after a blank line, each piece is
// formatted as a file of its own, and the pieces are joined with one blank line. A
// declaration with one element per class (the descriptor variables, the rows of the position
// tables, the cases of Property) is formatted with one placeholder element, whose line is then
// replaced by the elements formatted a batch at a time in a declaration of the same depth
// (list). The directives that restore the generated file's lines get their numbers as the
// pieces are written out (restoreWriter).
//
// Rendering stays on the generator's goroutine (jennifer names the imports as it meets them);
// formatting and compressing run on a goroutine of their own (formatter), one piece after the
// other in the order they were rendered, while the next class is generated.

import (
	"bufio"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"go/format"
	"io"
	"strconv"

	"github.com/dave/jennifer/jen"
)

// The sizes of what is formatted together; variables for the tests, which vary them.
var (
	// pieceSize is how much rendered text a part accumulates before formatting it: enough to
	// keep the cost of each call to go/format small, little enough to keep its memory small.
	pieceSize = 64 << 10
	// listBatch is the number of elements of a list formatted together.
	listBatch = 512
)

// renderer renders jennifer code without formatting it. Every piece is rendered with the same
// jen.File, whose imports (and the names jennifer gives them) are the whole file's.
type renderer struct {
	f         *jen.File
	all, head bytes.Buffer // reused from piece to piece
}

// header returns the header comment, the package clause and the imports of the pieces
// rendered so far, valid until the next call.
func (r *renderer) header() ([]byte, error) {
	r.head.Reset()
	r.f.Group = jen.NewFile("").Group
	err := r.f.Render(&r.head)
	return r.head.Bytes(), err
}

// render returns the text of the code collected in items (a jen.File used as a list), each
// item on its own line as jennifer writes a file: "\n" before every item. The text is valid
// until the next call.
func (r *renderer) render(items *jen.File) ([]byte, error) {
	r.all.Reset()
	r.f.Group = items.Group
	if err := r.f.Render(&r.all); err != nil {
		return nil, err
	}
	// What precedes the code: rendered again, now that the code has added its imports.
	head, err := r.header()
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(r.all.Bytes(), head) {
		return nil, errors.New("jennifer rendered the imports of a piece differently")
	}
	return r.all.Bytes()[len(head):], nil
}

// formatter runs the formatting jobs of the parts, in order, on a goroutine of its own.
type formatter struct {
	jobs chan func()
	done chan struct{}
	free chan []byte // buffers of formatted pieces, for the next ones
}

func startFormatter() *formatter {
	// A few jobs may wait: enough to keep both goroutines busy, few enough to keep the
	// rendered text waiting small.
	fm := &formatter{jobs: make(chan func(), 4), done: make(chan struct{}), free: make(chan []byte, 8)}
	go func() {
		defer close(fm.done)
		for job := range fm.jobs {
			job()
		}
	}()
	return fm
}

func (fm *formatter) do(job func()) { fm.jobs <- job }

// buffer returns an empty buffer, a used one when there is one.
func (fm *formatter) buffer() []byte {
	select {
	case b := <-fm.free:
		return b
	default:
		return nil
	}
}

// recycle gives back a buffer that no job reads anymore.
func (fm *formatter) recycle(b []byte) {
	select {
	case fm.free <- b[:0]:
	default:
	}
}

// stop waits for the jobs to end.
func (fm *formatter) stop() {
	close(fm.jobs)
	<-fm.done
}

// part is one stretch of top-level code of the generated file, formatted a piece at a time
// into a compressed buffer; text is cut only after a blank line. pending belongs to the
// generator; the rest, once the part is made, to the formatter's jobs.
type part struct {
	fm      *formatter
	pending []byte // the source of the next piece: its head (pieceHead), then rendered text

	n   int // pieces written
	z   bytes.Buffer
	zw  *flate.Writer
	err error // the first error; later text is dropped
}

func newPart(fm *formatter) *part { return &part{fm: fm} }

// add appends rendered text and formats what can be cut.
func (p *part) add(text []byte) {
	if len(p.pending) == 0 {
		p.pending = append(p.fm.buffer(), pieceHead...)
	}
	p.pending = append(p.pending, text...)
	if len(p.pending) >= pieceSize && p.atCut() {
		p.flush()
	}
}

// atCut reports whether the pending text ends where it may be cut: after a blank line.
func (p *part) atCut() bool { return len(p.pending) == 0 || bytes.HasSuffix(p.pending, []byte("\n\n")) }

// flush has the pending text formatted and written out.
func (p *part) flush() {
	if len(p.pending) == 0 {
		return
	}
	src := p.pending
	p.pending = nil
	p.fm.do(func() {
		defer p.fm.recycle(src)
		if p.err != nil {
			return
		}
		out, err := formatPiece(src)
		if err != nil {
			p.err = err
			return
		}
		if len(out) > 0 {
			p.separate()
			p.write(out)
		}
	})
}

// fail records an error found by the generator.
func (p *part) fail(err error) {
	p.fm.do(func() {
		if p.err == nil {
			p.err = err
		}
	})
}

// separate writes the blank line before a piece, the first excepted.
func (p *part) separate() {
	if p.n > 0 {
		p.write([]byte("\n"))
	}
	p.n++
}

func (p *part) write(b []byte) {
	if p.zw == nil {
		p.zw, _ = flate.NewWriter(&p.z, flate.BestSpeed) // fails only for a bad level
	}
	p.zw.Write(b)
}

// end has the rest formatted and the compression ended.
func (p *part) end() {
	p.flush()
	p.fm.do(func() {
		if p.zw != nil {
			p.zw.Close()
			p.zw = nil
		}
	})
}

// empty reports whether the ended part holds no text.
func (p *part) empty() bool { return p.n == 0 }

// writeTo writes the ended part after a blank line.
func (p *part) writeTo(w *restoreWriter) error {
	w.WriteString("\n")
	if p.n > 0 {
		if _, err := io.Copy(w, flate.NewReader(&p.z)); err != nil {
			return err
		}
	}
	return nil
}

// pieceHead is the package clause before the text of a piece, which makes it a file.
const pieceHead = "package p\n"

// pieceSource returns the source of a piece of top-level code.
func pieceSource(text []byte) []byte {
	return append(append(make([]byte, 0, len(pieceHead)+len(text)), pieceHead...), text...)
}

// formatPiece formats the source of a piece of top-level code as gofmt formats it in the
// whole file, and returns the formatted text without the package clause.
func formatPiece(src []byte) ([]byte, error) {
	out, err := format.Source(src)
	if err != nil {
		return nil, fmt.Errorf("%w\n%s", err, src)
	}
	if string(out) == pieceHead {
		return nil, nil // blank lines only
	}
	// gofmt puts a blank line after the package clause.
	head := pieceHead + "\n"
	if !bytes.HasPrefix(out, []byte(head)) {
		return nil, fmt.Errorf("formatting moved the code of a piece:\n%s", out)
	}
	return out[len(head):], nil
}

// list is the elements of a long list of one declaration, formatted a batch at a time: the
// declaration holds ph in place of the list, and wrap makes a declaration that holds a batch
// where the list is, at the same depth. gofmt lays out an element of a batch as in the whole
// list when the elements share no alignment with one another, or share it through ph (the
// descriptor variables, whose names ph's is as wide as the widest of).
type list struct {
	n    int                             // elements
	elem func(i int) jen.Code            // element i, or nil for none
	ph   jen.Code                        // the placeholder element
	mark string                          // how the formatted line of ph ends, blanks trimmed
	wrap func(elems []jen.Code) jen.Code // a declaration that holds elems in place of the list
}

// isPh reports whether a formatted line is ph's.
func (l *list) isPh(line []byte) bool { return bytes.HasSuffix(bytes.TrimSpace(line), []byte(l.mark)) }

// lines splits text after each newline.
func lines(text []byte) [][]byte {
	var out [][]byte
	for len(text) > 0 {
		n := len(text)
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			n = i + 1
		}
		out = append(out, text[:n])
		text = text[n:]
	}
	return out
}

// formatThen renders the top-level code in items now, and has it formatted and handed to use,
// in a job of p.
func (g *generator) formatThen(p *part, items *jen.File, use func(out []byte) error) {
	text, err := g.r.render(items)
	if err != nil {
		g.errorf(g.prog.Pos(), "codegen: rendering: %v", err)
		return
	}
	src := pieceSource(text) // a copy: the renderer reuses text
	p.fm.do(func() {
		if p.err != nil {
			return
		}
		out, err := formatPiece(src)
		if err == nil {
			err = use(out)
		}
		if err != nil {
			p.err = err
		}
	})
}

// renderLists renders into p the declaration decl, which holds the placeholders of lists in
// their order, each placeholder's line replaced by its list.
func (g *generator) renderLists(p *part, decl *jen.File, lists ...*list) {
	if !p.atCut() {
		p.fail(errors.New("a declaration with a list does not follow a blank line"))
		return
	}
	p.flush()
	// The declaration's lines around the placeholders, set by the first job.
	var around [][]byte
	g.formatThen(p, decl, func(out []byte) error {
		around = make([][]byte, len(lists)+1)
		k := 0
		for _, line := range lines(out) {
			if k < len(lists) && lists[k].isPh(line) {
				k++
				continue
			}
			around[k] = append(around[k], line...)
		}
		if k < len(lists) {
			return fmt.Errorf("formatting lost the placeholder of a list:\n%s", out)
		}
		p.separate()
		p.write(around[0])
		return nil
	})
	for k, l := range lists {
		g.renderList(p, l)
		p.fm.do(func() {
			if p.err == nil {
				p.write(around[k+1])
			}
		})
	}
}

// renderList renders the elements of l into p: every batch in l.wrap between two
// placeholders, whose lines bound the elements' lines once formatted.
func (g *generator) renderList(p *part, l *list) {
	var batch []jen.Code
	flush := func() {
		if len(batch) == 0 {
			return
		}
		items := jen.NewFile("")
		items.Add(l.wrap(append(append([]jen.Code{l.ph}, batch...), l.ph)))
		batch = batch[:0]
		g.formatThen(p, items, func(out []byte) error {
			var elems []byte
			phs := 0
			for _, line := range lines(out) {
				switch {
				case l.isPh(line):
					phs++
				case phs == 1:
					elems = append(elems, line...)
				}
			}
			if phs != 2 {
				return fmt.Errorf("formatting lost the placeholders of a list:\n%s", out)
			}
			p.write(elems)
			return nil
		})
	}
	for i := 0; i < l.n; i++ {
		if e := l.elem(i); e != nil {
			batch = append(batch, e)
			if len(batch) == listBatch {
				flush()
			}
		}
	}
	flush()
}

// restoreWriter writes the generated file one line at a time, numbering the directives that
// restore its lines (restoreDirective). A restoring directive right before another
// directive would point nowhere: it is dropped, so that no two directives are adjacent.
type restoreWriter struct {
	w       *bufio.Writer
	prefix  []byte
	line    int    // lines written
	cur     []byte // the line being received
	pending bool   // a restoring directive, written unless a directive follows it
}

func newRestoreWriter(w io.Writer, prefix string) *restoreWriter {
	return &restoreWriter{w: bufio.NewWriterSize(w, 64<<10), prefix: []byte(prefix)}
}

func (rw *restoreWriter) WriteString(s string) (int, error) { return rw.Write([]byte(s)) }

// Write writes b; errors of the underlying writer are reported by Flush.
func (rw *restoreWriter) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			rw.cur = append(rw.cur, b...)
			return n, nil
		}
		rw.cur = append(rw.cur, b[:i+1]...)
		b = b[i+1:]
		rw.writeLine(rw.cur)
		rw.cur = rw.cur[:0]
	}
	return n, nil
}

var lineDirective = []byte("//line ")

// writeLine writes one line, ending in a newline, or holds it when it is a restoring
// directive.
func (rw *restoreWriter) writeLine(line []byte) {
	rw.flushPending(bytes.HasPrefix(line, lineDirective))
	if bytes.HasPrefix(line, rw.prefix) {
		rw.pending = true
		return
	}
	rw.w.Write(line)
	rw.line++
}

// flushPending writes the held restoring directive, unless drop: it points at the line
// after it.
func (rw *restoreWriter) flushPending(drop bool) {
	if !rw.pending {
		return
	}
	rw.pending = false
	if drop {
		return
	}
	rw.w.Write(rw.prefix)
	rw.w.WriteString(strconv.Itoa(rw.line + 2))
	rw.w.WriteByte('\n')
	rw.line++
}

// Flush writes what is buffered.
func (rw *restoreWriter) Flush() error {
	if len(rw.cur) > 0 {
		rw.flushPending(bytes.HasPrefix(rw.cur, lineDirective))
		rw.w.Write(rw.cur)
		rw.cur = nil
	} else {
		rw.flushPending(false)
	}
	return rw.w.Flush()
}
