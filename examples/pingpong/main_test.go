package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The example end to end on the in-process world, with few iterations.
func TestPingPong(t *testing.T) {
	var out, errb bytes.Buffer
	seen := map[string]bool{}
	for _, r := range runJSON(t, "-lat-iters", "200", "-bw-size", "65536", "-bw-iters", "5", "-runs", "1") {
		seen[r.Workload+" "+r.Path] = true
		if r.MedianUS <= 0 || r.MinUS > r.MedianUS || r.MedianUS > r.MaxUS {
			t.Errorf("%+v: inconsistent figures", r)
		}
		if r.Workload == "bandwidth" && r.GBps <= 0 {
			t.Errorf("%+v: no bandwidth", r)
		}
	}
	for _, w := range []string{"latency", "bandwidth"} {
		for _, p := range []string{"direct", "shifted-inline", "shifted"} {
			if !seen[w+" "+p] {
				t.Errorf("no %s row for the %s path: %v", w, p, seen)
			}
		}
	}
	out.Reset()
	if code := run([]string{"-lat-iters", "100", "-bw-size", "4096", "-bw-iters", "2", "-runs", "1"}, &out, &errb); code != 0 ||
		!strings.Contains(out.String(), "8 B latency") {
		t.Errorf("table output: exit %d\n%s%s", code, out.String(), errb.String())
	}
	if code := run([]string{"-runs", "0"}, &out, &errb); code != 2 {
		t.Errorf("-runs 0: exit %d, want 2", code)
	}
	if code := run([]string{"-paths", "direct,bogus"}, &out, &errb); code != 2 {
		t.Errorf("-paths with an unknown path: exit %d, want 2", code)
	}
}

// -paths picks the rows, -bw-iters 0 drops bandwidth, -cpuprofile writes a profile.
func TestPingPongPathsAndProfile(t *testing.T) {
	prof := filepath.Join(t.TempDir(), "pp.prof")
	rows := runJSON(t, "-lat-iters", "200", "-bw-iters", "0", "-runs", "1", "-paths", "shifted-inline", "-cpuprofile", prof)
	if len(rows) != 1 || rows[0].Path != "shifted-inline" || rows[0].Workload != "latency" {
		t.Errorf("rows %+v, want one shifted-inline latency row", rows)
	}
	if st, err := os.Stat(prof + ".rank0"); err != nil || st.Size() == 0 {
		t.Errorf("profile: %v", err)
	}
}

// runJSON runs the example with args and -json, and returns its rows.
func runJSON(t *testing.T, args ...string) []Result {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(append(args, "-json"), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var doc struct {
		Results []Result `json:"results"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v in %q", err, out.String())
	}
	return doc.Results
}
