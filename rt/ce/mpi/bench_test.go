//go:build mpi

package mpi_test

import (
	"context"
	"flag"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt/ce"
	"github.com/jdf2go/jdf2go/rt/ce/cetest"
)

// The communication benchmarks of docs/runtime.md, "Benchmarks", in one run: the raw binding
// against the Engine's direct path and its shifted path (a device-manager Caller), for 8-byte
// latency and 4 MiB bandwidth, between ranks 0 and 1. Run with a fixed iteration count, so that
// every rank agrees on b.N, and with -run '^$', so that the tests do not close the Engine first:
//
//	go test -tags mpi -run '^$' -bench . -benchtime 2000x \
//	    -exec "mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2" ./rt/ce/mpi/
//
// Both ranks print; to read rank 0 alone:
//
//	go test -tags mpi -c -o ce.test ./rt/ce/mpi
//	mpirun --allow-run-as-root --oversubscribe --bind-to none --output-filename out -np 2 \
//	    ./ce.test -test.run '^$' -test.bench . -test.benchtime 5000x
//	cat out/1/rank.0/stdout
//
// raw is Transport.RawPingPong (the binding alone, one goroutine, Isend/Irecv/Test); the
// Engine paths are cetest.PingPong's (see cetest.Path). Rank 0 reports half a round trip
// (µs/half-rt) and, for 4 MiB, the bandwidth of one direction (GB/s). direct-worker and
// shifted need a spare core per rank to mean anything; shifted-inline is the shift
// mechanism's cost on any machine.

var (
	pp     *cetest.PingPong
	ppOnce sync.Once
	ppErr  error
)

func benchSetup(b *testing.B) {
	if v := flag.Lookup("test.benchtime").Value.String(); !strings.HasSuffix(v, "x") {
		b.Skip("MPI benchmarks need -benchtime=<N>x: every rank must run the same number of iterations")
	}
	if engine.Size() < 2 {
		b.Skip("needs at least 2 ranks")
	}
	if transport.Level() != ce.LevelMultiple {
		b.Skip("the raw reference needs MPI_THREAD_MULTIPLE")
	}
	ppOnce.Do(func() { pp, ppErr = cetest.NewPingPong(engine, ce.MaxTags-8, 64) })
	if ppErr != nil {
		b.Fatal(ppErr)
	}
}

// report prints rank 0's figures; the other ranks' lines carry only ns/op.
func report(b *testing.B, el time.Duration, size int) {
	if engine.Rank() != 0 {
		return
	}
	half := el.Seconds() / float64(2*b.N)
	b.ReportMetric(half*1e6, "µs/half-rt")
	if size >= 1<<20 {
		b.ReportMetric(float64(size)/half/1e9, "GB/s")
	}
}

func benchRaw(b *testing.B, size int) {
	benchSetup(b)
	env.Sync(b)
	var el time.Duration
	if engine.Rank() < 2 {
		var err error
		if el, err = transport.RawPingPong(engine.Rank()^1, size, b.N); err != nil {
			b.Fatal(err)
		}
	}
	env.Sync(b)
	report(b, el, size)
}

func benchPath(b *testing.B, path cetest.Path, size int, put bool) {
	benchSetup(b)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	el, err := pp.Run(ctx, path, size, b.N, put)
	if err != nil {
		b.Fatal(err)
	}
	report(b, el, size)
}

func BenchmarkLatency8B(b *testing.B) {
	b.Run("raw", func(b *testing.B) { benchRaw(b, 8) })
	for _, p := range []cetest.Path{cetest.Direct, cetest.DirectWorker, cetest.ShiftedInline, cetest.Shifted} {
		b.Run(p.String(), func(b *testing.B) { benchPath(b, p, 8, false) })
	}
}

func BenchmarkBandwidth4MiB(b *testing.B) {
	const n = 4 << 20
	b.Run("raw", func(b *testing.B) { benchRaw(b, n) })
	for _, p := range []cetest.Path{cetest.Direct, cetest.ShiftedInline, cetest.Shifted} {
		b.Run(p.String(), func(b *testing.B) { benchPath(b, p, n, true) })
	}
}
