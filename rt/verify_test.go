package rt_test

import (
	"errors"
	"fmt"
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
		"line":    verifyProgram{n: 5}.taskpool(),
	} {
		if err := rt.Verify(tp); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// verifyProgram is a one-class program shaped like generated code, with knobs that break it
// the way JDF mistakes do:
//
//	T(k)
//	  k = 0 .. n-1 (each k twice with dup)
//	  A <- (k == 0) ? memory : A T(k-1)        (no true guard for k in noGuard)
//	    -> (k < n-1+offByOne) ? A|B T(k+1)     (B with toB)
//	  B <- memory -> memory
//	  goal: 1 for k > 0
//
// The Source gives the class t.jdf:1:1, flow A's input t.jdf:3:8 (dep 0) and its output
// t.jdf:4:8 (dep 1). A flow without a true guard has the position of its input chain
// (InputChain.Pos), which this hand-written class has not.
type verifyProgram struct {
	n        int
	offByOne int
	toB      bool
	dup      bool
	noMemory bool // T(0) reads A from T(-1)
	noGuard  func(k int) bool
}

var verifySource = rt.Source{
	Err:     errors.New("Line: invalid task graph"),
	Classes: []string{"t.jdf:1:1"},
	Deps:    [][][]string{{{"t.jdf:3:8", "t.jdf:4:8"}, {}}},
}

func (p verifyProgram) taskpool() *rt.Taskpool {
	tc := &rt.TaskClass{Name: "T", Locals: []string{"k"}, Params: []int{0},
		Flows: []rt.Flow{{Name: "A", Access: rt.RW}, {Name: "B", Access: rt.RW}}}
	in := func(k int) bool { return k >= 0 && k < p.n }
	tc.Space = func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
		for k := 0; k < p.n; k++ {
			l[0] = k
			if !yield(l) || p.dup && !yield(l) {
				return
			}
		}
	}
	tc.Complete = func(tp *rt.Taskpool, l *rt.Locals) bool { return in(l[0]) }
	tc.Goal = func(tp *rt.Taskpool, l *rt.Locals) uint32 {
		if l[0] > 0 {
			return 1
		}
		return 0
	}
	tc.Successors = func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
		if k := l[0]; k < p.n-1+p.offByOne {
			peerFlow := 0
			if p.toB {
				peerFlow = 1
			}
			if e.L[0] = k + 1; in(e.L[0]) {
				e.Task(0, 1, tc, peerFlow)
			} else {
				e.Outside(0, 1, tc, peerFlow)
			}
		}
	}
	tc.Predecessors = func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
		switch k := l[0]; {
		case p.noGuard != nil && p.noGuard(k):
			e.NoInput(0)
		case k == 0 && !p.noMemory:
			e.Data(0, 0, nil, rt.Ix(k))
		default:
			if e.L[0] = k - 1; in(e.L[0]) {
				e.Task(0, 0, tc, 0)
			} else {
				e.Outside(0, 0, tc, 0)
			}
		}
	}
	tc.Incarnations = []rt.Incarnation{{Kind: rt.CPU, Hook: func(*rt.Task) error { return nil }}}
	return rt.NewTaskpool("Line", nil, tc)
}

// problems runs Verify with verifySource and returns its problems, one string each.
func problems(t *testing.T, tp *rt.Taskpool) []string {
	t.Helper()
	err := verifySource.Verify(tp)
	if err == nil {
		return nil
	}
	var ge *rt.GraphError
	if !errors.As(err, &ge) || !errors.Is(err, rt.ErrVerify) || !errors.Is(err, verifySource.Err) {
		t.Fatalf("Verify: %v is not a *GraphError matching ErrVerify and Source.Err", err)
	}
	if ge.Cause != nil {
		t.Fatalf("Verify failed to walk: %v", err)
	}
	var out []string
	for _, p := range ge.Problems {
		out = append(out, p.String())
	}
	return out
}

