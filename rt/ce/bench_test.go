package ce_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt/ce"
	"github.com/jdf2go/jdf2go/rt/ce/cetest"
)

// In-process figures (docs/runtime.md, "Benchmarks"): the AM rate between two ranks of a World
// (goal: ≥ 1 M AMs/s), on the direct path (a worker, LevelMultiple) and the shifted path (a
// device manager), and the in-process half round trip.
//
//	go test -run '^$' -bench . ./rt/ce/

func BenchmarkWorldAMRate(b *testing.B) {
	for _, role := range []ce.Role{ce.RoleWorker, ce.RoleDeviceManager} {
		b.Run(map[ce.Role]string{ce.RoleWorker: "direct", ce.RoleDeviceManager: "shifted"}[role], func(b *testing.B) {
			var got atomic.Int64
			w := ce.NewWorld(2)
			// A budget of 16 Ki messages in flight keeps the queues short (cache-resident).
			es := w.Engines(ce.Logger(cetest.Quiet), ce.Budget(1<<20))
			for _, e := range es {
				e.RegisterTag(tagA, 8, func(*ce.Caller, ce.Rank, []byte) { got.Add(1) })
				if err := e.Start(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			defer ce.CloseAll(context.Background(), es...)
			c, _ := es[0].Attach(role, "sender")
			payload := []byte("12345678")
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				m, err := c.TryNewMsg(8)
				for err == ce.ErrNoBuffers {
					runtime.Gosched()
					m, err = c.TryNewMsg(8)
				}
				if err != nil {
					b.Fatal(err)
				}
				copy(m.Bytes(), payload)
				if err := c.SendAM(1, tagA, m, nil); err != nil {
					b.Fatal(err)
				}
			}
			for got.Load() < int64(b.N) {
				runtime.Gosched()
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "AMs/s")
		})
	}
}

func BenchmarkWorldPingPong(b *testing.B) {
	w := ce.NewWorld(2)
	es := w.Engines(ce.Logger(cetest.Quiet))
	pps := make([]*cetest.PingPong, 2)
	for i, e := range es {
		var err error
		if pps[i], err = cetest.NewPingPong(e, tagA, 64); err != nil {
			b.Fatal(err)
		}
		if err := e.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	defer ce.CloseAll(context.Background(), es...)
	for _, path := range []cetest.Path{cetest.Direct, cetest.ShiftedInline, cetest.Shifted} {
		b.Run(path.String(), func(b *testing.B) {
			var el [2]time.Duration
			var errs [2]error
			done := make(chan struct{})
			for i := range 2 {
				go func() {
					el[i], errs[i] = pps[i].Run(context.Background(), path, 8, b.N, false)
					done <- struct{}{}
				}()
			}
			<-done
			<-done
			if errs[0] != nil || errs[1] != nil {
				b.Fatal(errs)
			}
			b.ReportMetric(el[0].Seconds()/float64(2*b.N)*1e6, "µs/half-rt")
		})
	}
}
