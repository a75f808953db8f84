package main

import "testing"

func TestBroadcast(t *testing.T) {
	for _, n := range []int{1, 7, 64} {
		sum, err := broadcast(n, 2)
		if err != nil {
			t.Fatal(err)
		}
		for j, got := range sum {
			// Reader i holds i*100 + (j+1); their sum over i = 1..n.
			want := float64(100*n*(n+1)/2 + n*(j+1))
			if got != want {
				t.Errorf("n=%d: sum[%d] = %v, want %v", n, j, got, want)
			}
		}
	}
}
