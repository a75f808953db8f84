package main

import "testing"

func TestGather(t *testing.T) {
	for _, n := range []int{0, 5, 300} {
		got, err := gather(n, 2)
		if err != nil {
			t.Fatal(err)
		}
		// Work(k) writes k*blockSize+j for j < blockSize: the values 0 .. (n+1)*blockSize-1.
		m := (n + 1) * blockSize
		if want := float64(m * (m - 1) / 2); got != want {
			t.Errorf("n=%d: total %v, want %v", n, got, want)
		}
	}
}
