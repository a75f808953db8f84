package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The driver runs end to end on small sizes and writes a table and a JSON file whose jdf2go
// rows carry ratios against both baselines. Only the rt suite runs: the others (potrf, ce,
// gpu-sim) take minutes and are exercised by their own packages' tests.
func TestDriverQuick(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results.json")
	html := filepath.Join(t.TempDir(), "report.html")
	var stdout, stderr strings.Builder
	if code := run([]string{"-quick", "-runs", "1", "-workers", "2", "-suite", "^rt$", "-json", out, "-html", html}, &stdout, &stderr); code != 0 {
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
		Rows []Row `json:"rows"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
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

// TestGenSuite runs the gen suite on its small input: it builds jdf2go and reads the peak
// resident set of the command (the figures are the benchmark's, not checked here).
func TestGenSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds jdf2go and generates 1 MB of JDF")
	}
	if ok, why := haveGo(); !ok {
		t.Skip(why)
	}
	rows, err := runGen(&Config{Runs: 1, Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Median <= 0 || rows[0].Per < 1e6 || !strings.Contains(rows[0].Note, "peak RSS") {
		t.Errorf("rows %+v", rows)
	}
}
