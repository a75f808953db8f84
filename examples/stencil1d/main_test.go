package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
)

func TestStencil(t *testing.T) {
	for _, c := range []struct{ n, bs, steps int }{{8, 8, 0}, {16, 4, 1}, {96, 8, 25}, {64, 1, 3}} {
		x := initial(c.n)
		got, err := stencil(x, c.bs, c.steps, 2)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if d := maxDiff(got, reference(x, c.steps)); d > 1e-12 {
			t.Errorf("%+v: differs from the sequential result by %g", c, d)
		}
	}
}

// TestStencilWithoutArena: NEW without a registered arena fails the taskpool with an error
// that names the task, the flow and its .jdf line, and says what to call.
func TestStencilWithoutArena(t *testing.T) {
	ctx, err := rt.New(rt.Workers(2))
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	data, err := rt.NewVector(16, 4, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	tp, err := NewStencil1D(1, data)
	if err != nil {
		t.Fatal(err)
	}
	if err := ctx.Add(tp.Taskpool); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = tp.Wait(wctx)
	if !errors.Is(err, rt.ErrNoArena) {
		t.Fatalf("Wait = %v, want rt.ErrNoArena", err)
	}
	for _, want := range []string{"Step(0, ", "stencil1d.jdf:", "flow N", `tp.SetArena("DEFAULT", rt.NewArena(bytes))`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q: %v", want, err)
		}
	}
}
