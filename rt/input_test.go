package rt_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jdf2go/jdf2go/rt"
)

// inputVisitor records the edges and drops that the predecessor walk reports.
type inputVisitor struct{ got []string }

func (v *inputVisitor) Task(flow, dep int, peer *rt.TaskClass, peerFlow int, l *rt.Locals) {
	v.got = append(v.got, fmt.Sprintf("task %d/%d %s(%d) flow %d", flow, dep, peer.Name, l[0], peerFlow))
}
func (v *inputVisitor) Data(flow, dep int, c rt.Collection, ix rt.Index) {
	v.got = append(v.got, fmt.Sprintf("data %d/%d %v", flow, dep, ix))
}
func (v *inputVisitor) Outside(flow, dep int, peer *rt.TaskClass, peerFlow int, l *rt.Locals) {
	v.got = append(v.got, fmt.Sprintf("outside %d/%d %s(%d)", flow, dep, peer.Name, l[0]))
}
func (v *inputVisitor) NoInput(flow int) { v.got = append(v.got, fmt.Sprintf("noinput %d", flow)) }

// TestInputChains runs a chain T(k), k = 0..3, whose flow A reads V(0) at k = 0, the A of
// T(k-1) for 0 < k < 3, and T(9) (outside the space) at k = 3, and whose CTL-free flow B has
// no true guard at k = 3: the predecessor walk and the binding follow the one selection of
// each chain (the goal: TestChainsGoal).
func TestInputChains(t *testing.T) {
	v, err := rt.NewVector(4, 1, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var tc rt.TaskClass
	complete := func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] <= 3 }
	selA := func(tp *rt.Taskpool, l *rt.Locals) rt.Input {
		switch k := l[0]; {
		case k == 0:
			return rt.DataInput(0, v, rt.Ix(0), "t.jdf:3:20")
		case k < 3:
			pl := rt.Locals{k - 1}
			return rt.TaskInput(0, &tc, 0, complete(tp, &pl), &pl, "t.jdf:3:30", "A T(k - 1)")
		}
		pl := rt.Locals{9}
		return rt.TaskInput(1, &tc, 0, complete(tp, &pl), &pl, "t.jdf:4:30", "A T(9)")
	}
	selB := func(tp *rt.Taskpool, l *rt.Locals) rt.Input {
		if l[0] < 3 {
			return rt.NullInput(0)
		}
		return rt.Input{}
	}
	chains := []rt.InputChain{
		{Flow: 0, Pos: "t.jdf:3:8", Task: true, Memory: true, Select: selA},
		{Flow: 1, Pos: "t.jdf:5:8", Memory: true, Select: selB},
	}
	tc = rt.TaskClass{
		Name: "T", Locals: []string{"k"}, Params: []int{0},
		Flows: []rt.Flow{{Name: "A", Access: rt.Read}, {Name: "B", Access: rt.Read}},
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			for k := 0; k <= 3; k++ {
				if l[0] = k; !yield(l) {
					return
				}
			}
		},
		Complete:     complete,
		Inputs:       chains,
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(*rt.Task) error { return nil }}},
	}
	tp := rt.NewTaskpool("inputs", nil, &tc)

	for k, want := range []string{
		"data 0/0 (0)",
		"task 0/0 T(0) flow 0",
		"task 0/0 T(1) flow 0",
		"outside 0/1 T(9) | noinput 1",
	} {
		var iv inputVisitor
		l := rt.Locals{k}
		tp.VisitPredecessors(&tc, &l, &iv)
		if got := strings.Join(iv.got, " | "); got != want {
			t.Errorf("predecessors of T(%d): %q, want %q", k, got, want)
		}
	}

	// The run: no guard of T(3)'s flow B holds, and the class can receive arrivals, so T(3)
	// is no startup task: it waits for an activation that would evaluate its guards again.
	// None comes, and the stall report names it.
	err = run(t, newCtx(t, rt.Workers(2)), tp)
	if !errors.Is(err, rt.ErrStalled) || !strings.Contains(err.Error(), "T(3): flow B: no input guard holds (t.jdf:5:8)") {
		t.Fatalf("run: %v, want a stall naming T(3)'s flow B", err)
	}

	// With a guard of B holding, T(3) starts: it selects T(9), outside its space, so
	// nothing arrives and its binding fails naming the endpoint.
	chains[1].Select = func(*rt.Taskpool, *rt.Locals) rt.Input { return rt.NullInput(0) }
	tp = rt.NewTaskpool("inputs", nil, &tc)
	err = run(t, newCtx(t, rt.Workers(2)), tp)
	if err == nil || !strings.Contains(err.Error(), "t.jdf:4:30: flow A: no data arrived from A T(9): T(9) is outside the execution space of T") {
		t.Fatalf("run: %v, want the missing arrival of T(3)'s flow A", err)
	}
	if errors.Is(err, rt.ErrNoInput) {
		t.Errorf("run: %v wraps ErrNoInput; flow A's chain selected a task", err)
	}
}
