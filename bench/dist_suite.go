package main

import (
	"context"
	"fmt"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/jdf2go/jdf2go/examples/potrf/cholesky"
	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/ce"
	"github.com/jdf2go/jdf2go/rt/ce/cetest"
	"github.com/jdf2go/jdf2go/rt/remote"
	"github.com/jdf2go/jdf2go/rt/rttest"
)

// The distributed-PTG suite (rt/remote over in-process ranks).
//
// "activation": a CTL chain R(k) → R(k+1) whose tasks alternate between 2 ranks, so each
// hop is one remote activation; per hop, against the CE's 8-byte AM half round trip on the
// direct path measured in the same run (goal: ≤ 2×).
// "tile 512": the same chain passing a 512×512 tile (2 MiB, pulled with a Get) at each hop,
// against a 2 MiB Put half round trip of the CE (goal: ≥ 80 % of its bandwidth, ratio ≤ 1.25).
// The rows count kB, so their rate/s column reads as GB/s.
// "bcast 16 ranks": 16 in-process ranks, 8 broadcasts of a 512×512 tile from rank 0 to a
// reader on each of the 15 others, star against binomial; the note gives the most copies
// one rank sent per datum, checked against the model (star: 15 from the root; binomial:
// ⌈log2 16⌉ = 4).
// "potrf": N=2048, NB=256 on 2 ranks × 1 worker against 1 rank × 2 workers (goal ≥ 0.85×
// the speed, ratio ≤ 1.18).
func init() {
	register(Suite{Name: "dist", Applicable: func() (bool, string) { return true, "" }, Run: runDist})
}

func runDist(cfg *Config) ([]Row, error) {
	hops, tiles, potrfN := 4000, 200, 2048
	if cfg.Quick {
		hops, tiles, potrfN = 400, 20, 512
	}
	var rows []Row
	add := func(workload, variant string, workers int, per float64, unit string, s Stats, note string, base ...string) {
		rows = append(rows, Row{Suite: "dist", Workload: workload, Workers: workers, Variant: variant,
			Per: per, Unit: unit, Stats: s, Baselines: base, Note: note})
	}
	// CE baselines.
	ceHalfRT := func(size int, put bool, n int) (Stats, error) {
		w := ce.NewWorld(2)
		es := w.Engines(ce.Logger(cetest.Quiet))
		pps := make([]*cetest.PingPong, 2)
		for i, e := range es {
			var err error
			if pps[i], err = cetest.NewPingPong(e, ce.FirstUserTag, 8); err != nil {
				return Stats{}, err
			}
			if err := e.Start(context.Background()); err != nil {
				return Stats{}, err
			}
		}
		defer ce.CloseAll(context.Background(), es...)
		return measurePingPong(cfg, pps, cetest.Direct, size, n, put)
	}
	s, err := ceHalfRT(8, false, hops/2)
	if err != nil {
		return rows, fmt.Errorf("ce pingpong: %w", err)
	}
	add("activation", "ce 8B AM", 2, float64(hops), "ns/hop", s, "half round trip, direct")
	s, err = cfg.Measure(func() (time.Duration, error) { return chainRun(2, hops, 0, nil) })
	if err != nil {
		return rows, fmt.Errorf("activation chain: %w", err)
	}
	add("activation", "CTL chain", 2, float64(hops), "ns/hop", s, "2 ranks x 1 worker", "ce 8B AM")

	const tileBytes = 512 * 512 * 8
	s, err = ceHalfRT(tileBytes, true, tiles/2)
	if err != nil {
		return rows, fmt.Errorf("ce put: %w", err)
	}
	add("tile 512", "ce 2MiB Put", 2, float64(tiles)*tileBytes/1e3, "ns/kB", s, "half round trip, direct")
	s, err = cfg.Measure(func() (time.Duration, error) { return chainRun(2, tiles, 512*512, nil) })
	if err != nil {
		return rows, fmt.Errorf("tile chain: %w", err)
	}
	add("tile 512", "tile chain", 2, float64(tiles)*tileBytes/1e3, "ns/kB", s, "one Get per hop", "ce 2MiB Put")

	for _, tree := range []remote.Tree{remote.Star, remote.Binomial} {
		var most int64
		s, err = cfg.Measure(func() (time.Duration, error) {
			d, m, err := bcastRun(16, 8, tree)
			most = m
			return d, err
		})
		if err != nil {
			return rows, fmt.Errorf("broadcast %v: %w", tree, err)
		}
		model := int64(15)
		if tree == remote.Binomial {
			model = int64(bits.Len(15)) // ⌈log2 16⌉
		}
		if most > model {
			return rows, fmt.Errorf("broadcast %v: a rank sent %d copies of one tile, the model allows %d", tree, most, model)
		}
		add("bcast 16 ranks", tree.String(), 16, 8, "ns/bcast", s,
			fmt.Sprintf("at most %d copies per rank per tile (model %d)", most, model), "star")
	}

	impl, err := blas.Select("auto")
	if err != nil {
		return rows, err
	}
	for _, v := range []struct {
		name           string
		ranks, workers int
	}{{"1 rank x 2 workers", 1, 2}, {"2 ranks x 1 worker", 2, 2}} {
		s, err = cfg.Measure(func() (time.Duration, error) { return potrfRun(v.ranks, v.workers, potrfN, 256, impl) })
		if err != nil {
			return rows, fmt.Errorf("potrf %s: %w", v.name, err)
		}
		add(fmt.Sprintf("potrf N=%d NB=256", potrfN), v.name, 2, 1, "ns/run", s, "", "1 rank x 2 workers")
	}
	return rows, nil
}

