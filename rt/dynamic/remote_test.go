package dynamic_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/ce"
	"github.com/jdf2go/jdf2go/rt/dynamic"
	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/remote"
)

var quiet = slog.New(slog.DiscardHandler)

// ranksConfig is an in-process job of n ranks with two workers each.
func ranksConfig(n int, opts ...remote.Option) remote.Config {
	return remote.Config{Ranks: n, Workers: 2 * n, RT: []rt.Option{rt.Logger(quiet)},
		CE: []ce.Option{ce.Logger(quiet)}, Remote: append([]remote.Option{remote.Logger(quiet)}, opts...)}
}

// onRanks runs program p on this rank of a job: every rank inserts every task, each on the
// rank places[i]; the data are one-element slices registered on every rank (rank 0 owns
// them). The executing rank records a task's reads in res; rank 0 records the final data
// after Wait, which returns the data to it.
func (p *program) onRanks(ctx context.Context, j *remote.Job, places []int, window int, res *result) error {
	c, err := j.Context()
	if err != nil {
		return err
	}
	g, err := dynamic.New(c, dynamic.Distributed(j.Node), dynamic.Window(window))
	if err != nil {
		return err
	}
	vals := make([]*int64, p.ndata+p.nscratch)
	data := make([]*dynamic.Data[[]int64], len(vals))
	for i := range vals {
		s := make([]int64, 1)
		vals[i] = &s[0]
		if data[i], err = dynamic.Register(g, fmt.Sprintf("d%d", i), s); err != nil {
			return err
		}
	}
	for i := range p.tasks {
		pt := &p.tasks[i]
		args := []dynamic.Arg{dynamic.Priority(pt.prio), dynamic.On(places[i])}
		args = appendAccesses(args, pt.modes, data)
		rank := j.Rank
		if err := g.Insert(pt.name, func(*dynamic.Task) error {
			if rank != places[i] {
				return fmt.Errorf("task %d ran on rank %d, placed on %d", i, rank, places[i])
			}
			res.reads[i] = body(p, i, vals, nil)
			return nil
		}, args...); err != nil {
			return err
		}
	}
	if err := g.Wait(ctx); err != nil {
		return err
	}
	if j.Rank == 0 {
		for _, v := range vals[:p.ndata] {
			res.final = append(res.final, *v)
		}
	}
	return nil
}

