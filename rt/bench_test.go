package rt_test

import (
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/rttest"
)

// benchShape runs a fresh taskpool of n tasks per iteration and reports ns/task.
func benchShape(b *testing.B, n int, build func() *rt.Taskpool, opts ...rt.Option) {
	c, err := rt.New(opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		tp := build()
		if err := c.Add(tp); err != nil {
			b.Fatal(err)
		}
		if err := tp.Wait(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/task")
}

func BenchmarkChain(b *testing.B) {
	benchShape(b, 100000, func() *rt.Taskpool { return rttest.Chains(1, 100000, nil) }, rt.Workers(2))
}

func BenchmarkTwoChains(b *testing.B) {
	benchShape(b, 100000, func() *rt.Taskpool { return rttest.Chains(2, 50000, nil) }, rt.Workers(2))
}

func BenchmarkGrid(b *testing.B) {
	benchShape(b, 256*256, func() *rt.Taskpool { return rttest.Grid(256, 256, nil) }, rt.Workers(2))
}

func BenchmarkIndependent(b *testing.B) {
	for _, w := range []int{1, 2} {
		b.Run(map[int]string{1: "1worker", 2: "2workers"}[w], func(b *testing.B) {
			benchShape(b, 100000, func() *rt.Taskpool { return rttest.Independent(100000, nil) }, rt.Workers(w))
		})
	}
}

func BenchmarkFanOutIn(b *testing.B) {
	benchShape(b, 100002, func() *rt.Taskpool { return rttest.FanOutIn(100000, nil) }, rt.Workers(2))
}

func BenchmarkSchedulers(b *testing.B) {
	for _, s := range schedulers {
		b.Run(s, func(b *testing.B) {
			benchShape(b, 128*128, func() *rt.Taskpool { return rttest.Grid(128, 128, nil) },
				rt.Workers(2), rt.Scheduler(s))
		})
	}
}

// BenchmarkCancelBesideBusy measures how long Cancel then Wait take on a small taskpool
// while a large one keeps every worker busy (its startup walk and its tasks). It reports
// the mean and the worst latency in ms; run it with a fixed count, e.g.
// go test -run '^$' -bench CancelBesideBusy -benchtime 20x ./rt
func BenchmarkCancelBesideBusy(b *testing.B) {
	for _, n := range []int{20_000_000, 100_000_000} {
		b.Run(fmt.Sprintf("%dM", n/1_000_000), func(b *testing.B) {
			c, err := rt.New(rt.Workers(2))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			busy := rttest.Independent(n, nil)
			if err := c.Add(busy); err != nil {
				b.Fatal(err)
			}
			defer busy.Cancel(errors.New("benchmark over"))
			time.Sleep(50 * time.Millisecond) // the busy taskpool is walking and running
			var total, worst time.Duration
			cancels := 0
			b.ResetTimer()
			for range b.N {
				tp := rttest.Independent(1000, nil)
				if err := c.Add(tp); err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				tp.Cancel(errors.New("cancelled by the benchmark"))
				if err := tp.Wait(b.Context()); err == nil {
					b.Fatal("a cancelled taskpool succeeded")
				}
				d := time.Since(start)
				total += d
				worst = max(worst, d)
				cancels++
				if busy.Err() != nil || busy.Remaining() == 0 {
					// Later cancels would not measure anything beside a busy taskpool.
					b.Logf("the busy taskpool ended during cancel %d (%v, %v)", cancels, busy.Err(), d)
					break
				}
				time.Sleep(2 * time.Millisecond)
			}
			b.ReportMetric(float64(total.Microseconds())/1000/float64(cancels), "ms/cancel")
			b.ReportMetric(float64(worst.Microseconds())/1000, "max-ms")
		})
	}
}

// BenchmarkDashboard: the dashboard's cost per task on empty bodies (the worst case: no
// body time to hide it), off and on.
func BenchmarkDashboard(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "off", true: "on"}[on], func(b *testing.B) {
			opts := []rt.Option{rt.Workers(1)}
			if on {
				opts = append(opts, rt.Dashboard("localhost:0"), rt.Logger(quietLog))
			}
			benchShape(b, 100000, func() *rt.Taskpool { return rttest.Chains(2, 50000, nil) }, opts...)
		})
	}
}

// quietLog discards diagnostics (the dashboard's address).
var quietLog = slog.New(slog.DiscardHandler)

// BenchmarkIndependentBatched: BenchmarkIndependent whose body is batched (rings of at most
// 8 or 64 tasks), and the same with batching off.
func BenchmarkIndependentBatched(b *testing.B) {
	for _, w := range []int{1, 2} {
		for _, max := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("%dworkers/batch_max=%d", w, max), func(b *testing.B) {
				benchShape(b, 100000, func() *rt.Taskpool { return rttest.IndependentBatched(100000, max, nil) },
					rt.Workers(w), rt.Batching(max > 1))
			})
		}
	}
}
