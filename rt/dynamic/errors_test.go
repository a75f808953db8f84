package dynamic_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/dynamic"
)

func newGraph(t *testing.T, opts ...dynamic.Option) (*rt.Context, *dynamic.Graph) {
	t.Helper()
	c, err := rt.New(rt.Workers(2))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	g, err := dynamic.New(c, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c, g
}

func nop(*dynamic.Task) error { return nil }

func TestFailingBodyFailsTheGraph(t *testing.T) {
	for _, tc := range []struct {
		name string
		body func(*dynamic.Task) error
		want string
	}{
		{"error", func(*dynamic.Task) error { return errors.New("boom") }, "boom"},
		{"panic", func(*dynamic.Task) error { panic("kaboom") }, "kaboom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, g := newGraph(t)
			x := make([]float64, 4)
			d, err := dynamic.Register(g, "x", x)
			if err != nil {
				t.Fatal(err)
			}
			if err := g.Insert("OK", nop, dynamic.Write(d)); err != nil {
				t.Fatal(err)
			}
			if err := g.Insert("BAD", tc.body, dynamic.ReadWrite(d)); err != nil {
				t.Fatal(err)
			}
			err = g.Wait(context.Background())
			var te *rt.TaskError
			if !errors.As(err, &te) || te.Task != "BAD(2)" || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Wait: %v, want a TaskError naming BAD(2) with %q", err, tc.want)
			}
			if err := g.Insert("LATE", nop, dynamic.Read(d)); !errors.Is(err, rt.ErrTaskpoolFailed) {
				t.Errorf("Insert after the failure: %v, want the graph's error", err)
			}
		})
	}
}

func TestMisuseIsNamed(t *testing.T) {
	_, g := newGraph(t)
	_, other := newGraph(t)
	x, _ := dynamic.Register(g, "x", make([]float64, 2))
	y, _ := dynamic.Register(other, "y", make([]float64, 2))
	ro, _ := dynamic.Register(g, "ro", make([]float64, 2))
	ro.ReadOnly()
	var nilData *dynamic.Data[[]float64]
	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"nil datum", g.Insert("T", nop, dynamic.Read(nilData)), dynamic.ErrNilData},
		{"foreign datum", g.Insert("T", nop, dynamic.Read(y)), dynamic.ErrForeignData},
		{"write to read-only", g.Insert("T", nop, dynamic.ReadWrite(ro)), dynamic.ErrMode},
		{"no body", g.Insert("T", nil, dynamic.Read(x)), dynamic.ErrNoBody},
	} {
		if !errors.Is(c.err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.err, c.want)
		}
	}
	if _, err := dynamic.Register(g, "n", 3); !errors.Is(err, dynamic.ErrMode) {
		t.Errorf("Register of an int: %v, want ErrMode", err)
	}
	if err := g.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := g.Insert("T", nop, dynamic.Read(x)); !errors.Is(err, dynamic.ErrGraphDone) {
		t.Errorf("Insert after Wait: %v, want ErrGraphDone", err)
	}
	if err := other.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestRegisterTwiceIsOneDatum(t *testing.T) {
	_, g := newGraph(t)
	x := make([]float64, 3)
	a, _ := dynamic.Register(g, "a", x)
	b, _ := dynamic.Register(g, "b", x)
	if a != b {
		t.Fatal("two registrations of one slice gave two data")
	}
	if err := g.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestDebugCatchesWriteToReadData(t *testing.T) {
	_, g := newGraph(t, dynamic.Debug(true))
	x := make([]float64, 8)
	d, _ := dynamic.Register(g, "x", x)
	if err := g.Insert("SNEAK", func(*dynamic.Task) error { x[3] = 1; return nil }, dynamic.Read(d)); err != nil {
		t.Fatal(err)
	}
	err := g.Wait(context.Background())
	if !errors.Is(err, dynamic.ErrReadOnlyWritten) || !strings.Contains(err.Error(), "SNEAK(1)") ||
		!strings.Contains(err.Error(), "x") {
		t.Fatalf("Wait: %v, want ErrReadOnlyWritten naming SNEAK(1) and x", err)
	}
}

func TestWaitHonoursItsContext(t *testing.T) {
	_, g := newGraph(t)
	release := make(chan struct{})
	defer close(release)
	if err := g.Insert("SLOW", func(*dynamic.Task) error { <-release; return nil }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := g.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait: %v, want the context's deadline", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Wait returned %v after its context ended", d)
	}
}

// The window bounds the tasks in flight: with every task blocked until the inserter is past
// the window, Insert must wait instead of running ahead.
func TestWindowBoundsTasksInFlight(t *testing.T) {
	const window = 64
	_, g := newGraph(t, dynamic.Window(window))
	var inFlight, peak int64
	var mu = make(chan struct{}, 1)
	mu <- struct{}{}
	for i := range 20 * window {
		<-mu
		inFlight++
		peak = max(peak, inFlight)
		mu <- struct{}{}
		err := g.Insert("T", func(*dynamic.Task) error {
			<-mu
			inFlight--
			mu <- struct{}{}
			return nil
		})
		if err != nil {
			t.Fatalf("insert %d: %v", i, err)
		}
	}
	if err := g.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if peak > window+1 {
		t.Errorf("%d tasks in flight at most, window %d", peak, window)
	}
}

func TestWriteDOT(t *testing.T) {
	_, g := newGraph(t, dynamic.KeepGraph())
	x, _ := dynamic.Register(g, "x", make([]float64, 1))
	_ = g.Insert("W", nop, dynamic.Write(x))
	_ = g.Insert("R", nop, dynamic.Read(x))
	_ = g.Insert("R", nop, dynamic.Read(x))
	_ = g.Insert("W", nop, dynamic.ReadWrite(x))
	if err := g.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := g.WriteDOT(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`t1 [label="W(1)"]`, `t4 [label="W(4)"]`, "t1 -> t2;", "t1 -> t3;", "t2 -> t4;", "t3 -> t4;", "t1 -> t4;"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("DOT lacks %q:\n%s", want, b.String())
		}
	}
}
