package dynamic_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/dynamic"
)

// Commute members never overlap, and the accesses around a group wait for all of it.
func TestCommuteExclusive(t *testing.T) {
	c, err := rt.New(rt.Workers(2))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	g, err := dynamic.New(c)
	if err != nil {
		t.Fatal(err)
	}
	sum := new(int64)
	other := new(int64)
	d, _ := dynamic.Register(g, "sum", sum)
	o, _ := dynamic.Register(g, "other", other)
	var inside, overlaps atomic.Int32
	const n = 2000
	for i := range n {
		args := []dynamic.Arg{dynamic.Commute(d)}
		if i%3 == 0 {
			args = append(args, dynamic.Commute(o))
		}
		if err := g.Insert("ADD", func(*dynamic.Task) error {
			if inside.Add(1) > 1 {
				overlaps.Add(1)
			}
			*sum += int64(i)
			if i%3 == 0 {
				*other += 1
			}
			inside.Add(-1)
			return nil
		}, args...); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if overlaps.Load() != 0 {
		t.Errorf("%d overlapping commute bodies", overlaps.Load())
	}
	if want := int64(n * (n - 1) / 2); *sum != want {
		t.Errorf("sum %d, want %d", *sum, want)
	}
}
