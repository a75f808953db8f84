package remote_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/ce"
	"github.com/jdf2go/jdf2go/rt/remote"
)

// The test program: P(k), k = 0 .. N-1, on the owner of V(k) (V is 1-D cyclic), passes a
// block along a chain, adding 1 to each element, so every step crosses ranks; P(N-1) feeds
// C(j), j = 0 .. J-1, on the owner of V(j) (a broadcast, several successors per rank), and
// writes its result back to V(0). C(j) checks the value. With N and J below the number of
// ranks some ranks have no task at all.
type prog struct {
	n, j, nb int
	v        *rt.Vector
	seen     *atomic.Int64 // C tasks that saw the right value
	failAt   int           // P(failAt) fails when >= 0
	gate     chan struct{} // when not nil, P waits for it (closed once every rank has added)
	fault    func() error  // what P(failAt) does (nil: returns errBody)
	badSpace atomic.Bool   // P's execution-space check panics (set on one rank)
}

var classP, classC rt.TaskClass

func pg(tp *rt.Taskpool) *prog { return tp.Globals().(*prog) }

var errBody = errors.New("body failed on purpose")

func init() {
	classP = rt.TaskClass{Name: "P", ID: 0, Locals: []string{"k"}, Params: []int{0},
		Flows: []rt.Flow{{Name: "X", Access: rt.RW}},
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			for k := 0; k < pg(tp).n; k++ {
				l[0] = k
				if !yield(l) {
					return
				}
			}
		},
		Complete: func(tp *rt.Taskpool, l *rt.Locals) bool {
			if pg(tp).badSpace.Load() {
				panic(fmt.Sprintf("injected panic in the space check of P(%d)", l[0]))
			}
			return l[0] >= 0 && l[0] < pg(tp).n
		},
		Goal:     func(tp *rt.Taskpool, l *rt.Locals) uint32 { return uint32(min(l[0], 1)) },
		Affinity: func(tp *rt.Taskpool, l *rt.Locals) (rt.Collection, rt.Index) { return pg(tp).v, rt.Ix(l[0]) },
		Prepare: func(t *rt.Task) error {
			if t.Locals()[0] == 0 {
				return t.BindElement(0, pg(t.Taskpool()).v, rt.Ix(0))
			}
			return nil
		},
		Successors: func(tp *rt.Taskpool, l *rt.Locals, f rt.FlowMask, e *rt.Edges) {
			p := pg(tp)
			if l[0] < p.n-1 {
				e.L[0] = l[0] + 1
				e.Task(0, 0, &classP, 0)
				return
			}
			for j := 0; j < p.j; j++ {
				e.L[0] = j
				e.Task(0, 1, &classC, 0)
			}
			e.Data(0, 2, p.v, rt.Ix(0))
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(t *rt.Task) error {
			if g := pg(t.Taskpool()).gate; g != nil {
				<-g
			}
			if p := pg(t.Taskpool()); t.Locals()[0] == p.failAt {
				if p.fault != nil {
					return p.fault()
				}
				return errBody
			}
			x := t.Flow(0).Float64s()
			for i := range x {
				x[i]++
			}
			return nil
		}}},
	}
	classC = rt.TaskClass{Name: "C", ID: 1, Locals: []string{"j"}, Params: []int{0},
		Flows: []rt.Flow{{Name: "X", Access: rt.Read}},
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			for j := 0; j < pg(tp).j; j++ {
				l[0] = j
				if !yield(l) {
					return
				}
			}
		},
		Complete: func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < pg(tp).j },
		Goal:     func(tp *rt.Taskpool, l *rt.Locals) uint32 { return 1 },
		Affinity: func(tp *rt.Taskpool, l *rt.Locals) (rt.Collection, rt.Index) { return pg(tp).v, rt.Ix(l[0]) },
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(t *rt.Task) error {
			p := pg(t.Taskpool())
			x := t.Flow(0).Float64s()
			if len(x) != p.nb {
				return fmt.Errorf("C(%d) got %d elements, want %d", t.Locals()[0], len(x), p.nb)
			}
			for i, v := range x {
				if v != float64(i+p.n) {
					return fmt.Errorf("C(%d): x[%d] = %g, want %d", t.Locals()[0], i, v, i+p.n)
				}
			}
			p.seen.Add(1)
			return nil
		}}},
	}
}

type runCase struct {
	ranks, n, j, nb int
	opts            []remote.Option
	failAt          int
	stats           []remote.Stats // when not nil, each rank's Node counters after the run
	ce              []ce.Option
	gate            bool // no task runs before every rank has added the taskpool
	rt              []rt.Option
	after           func(j *remote.Job) error // on each rank, after its taskpool ended well
}

