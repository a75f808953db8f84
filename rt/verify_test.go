package rt_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/rttest"
)

func TestVerifyConsistent(t *testing.T) {
	for name, tp := range map[string]*rt.Taskpool{
		"chains":  rttest.Chains(3, 20, nil),
		"grid":    rttest.Grid(6, 7, nil),
		"fan":     rttest.FanOutIn(30, nil),
		"diamond": rttest.DAG(4, [][2]int{{0, 1}, {0, 2}, {1, 3}, {2, 3}}, nil),
	} {
		if err := rt.Verify(tp); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestVerifyFindsProblems(t *testing.T) {
	// A cycle: 0 -> 1 -> 2 -> 1.
	err := rt.Verify(rttest.DAG(3, [][2]int{{0, 1}, {1, 2}, {2, 1}}, nil))
	if !errors.Is(err, rt.ErrVerify) || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("cycle: %v", err)
	}
	// A goal that disagrees with the arrivals, and a target outside the space.
	p := edgeProgram{n: 3, target: func(k int) int { return k + 1 }, goal: 2}
	a, b := edgeClasses(&p)
	b.Complete = func(tp *rt.Taskpool, l *rt.Locals) bool { return true }
	err = rt.Verify(rt.NewTaskpool("bad", nil, a, b))
	for _, want := range []string{"A(2) flow X -> B(3) flow X: no such task", "B(1): waits for 2 inputs, but 1 arrive", "B(0): waits for 2 inputs, but 0 arrive"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	// An output without the matching input: a chain whose Predecessors are off by one.
	tp := rttest.Chains(1, 5, nil)
	bad := *tp.Classes()[0]
	bad.Predecessors = func(tp *rt.Taskpool, l *rt.Locals, f rt.FlowMask, e *rt.Edges) {
		if l[1] > 1 {
			e.L[0], e.L[1] = l[0], l[1]-2
			e.Task(0, 0, &bad, 0)
		}
	}
	// Generated code that panics (here: no globals) is reported, not propagated.
	if err := rt.Verify(rt.NewTaskpool("noglobals", nil, &bad)); !errors.Is(err, rt.ErrVerify) ||
		!strings.Contains(err.Error(), "panic") {
		t.Errorf("panic in Space: %v", err)
	}
	tp2 := rt.NewTaskpool("offbyone", tp.Globals(), &bad)
	err = rt.Verify(tp2)
	if err == nil || !strings.Contains(err.Error(), "T(0, 0) flow X -> T(0, 1) flow X: the target has no matching input") ||
		!strings.Contains(err.Error(), "the source has no matching output") {
		t.Errorf("mismatched predecessors: %v", err)
	}
}

func TestWriteDOT(t *testing.T) {
	var b strings.Builder
	if err := rt.WriteDOT(&b, rttest.DAG(3, [][2]int{{0, 1}, {0, 2}}, nil)); err != nil {
		t.Fatal(err)
	}
	want := "digraph \"DAG\" {\n  t0 [label=\"T(0)\"];\n  t1 [label=\"T(1)\"];\n  t2 [label=\"T(2)\"];\n" +
		"  t0 -> t1 [label=\"X -> X\"];\n  t0 -> t2 [label=\"X -> X\"];\n}\n"
	if b.String() != want {
		t.Fatalf("DOT:\n%s\nwant:\n%s", b.String(), want)
	}
}
