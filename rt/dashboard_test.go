package rt_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/dashboard"
	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/rttest"
)

// getJSON decodes the JSON served at url into v.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// waitSnapshot polls /api/snapshot until ok accepts one, for at most 10 s.
func waitSnapshot(t *testing.T, base string, ok func(*dashboard.Snapshot) bool) *dashboard.Snapshot {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var s *dashboard.Snapshot
		getJSON(t, base+"api/snapshot", &s)
		if s != nil && ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot as expected within 10 s; last: %+v", s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A run with the dashboard on serves the page and, as JSON, each class's progress up to its
// total, the workers' busy intervals and the rate.
func TestDashboardServesRun(t *testing.T) {
	c := newCtx(t, rt.Workers(2), rt.Dashboard("localhost:0"))
	base := c.DashboardURL()
	if !strings.HasPrefix(base, "http://127.0.0.1:") && !strings.HasPrefix(base, "http://[::1]:") {
		t.Fatalf("DashboardURL() = %q, want a loopback address", base)
	}
	body := func(t *rt.Task) error { time.Sleep(200 * time.Microsecond); return nil }
	mustRun(t, c, rttest.Grid(20, 20, body))
	s := waitSnapshot(t, base, func(s *dashboard.Snapshot) bool {
		return len(s.Classes) == 1 && s.Classes[0].Done == s.Classes[0].Total
	})
	if k := s.Classes[0]; k.Taskpool != "Grid" || k.Name != "T" || k.Total != 400 {
		t.Fatalf("class progress %+v, want Grid T 400/400", k)
	}
	if s.Workers != 2 || len(s.Busy) != 2 || s.Source != "live" {
		t.Fatalf("snapshot %+v: want 2 workers, live", s)
	}
	var hist []dashboard.Snapshot
	getJSON(t, base+"api/history", &hist)
	var lanes int
	var busy, peak float64
	for _, h := range hist {
		for _, g := range h.Lanes {
			if g.Class != "T" || g.Worker < 0 || g.Worker > 1 || g.End < g.Start {
				t.Fatalf("bad lane segment %+v", g)
			}
			busy += g.End - g.Start
			lanes++
		}
		peak = max(peak, h.Rate)
	}
	// 400 bodies of at least 200 µs each.
	if lanes == 0 || busy < 0.9*400*200e-6 || peak <= 0 {
		t.Fatalf("%d lane segments covering %.4f s, peak rate %.0f/s: want the bodies' time and a rate",
			lanes, busy, peak)
	}
	for _, path := range []string{"", "app.js", "style.css", "favicon.svg"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || len(b) == 0 {
			t.Fatalf("GET /%s: %s, %d bytes", path, resp.Status, len(b))
		}
	}
}

// The stream sends the snapshots kept so far as Server-Sent Events, then ends with an "end"
// event when the Context closes; the last snapshot is marked finished.
func TestDashboardStream(t *testing.T) {
	c, err := rt.New(rt.Workers(1), rt.Dashboard("localhost:0"))
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, c, rttest.Chains(2, 50, nil))
	resp, err := http.Get(c.DashboardURL() + "api/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	closed := make(chan error, 1)
	go func() { time.Sleep(300 * time.Millisecond); closed <- c.Close() }()
	events := map[string]int{}
	var last dashboard.Snapshot
	timer := time.AfterFunc(10*time.Second, func() { resp.Body.Close() })
	defer timer.Stop()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
			events[event]++
		case strings.HasPrefix(line, "data: ") && event == "snapshot":
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &last); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if events["snapshot"] == 0 || events["end"] != 1 || !last.Finished {
		t.Fatalf("events %v, last snapshot finished=%v: want snapshots, then one end, the last finished",
			events, last.Finished)
	}
	if last.Done != 100 {
		t.Fatalf("last snapshot: %d tasks done, want 100", last.Done)
	}
}