// runProg runs the program on c.ranks in-process ranks and checks the result.
func runProg(t *testing.T, c runCase, hook func(j *remote.Job, tp *rt.Taskpool)) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var seen, added atomic.Int64
	var gate chan struct{}
	if c.gate {
		gate = make(chan struct{})
	}
	err := remote.Run(ctx, remote.Config{Ranks: c.ranks, Workers: c.ranks, Remote: c.opts, RT: c.rt, CE: append([]ce.Option{ce.Debug(true)}, c.ce...)},
		func(ctx context.Context, j *remote.Job) error {
			v, err := rt.NewVector(max(c.n, c.j)*c.nb, c.nb, j.Size, j.Rank)
			if err != nil {
				return err
			}
			if b := v.Block(0); b != nil {
				for i := range b {
					b[i] = float64(i)
				}
			}
			p := &prog{n: c.n, j: c.j, nb: c.nb, v: v, seen: &seen, failAt: c.failAt, gate: gate}
			tp := rt.NewTaskpool("prog", p, &classP, &classC)
			if err := j.Add(tp); err != nil {
				return err
			}
			if added.Add(1) == int64(c.ranks) && gate != nil {
				close(gate)
			}
			if hook != nil {
				hook(j, tp)
			}
			if err := tp.Wait(ctx); err != nil {
				return err
			}
			if b := v.Block(0); b != nil {
				for i, x := range b {
					if x != float64(i+c.n) {
						return fmt.Errorf("V(0)[%d] = %g after the write-back, want %d", i, x, i+c.n)
					}
				}
			}
			if c.stats != nil {
				c.stats[j.Rank] = j.Node.Stats()
			}
			if c.after != nil {
				return c.after(j)
			}
			return nil
		})
	if err == nil && seen.Load() != int64(c.j) {
		return fmt.Errorf("%d C tasks saw the right value, want %d", seen.Load(), c.j)
	}
	return err
}

