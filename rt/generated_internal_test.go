package rt

import "testing"

// TestChainsGoal checks the readiness goal that rt derives from a class's input chains and
// its own Goal: a chain counts when it selects a task inside its space, a chain that cannot
// select a task is not evaluated, and Goal's part is added (ored with Mask readiness).
func TestChainsGoal(t *testing.T) {
	var tc TaskClass
	inSpace := func(l *Locals) bool { return l[0] >= 0 && l[0] <= 3 }
	memoryCalls := 0
	tc = TaskClass{
		Name: "T", Locals: []string{"k"}, Params: []int{0},
		Flows: []Flow{{Name: "A", Access: Read}, {Name: "B", Access: Read}, {Name: "C", Access: CTL}},
		Inputs: []InputChain{
			{Flow: 0, Task: true, Memory: true, Select: func(tp *Taskpool, l *Locals) Input {
				if l[0] == 0 {
					return DataInput(0, nil, Ix(0), "")
				}
				pl := Locals{l[0] - 1}
				if l[0] == 3 {
					pl[0] = 9
				}
				return TaskInput(0, &tc, 0, inSpace(&pl), &pl, "", "")
			}},
			{Flow: 1, Memory: true, Select: func(tp *Taskpool, l *Locals) Input {
				memoryCalls++
				return NullInput(0)
			}},
		},
		Goal: func(tp *Taskpool, l *Locals) uint32 { // C: one arrival for k = 2
			if l[0] != 2 {
				return 0
			}
			if tc.Readiness == Mask {
				return 1 << 2
			}
			return 1
		},
	}
	if !tc.hasGoal() || !tc.hasPrepare() || !tc.hasPredecessors() {
		t.Fatal("a class with input chains has no goal, preparation or predecessors")
	}
	for _, r := range []struct {
		r    Readiness
		want []uint32
	}{{Counter, []uint32{0, 1, 2, 0}}, {Mask, []uint32{0, 1, 0b101, 0}}} {
		tc.Readiness = r.r
		for k, want := range r.want {
			l := Locals{k}
			if got := tc.goal(nil, &l); got != want {
				t.Errorf("readiness %d: goal of T(%d) = %#b, want %#b", r.r, k, got, want)
			}
		}
	}
	if memoryCalls != 0 {
		t.Errorf("the goal evaluated a chain that selects no task %d times", memoryCalls)
	}
	tc.Inputs[0].Task = false
	tc.Goal = nil
	if tc.hasGoal() {
		t.Error("hasGoal of a class whose chains select no task and without Goal")
	}
}