// A non-loopback address is refused with ErrDashboardPublic unless DashboardPublic (or
// JDF2GO_DASHBOARD_PUBLIC) opts in; then New logs a warning.
func TestDashboardPublicAddress(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", "192.0.2.1:0", "example.com:0"} {
		c, err := rt.New(rt.Workers(1), rt.Dashboard(addr))
		if !errors.Is(err, rt.ErrDashboardPublic) {
			if c != nil {
				c.Close()
			}
			t.Fatalf("Dashboard(%q): err %v, want ErrDashboardPublic", addr, err)
		}
	}
	t.Setenv("JDF2GO_DASHBOARD", "0.0.0.0:0")
	if _, err := rt.New(rt.Workers(1)); !errors.Is(err, rt.ErrDashboardPublic) {
		t.Fatalf("JDF2GO_DASHBOARD=0.0.0.0:0: err %v, want ErrDashboardPublic", err)
	}
	t.Setenv("JDF2GO_DASHBOARD_PUBLIC", "1")
	var logs bytes.Buffer
	c, err := rt.New(rt.Workers(1), rt.Logger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatalf("with JDF2GO_DASHBOARD_PUBLIC=1: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "non-loopback") {
		t.Fatalf("no warning logged for a public dashboard; log:\n%s", logs.String())
	}
	t.Setenv("JDF2GO_DASHBOARD_PUBLIC", "")
	c, err = rt.New(rt.Workers(1), rt.DashboardPublic())
	if err != nil {
		t.Fatalf("with DashboardPublic(): %v", err)
	}
	c.Close()
}

