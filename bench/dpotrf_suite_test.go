package main

import (
	"slices"
	"testing"
	"time"
)

// TestInterleaved: variants alternate run by run after one warm-up each, the warm-ups are
// left out, and each variant's stats come from its own runs.
func TestInterleaved(t *testing.T) {
	var calls [][2]int
	stats, err := interleaved(3, 2, func(v, run int) (time.Duration, error) {
		calls = append(calls, [2]int{v, run})
		if run == 0 {
			return time.Hour, nil // a warm-up: must not count
		}
		return time.Duration(10*(v+1)+run) * time.Millisecond, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}, {1, 2}, {0, 3}, {1, 3}}
	if !slices.Equal(calls, want) {
		t.Errorf("calls %v, want %v", calls, want)
	}
	if s := stats[0]; s.Median != 12*time.Millisecond || s.Min != 11*time.Millisecond || s.Max != 13*time.Millisecond {
		t.Errorf("variant 0: %+v", s)
	}
	if s := stats[1]; s.Median != 22*time.Millisecond || s.Min != 21*time.Millisecond || s.Max != 23*time.Millisecond {
		t.Errorf("variant 1: %+v", s)
	}
}
