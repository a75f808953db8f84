// Command quicksort sorts a slice with a task-parallel quicksort written as a dynamic task
// graph (rt/dynamic): each task partitions its range and inserts one task per half, so the
// number of tasks depends on the input. Ranges under -cutoff are sorted in place.
//
//	go run ./examples/quicksort -n 10000000
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/dynamic"
)

func main() {
	n := flag.Int("n", 1<<22, "elements to sort")
	cutoff := flag.Int("cutoff", 4096, "ranges shorter than this are sorted by one task")
	workers := flag.Int("workers", 0, "workers (0: JDF2GO_WORKERS, else every core)")
	flag.Parse()
	var opts []rt.Option
	if *workers > 0 {
		opts = append(opts, rt.Workers(*workers))
	}
	c, err := rt.New(opts...)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	r := rand.New(rand.NewPCG(1, 2))
	a := make([]int, *n)
	for i := range a {
		a[i] = r.IntN(1 << 30)
	}
	start := time.Now()
	tasks, err := Sort(c, a, *cutoff)
	if err != nil {
		log.Fatal(err)
	}
	el := time.Since(start)
	fmt.Printf("sorted %d elements in %v with %d tasks on %d workers; sorted: %v\n",
		*n, el.Round(time.Millisecond), tasks, c.Workers(), slices.IsSorted(a))
}

// Sort sorts a on c and returns the number of tasks it ran. Each task owns a disjoint range
// of a, so the tasks declare no data: the graph orders nothing, and the parallelism is that
// of the recursion.
func Sort(c *rt.Context, a []int, cutoff int) (int64, error) {
	g, err := dynamic.New(c, dynamic.Name("quicksort"))
	if err != nil {
		return 0, err
	}
	cutoff = max(cutoff, 2)
	var sortRange func(lo, hi int) func(*dynamic.Task) error
	sortRange = func(lo, hi int) func(*dynamic.Task) error {
		return func(t *dynamic.Task) error {
			if hi-lo < cutoff {
				slices.Sort(a[lo:hi])
				return nil
			}
			p := partition(a[lo:hi]) + lo
			if err := t.Insert("SORT", sortRange(lo, p)); err != nil {
				return err
			}
			return t.Insert("SORT", sortRange(p+1, hi))
		}
	}
	if err := g.Insert("SORT", sortRange(0, len(a))); err != nil {
		return 0, err
	}
	if err := g.Wait(context.Background()); err != nil {
		return 0, err
	}
	return g.Taskpool().Total(), nil
}

// partition puts the median of three at its place in s and returns its index.
func partition(s []int) int {
	m, last := len(s)/2, len(s)-1
	if s[m] < s[0] {
		s[m], s[0] = s[0], s[m]
	}
	if s[last] < s[0] {
		s[last], s[0] = s[0], s[last]
	}
	if s[last] < s[m] {
		s[last], s[m] = s[m], s[last]
	}
	s[m], s[last] = s[last], s[m]
	pivot, i := s[last], 0
	for j := range last {
		if s[j] < pivot {
			s[i], s[j] = s[j], s[i]
			i++
		}
	}
	s[i], s[last] = s[last], s[i]
	return i
}