func TestVerifyProblems(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    verifyProgram
		want []string
	}{
		{"off by one", verifyProgram{n: 3, offByOne: 1}, []string{
			"t.jdf:4:8: T(2) flow A -> A T(3): T(3) is outside the execution space of T, so the output goes nowhere",
		}},
		{"input outside", verifyProgram{n: 3, noMemory: true}, []string{
			"t.jdf:3:8: T(0) flow A <- A T(-1): T(-1) is outside the execution space of T, so nothing can satisfy this input",
		}},
		{"missing guard", verifyProgram{n: 3, noGuard: func(k int) bool { return k == 0 }}, []string{
			"T(0) flow A: no input dependency guard holds with the data of now (the task waits for an activation to evaluate them again: unless a body writes what they read, it never runs)",
		}},
		{"flow mismatch", verifyProgram{n: 3, toB: true}, []string{
			"t.jdf:4:8: T(0) flow A -> B T(1): no input of T(1) flow B names T(0) flow A back",
			"t.jdf:4:8: T(1) flow A -> B T(2): no input of T(2) flow B names T(1) flow A back",
			"t.jdf:3:8: T(1) flow A <- A T(0): no output of T(0) flow A names T(1) flow A, so this input never arrives",
			"t.jdf:3:8: T(2) flow A <- A T(1): no output of T(1) flow A names T(2) flow A, so this input never arrives",
		}},
		{"enumerated twice", verifyProgram{n: 2, dup: true}, []string{
			"t.jdf:1:1: T(0) is enumerated twice",
			"t.jdf:1:1: T(1) is enumerated twice",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := problems(t, tc.p.taskpool())
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("problems (-want +got):\n-%s\n+%s", strings.Join(tc.want, "\n-"), strings.Join(got, "\n+"))
			}
		})
	}
}