// The server is read-only: every method but GET and HEAD is refused, on every path; and on
// a loopback address a request naming another host is refused.
func TestDashboardReadOnly(t *testing.T) {
	c := newCtx(t, rt.Workers(1), rt.Dashboard("localhost:0"))
	base := c.DashboardURL()
	for _, method := range []string{"POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"} {
		for _, path := range []string{"", "api/snapshot", "api/stream", "api/history", "app.js"} {
			req, _ := http.NewRequest(method, base+path, strings.NewReader("{}"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("%s /%s: %v", method, path, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Fatalf("%s /%s: %s, want 405", method, path, resp.Status)
			}
		}
	}
	req, _ := http.NewRequest("GET", base+"api/snapshot", nil)
	req.Host = "attacker.example:80"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("GET with Host attacker.example: %s, want 403", resp.Status)
	}
}

// A failing task shows up in the snapshots' errors with its taskpool.
func TestDashboardErrors(t *testing.T) {
	c := newCtx(t, rt.Workers(1), rt.Dashboard("localhost:0"))
	boom := errors.New("boom")
	err := run(t, c, rttest.Chains(1, 10, func(t *rt.Task) error { return boom }))
	if !errors.Is(err, boom) {
		t.Fatalf("run: %v", err)
	}
	waitSnapshot(t, c.DashboardURL(), func(*dashboard.Snapshot) bool {
		var hist []dashboard.Snapshot
		getJSON(t, c.DashboardURL()+"api/history", &hist)
		for _, h := range hist {
			for _, e := range h.Errors {
				if e.Taskpool == "Chains" && strings.Contains(e.Message, "boom") {
					return true
				}
			}
		}
		return false
	})
}

// With the dashboard off, New starts no sampling goroutine and serves nothing, and a run
// allocates nothing per task (TestZeroAllocsPerTask); with it on, a run still allocates
// nothing per task in steady state: lanes and counters reuse their memory.
func TestDashboardCost(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	off := newCtx(t, rt.Workers(2))
	if off.DashboardURL() != "" {
		t.Fatal("dashboard on without Dashboard")
	}
	rt.Impl.AddDashboardProvider(off, nil)
	buf := make([]byte, 1<<20)
	// (Connections of earlier tests' servers may still be winding down; the sampler and the
	// listening goroutine are joined by Close.)
	if st := string(buf[:runtime.Stack(buf, true)]); strings.Contains(st, "rt.(*dash)") ||
		strings.Contains(st, "created by github.com/jdf2go/jdf2go/dashboard.Listen") {
		t.Fatalf("a dashboard goroutine runs with the dashboard off:\n%s", st)
	}
	const n = 20000
	build := func() *rt.Taskpool { return rttest.Chains(2, n/2, nil) }
	measure := func(c *rt.Context) float64 {
		mustRun(t, c, build())
		return testing.AllocsPerRun(5, func() { mustRun(t, c, build()) }) / n
	}
	offPer := measure(off)
	on := newCtx(t, rt.Workers(2), rt.Dashboard("localhost:0"))
	onPer := measure(on)
	t.Logf("allocations per task: %.4f off, %.4f on", offPer, onPer)
	if offPer > 0.01 || onPer > 0.01 {
		t.Fatalf("allocations per task: %.4f off, %.4f on; want 0 in steady state", offPer, onPer)
	}
}

// With several ranks, rank r serves on the port plus r, and rank 0's snapshots link to the
// other ranks' pages.
func TestDashboardRanks(t *testing.T) {
	var port int
	for try := 0; ; try++ {
		// Two free ports in a row.
		l0, err := net.Listen("tcp", "localhost:0")
		if err != nil {
			t.Fatal(err)
		}
		port = l0.Addr().(*net.TCPAddr).Port
		l1, err := net.Listen("tcp", net.JoinHostPort("localhost", strconv.Itoa(port+1)))
		l0.Close()
		if err == nil {
			l1.Close()
			break
		}
		if try == 20 {
			t.Skip("no two free consecutive ports")
		}
	}
	addr := net.JoinHostPort("localhost", strconv.Itoa(port))
	c0 := newCtx(t, rt.Workers(1), rt.Rank(0, 2, nil), rt.Dashboard(addr))
	c1 := newCtx(t, rt.Workers(1), rt.Rank(1, 2, nil), rt.Dashboard(addr))
	if want := ":" + strconv.Itoa(port+1) + "/"; !strings.HasSuffix(c1.DashboardURL(), want) {
		t.Fatalf("rank 1 serves on %s, want port %d", c1.DashboardURL(), port+1)
	}
	s := waitSnapshot(t, c0.DashboardURL(), func(*dashboard.Snapshot) bool { return true })
	want := "http://" + net.JoinHostPort("localhost", strconv.Itoa(port+1)) + "/"
	if s.Rank != 0 || s.Ranks != 2 || len(s.Peers) != 1 || s.Peers[0] != want {
		t.Fatalf("rank 0's snapshot: rank %d of %d, peers %v; want a link to %s", s.Rank, s.Ranks, s.Peers, want)
	}
	s = waitSnapshot(t, c1.DashboardURL(), func(*dashboard.Snapshot) bool { return true })
	if s.Rank != 1 || len(s.Peers) != 0 {
		t.Fatalf("rank 1's snapshot: rank %d, peers %v", s.Rank, s.Peers)
	}
}

// ceRemote stands for a Remote over a communication engine that fills the CE panel.
type ceRemote struct{}

func (ceRemote) Activate(rt.Worker, *rt.Task, int, *rt.TaskClass, int, *rt.Locals, int) error {
	return nil
}
func (ceRemote) WriteBack(rt.Worker, *rt.Task, int, rt.Collection, rt.Index, int) error { return nil }
func (ceRemote) Fill(s *dashboard.Snapshot) {
	s.CE = &dashboard.CE{Rank: 0, Peers: []dashboard.Peer{{Rank: 1, MsgsOut: 7}}}
}

// A Remote that is a DashboardProvider is registered by New; AddDashboardProvider adds others.
func TestDashboardProviders(t *testing.T) {
	c := newCtx(t, rt.Workers(1), rt.Rank(0, 1, ceRemote{}), rt.Dashboard("localhost:0"))
	rt.Impl.AddDashboardProvider(c, gpuPanel{})
	waitSnapshot(t, c.DashboardURL(), func(s *dashboard.Snapshot) bool {
		return s.CE != nil && len(s.CE.Peers) == 1 && s.CE.Peers[0].MsgsOut == 7 &&
			len(s.GPUs) == 1 && s.GPUs[0].Name == "fake0"
	})
}

type gpuPanel struct{}

func (gpuPanel) Fill(s *dashboard.Snapshot) { s.GPUs = append(s.GPUs, dashboard.GPU{Name: "fake0"}) }
