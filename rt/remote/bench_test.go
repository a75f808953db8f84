package remote_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/remote"
)

// BenchmarkActivation: one op is one hop of a CTL-free data chain of 8-element blocks
// between 2 ranks (P(k) on rank k mod 2), so each hop is one remote activation.
func BenchmarkActivation(b *testing.B) {
	n := max(b.N, 2)
	err := remote.Run(context.Background(), remote.Config{Ranks: 2, Workers: 2}, func(ctx context.Context, j *remote.Job) error {
		v, err := rt.NewVector(n*8, 8, j.Size, j.Rank)
		if err != nil {
			return err
		}
		var seen atomic.Int64
		tp := rt.NewTaskpool("prog", &prog{n: n, j: 0, nb: 8, v: v, seen: &seen, failAt: -1}, &classP, &classC)
		if err := j.Node.Barrier(ctx); err != nil {
			return err
		}
		if j.Rank == 0 {
			b.ResetTimer()
		}
		if err := j.Add(tp); err != nil {
			return err
		}
		return tp.Wait(ctx)
	})
	if err != nil {
		b.Fatal(err)
	}
}

// hopProg is a chain H(k), k = 0 .. n-1, on rank k mod 2: H(k) → H(k+1) carries a value of
// elems float64 (0: a CTL flow), so every hop is one remote activation and, with data, one
// transfer. It is the dist suite's chain (bench/dist_suite.go), isolated here so that a CPU
// or allocation profile of `go test -bench Hop` shows the hop alone.
type hopProg struct {
	n, elems int
	v        *rt.Vector
}

var hopCTL, hopData rt.TaskClass

func hopClass(access rt.Access, self *rt.TaskClass) rt.TaskClass {
	g := func(tp *rt.Taskpool) *hopProg { return tp.Globals().(*hopProg) }
	return rt.TaskClass{Name: "H", Locals: []string{"k"}, Params: []int{0},
		Flows: []rt.Flow{{Name: "X", Access: access}},
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			for k := 0; k < g(tp).n; k++ {
				l[0] = k
				if !yield(l) {
					return
				}
			}
		},
		Complete: func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < g(tp).n },
		Goal:     func(tp *rt.Taskpool, l *rt.Locals) uint32 { return uint32(min(l[0], 1)) },
		Affinity: func(tp *rt.Taskpool, l *rt.Locals) (rt.Collection, rt.Index) { return g(tp).v, rt.Ix(l[0]) },
		Prepare: func(t *rt.Task) error {
			if access != rt.CTL && t.Locals()[0] == 0 {
				t.SetFlow(0, rt.NewData(0, make([]float64, g(t.Taskpool()).elems)).Host())
			}
			return nil
		},
		Successors: func(tp *rt.Taskpool, l *rt.Locals, f rt.FlowMask, e *rt.Edges) {
			if e.L[0] = l[0] + 1; e.L[0] < g(tp).n {
				e.Task(0, 0, self, 0)
			}
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(t *rt.Task) error { return nil }}},
	}
}

func init() {
	hopCTL = hopClass(rt.CTL, &hopCTL)
	hopData = hopClass(rt.RW, &hopData)
}

// benchHop runs b.N hops of the chain over 2 in-process ranks of one worker each.
func benchHop(b *testing.B, elems int) {
	n := max(b.N, 2)
	b.ReportAllocs()
	if elems > 0 {
		b.SetBytes(int64(elems) * 8)
	}
	err := remote.Run(context.Background(), remote.Config{Ranks: 2, Workers: 2}, func(ctx context.Context, j *remote.Job) error {
		v, err := rt.NewVector(n, 1, j.Size, j.Rank)
		if err != nil {
			return err
		}
		tc := &hopCTL
		if elems > 0 {
			tc = &hopData
		}
		tp := rt.NewTaskpool("hop", &hopProg{n: n, elems: elems, v: v}, tc)
		if _, err := j.Context(); err != nil {
			return err
		}
		if err := j.Node.Barrier(ctx); err != nil {
			return err
		}
		if j.Rank == 0 {
			b.ResetTimer()
		}
		if err := j.Add(tp); err != nil {
			return err
		}
		if err := tp.Wait(ctx); err != nil {
			return err
		}
		if err := j.Node.Barrier(ctx); err != nil {
			return err
		}
		if j.Rank == 0 {
			b.StopTimer()
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkHopCTL: one op is one hop of a CTL chain between 2 ranks.
func BenchmarkHopCTL(b *testing.B) { benchHop(b, 0) }

// BenchmarkHopTile: one op is one hop of a chain passing a 512×512 float64 tile (2 MiB,
// above the eager size: one Get per hop) between 2 ranks.
func BenchmarkHopTile(b *testing.B) { benchHop(b, 512*512) }