func TestVerifyMessage(t *testing.T) {
	// 60 flows without a true input guard, and so 59 outputs that no input names back.
	tp := verifyProgram{n: 60, noGuard: func(k int) bool { return true }}.taskpool()
	err := verifySource.Verify(tp)
	if err == nil {
		t.Fatal("no problem found")
	}
	lines := strings.Split(err.Error(), "\n")
	if lines[0] != "Line: invalid task graph: 119 problems:" || len(lines) != 52 || lines[51] != "... and 69 more" {
		t.Errorf("message: %d lines, first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}
	// Without a Source: no positions, and rt's own prefix.
	err = rt.Verify(verifyProgram{n: 3, offByOne: 1}.taskpool())
	want := "rt: verify: taskpool Line: 1 problem:\nT(2) flow A -> A T(3): T(3) is outside the execution space of T, so the output goes nowhere"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// TestVerifyDescriptors covers what only a hand-written descriptor can get wrong: Space and
// Complete that disagree, goals that disagree with the arrivals, and Predecessors that do
// not mirror Successors.
func TestVerifyDescriptors(t *testing.T) {
	// A cycle: 0 -> 1 -> 2 -> 1.
	err := rt.Verify(rttest.DAG(3, [][2]int{{0, 1}, {1, 2}, {2, 1}}, nil))
	if !errors.Is(err, rt.ErrVerify) || !strings.Contains(err.Error(), "\ncycle: T(2) -> T(1) -> T(2)") {
		t.Errorf("cycle: %v", err)
	}
	// A goal that disagrees with the arrivals, and a target that Complete accepts but Space
	// does not enumerate.
	p := edgeProgram{n: 3, target: func(k int) int { return k + 1 }, goal: 2}
	a, b := edgeClasses(&p)
	err = rt.Verify(rt.NewTaskpool("bad", nil, a, b))
	for _, want := range []string{
		"A(2) flow X -> X B(3): B(3) is not enumerated by the execution space of B, although its Complete accepts it, so the output goes nowhere",
		"B(1): waits for 2 inputs, but 1 arrive", "B(0): waits for 2 inputs, but 0 arrive"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	// A mask goal.
	p = edgeProgram{n: 2, target: func(k int) int { return k }, mode: rt.Mask, goal: 3}
	a, b = edgeClasses(&p)
	if err := rt.Verify(rt.NewTaskpool("mask", nil, a, b)); err == nil ||
		!strings.Contains(err.Error(), "B(0): readiness mask 0x3, but inputs arrive on flows 0x1") {
		t.Errorf("mask goal: %v", err)
	}
	// Space enumerates an instance that Complete rejects.
	tp := rttest.Chains(1, 3, nil)
	bad := *tp.Classes()[0]
	complete := bad.Complete
	bad.Complete = func(tp *rt.Taskpool, l *rt.Locals) bool { return l[1] != 1 && complete(tp, l) }
	err = rt.Verify(rt.NewTaskpool("space", tp.Globals(), &bad))
	if err == nil || !strings.Contains(err.Error(), "\nT(0, 1) is enumerated but lies outside the execution space that T checks") {
		t.Errorf("Space and Complete disagree: %v", err)
	}
	// Predecessors off by one: outputs without the matching input, and the reverse.
	bad = *tp.Classes()[0]
	bad.Predecessors = func(tp *rt.Taskpool, l *rt.Locals, f rt.FlowMask, e *rt.Edges) {
		if l[1] > 1 {
			e.L[0], e.L[1] = l[0], l[1]-2
			e.Task(0, 0, &bad, 0)
		}
	}
	err = rt.Verify(rt.NewTaskpool("offbyone", tp.Globals(), &bad))
	for _, want := range []string{
		"\nT(0, 0) flow X -> X T(0, 1): no input of T(0, 1) flow X names T(0, 0) flow X back",
		"\nT(0, 2) flow X <- X T(0, 0): no output of T(0, 0) flow X names T(0, 2) flow X, so this input never arrives"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("mismatched predecessors: missing %q in\n%v", want, err)
		}
	}
}

func TestVerifyWalkFails(t *testing.T) {
	// Generated code that panics (here: no globals) is reported, not propagated.
	bad := *rttest.Chains(1, 5, nil).Classes()[0]
	err := verifySource.Verify(rt.NewTaskpool("noglobals", nil, &bad))
	var ge *rt.GraphError
	if !errors.As(err, &ge) || ge.Cause == nil || !errors.Is(err, verifySource.Err) ||
		!strings.HasPrefix(err.Error(), "Line: invalid task graph: panic while walking the graph at the execution space of T: ") {
		t.Errorf("panic in Space: %v", err)
	}
	// A descriptor that rt cannot use.
	bad.Space = nil
	if err := rt.Verify(rt.NewTaskpool("nospace", nil, &bad)); !errors.Is(err, rt.ErrBadTaskClass) || !errors.Is(err, rt.ErrVerify) {
		t.Errorf("class without Space: %v", err)
	}
	var b strings.Builder
	if err := rt.WriteDOT(&b, rt.NewTaskpool("nospace", nil, &bad)); !errors.Is(err, rt.ErrBadTaskClass) {
		t.Errorf("WriteDOT of a class without Space: %v", err)
	}
}

// plainVisitor implements EdgeVisitor but not DropVisitor.
type plainVisitor struct{ tasks int }

func (v *plainVisitor) Task(flow, dep int, peer *rt.TaskClass, peerFlow int, l *rt.Locals) { v.tasks++ }
func (v *plainVisitor) Data(flow, dep int, c rt.Collection, ix rt.Index)                   {}

// TestDropHooksOutsideVerify: Edges.Outside and Edges.NoInput do nothing at run time and for
// a visitor that does not listen.
func TestDropHooksOutsideVerify(t *testing.T) {
	tp := verifyProgram{n: 3, offByOne: 1, noGuard: func(k int) bool { return k == 0 }}.taskpool()
	tc := tp.Classes()[0]
	var v plainVisitor
	for k := range 3 {
		l := rt.Locals{k}
		rt.Impl.VisitSuccessors(tp, tc, &l, &v)
		tp.VisitPredecessors(tc, &l, &v)
	}
	if v.tasks != 4 {
		t.Errorf("visitor saw %d task dependencies, want 4", v.tasks)
	}
	c := newCtx(t, rt.Workers(2))
	if err := run(t, c, tp); err != nil {
		t.Errorf("run with a dropped output: %v", err)
	}
}

func TestWriteDOT(t *testing.T) {
	var b strings.Builder
	if err := rt.WriteDOT(&b, rttest.DAG(3, [][2]int{{0, 1}, {0, 2}, {0, 2}}, nil)); err != nil {
		t.Fatal(err)
	}
	// The duplicate dependency is one edge; CTL edges are dashed.
	want := "digraph \"DAG\" {\n  t0 [label=\"T(0)\"];\n  t1 [label=\"T(1)\"];\n  t2 [label=\"T(2)\"];\n" +
		"  t0 -> t1 [label=\"X -> X\" style=dashed];\n  t0 -> t2 [label=\"X -> X\" style=dashed];\n}\n"
	if b.String() != want {
		t.Fatalf("DOT:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	if err := verifySource.WriteDOT(&b, verifyProgram{n: 2, offByOne: 1}.taskpool()); err != nil {
		t.Fatal(err)
	}
	want = "digraph \"Line\" {\n  t0 [label=\"T(0)\"];\n  t1 [label=\"T(1)\"];\n  t0 -> t1 [label=\"A -> A\"];\n}\n"
	if b.String() != want {
		t.Fatalf("DOT:\n%s\nwant:\n%s", b.String(), want)
	}
}

// validated is a collection with its own Validate method.
type validated struct{ *rt.Vector }

func (validated) Validate() error { return errors.New("no storage") }

func TestVerifyCollection(t *testing.T) {
	errArg := errors.New("P: bad argument")
	m, _ := rt.NewTiledMatrix(8, 8, 4, 4, 1, 1, 0)
	v, _ := rt.NewVector(8, 4, 1, 0)
	var nilVec *rt.Vector
	grid := *m
	grid.Rank = -1
	tiles := *m
	tiles.MT = 3
	ranks := *v
	ranks.Ranks = 0
	blocks := *v
	blocks.NT = 1
	for _, tc := range []struct {
		name string
		c    rt.Collection
		dims int
		want string // "" for no error
	}{
		{"matrix", m, 2, ""},
		{"vector", v, 1, ""},
		{"nil", nil, 1, "is nil: P: bad argument"},
		{"nil pointer", nilVec, 1, "is a nil *rt.Vector: P: bad argument"},
		{"matrix dims", m, 1, "is a TiledMatrix (2 indices) but the program uses 1: P: bad argument"},
		{"grid", &grid, 2, "process grid 1x1 (supertiles 1x1) with rank -1 is invalid: P: bad argument"},
		{"tiles", &tiles, 2, "8x8 matrix in 3x2 tiles of 4x4 is inconsistent: P: bad argument"},
		{"vector dims", v, 2, "is a Vector (1 index) but the program uses 2: P: bad argument"},
		{"ranks", &ranks, 1, "0 ranks do not contain rank 0: P: bad argument"},
		{"blocks", &blocks, 1, "vector of 8 in 1 blocks of 4 is inconsistent: P: bad argument"},
		{"validate", validated{v}, 1, "P: bad argument: no storage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := rt.VerifyCollection(tc.c, tc.dims, errArg)
			if fmt.Sprint(err) != tc.want && !(err == nil && tc.want == "") {
				t.Errorf("got %v, want %s", err, tc.want)
			}
			if err != nil && (!errors.Is(err, errArg) || !errors.Is(err, rt.ErrBadCollection)) {
				t.Errorf("%v does not match the wrapped error and ErrBadCollection", err)
			}
		})
	}
	if err := rt.VerifyCollection(nil, 1, nil); err == nil || err.Error() != "is nil: rt: bad collection" {
		t.Errorf("without wrap: %v", err)
	}
}

// BenchmarkVerify walks and checks a 150x150 grid (22500 tasks, 44700 dependencies).
func BenchmarkVerify(b *testing.B) {
	tp := rttest.Grid(150, 150, nil)
	b.ReportAllocs()
	for b.Loop() {
		if err := rt.Verify(tp); err != nil {
			b.Fatal(err)
		}
	}
}
