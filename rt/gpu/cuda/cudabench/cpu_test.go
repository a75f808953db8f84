package cudabench

import (
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
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
	t.Logf("%.2f µs per singleton task on the simulated device", float64(Median(rs).PerTask().Nanoseconds())/1e3)
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
	if got := compareLower(a, func() []float64 {
		l := make([]float64, 70*70)
		for j := range 70 {
			for i := j; i < 70; i++ {
				l[i+j*70] = SPDEntry(i, j, 70, 5)
			}
		}
		l[69+0*70] += 1
		return l
	}()); got != 1.0/70 {
		t.Fatalf("compareLower found %v, want 1/70", got)
	}
}