// TestRanksSequentialConsistency: random programs on 2 and 3 in-process ranks, each task on
// a random rank, give the reads and final data of sequential execution; with 3 ranks every
// datum travels by Get (rendezvous), with 2 inside the message (eager).
func TestRanksSequentialConsistency(t *testing.T) {
	programs, ntasks := 12, 200
	if testing.Short() {
		programs = 4
	}
	for _, tc := range []struct {
		ranks int
		opts  []remote.Option
	}{{2, nil}, {3, []remote.Option{remote.Eager(0)}}} {
		t.Run(fmt.Sprintf("ranks%d", tc.ranks), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			progs := make([]program, programs)
			places := make([][]int, programs)
			results := make([]result, programs)
			for s := range progs {
				r := rand.New(rand.NewPCG(uint64(s), uint64(tc.ranks)))
				progs[s] = randomProgram(r, ntasks)
				places[s] = make([]int, ntasks)
				for i := range places[s] {
					places[s][i] = r.IntN(tc.ranks)
				}
				results[s].reads = make([][]int64, ntasks)
			}
			stats := make([]remote.Stats, tc.ranks)
			err := remote.Run(ctx, ranksConfig(tc.ranks, tc.opts...), func(ctx context.Context, j *remote.Job) error {
				for s := range progs {
					if err := progs[s].onRanks(ctx, j, places[s], []int{1, 7, 1000}[s%3], &results[s]); err != nil {
						return fmt.Errorf("program %d: %w", s, err)
					}
				}
				stats[j.Rank] = j.Node.Stats()
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for s := range progs {
				want := progs[s].sequential()
				if !slices.Equal(results[s].final, want.final) {
					t.Fatalf("program %d: final data %v, sequentially %v", s, results[s].final, want.final)
				}
				for i := range want.reads {
					if !slices.Equal(results[s].reads[i], want.reads[i]) {
						t.Fatalf("program %d: task %d (%v, rank %d) read %v, sequentially %v", s, i,
							progs[s].tasks[i].modes, places[s][i], results[s].reads[i], want.reads[i])
					}
				}
			}
			var eager, gets int64
			for _, st := range stats {
				eager += st.Eager
				gets += st.Gets
			}
			if eager+gets == 0 || (tc.opts != nil && eager != 0) || (tc.opts == nil && gets != 0) {
				t.Errorf("%d eager and %d rendezvous transfers", eager, gets)
			}
		})
	}
}

// gemmTile is C += A·B on nb×nb column-major tiles.
func gemmTile(a, b, c []float64, nb int) {
	for j := 0; j < nb; j++ {
		for k := 0; k < nb; k++ {
			bkj := b[k+j*nb]
			for i := 0; i < nb; i++ {
				c[i+j*nb] += a[i+k*nb] * bkj
			}
		}
	}
}

func elemA(i, j int) float64 { return float64((i*7+j*3)%11) - 5 }
func elemB(i, j int) float64 { return float64((i*5+j*2)%13) - 6 }

// TestRanksTiledGEMM: C = 2·(A·B) on tiled matrices dealt over 2 and 3 in-process ranks. The
// products run on the owner of C's tile; the scaling runs on the next rank (On), so Wait's
// flush brings every tile of C back to its owner, where it is checked. The number of
// transfers is the model's: one per (tile version, rank that reads it and lacks it).
func TestRanksTiledGEMM(t *testing.T) {
	for _, tc := range []struct {
		ranks, p, q int
		eager       int
	}{{2, 1, 2, 1 << 16}, {3, 3, 1, 256}, {3, 2, 1, 1 << 16}} {
		t.Run(fmt.Sprintf("ranks%d_grid%dx%d_eager%d", tc.ranks, tc.p, tc.q, tc.eager), func(t *testing.T) {
			const mt, nb = 4, 6
			n := mt * nb
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			ref := gemmRef(n)
			// The model: A(i,k) goes to the owners of C(i,·) that lack it, B(k,j) to those of
			// C(·,j); each scaled tile travels to the next rank and back.
			owner := func(i, j int) int { return (i%tc.p)*tc.q + j%tc.q }
			type need struct{ m, i, j, r int }
			needs := map[need]bool{}
			for i := 0; i < mt; i++ {
				for j := 0; j < mt; j++ {
					for k := 0; k < mt; k++ {
						if r := owner(i, j); r != owner(i, k) {
							needs[need{0, i, k, r}] = true
						}
						if r := owner(i, j); r != owner(k, j) {
							needs[need{1, k, j, r}] = true
						}
					}
				}
			}
			want := int64(len(needs) + 2*mt*mt)
			stats := make([]remote.Stats, tc.ranks)
			var mu sync.Mutex
			var bad []string
			err := remote.Run(ctx, ranksConfig(tc.ranks, remote.Eager(tc.eager)), func(ctx context.Context, j *remote.Job) error {
				wrong, err := gemmOnRanks(ctx, j, tc.p, tc.q, mt, nb, ref)
				mu.Lock()
				bad = append(bad, wrong...)
				mu.Unlock()
				stats[j.Rank] = j.Node.Stats()
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(bad) > 0 {
				t.Fatal(strings.Join(bad, "\n"))
			}
			var sent, gets int64
			for _, s := range stats {
				sent += s.Eager + s.Gets
				gets += s.Gets
			}
			if sent != want {
				t.Errorf("%d transfers, the model says %d", sent, want)
			}
			if (tc.eager < nb*nb*8) != (gets == sent) {
				t.Errorf("eager threshold %d, tiles of %d bytes: %d of %d transfers by Get", tc.eager, nb*nb*8, gets, sent)
			}
		})
	}
}

// gemmOnRanks computes C = 2·(A·B) as TestRanksTiledGEMM describes, on this rank of a job,
// and returns the elements of C stored here that differ from ref (dense, n×n).
func gemmOnRanks(ctx context.Context, j *remote.Job, p, q, mt, nb int, ref []float64) ([]string, error) {
	n := mt * nb
	owner := func(i, j int) int { return (i%p)*q + j%q }
	c, err := j.Context()
	if err != nil {
		return nil, err
	}
	mats := make([]*rt.TiledMatrix, 3)
	for m := range mats {
		if mats[m], err = rt.NewTiledMatrix(n, n, nb, nb, p, q, j.Rank); err != nil {
			return nil, err
		}
	}
	dense := func(f func(i, j int) float64) []float64 {
		d := make([]float64, n*n)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				d[i+j*n] = f(i, j)
			}
		}
		return d
	}
	mats[0].FillFromDense(dense(elemA), n)
	mats[1].FillFromDense(dense(elemB), n)
	g, err := dynamic.New(c, dynamic.Distributed(j.Node), dynamic.Name("gemm"))
	if err != nil {
		return nil, err
	}
	A, B, C := dynamic.NewMatrix(g, "A", mats[0]), dynamic.NewMatrix(g, "B", mats[1]), dynamic.NewMatrix(g, "C", mats[2])
	for i := 0; i < mt; i++ {
		for jj := 0; jj < mt; jj++ {
			for k := 0; k < mt; k++ {
				a, b, cc := A.Tile(i, k), B.Tile(k, jj), C.Tile(i, jj)
				if err := g.Insert("GEMM", func(*dynamic.Task) error {
					gemmTile(a.Value(), b.Value(), cc.Value(), nb)
					return nil
				}, dynamic.Read(a), dynamic.Read(b), dynamic.ReadWrite(cc)); err != nil {
					return nil, err
				}
			}
		}
	}
	for i := 0; i < mt; i++ {
		for jj := 0; jj < mt; jj++ {
			cc := C.Tile(i, jj)
			if err := g.Insert("SCALE", func(*dynamic.Task) error {
				for k, v := range cc.Value() {
					cc.Value()[k] = 2 * v
				}
				return nil
			}, dynamic.ReadWrite(cc), dynamic.On((owner(i, jj)+1)%j.Size)); err != nil {
				return nil, err
			}
		}
	}
	if err := g.Wait(ctx); err != nil {
		return nil, err
	}
	got := make([]float64, n*n)
	mats[2].GatherToDense(got, n)
	for i := 0; i < n; i++ {
		for jj := 0; jj < n; jj++ {
			if owner(i/nb, jj/nb) == j.Rank && got[i+jj*n] != ref[i+jj*n] {
				return []string{fmt.Sprintf("rank %d: C[%d,%d] = %v, want %v", j.Rank, i, jj, got[i+jj*n], ref[i+jj*n])}, nil
			}
		}
	}
	return nil, nil
}

// gemmRef is 2·(A·B), dense n×n.
func gemmRef(n int) []float64 {
	ref := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for k := 0; k < n; k++ {
				s += elemA(i, k) * elemB(k, j)
			}
			ref[i+j*n] = 2 * s
		}
	}
	return ref
}

