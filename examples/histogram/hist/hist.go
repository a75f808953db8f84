// Package hist runs examples/histogram.jdf: NT tiny tasks each count a block of samples into
// one shared histogram, in rings of up to batch_max tasks (a batched CPU body). The command
// examples/histogram and the benchmark driver's batch suite run it.
package hist

//go:generate go run github.com/jdf2go/jdf2go/cmd/jdf2go gen -o histogram_jdf.go ../../histogram.jdf

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jdf2go/jdf2go/rt"
)

// Samples returns nt blocks of nb pseudo-random samples in [0, 1), the same on every call.
func Samples(nt, nb int) (*rt.Vector, error) {
	if nt < 1 || nb < 1 {
		return nil, fmt.Errorf("want at least one task and one sample per task, got %d tasks of %d samples", nt, nb)
	}
	v, err := rt.NewVector(nt*nb, nb, 1, 0)
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < nt; i++ {
		for j := range v.Block(i) {
			v.Block(i)[j] = r.Float64()
		}
	}
	return v, nil
}

// Run counts the samples of v (one task per block) on ctx with batch_max batch, and returns
// the histogram and the time from Add to the end of Wait.
func Run(ctx *rt.Context, v *rt.Vector, batch int) (*Hist, time.Duration, error) {
	h := &Hist{}
	tp, err := NewHistogram(v, h, batch)
	if err != nil {
		return nil, 0, err
	}
	start := time.Now()
	if err := ctx.Add(tp.Taskpool); err != nil {
		return nil, 0, err
	}
	if err := tp.Wait(context.Background()); err != nil {
		return nil, 0, err
	}
	return h, time.Since(start), nil
}

// Check compares h with a sequential count of v's samples.
func Check(h *Hist, v *rt.Vector) error {
	var want [Bins]int64
	for i := 0; i < v.NT; i++ {
		count(&want, v.Block(i))
	}
	for b, n := range want {
		if h.Counts[b] != n {
			return fmt.Errorf("bin %d holds %d samples, want %d", b, h.Counts[b], n)
		}
	}
	return nil
}
