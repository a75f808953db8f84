package dynamic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/dashboard"
	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/dynamic"
)

// insertNamed inserts n tasks of class "FILL" and n of class "AXPY" (a chain through one
// datum each, the AXPYs after their FILL), each body running for d, and waits.
func insertNamed(t *testing.T, g *dynamic.Graph, n int, d time.Duration) {
	t.Helper()
	body := func(*dynamic.Task) error { time.Sleep(d); return nil }
	for i := range n {
		x, err := dynamic.Register(g, fmt.Sprint("x", i), make([]float64, 1))
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Insert("FILL", body, dynamic.Write(x)); err != nil {
			t.Fatal(err)
		}
		if err := g.Insert("AXPY", body, dynamic.ReadWrite(x)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := g.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

// The trace names each span by class and insertion number, tasks the waiting inserter ran
// included (on a track of its own), and the summary counts each class.
func TestTraceNamesClasses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.json")
	c, err := rt.New(rt.Workers(2), rt.Trace(path))
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	g, err := dynamic.New(c, dynamic.Window(4)) // a small window: the inserter runs tasks too
	if err != nil {
		t.Fatal(err)
	}
	insertNamed(t, g, n, 0)
	sum := c.Tracer().Summary()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph   string         `json:"ph"`
			Name string         `json:"name"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("trace is not JSON: %v", err)
	}
	spans := map[string]int{}
	for _, e := range doc.TraceEvents {
		if e.Ph == "X" {
			spans[e.Name]++
		}
	}
	for i := range n {
		for k, cls := range []string{"FILL", "AXPY"} {
			name := fmt.Sprintf("%s(%d)", cls, 2*i+k+1)
			if spans[name] != 1 {
				t.Fatalf("span %q appears %d times, want 1", name, spans[name])
			}
		}
	}
	counts := map[string]int64{}
	for _, s := range sum {
		counts[s.Name] = s.Count
	}
	if counts["FILL"] != n || counts["AXPY"] != n {
		t.Errorf("summary counts %v, want FILL and AXPY %d each", counts, n)
	}
}

// syncBuffer is a strings.Builder safe for the progress bar's goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The progress bar counts inserted tasks: its last line, drawn before Wait returns, shows
// them all done.
func TestProgressCountsInserted(t *testing.T) {
	var out syncBuffer
	c, err := rt.New(rt.Workers(2), rt.Progress(&out))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	g, err := dynamic.New(c)
	if err != nil {
		t.Fatal(err)
	}
	insertNamed(t, g, 4, 100*time.Millisecond) // long enough for the bar to appear
	if !strings.Contains(out.String(), "100% 8/8 tasks") {
		t.Fatalf("no final line with the 8 inserted tasks: %q", out.String())
	}
}

// The dashboard shows one row per class name of the graph, with every task done.
func TestDashboardNamesClasses(t *testing.T) {
	c, err := rt.New(rt.Workers(2), rt.Dashboard("localhost:0"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	g, err := dynamic.New(c, dynamic.Name("graph"))
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	insertNamed(t, g, n, 100*time.Microsecond)
	base := c.DashboardURL()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var s dashboard.Snapshot
		resp, err := http.Get(base + "api/snapshot")
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&s)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]dashboard.Class{}
		for _, k := range s.Classes {
			got[k.Name] = k
		}
		ok := len(got) == 2
		for _, name := range []string{"FILL", "AXPY"} {
			k := got[name]
			ok = ok && k.Taskpool == "graph" && k.Done == n && k.Total == n
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("classes %+v, want graph FILL and AXPY %d/%d each", s.Classes, n, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
