package rt_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
)

// newCtx starts a Context closed at the end of the test.
func newCtx(t *testing.T, opts ...rt.Option) *rt.Context {
	t.Helper()
	c, err := rt.New(opts...)
	if err != nil {
		t.Fatalf("rt.New: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

// run adds tp and waits for it with a generous deadline, so that a hang fails instead of
// blocking the suite.
func run(t *testing.T, c *rt.Context, tp *rt.Taskpool) error {
	t.Helper()
	if err := c.Add(tp); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := tp.Wait(ctx)
	if ctx.Err() != nil {
		t.Fatalf("taskpool %s did not finish: %v", tp.Name(), err)
	}
	return err
}

// testDeadline bounds every wait of a test that does not choose its own.
const testDeadline = 30 * time.Second

// wait joins a taskpool that is already added, with its own deadline.
func wait(t *testing.T, tp *rt.Taskpool) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	err := tp.Wait(ctx)
	if ctx.Err() != nil {
		t.Fatalf("taskpool %s did not finish within %v: %v", tp.Name(), testDeadline, err)
	}
	return err
}

// mustRun is run that fails the test on error.
func mustRun(t *testing.T, c *rt.Context, tp *rt.Taskpool) {
	t.Helper()
	if err := run(t, c, tp); err != nil {
		t.Fatalf("taskpool %s: %v", tp.Name(), err)
	}
}

// checkNoLeak fails if goroutines other than the test's own are still alive after the test
// body: it compares stacks that mention package rt.
func checkNoLeak(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		s := string(buf[:runtime.Stack(buf, true)])
		var leaked []string
		for _, g := range strings.Split(s, "\n\n") {
			if strings.Contains(g, "jdf2go/rt.(*Worker).loop") || strings.Contains(g, "jdf2go/rt.(*Context).progress") {
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d rt goroutines left behind:\n%s", len(leaked), strings.Join(leaked, "\n\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var schedulers = []string{"lfq", "ap", "gd"}
