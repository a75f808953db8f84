package main

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/jdf2go/jdf2go/rt"
)

// The sorted result equals slices.Sort's, on 1 and 2 workers, and the task count is the one
// the recursion implies for this input: every range of at least cutoff elements makes two.
func TestSortExact(t *testing.T) {
	for _, workers := range []int{1, 2} {
		c, err := rt.New(rt.Workers(workers))
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(7, uint64(workers)))
		a := make([]int, 200_000)
		for i := range a {
			a[i] = r.IntN(1000) // many equal keys
		}
		want := slices.Clone(a)
		slices.Sort(want)
		// The task count, from a sequential run of the same recursion.
		b := slices.Clone(a)
		var count func(lo, hi int) int64
		count = func(lo, hi int) int64 {
			if hi-lo < 64 {
				return 1
			}
			p := partition(b[lo:hi]) + lo
			return 1 + count(lo, p) + count(p+1, hi)
		}
		wantTasks := count(0, len(b))
		tasks, err := Sort(c, a, 64)
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a, want) {
			t.Fatalf("%d workers: result differs from slices.Sort", workers)
		}
		if tasks != wantTasks {
			t.Errorf("%d workers: %d tasks, want %d", workers, tasks, wantTasks)
		}
	}
}
