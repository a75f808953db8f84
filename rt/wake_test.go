package rt_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/rttest"
)

// A task that releases k successors while every other worker is parked gets them running
// at once: each successor waits for all k to have started, so a release that woke one
// worker, with the woken one stealing a few and the rest left queued behind running tasks,
// would hold them until the deadline. Every scheduler is covered: with lfq the others steal
// from the releasing worker's queue, ap and gd share one queue.
func TestReleaseWakesEnoughParkedWorkers(t *testing.T) {
	for _, tc := range []struct {
		sched   string
		workers int
	}{{"lfq", 4}, {"lfq", 8}, {"lfq", 16}, {"ap", 8}, {"gd", 8}} {
		workers := tc.workers
		t.Run(fmt.Sprint(tc.sched, workers), func(t *testing.T) {
			k := workers - 1
			edges := make([][2]int, k)
			for i := range edges {
				edges[i] = [2]int{0, i + 1}
			}
			var started atomic.Int32
			all := make(chan struct{})
			body := func(task *rt.Task) error {
				if task.Locals()[0] == 0 {
					// Long enough for the other workers to give up stealing and park.
					time.Sleep(50 * time.Millisecond)
					return nil
				}
				if started.Add(1) == int32(k) {
					close(all)
				}
				select {
				case <-all:
					return nil
				case <-time.After(5 * time.Second):
					return fmt.Errorf("%d of the %d successors started within 5 s", started.Load(), k)
				}
			}
			c, err := rt.New(rt.Workers(workers), rt.Scheduler(tc.sched))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			mustRun(t, c, rttest.DAG(k+1, edges, body))
		})
	}
}
