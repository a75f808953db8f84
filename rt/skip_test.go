package rt_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/jdf2go/jdf2go/rt"
)

// skipProgram is a class T(k), k = 0..n-1, of independent tasks, and a class U(k), k =
// 0..m-1, whose tasks each wait for an input that no task sends (the branch that no body
// takes). T(0)'s body calls tp.SkipTasks(skip).
func skipProgram(n, m, skip int, got *error) *rt.Taskpool {
	space := func(n int) func(*rt.Taskpool, *rt.Locals, func(*rt.Locals) bool) {
		return func(_ *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			for k := range n {
				if l[0] = k; !yield(l) {
					return
				}
			}
		}
	}
	t := &rt.TaskClass{Name: "T", ID: 0, Locals: []string{"k"}, Params: []int{0}, Space: space(n),
		Complete: func(_ *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < n }}
	t.Incarnations = []rt.Incarnation{{Kind: rt.CPU, Hook: func(task *rt.Task) error {
		if task.Locals()[0] == 0 {
			*got = task.Taskpool().SkipTasks(skip)
			return *got
		}
		return nil
	}}}
	u := &rt.TaskClass{Name: "U", ID: 1, Locals: []string{"k"}, Params: []int{0}, Space: space(m),
		Flows:    []rt.Flow{{Name: "C", Access: rt.CTL}},
		Complete: func(_ *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < m },
		Goal:     func(*rt.Taskpool, *rt.Locals) uint32 { return 1 },
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(*rt.Task) error {
			return errors.New("U ran")
		}}}}
	return rt.NewTaskpool("skip", nil, t, u)
}

// TestSkipTasks: the tasks that a body says will not run let counted termination end; a
// graph that does not skip them stalls, with a report that says so; a negative count, or
// more tasks than are left besides the caller, fails the taskpool with ErrSkip.
func TestSkipTasks(t *testing.T) {
	var got error
	if err := run(t, newCtx(t, rt.Workers(2)), skipProgram(4, 3, 3, &got)); err != nil || got != nil {
		t.Fatalf("skipping the 3 tasks of U: run %v, SkipTasks %v", err, got)
	}

	err := run(t, newCtx(t, rt.Workers(2)), skipProgram(4, 3, 0, &got))
	if !errors.Is(err, rt.ErrStalled) || !strings.Contains(err.Error(), "3 tasks remain") ||
		!strings.Contains(err.Error(), "tp.SkipTasks") {
		t.Errorf("without SkipTasks: %v, want a stall that names SkipTasks", err)
	}

	for _, c := range []struct {
		skip int
		want string
	}{
		{-1, "SkipTasks(-1) on taskpool skip: the count of tasks to skip is negative"},
		// 6 tasks besides the caller (7 while Add still holds the taskpool open).
		{8, "SkipTasks(8) on taskpool skip: only "},
	} {
		err := run(t, newCtx(t, rt.Workers(1)), skipProgram(4, 3, c.skip, &got))
		if !errors.Is(err, rt.ErrSkip) || !errors.Is(got, rt.ErrSkip) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("SkipTasks(%d): run %v, call %v; want %q", c.skip, err, got, c.want)
		}
	}

	if err := skipProgram(1, 0, 0, &got).SkipTasks(1); !errors.Is(err, rt.ErrSkip) || !errors.Is(err, rt.ErrNotAdded) {
		t.Errorf("SkipTasks before Add: %v", err)
	}
}

// TestSkipTasksExcess: an excess that the call cannot see (completions still counted in the
// worker's batch) fails the taskpool with ErrSkip when the count goes below zero, instead
// of leaving it unable to end. T(0) -> T(1) -> T(2) -> T(3) run on one worker, and T(3)
// skips a task although none is left. Whether the call or the count finds the excess
// depends on when the worker flushes its batch.
func TestSkipTasksExcess(t *testing.T) {
	const n = 4
	tc := &rt.TaskClass{Name: "T", Locals: []string{"k"}, Params: []int{0},
		Flows: []rt.Flow{{Name: "C", Access: rt.CTL}},
		Space: func(_ *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			for k := range n {
				if l[0] = k; !yield(l) {
					return
				}
			}
		},
		Complete: func(_ *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < n },
		Goal: func(_ *rt.Taskpool, l *rt.Locals) uint32 {
			if l[0] > 0 {
				return 1
			}
			return 0
		},
	}
	tc.Successors = func(_ *rt.Taskpool, l *rt.Locals, _ rt.FlowMask, e *rt.Edges) {
		if l[0] < n-1 {
			e.L[0] = l[0] + 1
			e.Task(0, 0, tc, 0)
		}
	}
	tc.Incarnations = []rt.Incarnation{{Kind: rt.CPU, Hook: func(task *rt.Task) error {
		if task.Locals()[0] == n-1 {
			// When the worker has already flushed its batch, the call itself sees the
			// excess and returns ErrSkip; either way the run must end with it.
			return task.Taskpool().SkipTasks(1)
		}
		return nil
	}}}
	err := run(t, newCtx(t, rt.Workers(1)), rt.NewTaskpool("excess", nil, tc))
	if !errors.Is(err, rt.ErrSkip) {
		t.Fatalf("run: %v, want ErrSkip", err)
	}
}