// rankFaultRun runs a chain of tasks alternating between 2 ranks, where fault strikes rank 1
// while rank 0 waits for its data; it returns each rank's Wait error and how long after the
// fault it came.
func rankFaultRun(t *testing.T, failBody bool, kill bool) (errs [2]error, took [2]time.Duration, runErr error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var (
		added atomic.Int64
		gate  = make(chan struct{})
		start time.Time // written before gate closes
	)
	runErr = remote.Run(ctx, ranksConfig(2), func(ctx context.Context, j *remote.Job) error {
		c, err := j.Context()
		if err != nil {
			return err
		}
		g, err := dynamic.New(c, dynamic.Distributed(j.Node))
		if err != nil {
			return err
		}
		x, err := dynamic.Register(g, "x", make([]float64, 4))
		if err != nil {
			return err
		}
		for i := 0; i < 8; i++ {
			r := i % 2
			body := func(*dynamic.Task) error {
				if i == 0 {
					<-gate
				}
				return nil
			}
			if i == 3 && failBody {
				body = func(*dynamic.Task) error { return errors.New("body failed on purpose") }
			}
			if err := g.Insert("P", body, dynamic.ReadWrite(x), dynamic.On(r)); err != nil {
				break // the graph failed already: Wait says how
			}
		}
		if added.Add(1) == 2 {
			start = time.Now()
			if kill {
				j.World.Kill(1)
			}
			close(gate)
		}
		err = g.Wait(ctx)
		<-gate
		errs[j.Rank], took[j.Rank] = err, time.Since(start)
		return err
	})
	if ctx.Err() != nil {
		t.Fatalf("the job hung: %v", runErr)
	}
	return errs, took, runErr
}

