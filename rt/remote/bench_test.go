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
