package main

import "testing"

func TestReduce(t *testing.T) {
	for _, n := range []int{1, 2, 5, 8, 1000} {
		sum, tasks, err := reduce(n, 2)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		want := float64(n * (n + 1) / 2)
		for j, got := range sum {
			if got != want {
				t.Errorf("n=%d: sum[%d] = %v, want %v", n, j, got, want)
			}
		}
		// A tree over n leaves has ceil(n/2^l) nodes on level l.
		var nodes int64
		for w := n; ; w = (w + 1) / 2 {
			nodes += int64(w)
			if w == 1 {
				break
			}
		}
		if tasks != nodes {
			t.Errorf("n=%d: %d tasks, want %d", n, tasks, nodes)
		}
	}
}
