package rt_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/trace"
	"strconv"
	"testing"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/rttest"
)

func TestTraceFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.json")
	c, err := rt.New(rt.Workers(2), rt.Trace(path))
	if err != nil {
		t.Fatal(err)
	}
	const n = 100
	mustRun(t, c, rttest.Chains(2, n, nil))
	sum := c.Tracer().Summary()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph   string         `json:"ph"`
			Name string         `json:"name"`
			Tid  int            `json:"tid"`
			Dur  float64        `json:"dur"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("trace is not JSON: %v", err)
	}
	spans := map[string]int{}
	threads := 0
	for _, e := range doc.TraceEvents {
		switch {
		case e.Ph == "M" && e.Name == "thread_name":
			threads++
		case e.Ph == "X" || e.Ph == "i":
			spans[e.Name]++
		}
	}
	if threads != 2 {
		t.Errorf("%d worker tracks, want 2", threads)
	}
	for c := 0; c < 2; c++ {
		for k := 0; k < n; k++ {
			name := "T(" + itoa(c) + ", " + itoa(k) + ")"
			if spans[name] != 1 {
				t.Fatalf("span %q appears %d times, want 1 (spans: %d)", name, spans[name], len(spans))
			}
		}
	}
	if spans["startup:T"] != 1 {
		t.Errorf("startup span count %d", spans["startup:T"])
	}
	var found bool
	for _, s := range sum {
		if s.Name == "T" {
			found = true
			if s.Count != 2*n || s.Max < s.Mean || s.Total <= 0 {
				t.Errorf("summary of T: %+v", s)
			}
		}
	}
	if !found {
		t.Errorf("summary has no class T: %+v", sum)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// Steady state allocates nothing per task: a run of N tasks allocates a constant amount
// (taskpool, tables, startup), whatever N.
func TestZeroAllocsPerTask(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	c := newCtx(t, rt.Workers(2))
	for _, tc := range []struct {
		name  string
		n     int
		build func() *rt.Taskpool
	}{
		{"chain", 20000, func() *rt.Taskpool { return rttest.Chains(1, 20000, nil) }},
		{"grid", 22500, func() *rt.Taskpool { return rttest.Grid(150, 150, nil) }},
		{"independent", 20000, func() *rt.Taskpool { return rttest.Independent(20000, nil) }},
		{"fan-out-in", 20002, func() *rt.Taskpool { return rttest.FanOutIn(20000, nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustRun(t, c, tc.build()) // warm free lists, queues and tables
			allocs := testing.AllocsPerRun(5, func() { mustRun(t, c, tc.build()) })
			perTask := allocs / float64(tc.n)
			t.Logf("%.0f allocations per run of %d tasks (%.4f per task)", allocs, tc.n, perTask)
			if perTask > 0.01 {
				t.Fatalf("%.4f allocations per task, want 0 in steady state", perTask)
			}
		})
	}
}

// Tasks show up as runtime/trace regions while Go's execution tracer runs.
func TestExecutionTracerRegions(t *testing.T) {
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Skipf("execution tracer unavailable: %v", err)
	}
	c := newCtx(t, rt.Workers(2))
	probe := &rt.TaskClass{Name: "RegionProbe",
		Space:        func(tp *rt.Taskpool, l *rt.Locals, y func(*rt.Locals) bool) { y(l) },
		Complete:     func(*rt.Taskpool, *rt.Locals) bool { return true },
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(*rt.Task) error { return nil }}}}
	mustRun(t, c, rt.NewTaskpool("probe", nil, probe))
	trace.Stop()
	if !bytes.Contains(buf.Bytes(), []byte("RegionProbe")) {
		t.Fatal("the execution trace has no region named after the task class")
	}
}
