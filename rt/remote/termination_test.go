package remote_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
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

// logBuffer collects the text of log records from every rank.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The two-flow write-back program: U(0), on rank 0, writes flow X (bound to V(0)) back to
// V(1) and flow Y (bound to V(2)) back to V(3), both stored on rank 1, which has no task.
var classU rt.TaskClass

func init() {
	wp := func(tp *rt.Taskpool) *wbProg { return tp.Globals().(*wbProg) }
	classU = rt.TaskClass{Name: "U", ID: 0, Locals: []string{"k"}, Params: []int{0},
		Flows: []rt.Flow{{Name: "X", Access: rt.RW}, {Name: "Y", Access: rt.RW}},
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			l[0] = 0
			yield(l)
		},
		Complete: func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] == 0 },
		Affinity: func(tp *rt.Taskpool, l *rt.Locals) (rt.Collection, rt.Index) { return wp(tp).v, rt.Ix(0) },
		Prepare: func(t *rt.Task) error {
			v := wp(t.Taskpool()).v
			if err := t.BindElement(0, v, rt.Ix(0)); err != nil {
				return err
			}
			return t.BindElement(1, v, rt.Ix(2))
		},
		Successors: func(tp *rt.Taskpool, l *rt.Locals, f rt.FlowMask, e *rt.Edges) {
			e.Data(0, 0, wp(tp).v, rt.Ix(1))
			e.Data(1, 1, wp(tp).v, rt.Ix(3))
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(t *rt.Task) error {
			for f := range 2 {
				x := t.Flow(f).Float64s()
				for i := range x {
					x[i] = float64(wbValue + f)
				}
			}
			return nil
		}}},
	}
}

// TestWriteBacksCountedPerFlow: a task with two flows written back to one rank sends two
// write-backs, and that rank counts both: its Wait returns with both elements written, and
// no write-back arrives after its taskpool has ended (which rt reports as more completions
// than counted). Every message has been handled once Run returns (the Engines' Close waits
// for them), so the second check does not depend on timing.
func TestWriteBacksCountedPerFlow(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var logs logBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	err := remote.Run(ctx, remote.Config{Ranks: 2, Workers: 2, RT: []rt.Option{rt.Logger(logger)}}, func(ctx context.Context, j *remote.Job) error {
		v, err := rt.NewVector(4*4, 4, j.Size, j.Rank)
		if err != nil {
			return err
		}
		tp := rt.NewTaskpool("write-backs", &wbProg{v: v}, &classU)
		if err := j.Add(tp); err != nil {
			return err
		}
		if err := tp.Wait(ctx); err != nil {
			return err
		}
		if j.Rank == 1 {
			for f, k := range []int{1, 3} {
				for i, x := range v.Block(k) {
					if x != float64(wbValue+f) {
						return fmt.Errorf("rank 1's Wait returned with V(%d) = %v (element %d): before its write-back landed", k, v.Block(k), i)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	if s := logs.String(); strings.Contains(s, "more tasks completed than counted") {
		t.Errorf("a write-back arrived after its taskpool ended:\n%s", s)
	}
}
