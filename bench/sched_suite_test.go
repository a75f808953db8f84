package main

import (
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/examples/potrf/cholesky"
)

// The sleeping graph has potrf.jdf's tasks, its critical path is the chain of POTRF, TRSM and
// SYRK steps, and the list schedule of a chain or of independent tasks is what it must be.
func TestSchedGraph(t *testing.T) {
	for _, mt := range []int{1, 2, 5, 16} {
		if got, want := int64(len(potrfGraph(mt))), cholesky.Tasks(mt); got != want {
			t.Errorf("MT=%d: %d tasks, want %d", mt, got, want)
		}
	}
	ts := potrfGraph(2)
	if got, want := criticalPath(ts, schedTimes), 2*schedTimes[sPOTRF]+schedTimes[sTRSM]+schedTimes[sSYRK]; got != want {
		t.Errorf("MT=2: critical path %v, want %v", got, want)
	}
	d := make([]time.Duration, len(ts))
	for i := range d {
		d[i] = schedTimes[ts[i].class]
	}
	// MT=2 is a chain of four tasks: the span is their sum on any number of workers.
	for _, w := range []int{1, 16} {
		if got, want := listSpan(ts, d, w), criticalPath(ts, schedTimes); got != want {
			t.Errorf("MT=2, %d workers: list span %v, want %v", w, got, want)
		}
	}
	// Independent tasks of 1, 2 and 3 ms on 2 workers, highest priority first: 3 and 2 ms
	// start at once, 1 ms after the 2 ms one, so the span is 3 ms.
	ind := []sleepTask{{prio: 1}, {prio: 2}, {prio: 3}}
	if got := listSpan(ind, []time.Duration{1e6, 2e6, 3e6}, 2); got != 3*time.Millisecond {
		t.Errorf("independent tasks: list span %v, want 3ms", got)
	}
}

func TestSchedSuiteQuick(t *testing.T) {
	rows, err := runSched(&Config{Runs: 1, Workers: []int{2}, Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want lfq, ap and list", len(rows))
	}
	times := schedTimes
	for i := range times {
		times[i] /= 8
	}
	cp := criticalPath(potrfGraph(16), times)
	for _, r := range rows {
		// A task sleeps at least its time, so no schedule beats the critical path.
		if r.Min < cp {
			t.Errorf("%s: span %v, shorter than the critical path %v", r.Variant, r.Min, cp)
		}
	}
}
