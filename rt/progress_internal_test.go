package rt

import (
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestProgressLine(t *testing.T) {
	for _, tc := range []struct {
		done, total int64
		want        string
	}{
		{0, 10, "[          ]   0% 0/10 tasks"},
		{5, 10, "[=====     ]  50% 5/10 tasks"},
		{12, 10, "[==========] 100% 10/10 tasks"},
		{999_999_999, 1_000_000_000, "[========= ]  99% 999999999/1000000000 tasks"},
	} {
		if got := progressLine(tc.done, tc.total, 10); got != tc.want {
			t.Errorf("progressLine(%d, %d) = %q, want %q", tc.done, tc.total, got, tc.want)
		}
	}
}

func TestProgressUnits(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		want string
	}{{0.5, "0.50"}, {950, "950"}, {12345, "12.3k"}, {2.5e6, "2.50M"}, {1.2e9, "1.20G"}} {
		if got := siRate(tc.rate); got != tc.want {
			t.Errorf("siRate(%g) = %q, want %q", tc.rate, got, tc.want)
		}
	}
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{{4200 * time.Millisecond, "4.2s"}, {185 * time.Second, "3m05s"}, {7380 * time.Second, "2h03m"}} {
		if got := fmtDuration(tc.d); got != tc.want {
			t.Errorf("fmtDuration(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// independent is a class of n tasks without dependencies whose body is body.
func independent(n int, body func() error) *Taskpool {
	tc := &TaskClass{Name: "T", ID: 0, Locals: []string{"k"}, Params: []int{0},
		Space: func(tp *Taskpool, l *Locals, yield func(*Locals) bool) {
			for k := 0; k < n; k++ {
				l[0] = k
				if !yield(l) {
					return
				}
			}
		},
		Complete:     func(tp *Taskpool, l *Locals) bool { return l[0] >= 0 && l[0] < n },
		Incarnations: []Incarnation{{Kind: CPU, Hook: func(*Task) error { return body() }}},
	}
	return NewTaskpool("Independent", nil, tc)
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// A few long tasks: every completion shows at once, although no worker batch is full, and
// the episode ends with a 100 % line.
func TestProgressFewLongTasks(t *testing.T) {
	c, err := New(Workers(2), Progress(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const n = 5
	gate := make(chan struct{})
	tp := independent(n, func() error { <-gate; return nil })
	if err := c.Add(tp); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	b := &progressBar{c: c, w: &out, tty: true, seen: map[*Taskpool]struct{}{}}
	start := tp.start
	b.sample(start)
	for k := 1; k <= n-1; k++ {
		gate <- struct{}{}
		waitFor(t, "the bar to count a completion", func() bool {
			done, total, running := b.count()
			if done > int64(k) || total != n || !running {
				t.Fatalf("after %d completions: done %d total %d running %v", k, done, total, running)
			}
			return done == int64(k)
		})
	}
	b.sample(start.Add(time.Second))
	if !strings.Contains(out.String(), " 80% 4/5 tasks") || !strings.Contains(out.String(), "tasks/s  ETA ") {
		t.Fatalf("bar after 4 of 5 tasks: %q", out.String())
	}
	close(gate)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tp.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	b.sample(start.Add(2 * time.Second))
	got := out.String()
	if !strings.HasSuffix(got, "\n") || !strings.Contains(got, "100% 5/5 tasks  2.50 tasks/s  in 2.0s") {
		t.Fatalf("final line: %q", got)
	}
	if len(b.seen) != 0 || b.drawn {
		t.Fatal("the episode was not reset after its final line")
	}
}

// Many short tasks: the count never goes backwards nor past the total, and ends at 100 %.
func TestProgressManyShortTasks(t *testing.T) {
	c, err := New(Workers(2), Progress(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const n = 200_000
	tp := independent(n, func() error { return nil })
	var out strings.Builder
	b := &progressBar{c: c, w: &out, tty: true, seen: map[*Taskpool]struct{}{}}
	if err := c.Add(tp); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	last := int64(-1)
	for i := 0; len(b.seen) > 0 || i == 0; i++ {
		now = now.Add(progressEvery)
		b.sample(now)
		if len(b.seen) == 0 {
			break // the final line reset the episode
		}
		if b.shown < last || b.shown > n {
			t.Fatalf("sample %d: done %d after %d (total %d)", i, b.shown, last, n)
		}
		last = b.shown
		if i > 100000 {
			t.Fatal("the taskpool never finished")
		}
		time.Sleep(100 * time.Microsecond)
	}
	if !strings.Contains(out.String(), "100% 200000/200000 tasks") {
		t.Fatalf("no final 100%% line: %q", out.String())
	}
}

// syncBuffer is a strings.Builder safe for the bar's goroutine and the test.
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

// The bar's goroutine on a writer that is not a terminal: one line per second, then the final
// line, out before Wait returns; nothing at all for a run shorter than the first draw.
func TestProgressGoroutine(t *testing.T) {
	var out syncBuffer
	c, err := New(Workers(2), Progress(&out))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Add(independent(10, func() error { return nil })); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	if got := out.String(); got != "" {
		t.Fatalf("a short run drew %q", got)
	}
	tp := independent(4, func() error { time.Sleep(300 * time.Millisecond); return nil })
	if err := c.Add(tp); err != nil {
		t.Fatal(err)
	}
	if err := tp.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	// Wait has the bar draw its final line before it returns.
	if !strings.Contains(out.String(), "100% 4/4 tasks") {
		t.Fatalf("no final line when Wait returned: %q", out.String())
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) > 2 || strings.Contains(out.String(), "\r") {
		t.Fatalf("want at most 2 plain lines, got %q", out.String())
	}
}

// The default: no bar when stderr is not a terminal (a pipe or /dev/null).
func TestProgressDefault(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if isTerminal(w) || isTerminal(null) || isTerminal(&strings.Builder{}) {
		t.Fatal("a pipe, /dev/null or a builder taken for a terminal")
	}
	t.Setenv("JDF2GO_PROGRESS", "")
	cfg := defaultConfig()
	if err := cfg.fromEnv(); err != nil {
		t.Fatal(err)
	}
	if (cfg.progress != nil) != isTerminal(os.Stderr) {
		t.Fatalf("JDF2GO_PROGRESS unset: bar %v, stderr a terminal %v", cfg.progress != nil, isTerminal(os.Stderr))
	}
	t.Setenv("JDF2GO_PROGRESS", "1")
	cfg = defaultConfig()
	if err := cfg.fromEnv(); err != nil || cfg.progress != os.Stderr {
		t.Fatalf("JDF2GO_PROGRESS=1: bar on %v, err %v", cfg.progress, err)
	}
}
