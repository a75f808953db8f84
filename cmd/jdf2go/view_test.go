package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/dashboard"
)

// The trace of a potrf run (6x6 tiles, 2 workers and a simulated GPU: 42 tasks on the CPU, 14
// on the device) is served as a finished run, with the same page and JSON as a live one.
func TestViewServesTrace(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	urls := make(chan string, 1)
	var out bytes.Buffer
	errc := make(chan error, 1)
	go func() {
		errc <- serveTrace(ctx, &streams{out: &out, err: io.Discard}, "testdata/view/potrf-trace.json",
			"localhost:0", false, func(u string) { urls <- u })
	}()
	var base string
	select {
	case base = <-urls:
	case err := <-errc:
		t.Fatalf("view: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("view did not serve within 10 s")
	}
	resp, err := http.Get(base + "api/snapshot")
	if err != nil {
		t.Fatal(err)
	}
	var s dashboard.Snapshot
	err = json.NewDecoder(resp.Body).Decode(&s)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"POTRF": 6, "TRSM": 15, "SYRK": 15, "GEMM": 20}
	for _, k := range s.Classes {
		if want[k.Name] != k.Done || k.Done != k.Total {
			t.Errorf("class %+v, want %d done of %d", k, want[k.Name], want[k.Name])
		}
		delete(want, k.Name)
	}
	if len(want) != 0 || !s.Finished || s.Done != 56 || s.Workers != 2 || !strings.HasPrefix(s.Source, "trace ") {
		t.Fatalf("snapshot %+v: want the 4 classes, 56 tasks, 2 workers, finished, from a trace", s)
	}
	if len(s.GPUs) != 1 || s.GPUs[0].Name != "gpu0" || s.GPUs[0].Executed != 14 || s.GPUs[0].StageIns == 0 {
		t.Fatalf("devices %+v: want gpu0 with 14 tasks and its stage-ins", s.GPUs)
	}
	resp, err = http.Get(base + "api/history")
	if err != nil {
		t.Fatal(err)
	}
	var hist []dashboard.Snapshot
	err = json.NewDecoder(resp.Body).Decode(&hist)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	lanes := map[string]int{}
	for _, h := range hist {
		for _, b := range h.Busy {
			if !(b >= 0 && b <= 1) {
				t.Fatalf("snapshot at %.4f s: busy %v", h.Time, h.Busy)
			}
		}
		for _, g := range h.Lanes {
			lanes[g.Class]++
		}
	}
	cpu := lanes["POTRF"] + lanes["TRSM"] + lanes["SYRK"] + lanes["GEMM"]
	if len(hist) < 50 || cpu != 42 || lanes["gpu0 submit"] == 0 {
		t.Fatalf("%d snapshots, lanes %v: want a replay of 50 or more, the 42 CPU tasks and the device episodes", len(hist), lanes)
	}
	resp, err = http.Get(base)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(page, []byte("app.js")) {
		t.Fatalf("GET /: no page:\n%s", page)
	}
	resp, err = http.Post(base+"api/snapshot", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %s, want 405", resp.Status)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("view after interrupt: %v", err)
	}
	if !strings.Contains(out.String(), base) {
		t.Fatalf("view printed %q, want the page's address", out.String())
	}
}

// view --summary prints the run's totals from the trace and exits: the tasks of each class,
// the workers and the device's tasks.
func TestViewSummary(t *testing.T) {
	code, stdout, stderr := runCLI(t, "view", "--summary", "testdata/view/potrf-trace.json")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"potrf-trace.json: 56 tasks in ", "workers: 2, busy ", "devices: 1\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the summary does not say %q:\n%s", want, stdout)
		}
	}
	for _, rx := range []string{`(?m)^\s*POTRF\s+6$`, `(?m)^\s*TRSM\s+15$`, `(?m)^\s*SYRK\s+15$`, `(?m)^\s*GEMM\s+20$`,
		`(?m)^\s*gpu0\s+14\s+[1-9][0-9]*\s+[0-9]+$`} {
		if !regexp.MustCompile(rx).MatchString(stdout) {
			t.Errorf("the summary has no line matching %s:\n%s", rx, stdout)
		}
	}
}

// view fails with exit status 1 on a missing trace, a file that is not a trace, a truncated
// trace, a span out of range (naming the event), and a non-loopback address without
// --public.
func TestViewErrors(t *testing.T) {
	dir := t.TempDir()
	trace, err := os.ReadFile("testdata/view/potrf-trace.json")
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.json")
	huge := filepath.Join(dir, "huge.json")
	hugeTrace := bytes.Replace(trace, []byte(`"ts":27648.967`), []byte(`"ts":1e308`), 1)
	if bytes.Equal(hugeTrace, trace) {
		t.Fatal("the potrf trace has no span at 27648.967 µs to move")
	}
	if os.WriteFile(cut, trace[:len(trace)/2], 0o644) != nil || os.WriteFile(huge, hugeTrace, 0o644) != nil {
		t.Fatal("writing the broken traces")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"view", "testdata/view/missing.json"}, "no such file"},
		{[]string{"view", "view_test.go"}, "reading trace"},
		{[]string{"view", "--summary", cut}, "truncated"},
		{[]string{"view", huge}, `event 5 ("TRSM(3, 0)"): timestamp 1e+308`},
		{[]string{"view", "testdata/view/potrf-trace.json", "--addr", "0.0.0.0:0"}, "non-loopback"},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		if code != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("jdf2go %s: exit %d, stderr %q; want 1 and %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}