// TestRanksFailingBody: a body failing on rank 1 ends both ranks' Wait within a second, rank
// 1's with the task's error naming P(4), rank 0's with ErrRemoteFailure naming rank 1, the
// task and the cause.
func TestRanksFailingBody(t *testing.T) {
	errs, took, _ := rankFaultRun(t, true, false)
	for r, err := range errs {
		if err == nil {
			t.Fatalf("rank %d: Wait = nil", r)
		}
		if took[r] > time.Second {
			t.Errorf("rank %d: Wait returned %v after the fault, want within 1s", r, took[r])
		}
		if !strings.Contains(err.Error(), "P(4)") || !strings.Contains(err.Error(), "body failed on purpose") {
			t.Errorf("rank %d: %v does not name P(4) and the cause", r, err)
		}
	}
	var te *rt.TaskError
	if !errors.As(errs[1], &te) || te.Task != "P(4)" {
		t.Errorf("rank 1: %v, want a TaskError naming P(4)", errs[1])
	}
	if !errors.Is(errs[0], remote.ErrRemoteFailure) || !strings.Contains(errs[0].Error(), "rank 1") {
		t.Errorf("rank 0: %v, want ErrRemoteFailure naming rank 1", errs[0])
	}
}

// TestRanksPeerLost: rank 1 killed while rank 0 waits for its data ends rank 0's Wait (and
// rank 1's) with ce.ErrPeerLost within a second.
func TestRanksPeerLost(t *testing.T) {
	errs, took, _ := rankFaultRun(t, false, true)
	for r, err := range errs {
		if !errors.Is(err, ce.ErrPeerLost) {
			t.Errorf("rank %d: Wait = %v, want ce.ErrPeerLost", r, err)
		}
		if took[r] > time.Second {
			t.Errorf("rank %d: Wait returned %v after the loss, want within 1s", r, took[r])
		}
	}
}