func TestChainAndBroadcast(t *testing.T) {
	for _, ranks := range []int{1, 2, 3, 4} {
		for _, mode := range []struct {
			name string
			nb   int
			opts []remote.Option
		}{
			{"eager-star", 4, nil},
			{"get-star", 64, []remote.Option{remote.Eager(64)}},
			{"eager-binomial", 4, []remote.Option{remote.Broadcast(remote.Binomial)}},
			{"get-binomial", 64, []remote.Option{remote.Eager(64), remote.Broadcast(remote.Binomial)}},
		} {
			t.Run(fmt.Sprintf("%d-ranks/%s", ranks, mode.name), func(t *testing.T) {
				if err := runProg(t, runCase{ranks: ranks, n: 7, j: 9, nb: mode.nb, opts: mode.opts, failAt: -1}, nil); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// Ranks without tasks: N and J below the number of ranks.
func TestRanksWithoutTasks(t *testing.T) {
	for _, c := range []runCase{{ranks: 4, n: 2, j: 1, nb: 8, failAt: -1}, {ranks: 3, n: 1, j: 1, nb: 8, failAt: -1}} {
		if err := runProg(t, c, nil); err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
	}
}

// TestBodyFailsOnRank2: P(2) fails on rank 2 of 4; every rank's taskpool fails, the others
// with a RemoteError naming rank 2, the task and the cause; no rank hangs.
func TestBodyFailsOnRank2(t *testing.T) {
	err := runProg(t, runCase{ranks: 4, n: 7, j: 9, nb: 8, failAt: 2}, nil)
	if err == nil {
		t.Fatal("no error")
	}
	for r := 0; r < 4; r++ {
		if !strings.Contains(err.Error(), fmt.Sprintf("rank %d: ", r)) {
			t.Errorf("rank %d did not fail:\n%v", r, err)
		}
	}
	if !errors.Is(err, remote.ErrRemoteFailure) || !errors.Is(err, errBody) {
		t.Errorf("err = %v, want the body's error on rank 2 and RemoteErrors elsewhere", err)
	}
	if n := strings.Count(err.Error(), "cancelled: rank 2: rt: taskpool prog failed: P(2): body failed on purpose"); n != 3 {
		t.Errorf("%d ranks name rank 2 and P(2), want 3:\n%v", n, err)
	}
}

// TestMergedTrace: with a trace, each rank writes its own file and Run merges them into one
// in which every message is an arrow from a send span on one rank to a receive span on
// another.
func TestMergedTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.json")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var seen atomic.Int64
	err := remote.Run(ctx, remote.Config{Ranks: 3, Workers: 3, Trace: path}, func(ctx context.Context, j *remote.Job) error {
		v, err := rt.NewVector(9*4, 4, j.Size, j.Rank)
		if err != nil {
			return err
		}
		if b := v.Block(0); b != nil {
			for i := range b {
				b[i] = float64(i)
			}
		}
		tp := rt.NewTaskpool("prog", &prog{n: 9, j: 3, nb: 4, v: v, seen: &seen, failAt: -1}, &classP, &classC)
		if err := j.Add(tp); err != nil {
			return err
		}
		return tp.Wait(ctx)
	})
	if err != nil {
		t.Fatal(err)
	}
	for r := 0; r < 3; r++ {
		if _, err := os.Stat(remote.TracePath(path, r, 3)); err != nil {
			t.Error(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		Events []struct {
			Ph, Name string
			BindID   string `json:"bind_id"`
			Pid      int
			FlowIn   bool `json:"flow_in"`
			FlowOut  bool `json:"flow_out"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatal(err)
	}
	out, in := map[string]int{}, map[string]int{}
	for _, e := range tr.Events {
		if e.FlowOut {
			out[e.BindID] = e.Pid / 1000
		}
		if e.FlowIn {
			in[e.BindID] = e.Pid / 1000
		}
	}
	if len(out) < 8 || len(out) != len(in) {
		t.Fatalf("%d arrow starts, %d arrow ends", len(out), len(in))
	}
	for id, r := range out {
		if rr, ok := in[id]; !ok || rr == r {
			t.Errorf("arrow %s: from rank %d to rank %d (ok %v)", id, r, rr, ok)
		}
	}
}

// TestBroadcastModel: P(0) on rank 0 feeds C(j), two per rank on 8 ranks. One copy goes to
// each rank whatever its number of readers; with the star the root sends all 7, with the
// binomial tree no rank sends more than ⌈log2 8⌉ = 3.
func TestBroadcastModel(t *testing.T) {
	for _, c := range []struct {
		tree remote.Tree
		most int64
	}{{remote.Star, 7}, {remote.Binomial, 3}} {
		for _, nb := range []int{4, 64} { // inside messages, by Get
			stats := make([]remote.Stats, 8)
			rc := runCase{ranks: 8, n: 1, j: 16, nb: nb, failAt: -1, stats: stats,
				opts: []remote.Option{remote.Broadcast(c.tree), remote.Eager(256)}}
			if err := runProg(t, rc, nil); err != nil {
				t.Fatalf("%v: %v", c.tree, err)
			}
			var total, most int64
			for _, s := range stats {
				copies := s.Eager + s.Gets
				total += copies
				most = max(most, copies)
			}
			if total != 7 || most != c.most {
				t.Errorf("%v, %d-element blocks: %d copies sent, at most %d by one rank; want 7 and %d",
					c.tree, nb, total, most, c.most)
			}
			if c.tree == remote.Star && stats[0].Eager+stats[0].Gets != 7 {
				t.Errorf("star: the root sent %d copies, want 7", stats[0].Eager+stats[0].Gets)
			}
		}
	}
}

// TestRankFailsBeforeAdd: a rank that gives up before adding its taskpool is ended by Run,
// so the others fail with ce.ErrPeerLost instead of waiting for it.
func TestRankFailsBeforeAdd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var seen atomic.Int64
	gaveUp := errors.New("gave up")
	err := remote.Run(ctx, remote.Config{Ranks: 3, Workers: 3}, func(ctx context.Context, j *remote.Job) error {
		if j.Rank == 1 {
			return gaveUp
		}
		v, err := rt.NewVector(9*4, 4, j.Size, j.Rank)
		if err != nil {
			return err
		}
		tp := rt.NewTaskpool("prog", &prog{n: 9, j: 3, nb: 4, v: v, seen: &seen, failAt: -1}, &classP, &classC)
		if err := j.Add(tp); err != nil {
			return err
		}
		return tp.Wait(ctx)
	})
	if !errors.Is(err, gaveUp) || !errors.Is(err, ce.ErrPeerLost) || ctx.Err() != nil {
		t.Fatalf("err = %v", err)
	}
}

// TestSpareSender: with a message budget of one message, the comm goroutine forwarding to
// its two children in a binomial tree (rank 1), which may not wait for buffers, hands the
// second message to the spare sender; the broadcast still completes. The gate makes the
// forwarding happen in a handler, not in Add's replay of an early arrival.
func TestSpareSender(t *testing.T) {
	stats := make([]remote.Stats, 8)
	rc := runCase{ranks: 8, n: 1, j: 64, nb: 64, failAt: -1, stats: stats, gate: true,
		opts: []remote.Option{remote.Broadcast(remote.Binomial), remote.Eager(1024)}, ce: []ce.Option{ce.Budget(1200)}}
	if err := runProg(t, rc, nil); err != nil {
		t.Fatal(err)
	}
	var spared int64
	for _, s := range stats {
		spared += s.Spared
	}
	if spared == 0 {
		t.Error("no message went through the spare sender (the test does not test)")
	}
}
