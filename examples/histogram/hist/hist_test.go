package hist

import (
	"fmt"
	"testing"

	"github.com/jdf2go/jdf2go/rt"
)

// The histogram is exact whatever the rings: with batching on or off, on every scheduler.
// On one worker every ring collects what its queue holds, so batching merges fewer times
// than there are tasks, and with batching off once per task.
func TestHistogram(t *testing.T) {
	for _, c := range []struct {
		nt, nb, batch, workers int
		batching               bool
		sched                  string
	}{
		{1, 1, 64, 2, true, "lfq"},
		{5000, 16, 64, 1, true, "lfq"},
		{5000, 16, 64, 1, false, "lfq"},
		{5000, 16, 0, 2, true, "lfq"},
		{3000, 8, 7, 2, true, "ap"},
		{3000, 8, 7, 2, true, "gd"},
	} {
		t.Run(fmt.Sprintf("%+v", c), func(t *testing.T) {
			v, err := Samples(c.nt, c.nb)
			if err != nil {
				t.Fatal(err)
			}
			ctx, err := rt.New(rt.Workers(c.workers), rt.Scheduler(c.sched), rt.Batching(c.batching), rt.Progress(nil))
			if err != nil {
				t.Fatal(err)
			}
			defer ctx.Close()
			h, _, err := Run(ctx, v, c.batch)
			if err != nil {
				t.Fatal(err)
			}
			if err := Check(h, v); err != nil {
				t.Error(err)
			}
			switch {
			case h.Merges < 1 || h.Merges > int64(c.nt):
				t.Errorf("%d merges for %d tasks", h.Merges, c.nt)
			case c.workers == 1 && c.batching && h.Merges >= int64(c.nt):
				t.Errorf("%d merges for %d tasks: no ring collected a task", h.Merges, c.nt)
			case !c.batching && h.Merges != int64(c.nt):
				t.Errorf("%d merges with batching off, want one per task", h.Merges)
			}
		})
	}
	if _, err := Samples(0, 4); err == nil {
		t.Error("Samples accepted 0 tasks")
	}
}