// TestRanksMisuse: a graph on several ranks without Distributed, On outside the job, a body
// inserting across ranks and a datum that cannot travel are named errors.
func TestRanksMisuse(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	var problems []string
	check := func(r int, what string, err, want error) {
		if !errors.Is(err, want) {
			mu.Lock()
			problems = append(problems, fmt.Sprintf("rank %d: %s: %v, want %v", r, what, err, want))
			mu.Unlock()
		}
	}
	err := remote.Run(ctx, ranksConfig(2), func(ctx context.Context, j *remote.Job) error {
		c, err := j.Context()
		if err != nil {
			return err
		}
		_, err = dynamic.New(c)
		check(j.Rank, "New without Distributed", err, dynamic.ErrNoNode)
		g, err := dynamic.New(c, dynamic.Distributed(j.Node))
		if err != nil {
			return err
		}
		if g.Rank() != j.Rank || g.Size() != 2 {
			check(j.Rank, "Rank and Size", fmt.Errorf("%d of %d", g.Rank(), g.Size()), nil)
		}
		x, err := dynamic.Register(g, "x", make([]float64, 2))
		if err != nil {
			return err
		}
		check(j.Rank, "On(2)", g.Insert("T", nop, dynamic.Read(x), dynamic.On(2)), dynamic.ErrRank)
		m, err := dynamic.Register(g, "m", map[int]int{})
		if err != nil {
			return err
		}
		check(j.Rank, "a map read on rank 1", g.Insert("T", nop, dynamic.Read(m), dynamic.On(1)), remote.ErrUnsupportedType)
		gpuBody := dynamic.GPU(func(*dynamic.GPUTask, *gpu.Stream) gpu.Result { return gpu.Done })
		check(j.Rank, "a GPU body", g.Insert("T", nop, dynamic.ReadWrite(x), gpuBody), dynamic.ErrGPUAcrossRanks)
		var nested error
		if err := g.Insert("PARENT", func(t *dynamic.Task) error {
			nested = t.Insert("CHILD", nop, dynamic.Read(x))
			return nil
		}, dynamic.Read(x), dynamic.On(0)); err != nil {
			return err
		}
		if err := g.Wait(ctx); err != nil {
			return err
		}
		if j.Rank == 0 {
			check(0, "Task.Insert", nested, dynamic.ErrNestedAcrossRanks)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Fatal(strings.Join(problems, "\n"))
	}
}

// TestRanksSendFirst: a version that another rank needs leaves as soon as it is written, ahead
// of local tasks of higher priority that it made ready too. Rank 0 has one worker: W writes x,
// then makes ready the send of x to rank 1, for R of priority 0, and K local readers of
// priority 100 that each take a while. R, on rank 1, must run while rank 0 is still busy
// with them; the ranks share the process, so R reads rank 0's count directly.
func TestRanksSendFirst(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const k = 20
	var done, seen atomic.Int32
	seen.Store(-1)
	cfg := ranksConfig(2)
	cfg.Workers = 2 // one per rank
	err := remote.Run(ctx, cfg, func(ctx context.Context, j *remote.Job) error {
		c, err := j.Context()
		if err != nil {
			return err
		}
		if c.Workers() != 1 {
			return fmt.Errorf("rank %d has %d workers, want 1", j.Rank, c.Workers())
		}
		g, err := dynamic.New(c, dynamic.Distributed(j.Node))
		if err != nil {
			return err
		}
		x, err := dynamic.Register(g, "x", make([]float64, 4))
		if err != nil {
			return err
		}
		// W waits until every task is inserted, so that its release makes them ready at once.
		inserted := make(chan struct{})
		if err := g.Insert("W", func(*dynamic.Task) error { <-inserted; return nil },
			dynamic.ReadWrite(x), dynamic.On(0)); err != nil {
			return err
		}
		if err := g.Insert("R", func(*dynamic.Task) error { seen.Store(done.Load()); return nil },
			dynamic.Read(x), dynamic.On(1), dynamic.Priority(0)); err != nil {
			return err
		}
		for range k {
			if err := g.Insert("L", func(*dynamic.Task) error {
				time.Sleep(10 * time.Millisecond)
				done.Add(1)
				return nil
			}, dynamic.Read(x), dynamic.On(0), dynamic.Priority(100)); err != nil {
				return err
			}
		}
		close(inserted)
		return g.Wait(ctx)
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := seen.Load(); n < 0 || n >= k {
		t.Fatalf("R ran on rank 1 after %d of rank 0's %d local readers, want fewer: the send waited behind them", n, k)
	}
}
