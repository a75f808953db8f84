package dashboard

import (
	"bufio"
	"errors"
	"go/parser"
	"go/token"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The package imports the standard library only, so that the compiler (cmd/jdf2go) can
// serve the page without linking the runtime.
func TestStdlibOnly(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") {
				t.Errorf("%s imports %s: the dashboard must use the standard library only", f, p)
			}
		}
	}
}

func TestAddresses(t *testing.T) {
	for host, want := range map[string]bool{"localhost": true, "LOCALHOST": true, "127.0.0.1": true, "127.1.2.3": true,
		"::1": true, "[::1]": true, "0.0.0.0": false, "::": false, "192.0.2.1": false, "example.com": false, "": false} {
		if got := IsLoopback(host); got != want {
			t.Errorf("IsLoopback(%q) = %v", host, got)
		}
	}
	for _, tc := range []struct {
		addr string
		rank int
		want string
	}{{"localhost:8080", 0, "localhost:8080"}, {"localhost:8080", 3, "localhost:8083"}, {":0", 2, ":0"}, {"[::1]:9000", 1, "[::1]:9001"}} {
		if got, err := RankAddr(tc.addr, tc.rank); err != nil || got != tc.want {
			t.Errorf("RankAddr(%q, %d) = %q, %v; want %q", tc.addr, tc.rank, got, err, tc.want)
		}
	}
	for _, bad := range []string{"localhost", "localhost:http", "localhost:65535"} {
		if _, err := RankAddr(bad, 1); err == nil {
			t.Errorf("RankAddr(%q, 1): no error", bad)
		}
	}
	if _, err := Listen("10.1.2.3:0", Options{}); !errors.Is(err, ErrPublic) {
		t.Errorf("Listen on 10.1.2.3 without Public: %v, want ErrPublic", err)
	}
}

// The history keeps the last Options.History snapshots; a stream that resumes with
// Last-Event-ID gets only the newer ones.
func TestHistoryAndResume(t *testing.T) {
	s, err := Listen("localhost:0", Options{History: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 5 {
		if err := s.Publish(&Snapshot{Time: float64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	hist, seqs, _ := s.since(-1)
	if len(hist) != 3 || seqs[0] != 3 || seqs[2] != 5 {
		t.Fatalf("history holds seqs %v, want [3 4 5]", seqs)
	}
	req, _ := http.NewRequest("GET", s.URL()+"api/stream", nil)
	req.Header.Set("Last-Event-ID", "4")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	timer := time.AfterFunc(10*time.Second, func() { resp.Body.Close() })
	defer timer.Stop()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			if id != "5" {
				t.Fatalf("resumed stream sent id %s first, want 5", id)
			}
			return
		}
	}
	t.Fatal("the resumed stream sent nothing")
}

func TestFromTraceErrors(t *testing.T) {
	for _, in := range []string{"", "not json", `{"traceEvents":[]}`,
		`{"traceEvents":[{"ph":"M","name":"process_name","pid":0,"args":{"name":"workers"}}]}`} {
		if _, err := FromTrace(strings.NewReader(in), "x.json"); err == nil {
			t.Errorf("FromTrace(%q): no error", in)
		}
	}
}

// Snapshots older than their window lose their lanes; the history keeps at most
// HistoryBytes of them, newest first.
func TestHistoryBounds(t *testing.T) {
	s, err := Listen("localhost:0", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 10 {
		snap := &Snapshot{Time: float64(i), Window: 3, Lanes: []Segment{{Class: "A", Start: float64(i), End: float64(i) + 1}}}
		if err := s.Publish(snap); err != nil {
			t.Fatal(err)
		}
	}
	hist, _, _ := s.since(-1)
	for i, b := range hist {
		// The last snapshot is at 9 s: those at 6 s and later keep their lanes.
		if has := strings.Contains(string(b), `"c":"A"`); has != (i >= 6) {
			t.Fatalf("snapshot at %d s: lanes %v, want %v\n%s", i, has, i >= 6, b)
		}
	}
	small, err := Listen("localhost:0", Options{HistoryBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	for i := range 100 {
		if err := small.Publish(&Snapshot{Time: float64(i), Window: 1000}); err != nil {
			t.Fatal(err)
		}
	}
	hist, seqs, _ := small.since(-1)
	n := 0
	for _, b := range hist {
		n += len(b)
	}
	if n > 1000 || seqs[len(seqs)-1] != 100 || len(hist) < 2 {
		t.Fatalf("%d snapshots of %d bytes kept, last seq %d: want the newest within 1000 bytes", len(hist), n, seqs[len(seqs)-1])
	}
}

// A page reading the stream while the history turns over gets snapshots in order, up to the
// last one (a reader that falls behind the history skips what was dropped; run
// with -race: readers and Publish share the history).
func TestStreamWhilePublishing(t *testing.T) {
	s, err := Listen("localhost:0", Options{History: 5})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(s.URL() + "api/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	timer := time.AfterFunc(10*time.Second, func() { resp.Body.Close() })
	defer timer.Stop()
	const n = 300
	go func() {
		for i := range n {
			s.Publish(&Snapshot{Time: float64(i), Window: 1, Lanes: []Segment{{Class: "A"}}})
		}
		s.Close()
	}()
	sc := bufio.NewScanner(resp.Body)
	last := 0
	for sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			seq, _ := strconv.Atoi(id)
			if seq <= last {
				t.Fatalf("id %d after %d", seq, last)
			}
			last = seq
		}
	}
	if last != n {
		t.Fatalf("the stream ended at id %d, want %d", last, n)
	}
}