// timed runs body on every rank of an in-process job after a barrier and returns the time
// rank 0 measured until a barrier after body.
func timed(ranks, workers int, opts []remote.Option, body func(ctx context.Context, j *remote.Job) error) (time.Duration, error) {
	var el time.Duration
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	err := remote.Run(ctx, remote.Config{Ranks: ranks, Workers: workers, Remote: opts, CE: []ce.Option{ce.Logger(cetest.Quiet)}},
		func(ctx context.Context, j *remote.Job) error {
			if _, err := j.Context(); err != nil {
				return err
			}
			if err := j.Node.Barrier(ctx); err != nil {
				return err
			}
			start := time.Now()
			if err := body(ctx, j); err != nil {
				return err
			}
			if err := j.Node.Barrier(ctx); err != nil {
				return err
			}
			if j.Rank == 0 {
				el = time.Since(start)
			}
			return nil
		})
	return el, err
}

// chainRun times a chain of n hops over ranks ranks.
func chainRun(ranks, n, elems int, opts []remote.Option) (time.Duration, error) {
	return timed(ranks, ranks, opts, func(ctx context.Context, j *remote.Job) error {
		v, err := rt.NewVector(n, 1, j.Size, j.Rank)
		if err != nil {
			return err
		}
		tp := rttest.Chain(n, elems, v)
		if err := j.Add(tp); err != nil {
			return err
		}
		return tp.Wait(ctx)
	})
}

// The broadcast: ROOT(b) on rank 0 makes a tile that READ(b, r), r = 1 .. ranks-1, on rank
// r read.
type bcastProg struct {
	n, ranks int
	v        *rt.Vector
	got      *atomic.Int64
}

var bcastRoot, bcastRead rt.TaskClass

func init() {
	g := func(tp *rt.Taskpool) *bcastProg { return tp.Globals().(*bcastProg) }
	bcastRoot = rt.TaskClass{Name: "ROOT", ID: 0, Locals: []string{"b"}, Params: []int{0},
		Flows: []rt.Flow{{Name: "T", Access: rt.Write}},
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			for b := 0; b < g(tp).n; b++ {
				l[0] = b
				if !yield(l) {
					return
				}
			}
		},
		Complete: func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < g(tp).n },
		Affinity: func(tp *rt.Taskpool, l *rt.Locals) (rt.Collection, rt.Index) { return g(tp).v, rt.Ix(0) },
		Prepare: func(t *rt.Task) error {
			t.SetFlow(0, rt.NewData(0, make([]float64, 512*512)).Host())
			return nil
		},
		Successors: func(tp *rt.Taskpool, l *rt.Locals, f rt.FlowMask, e *rt.Edges) {
			for r := 1; r < g(tp).ranks; r++ {
				e.L[0], e.L[1] = l[0], r
				e.Task(0, 0, &bcastRead, 0)
			}
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(t *rt.Task) error { return nil }}},
	}
	bcastRead = rt.TaskClass{Name: "READ", ID: 1, Locals: []string{"b", "r"}, Params: []int{0, 1},
		Flows: []rt.Flow{{Name: "T", Access: rt.Read}},
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			for b := 0; b < g(tp).n; b++ {
				for r := 1; r < g(tp).ranks; r++ {
					l[0], l[1] = b, r
					if !yield(l) {
						return
					}
				}
			}
		},
		Complete: func(tp *rt.Taskpool, l *rt.Locals) bool {
			return l[0] >= 0 && l[0] < g(tp).n && l[1] >= 1 && l[1] < g(tp).ranks
		},
		Goal:     func(tp *rt.Taskpool, l *rt.Locals) uint32 { return 1 },
		Affinity: func(tp *rt.Taskpool, l *rt.Locals) (rt.Collection, rt.Index) { return g(tp).v, rt.Ix(l[1]) },
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(t *rt.Task) error {
			if len(t.Flow(0).Float64s()) != 512*512 {
				return fmt.Errorf("READ got %d elements", len(t.Flow(0).Float64s()))
			}
			g(t.Taskpool()).got.Add(1)
			return nil
		}}},
	}
}

// bcastRun times n broadcasts over ranks ranks and returns the most data messages that one
// rank sent per broadcast.
func bcastRun(ranks, n int, tree remote.Tree) (time.Duration, int64, error) {
	var got atomic.Int64
	sent := make([]int64, ranks)
	d, err := timed(ranks, ranks, []remote.Option{remote.Broadcast(tree)}, func(ctx context.Context, j *remote.Job) error {
		v, err := rt.NewVector(ranks, 1, j.Size, j.Rank)
		if err != nil {
			return err
		}
		tp := rt.NewTaskpool("bcast", &bcastProg{n: n, ranks: ranks, v: v, got: &got}, &bcastRoot, &bcastRead)
		if err := j.Add(tp); err != nil {
			return err
		}
		err = tp.Wait(ctx)
		st := j.Node.Stats()
		sent[j.Rank] = st.Eager + st.Gets
		return err
	})
	if err == nil && got.Load() != int64(n*(ranks-1)) {
		err = fmt.Errorf("%d reads, want %d", got.Load(), n*(ranks-1))
	}
	var most int64
	for _, s := range sent {
		most = max(most, (s+int64(n)-1)/int64(n))
	}
	return d, most, err
}

// potrfRun times one factorisation of an n×n matrix on ranks in-process ranks (a ranks×1
// grid) sharing workers workers.
func potrfRun(ranks, workers, n, nb int, impl *blas.Impl) (time.Duration, error) {
	return timed(ranks, workers, nil, func(ctx context.Context, j *remote.Job) error {
		p, err := cholesky.NewProblemGrid(n, nb, 1, rt.Grid{P: j.Size, Q: 1}, j.Rank, nil)
		if err != nil {
			return err
		}
		return cholesky.FactorOn(ctx, j.Add, p.A, impl, false)
	})
}
