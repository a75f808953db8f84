package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The driver runs end to end on small sizes and writes a table and a JSON file whose jdf2go
// rows carry ratios against both baselines. Only the rt suite runs: the others (potrf, ce,
// gpu-sim) take minutes and are exercised by their own packages' tests.
func TestDriverQuick(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results.json")
	html := filepath.Join(t.TempDir(), "report.html")
	recs := filepath.Join(t.TempDir(), "results") // -record makes the folder
	var stdout, stderr strings.Builder
	args := []string{"-quick", "-runs", "1", "-workers", "2", "-suite", "^rt$", "-json", out, "-html", html,
		"-record", recs, "-machine", "Test box"}
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	for _, w := range []string{"independent", "chain", "2chains", "grid", "fanout", "goroutines", "pool"} {
		if !strings.Contains(stdout.String(), w) {
			t.Errorf("table lacks %q:\n%s", w, stdout.String())
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Date    time.Time `json:"date"`
		Commit  string    `json:"commit"`
		Command []string  `json:"command"`
		Machine Machine   `json:"machine"`
		Rows    []Row     `json:"rows"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	// The stamp: when, from which commit, with which command, on which machine.
	if doc.Date.IsZero() || doc.Commit == "" || doc.Machine.Name != "Test box" || doc.Machine.CPU == "" ||
		!slices.Equal(doc.Command, append([]string{"bench"}, args...)) {
		t.Errorf("stamp: date %v, commit %q, machine %+v, command %q", doc.Date, doc.Commit, doc.Machine, doc.Command)
	}
	// -record wrote the same results under <date>-<machine>-<suite>.json.
	want := filepath.Join(recs, doc.Date.Format("2006-01-02")+"-test-box-rt.json")
	if rec, err := os.ReadFile(want); err != nil || !bytes.Equal(rec, b) {
		t.Errorf("record %s: %v (same as -json: %v)", want, err, bytes.Equal(rec, b))
	}
	var jdf int
	for _, r := range doc.Rows {
		if r.Variant == "jdf2go" {
			jdf++
			if r.Ratios["goroutines"] <= 0 || r.Ratios["pool"] <= 0 || r.MedianPer <= 0 {
				t.Errorf("row %s: ratios %v, median %v", r.Workload, r.Ratios, r.MedianPer)
			}
		}
	}
	if jdf != 5 {
		t.Errorf("%d jdf2go rows, want 5", jdf)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(page), "data:image/png;base64,"); n != 5 {
		t.Errorf("report has %d plots, want one per rt workload (5)", n)
	}
}

func TestDriverUsage(t *testing.T) {
	var stdout, stderr strings.Builder
	if code := run([]string{"-workers", "x"}, &stdout, &stderr); code != 2 {
		t.Fatalf("bad -workers: exit %d", code)
	}
	if code := run([]string{"-suite", "("}, &stdout, &stderr); code != 2 {
		t.Fatalf("bad -suite: exit %d", code)
	}
}

// The cpu-batch suite runs on small sizes; its batched rows carry a ratio to singleton.
func TestCPUBatchSuiteQuick(t *testing.T) {
	rows, err := runCPUBatch(&Config{Runs: 1, Workers: []int{1, 2}, Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := fillRatios(rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 {
		t.Fatalf("%d rows, want 6 (2 workloads, 3 variants)", len(rows))
	}
	for _, r := range rows {
		if r.Workers != 2 || r.MedianPer <= 0 || (r.Variant != "singleton") != (r.Ratios["singleton"] > 0) {
			t.Errorf("row %+v", r)
		}
	}
}

// TestMain makes the test binary the gen suite's child when genChildEnv is set, as the
// driver is.
func TestMain(m *testing.M) {
	if in := os.Getenv(genChildEnv); in != "" {
		os.Exit(genChild(in, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestGenSuite runs the gen suite on its small input: it generates in a child process and
// reads its peak resident set (the figures are the benchmark's, not checked here).
func TestGenSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 1 MB of JDF")
	}
	rows, err := runGen(&Config{Runs: 1, Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Median <= 0 || rows[0].Per < 1e6 || !strings.Contains(rows[0].Note, "peak RSS") {
		t.Errorf("rows %+v", rows)
	}
}

// TestViewSuite runs the view suite on its small traces: it builds jdf2go, and each row
// carries the command's peak resident set (the figures are the benchmark's, not checked here).
func TestViewSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds jdf2go and writes traces of 2 and 8 MB")
	}
	if ok, why := haveGo(); !ok {
		t.Skip(why)
	}
	rows, err := runView(&Config{Runs: 1, Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[1].Per < 3*rows[0].Per {
		t.Fatalf("rows %+v: want 2, the second on a trace 3 times larger or more", rows)
	}
	for _, r := range rows {
		if r.Median <= 0 || !strings.Contains(r.Note, "peak RSS") {
			t.Errorf("row %+v", r)
		}
	}
}

// recordPath never overwrites an earlier record, and names every suite "all".
func TestRecordPath(t *testing.T) {
	dir := t.TempDir()
	day := time.Date(2026, 3, 4, 23, 0, 0, 0, time.UTC)
	p, err := recordPath(dir, day, "H200 host", "^potrf$|^rt$")
	if err != nil || filepath.Base(p) != "2026-03-04-h200-host-potrf-rt.json" {
		t.Fatalf("recordPath = %q, %v", p, err)
	}
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if p2, err := recordPath(dir, day, "H200 host", "^potrf$|^rt$"); err != nil || filepath.Base(p2) != "2026-03-04-h200-host-potrf-rt-2.json" {
		t.Errorf("second recordPath = %q, %v", p2, err)
	}
	if p, err := recordPath(dir, day, "dev", ""); err != nil || filepath.Base(p) != "2026-03-04-dev-all.json" {
		t.Errorf("recordPath of every suite = %q, %v", p, err)
	}
	if _, err := recordPath(dir, day, "--", "rt"); err != errRecordName {
		t.Errorf("recordPath without a machine name: %v, want errRecordName", err)
	}
	if got := defaultMachineName(Machine{CPUs: 16, GPUs: "NVIDIA H200"}); got != "h200-16cpu" {
		t.Errorf("defaultMachineName = %q", got)
	}
}
