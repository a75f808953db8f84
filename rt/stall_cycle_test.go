package rt_test

import (
	"bytes"
	"errors"
	"log/slog"
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

// A stall report names the collection of a memory input as the taskpool's globals hold it
// ("T <- descT(1)", not "T <- (1)"), and the log records the stall once, without the report:
// Wait returns it, readable, to whoever prints it.
func TestStallNamesMemoryInputs(t *testing.T) {
	descT, err := rt.NewVector(4, 2, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The shape of a generated taskpool type: the embedded taskpool, then the globals in
	// fields of their JDF names.
	type memPool struct {
		*rt.Taskpool
		NB    int
		descT *rt.Vector
	}
	var memT rt.TaskClass
	memT = rt.TaskClass{
		Name: "M", ID: 0, Locals: []string{"k"}, Params: []int{0},
		Flows: []rt.Flow{{Name: "X", Access: rt.CTL}, {Name: "T", Access: rt.Read}},
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			for k := range 2 {
				l[0] = k
				if !yield(l) {
					return
				}
			}
		},
		Complete: func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < 2 },
		Goal:     func(tp *rt.Taskpool, l *rt.Locals) uint32 { return 2 },
		Successors: func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
			e.L[0] = (l[0] + 1) % 2
			e.Task(0, 0, &memT, 0)
		},
		Predecessors: func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
			g := tp.Globals().(*memPool)
			k := l[0]
			e.L[0] = (k + 1) % 2
			e.Task(0, 0, &memT, 0)
			e.Data(1, 0, g.descT, rt.Ix(k))
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(*rt.Task) error { return nil }}},
	}
	var logs bytes.Buffer
	c := newCtx(t, rt.Workers(2), rt.StallTimeout(100*time.Millisecond),
		rt.Logger(slog.New(slog.NewTextHandler(&logs, nil))))
	pool := &memPool{NB: 2, descT: descT}
	pool.Taskpool = rt.NewTaskpool("mem", pool, &memT)
	if err := c.Add(pool.Taskpool); err != nil {
		t.Fatal(err)
	}
	err = waitWithin(t, pool.Taskpool, 10*time.Second, 5*time.Second)
	if !errors.Is(err, rt.ErrStalled) {
		t.Fatalf("Wait = %v, want ErrStalled", err)
	}
	for _, want := range []string{"T <- descT(0)", "T <- descT(1)", "X <- M(1)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the stall error does not mention %q:\n%v", want, err)
		}
	}
	if n := strings.Count(logs.String(), "taskpool stalled"); n != 1 {
		t.Errorf("the log records the stall %d times, want once:\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), "descT") || strings.Contains(logs.String(), `\n`) {
		t.Errorf("the log repeats the report that Wait returns:\n%s", logs.String())
	}
}
