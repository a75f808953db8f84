package cudabench

import (
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/driver"
	"github.com/jdf2go/jdf2go/rt/gpu/gputest"
	"github.com/jdf2go/jdf2go/rt/gpu/sim"
)

// The manager workloads run on the simulated device here, with small
// sizes: the figures come from the GPU, the logic is checked everywhere.

func TestEmptyKernelsOnSim(t *testing.T) {
	rs, err := EmptyKernels(sim.New(), 2000, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Tasks != 2000 || rs[0].Rings != 2000 || rs[0].Elapsed <= 0 {
		t.Fatalf("results %+v", rs)
	}
	t.Logf("%.2f µs per singleton task on the simulated device", float64(PerTask(Median(rs)).Nanoseconds())/1e3)
}

func TestGemmTasksOnSim(t *testing.T) {
	g, err := NewGemmDevice(sim.New(sim.WithLatency(20*time.Microsecond)), 8, 600, 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	single, err := g.Run(false, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	batched, err := g.Run(true, 64, 2)
	if err != nil {
		t.Fatal(err)
	}
	if single[0].Rings != 600 || Median(batched).MeanBatch() <= 1 {
		t.Fatalf("singletons: %d rings; batched: mean batch %.1f", single[0].Rings, Median(batched).MeanBatch())
	}
	worst, err := g.Check(6)
	if err != nil {
		t.Fatal(err)
	}
	if worst > 1e-14 {
		t.Fatalf("products differ from the CPU by %g", worst)
	}
	// 5 runs of 600 tasks (warm-ups included), their 5 gate tasks, 6 checks.
	if st := g.Device().Stats(); st.Reservations == 0 || st.Executed != 600*5+5+6 {
		t.Fatalf("device stats %+v", st)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("singletons %v, batched %v (mean batch %.1f)", single[0].Elapsed, Median(batched).Elapsed, Median(batched).MeanBatch())
}

func TestSPDMatrix(t *testing.T) {
	a, err := rt.NewTiledMatrix(70, 70, 32, 32, 1, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	fillLower(a, 5)
	dense := make([]float64, 70*70)
	a.GatherToDense(dense, 70)
	for j := range 70 {
		for i := range 70 {
			want := SPDEntry(i, j, 70, 5)
			if i >= j/32*32 && i/32 >= j/32 && dense[i+j*70] != want {
				t.Fatalf("(%d, %d) = %v, want %v", i, j, dense[i+j*70], want)
			}
			if SPDEntry(j, i, 70, 5) != want || (i == j && want != 70) || (i != j && (want < -0.5 || want >= 0.5)) {
				t.Fatalf("entry (%d, %d) = %v breaks symmetry or range", i, j, want)
			}
		}
	}
	l := make([]float64, 70*70)
	for j := range 70 {
		for i := j; i < 70; i++ {
			l[i+j*70] = SPDEntry(i, j, 70, 5)
		}
	}
	l[69+0*70] += 1
	if got := gputest.FactorDiff(a, l, 70); got != 1.0/70 {
		t.Fatalf("FactorDiff found %v, want 1/70", got)
	}
}

// hostCost models a device whose calls cost the host more time than the
// device needs to run them, as cuBLAS does on tiny matrices: every BLAS
// call and launch spins for cost on the calling goroutine.
type hostCost struct {
	driver.Backend
	cost time.Duration
}

func (h hostCost) NewStream(name string, events int) (driver.Stream, error) {
	s, err := h.Backend.NewStream(name, events)
	if err != nil {
		return nil, err
	}
	return costStream{s, h.cost}, nil
}

type costStream struct {
	driver.Stream
	cost time.Duration
}

func spin(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

func (c costStream) Dgemm(ta, tb blas.Transpose, m, n, k int, alpha float64, a driver.Ptr, lda int, b driver.Ptr, ldb int, beta float64, cc driver.Ptr, ldc int) error {
	spin(c.cost)
	return c.Stream.Dgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, cc, ldc)
}

func (c costStream) DgemmBatched(ta, tb blas.Transpose, m, n, k int, alpha float64, a []driver.Ptr, lda int, b []driver.Ptr, ldb int, beta float64, cc []driver.Ptr, ldc int) error {
	spin(c.cost)
	return c.Stream.DgemmBatched(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, cc, ldc)
}

// With launches dearer on the host than on the device, a manager that takes
// one submission per iteration (WithPendingDrain(1), PaRSEC's loop) hardly
// batches: a submission reaches the compute FIFO only after the previous one
// was launched, so nothing waits there to be collected (mean ring of 1). Taking what waits in
// device.pending at once (the default) makes rings as large as a drain. The times are logged, not
// checked: speed is the benchmarks' business.
func TestBatchingWhenLaunchesCostTheHost(t *testing.T) {
	const tasks = 4000
	rings := map[int]float64{}
	for _, drain := range []int{1, gpu.DefaultPendingDrain} {
		g, err := NewGemmDevice(hostCost{sim.New(), 40 * time.Microsecond}, 4, tasks, 4, nil, gpu.WithPendingDrain(drain))
		if err != nil {
			t.Fatal(err)
		}
		single, err := g.Run(false, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		batched, err := g.Run(true, 4096, 1)
		if err != nil {
			t.Fatal(err)
		}
		worst, err := g.Check(4)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		if worst > 1e-14 {
			t.Fatalf("drain %d: error %g", drain, worst)
		}
		s, b := Median(single), Median(batched)
		rings[drain] = b.MeanBatch()
		t.Logf("drain %d: per task: singletons %v; batched %v (mean ring %.1f)", drain, PerTask(s), PerTask(b), b.MeanBatch())
	}
	if r := rings[gpu.DefaultPendingDrain]; r < float64(gpu.DefaultPendingDrain)/2 {
		t.Fatalf("mean ring %.1f with the default drain, want at least %d", r, gpu.DefaultPendingDrain/2)
	}
}
