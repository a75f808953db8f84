package rt_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/rttest"
)

// A task with a few counted CTL inputs becomes ready when the last one arrives, even when
// the worker that delivers it goes on with a long task of the same class: T(0) and T(1)
// gather into T(3); T(1) also releases T(2), which runs long on T(1)'s worker. T(3) must
// start while T(2) still runs, on another worker.
func TestFewCountedInputsAreNotHeldByALongTask(t *testing.T) {
	var t2done atomic.Bool
	var t3early atomic.Bool
	body := func(task *rt.Task) error {
		switch task.Locals()[0] {
		case 0:
			return nil
		case 1:
			time.Sleep(20 * time.Millisecond) // T(0)'s arrival publishes T(3) first
		case 2:
			time.Sleep(300 * time.Millisecond)
			t2done.Store(true)
		case 3:
			t3early.Store(!t2done.Load())
		}
		return nil
	}
	c, err := rt.New(rt.Workers(4))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// T(1)'s successors in this order: T(2) (the next task of its worker), then T(3).
	mustRun(t, c, rttest.DAG(4, [][2]int{{0, 3}, {1, 2}, {1, 3}}, body))
	if !t3early.Load() {
		t.Fatal("T(3) waited for T(2), a long task on the worker that delivered its last input")
	}
}
