package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// traceEvent is the part of a Chrome/Perfetto trace event that the replay reads.
type traceEvent struct {
	Ph   string          `json:"ph"`
	Name string          `json:"name"`
	Pid  int             `json:"pid"`
	Tid  int             `json:"tid"`
	Ts   float64         `json:"ts"`  // microseconds
	Dur  float64         `json:"dur"` // microseconds
	Args json.RawMessage `json:"args"`
}

// maxValueBytes bounds the JSON text of one trace event, and of any single token elsewhere in
// the trace: the decoder holds a value whole before it decodes it, so without a bound one
// enormous value would make memory follow the file. rt's events are a few hundred bytes.
const maxValueBytes = 1 << 20

// errValueTooLarge is what boundedReader returns once the value being decoded passed
// maxValueBytes.
var errValueTooLarge = fmt.Errorf("a JSON value larger than %d bytes", maxValueBytes)

// errTruncated reports a trace that ends before its JSON does.
var errTruncated = errors.New("the trace ends before its JSON does (truncated file?)")

// boundedReader is the decoder's source. The scanner sets start to the decoder's input
// offset before it reads each value; the decoder asks for more input only while the value it
// reads is incomplete, so once the bytes handed out since start pass maxValueBytes, that value
// is larger than the bound.
type boundedReader struct {
	r     io.Reader
	read  int64 // bytes handed to the decoder
	start int64 // the decoder's input offset where the current value starts
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.read-b.start > maxValueBytes {
		return 0, errValueTooLarge
	}
	// Small reads keep the decoder's lookahead, and so the check above, close to the value.
	p = p[:min(len(p), 64<<10)]
	n, err := b.r.Read(p)
	b.read += int64(n)
	return n, err
}

// scanTrace reads a Chrome/Perfetto JSON trace as a stream, one event at a time: either the
// object form ({"traceEvents": [...], ...}, whose other members are skipped token by token)
// or the array form ([...]). It calls f with each event's index in the array and the event,
// in a value that the next event overwrites; f's error ends the scan and is returned as is.
// A malformed event's error names its index (and its name when it was read).
func scanTrace(r io.Reader, f func(i int, e *traceEvent) error) error {
	br := &boundedReader{r: r}
	dec := json.NewDecoder(br)
	token := func() (json.Token, error) {
		br.start = dec.InputOffset()
		t, err := dec.Token()
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			err = errTruncated
		}
		return t, err
	}
	n := 0
	events := func() error {
		var e traceEvent
		for {
			br.start = dec.InputOffset()
			if !dec.More() {
				break
			}
			e = traceEvent{}
			br.start = dec.InputOffset()
			if err := dec.Decode(&e); err != nil {
				return eventError(n, &e, err)
			}
			if err := f(n, &e); err != nil {
				return err
			}
			n++
		}
		if t, err := token(); err != nil {
			return err
		} else if t != json.Delim(']') {
			return fmt.Errorf("after event %d: %v where the array of events should go on", n, t)
		}
		return nil
	}
	t, err := token()
	if err == errTruncated {
		return errors.New("empty file: not a JSON trace")
	} else if err != nil {
		return err
	}
	switch t {
	case json.Delim('['):
		return events()
	case json.Delim('{'):
		for dec.More() {
			k, err := token()
			if err != nil {
				return err
			}
			if k != "traceEvents" {
				if err := skipValue(token); err != nil {
					return err
				}
				continue
			}
			if t, err := token(); err != nil {
				return err
			} else if t != json.Delim('[') {
				return fmt.Errorf("traceEvents is %v, not an array", t)
			}
			if err := events(); err != nil {
				return err
			}
		}
		_, err := token() // the closing brace: the decoder checks that it is one
		return err
	}
	return fmt.Errorf("not a JSON trace: it starts with %v, not an object or an array", t)
}

// skipValue reads the next value through token and drops it; memory stays that of one token.
func skipValue(token func() (json.Token, error)) error {
	depth := 0
	for {
		t, err := token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// eventError names event i in the error of its decoding. A field of the wrong type (a string
// timestamp, a number beyond float64) leaves the rest of the event decoded, its name included.
func eventError(i int, e *traceEvent, err error) error {
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typ) && typ.Field == "":
		return fmt.Errorf("event %d: a JSON %s, not an event object", i, typ.Value)
	case errors.As(err, &typ):
		return fmt.Errorf("event %d (%q): field %q: a JSON %s, not a %s", i, e.Name, typ.Field, typ.Value, typ.Type)
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return fmt.Errorf("event %d: %w", i, errTruncated)
	}
	return fmt.Errorf("event %d: %w", i, err)
}
