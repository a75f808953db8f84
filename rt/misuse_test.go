package rt_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/rttest"
)

// A Taskpool that NewTaskpool did not make has no termination state: Add refuses it with a
// named error instead of panicking, and Cancel on it does not panic either.
func TestAddZeroTaskpool(t *testing.T) {
	c := newCtx(t, rt.Workers(1))
	tp := &rt.Taskpool{}
	if err := c.Add(tp); !errors.Is(err, rt.ErrZeroTaskpool) {
		t.Fatalf("Add(&rt.Taskpool{}) = %v, want ErrZeroTaskpool", err)
	}
	tp.Cancel(errors.New("no matter"))
	mustRun(t, c, rttest.Chains(2, 10, nil))
}

// panicNilChild names the environment variable under which TestPanicNilFailsTask runs as
// the child process it starts.
const panicNilChild = "RT_TEST_PANICNIL_CHILD"

// Under GODEBUG=panicnil=1, panic(nil) recovers as nil, so a body that panics with nil looks
// like one that returned nil to a caller that only looks at recover's value. The task must
// fail all the same, naming the task. GODEBUG is read at start, hence the child process.
func TestPanicNilFailsTask(t *testing.T) {
	if os.Getenv(panicNilChild) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPanicNilFailsTask$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), panicNilChild+"=1", "GODEBUG=panicnil=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestPanicNilFailsTask") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	if p := func() (p any) {
		defer func() { p = recover() }()
		panic(nil)
	}(); p != nil {
		t.Fatalf("recover() = %v (%T): GODEBUG=panicnil=1 did not take effect", p, p)
	}
	c := newCtx(t, rt.Workers(2))
	var after int
	tp := rttest.Chains(1, 5, func(task *rt.Task) error {
		if task.Locals()[1] == 2 {
			panic(nil)
		}
		if task.Locals()[1] > 2 {
			after++
		}
		return nil
	})
	err := run(t, c, tp)
	if !errors.Is(err, rt.ErrTaskpoolFailed) || !strings.Contains(err.Error(), "T(0, 2)") {
		t.Fatalf("Wait = %v, want a task failure naming T(0, 2)", err)
	}
	if after != 0 {
		t.Fatalf("%d successors of the task that panicked ran", after)
	}
}
