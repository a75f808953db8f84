package rt_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
)

// cycleT is a pure cycle of N tasks, C(k) waiting for C((k+1) % N): no task of the cycle
// ever receives an input, so none waits in a dependency table.
//
//	C(k)  k = 0 .. N-1
//	CTL X <- X C((k+1) % N)
//	      -> X C((k+N-1) % N)
var cycleT rt.TaskClass

const cycleN = 10

func init() {
	cycleT = rt.TaskClass{
		Name: "C", ID: 0, Locals: []string{"k"}, Params: []int{0},
		Flows: []rt.Flow{{Name: "X", Access: rt.CTL}},
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			for k := range cycleN {
				l[0] = k
				if !yield(l) {
					return
				}
			}
		},
		Complete: func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < cycleN },
		Goal:     func(tp *rt.Taskpool, l *rt.Locals) uint32 { return 1 },
		Successors: func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
			e.L[0] = (l[0] + cycleN - 1) % cycleN
			e.Task(0, 0, &cycleT, 0)
		},
		Predecessors: func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
			e.L[0] = (l[0] + 1) % cycleN
			e.Task(0, 0, &cycleT, 0)
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(*rt.Task) error { return nil }}},
	}
}

// A stall on a pure cycle names tasks of the cycle and what they wait for, although none of
// them received an input (so none is in a dependency table).
func TestStallNamesTasksOfACycle(t *testing.T) {
	c := newCtx(t, rt.Workers(2), rt.StallTimeout(100*time.Millisecond))
	tp := rt.NewTaskpool("cycle", nil, &cycleT)
	if err := c.Add(tp); err != nil {
		t.Fatal(err)
	}
	err := waitWithin(t, tp, 10*time.Second, 5*time.Second)
	if !errors.Is(err, rt.ErrStalled) {
		t.Fatalf("Wait = %v, want ErrStalled", err)
	}
	for _, want := range []string{"10 tasks remain", "C(0)", "X <- C(1)", "C(9)", "X <- C(0)", "blocked by a cycle"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the stall error does not mention %q:\n%v", want, err)
		}
	}
}
