package profile

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"strconv"
)

// WriteJSON writes every track as Chrome trace-event JSON ("traceEvents" array, microsecond
// timestamps), readable by Perfetto. Call it after the writers have stopped.
func (tr *Tracer) WriteJSON(w io.Writer) error {
	names, tracks := tr.snapshot()
	bw := bufio.NewWriter(w)
	pids := map[string]int{}
	var buf []byte
	buf = append(buf, `{"displayTimeUnit":"ns","jdf2goEpochNs":`...)
	buf = strconv.AppendInt(buf, tr.start.UnixNano(), 10)
	buf = append(buf, `,"traceEvents":[`...)
	first := true
	sep := func() {
		if !first {
			buf = append(buf, ",\n"...)
		}
		first = false
	}
	for _, t := range tracks {
		pid, ok := pids[t.group]
		if !ok {
			pid = len(pids)
			pids[t.group] = pid
			sep()
			buf = append(buf, `{"ph":"M","name":"process_name","pid":`...)
			buf = strconv.AppendInt(buf, int64(pid), 10)
			buf = append(buf, `,"tid":0,"args":{"name":`...)
			buf = appendJSONString(buf, t.group)
			buf = append(buf, "}}"...)
		}
		sep()
		buf = append(buf, `{"ph":"M","name":"thread_name","pid":`...)
		buf = strconv.AppendInt(buf, int64(pid), 10)
		buf = append(buf, `,"tid":`...)
		buf = strconv.AppendInt(buf, int64(t.id), 10)
		buf = append(buf, `,"args":{"name":`...)
		buf = appendJSONString(buf, t.name)
		buf = append(buf, "}}"...)
		var werr error
		t.Events(func(e *Event) {
			if werr != nil {
				return
			}
			sep()
			if e.End > e.Start {
				buf = append(buf, `{"ph":"X","pid":`...)
			} else {
				buf = append(buf, `{"ph":"i","s":"t","pid":`...)
			}
			buf = strconv.AppendInt(buf, int64(pid), 10)
			buf = append(buf, `,"tid":`...)
			buf = strconv.AppendInt(buf, int64(t.id), 10)
			buf = append(buf, `,"ts":`...)
			buf = appendMicros(buf, e.Start)
			if e.End > e.Start {
				buf = append(buf, `,"dur":`...)
				buf = appendMicros(buf, e.End-e.Start)
			}
			buf = append(buf, `,"name":`...)
			buf = appendJSONString(buf, displayName(names, e))
			if e.Flow != 0 {
				buf = append(buf, `,"bind_id":"0x`...)
				buf = strconv.AppendUint(buf, e.Flow, 16)
				if e.FlowIn {
					buf = append(buf, `","flow_in":true`...)
				} else {
					buf = append(buf, `","flow_out":true`...)
				}
			}
			buf = append(buf, '}')
			if len(buf) > 1<<16 {
				_, werr = bw.Write(buf)
				buf = buf[:0]
			}
		})
		if werr != nil {
			return werr
		}
	}
	buf = append(buf, "]}\n"...)
	if _, err := bw.Write(buf); err != nil {
		return err
	}
	return bw.Flush()
}

// WriteFile writes the trace to path (see WriteJSON).
func (tr *Tracer) WriteFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := tr.WriteJSON(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// displayName renders "name(a0, a1, ...)", or the bare name when the event has no arguments.
func displayName(names []string, e *Event) string {
	n := "?"
	if int(e.Name) < len(names) {
		n = names[e.Name]
	}
	if e.NArgs == 0 {
		return n
	}
	b := make([]byte, 0, len(n)+8*int(e.NArgs))
	b = append(b, n...)
	b = append(b, '(')
	for i := 0; i < int(e.NArgs); i++ {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, e.Args[i], 10)
	}
	return string(append(b, ')'))
}

// appendMicros writes ns as microseconds with three decimals (nanosecond precision).
func appendMicros(b []byte, ns int64) []byte {
	b = strconv.AppendInt(b, ns/1000, 10)
	r := ns % 1000
	if r < 0 {
		r = -r
	}
	b = append(b, '.')
	b = append(b, byte('0'+r/100), byte('0'+r/10%10), byte('0'+r%10))
	return b
}

func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}
