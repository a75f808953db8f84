package remote_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/remote"
	"github.com/jdf2go/jdf2go/rt/rttest"
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
		tp := rttest.Chain(n, elems, v)
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
