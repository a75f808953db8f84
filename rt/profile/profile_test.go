package profile

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestTracerJSONAndSummary(t *testing.T) {
	tr := New()
	gemm, stage := tr.Name("GEMM"), tr.Name("stage-in")
	if tr.Name("GEMM") != gemm {
		t.Fatal("interning twice gave two names")
	}
	w := tr.NewTrack("workers", "worker 0")
	s := tr.NewTrack("gpu0", "stream 2")
	for i := int64(0); i < 5000; i++ { // crosses a chunk boundary
		w.Span(gemm, i*10, i*10+5, i, 2*i, 3)
	}
	s.Span(stage, 0, 100)
	s.Instant(stage, 50)
	var nilTrack *Track
	nilTrack.Span(gemm, 0, 1) // no-op
	if w.Len() != 5000 || s.Len() != 2 || nilTrack.Len() != 0 {
		t.Fatalf("lengths %d %d", w.Len(), s.Len())
	}
	var buf bytes.Buffer
	if err := tr.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("invalid JSON: %v\n%.300s", err, buf.String())
	}
	if n := len(doc.TraceEvents); n != 5000+2+4 { // spans + 2 process + 2 thread names
		t.Fatalf("%d events", n)
	}
	if !strings.Contains(buf.String(), `"name":"GEMM(4999, 9998, 3)"`) || !strings.Contains(buf.String(), `"ts":49.990`) {
		t.Fatalf("span name or timestamp missing:\n%.400s", buf.String())
	}
	sum := tr.Summary()
	if len(sum) != 2 || sum[0].Name != "GEMM" || sum[0].Count != 5000 || sum[0].Mean != 5 || sum[1].Max != 100*time.Nanosecond {
		t.Fatalf("summary %+v", sum)
	}
	var out strings.Builder
	if err := WriteSummary(&out, sum); err != nil || !strings.Contains(out.String(), "GEMM") {
		t.Fatalf("WriteSummary: %v %q", err, out.String())
	}
}
