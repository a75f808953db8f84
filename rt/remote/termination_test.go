package remote_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/remote"
)

// The write-back program: T(0), on rank 0 with V(0), writes wbValue into its flow and
// writes it back to V(1), which rank 1 stores; rank 1 has no task, so only the write-backs
// it counts at Add hold its taskpool open. T waits until rank 1's Wait has returned (or
// wbPause has passed), so a rank 1 that ends before its write-back lands is caught in the
// act, not by a race.
type wbProg struct {
	v     *rt.Vector
	ended chan struct{} // closed when rank 1's Wait has returned
}

const (
	wbValue = 42
	wbPause = 300 * time.Millisecond
)

var classT rt.TaskClass

func init() {
	wp := func(tp *rt.Taskpool) *wbProg { return tp.Globals().(*wbProg) }
	classT = rt.TaskClass{Name: "T", ID: 0, Locals: []string{"k"}, Params: []int{0},
		Flows: []rt.Flow{{Name: "X", Access: rt.RW}},
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			l[0] = 0
			yield(l)
		},
		Complete: func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] == 0 },
		Affinity: func(tp *rt.Taskpool, l *rt.Locals) (rt.Collection, rt.Index) { return wp(tp).v, rt.Ix(0) },
		Prepare:  func(t *rt.Task) error { return t.BindElement(0, wp(t.Taskpool()).v, rt.Ix(0)) },
		Successors: func(tp *rt.Taskpool, l *rt.Locals, f rt.FlowMask, e *rt.Edges) {
			e.Data(0, 0, wp(tp).v, rt.Ix(1))
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(t *rt.Task) error {
			select {
			case <-wp(t.Taskpool()).ended:
			case <-time.After(wbPause):
			}
			x := t.Flow(0).Float64s()
			for i := range x {
				x[i] = wbValue
			}
			return nil
		}}},
	}
}

// TestRankWithoutTasksEndsAfterItsWriteBack: the taskpool of a rank that runs no task but
// stores an element another rank writes back ends once that write-back has landed, not
// before (a count one short) and not never (one too many).
func TestRankWithoutTasksEndsAfterItsWriteBack(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ended := make(chan struct{})
	var once sync.Once
	err := remote.Run(ctx, remote.Config{Ranks: 2, Workers: 2}, func(ctx context.Context, j *remote.Job) error {
		v, err := rt.NewVector(2*4, 4, j.Size, j.Rank)
		if err != nil {
			return err
		}
		tp := rt.NewTaskpool("write-back", &wbProg{v: v, ended: ended}, &classT)
		if err := j.Add(tp); err != nil {
			return err
		}
		if j.Rank == 0 {
			return tp.Wait(ctx)
		}
		defer once.Do(func() { close(ended) })
		wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
		defer wcancel()
		start := time.Now()
		if err := tp.Wait(wctx); err != nil {
			if errors.Is(wctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("rank 1's taskpool did not end within %v of its write-back: %w", time.Since(start)-wbPause, err)
			}
			return err
		}
		got := v.Block(1)
		for i, x := range got {
			if x != wbValue {
				return fmt.Errorf("rank 1's Wait returned with V(1) = %v (element %d): before the write-back landed", got, i)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
