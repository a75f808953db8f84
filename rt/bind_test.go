package rt_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/jdf2go/jdf2go/rt"
)

// bindOnce runs one task B() with READ A <- coll(0) and WRITE X <- NEW [type = arena],
// bound in Prepare through BindElement and BindNew, and calls body from its hook.
func bindOnce(t *testing.T, coll rt.Collection, arena string, body func(*rt.Task) error) error {
	t.Helper()
	c := newCtx(t, rt.Workers(1))
	b := &rt.TaskClass{Name: "B",
		Flows:    []rt.Flow{{Name: "A", Access: rt.Read}, {Name: "X", Access: rt.Write}},
		Space:    func(tp *rt.Taskpool, l *rt.Locals, y func(*rt.Locals) bool) { y(l) },
		Complete: func(*rt.Taskpool, *rt.Locals) bool { return true },
		Prepare: func(task *rt.Task) error {
			if err := task.BindElement(0, coll, rt.Ix(3)); err != nil {
				return err
			}
			return task.BindNew(1, arena)
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: body}}}
	tp := rt.NewTaskpool("bind", nil, b)
	tp.SetArena("T", rt.NewArena(16))
	return run(t, c, tp)
}

func TestBindAndFlowValue(t *testing.T) {
	d := rt.NewData(0, []float64{1, 2, 3})
	var a, x []float64
	var wrong error
	var allocs float64
	var loopFailed bool
	err := bindOnce(t, oneColl{d}, "T", func(task *rt.Task) error {
		var err error
		if a, err = rt.FlowValue[[]float64](task, 0); err != nil {
			return err
		}
		if x, err = rt.FlowValue[[]float64](task, 1); err != nil {
			return err
		}
		_, wrong = rt.FlowValue[string](task, 0)
		// Generated Prepare and hooks call these once per task: they must not allocate.
		allocs = testing.AllocsPerRun(100, func() {
			if task.BindElement(0, oneColl{d}, rt.Ix(3)) != nil {
				loopFailed = true
			}
			if v, err := rt.FlowValue[[]float64](task, 0); err != nil || len(v) != 3 {
				loopFailed = true
			}
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 3 || &a[0] != &d.Host().Float64s()[0] {
		t.Errorf("flow A = %v, want the host copy of the element", a)
	}
	if len(x) != 2 {
		t.Errorf("flow X has %d float64s, want 2 from a 16-byte arena", len(x))
	}
	if wrong == nil || wrong.Error() != "flow A holds a []float64, not a string" {
		t.Errorf("FlowValue[string] on a []float64 flow: err = %v", wrong)
	}
	if loopFailed {
		t.Error("BindElement or FlowValue failed when repeated")
	}
	if allocs != 0 && !raceEnabled {
		t.Errorf("BindElement + FlowValue: %v allocations, want 0", allocs)
	}
}

func TestBindErrors(t *testing.T) {
	err := bindOnce(t, oneColl{}, "T", func(*rt.Task) error { return nil })
	if err == nil || !strings.HasSuffix(err.Error(), "B(): element (3) is not stored on this rank") {
		t.Errorf("missing element: err = %v", err)
	}
	err = bindOnce(t, oneColl{rt.NewData(0, []float64{1})}, "nope", func(*rt.Task) error { return nil })
	if !errors.Is(err, rt.ErrNoArena) {
		t.Errorf("unknown arena: err = %v, want ErrNoArena", err)
	}
}
