package gpubench_test

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/bench/internal/gpubench"
	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/sim"
)

// TestNextTaskSuccessorsRunWhileManaging is docs/gpu.md, "next_task" (and
// scenario 35) with rt's real workers: the CPU successors of a GPU task are
// run by the other worker while the manager is still in the episode in
// which that task completed. Two GPU tasks on 2 workers and one simulated
// device:
//   - G(0)'s kernel waits until G(1) reached its body, so both tasks belong
//     to one episode;
//   - G(1) stays on the device (its body returns AGAIN behind a short
//     operation) until every successor of G(0) ran, so the episode
//     cannot end before they did. It does not block its stream: G(0) may be
//     queued behind it on the same one.
//
// The manager's goroutine stays in its loop meanwhile, so the successors
// can only run on the other worker, and only if the manager flushed its
// next_task slot after completing G(0): a successor parked there would
// never run, and G(1) would fail after its wait.
func TestNextTaskSuccessorsRunWhileManaging(t *testing.T) {
	const succ = 4
	const patience = 20 * time.Second
	devs, err := gpu.Open("sim", gpu.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	rd := devs[0]
	g1Entered, s0Ran := make(chan struct{}), make(chan struct{})
	var enter sync.Once
	var ranS0, inEpisode atomic.Int32
	var g1Since time.Time // written and read by the manager only
	body := func(_ *gpu.Device, task *gpu.Task, st *gpu.Stream, g int) gpu.Result {
		ss := st.Backend().(*sim.Stream)
		switch g {
		case 0:
			err := ss.Enqueue("G(0) waits for G(1)", func() error {
				select {
				case <-g1Entered:
					return nil
				case <-time.After(patience):
					return fmt.Errorf("waited %v for G(1) to reach its body", patience)
				}
			})
			if err != nil {
				return task.Fail(err)
			}
			return gpu.Done
		case 1:
			enter.Do(func() { close(g1Entered); g1Since = time.Now() })
			select {
			case <-s0Ran:
				return gpu.Done
			default:
			}
			if time.Since(g1Since) > patience {
				return task.Fail(fmt.Errorf("waited %v for the successors of G(0): hidden in the manager's next_task slot?", patience))
			}
			if err := ss.Enqueue("G(1) polls", func() error { time.Sleep(20 * time.Microsecond); return nil }); err != nil {
				return task.Fail(err)
			}
			return gpu.Again
		}
		return task.Fail(fmt.Errorf("no GPU task %d in this graph", g))
	}
	probe := func(g, s int) {
		if g != 0 {
			return
		}
		// G(1) is outstanding until every S(0, *) ran: a positive counter
		// means the episode of G(0)'s completion is still running.
		if rd.Device().Outstanding() > 0 {
			inEpisode.Add(1)
		}
		if ranS0.Add(1) == succ {
			close(s0Ran)
		}
	}
	b, err := gpubench.NewNextTask(gpubench.NextTaskConfig{Workers: 2, Devices: []*gpu.RTDevice{rd},
		GPUBody: body, Probe: probe, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	r, err := b.Run(gpubench.NextTaskGraph{GPUTasks: 2, Successors: succ})
	if cerr := b.Close(); cerr != nil {
		t.Error(cerr)
	}
	if cerr := rd.Close(); cerr != nil {
		t.Error(cerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Log(r.Summary())
	if got := inEpisode.Load(); got != succ {
		t.Errorf("%d of the %d successors of G(0) saw the device managed, want all", got, succ)
	}
	// From the trace: S(0, *) ran on the worker that did not manage, while
	// the episode in which G(0) completed still ran.
	if r.ByOthersDuring < succ || r.Episodes < 1 {
		t.Errorf("%d successors ran on other workers during the parent's episode (want >= %d), %d episodes", r.ByOthersDuring, succ, r.Episodes)
	}
}
