package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/jdf2go/jdf2go/bench/internal/cudabench"
	"github.com/jdf2go/jdf2go/rt/gpu/cuda"
)

// The cuda suite (docs/runtime.md, "Benchmarks") on CUDA device 0, with the workloads of
// bench/internal/cudabench; it is skipped where no CUDA device exists. Rows:
//
//	empty-kernel: 100 k singleton tasks (-quick: 10 k) through the GPU manager, each launching
//	    an empty kernel, queued before the timed part (the manager's throughput), against
//	    launch+event: a loop of launch, event record and polling from Go. Goal ≤ 3 µs/task.
//	gemm-nb32, -nb64, -nb128: 100 k (-quick: 10 k) independent C_i = A_j·B_j tasks on
//	    resident tiles (64 distinct A/B pairs, C kept on the device), batch=true (rings of up
//	    to 4096 tasks, one batched cuBLAS call each, bodies waiting for 512 while more are
//	    coming) against batch=false (one cublasDgemm per task), and cuBLAS strided-batched
//	    over the same number of products (scaled).
//	    Goals: batch ≥ 10× no-batch in tasks/s (ratio ≤ 0.1), ≥ 1 M tasks/s at nb=32.
//	gemm-nb8192: 8 GEMM tasks (-quick: nb 4096) through the manager against the same
//	    number of cublasDgemm calls of that size. Goal: ratio ≤ 1/0.85.
//	potrf-N-NB: the gputest tiled Cholesky through rt (4 workers, tiles in pinned memory)
//	    on resident data and from host memory, against cusolverDnDpotrf on resident data and
//	    cuSOLVER plus the copies from and back to pinned memory, at N=32768 NB=2048 and
//	    N=16384 NB=1024 (-quick: N=8192 NB=1024). Goals: resident ratio ≤ 1.25 to cusolver,
//	    from-host ratio ≤ 1/1.2 to cusolver+copies.
//
// The GEMM and Cholesky rows are in ns per kflop (the rate/s column reads in G flop/s).
func init() {
	register(Suite{Name: "cuda", Applicable: haveCUDA, Run: runCUDA})
}

func haveCUDA() (bool, string) {
	n, err := cuda.Count()
	switch {
	case err != nil:
		return false, err.Error()
	case n == 0:
		return false, "no CUDA device"
	}
	return true, ""
}

// statsOf summarizes durations.
func statsOf(ds []time.Duration) Stats {
	s := slices.Clone(ds)
	slices.Sort(s)
	return Stats{Median: s[len(s)/2], Min: s[0], Max: s[len(s)-1]}
}

func elapsed(rs []cudabench.Result) []time.Duration {
	out := make([]time.Duration, len(rs))
	for i, r := range rs {
		out[i] = r.Elapsed
	}
	return out
}

// scaled multiplies durations by f.
func scaled(ds []time.Duration, f float64) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = time.Duration(float64(d) * f)
	}
	return out
}

func runCUDA(cfg *Config) ([]Row, error) {
	tasks, large := 100_000, 8192
	potrfs := [][2]int{{32768, 2048}, {16384, 1024}}
	if cfg.Quick {
		tasks, large, potrfs = 10_000, 4096, [][2]int{{8192, 1024}}
	}
	pool, err := cuda.NewPinnedPool(0)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	var rows []Row
	add := func(workload, variant string, per float64, unit string, ds []time.Duration, note string, base ...string) {
		rows = append(rows, Row{Suite: "cuda", Workload: workload, Workers: 1, Variant: variant, Per: per, Unit: unit,
			Stats: statsOf(ds), Baselines: base, Note: note})
	}

	be, err := cuda.OpenDevice(0)
	if err != nil {
		return rows, err
	}
	rs, err := cudabench.EmptyKernels(be, tasks, cfg.Runs)
	if err != nil {
		return rows, fmt.Errorf("empty-kernel: %w", err)
	}
	raw, err := cudabench.LaunchRoundTrip(0, 20_000)
	if err != nil {
		return rows, err
	}
	add("empty-kernel", "jdf2go", float64(tasks), "ns/task", elapsed(rs), "", "launch+event")
	add("empty-kernel", "launch+event", float64(tasks), "ns/task", []time.Duration{raw * time.Duration(tasks)}, "")

	for _, nb := range []int{32, 64, 128} {
		w := fmt.Sprintf("gemm-nb%d", nb)
		be, err := cuda.OpenDevice(0)
		if err != nil {
			return rows, err
		}
		g, err := cudabench.NewGemmDevice(be, nb, tasks, 64, pool.Bytes)
		if err != nil {
			return rows, err
		}
		single, err := g.Run(false, 0, cfg.Runs)
		if err != nil {
			return rows, fmt.Errorf("%s: %w", w, err)
		}
		batched, err := g.Run(true, 4096, cfg.Runs)
		if err != nil {
			return rows, fmt.Errorf("%s: %w", w, err)
		}
		if err := g.Close(); err != nil {
			return rows, err
		}
		count := min(tasks, (8<<30)/(3*nb*nb*8))
		base, err := cudabench.CublasStridedBatched(0, nb, count, cfg.Runs)
		if err != nil {
			return rows, err
		}
		add(w, "no-batch", float64(tasks), "ns/task", elapsed(single), "")
		add(w, "batch", float64(tasks), "ns/task", elapsed(batched),
			fmt.Sprintf("mean ring %.0f tasks", cudabench.Median(batched).MeanBatch()), "no-batch", "cublas-strided")
		add(w, "cublas-strided", float64(tasks), "ns/task", scaled(base, float64(tasks)/float64(count)),
			fmt.Sprintf("one call of %d products, scaled", count))
	}

	{
		const n = 8
		w := fmt.Sprintf("gemm-nb%d", large)
		be, err := cuda.OpenDevice(0)
		if err != nil {
			return rows, err
		}
		g, err := cudabench.NewGemmDevice(be, large, n, 1, pool.Bytes)
		if err != nil {
			return rows, err
		}
		rs, err := g.Run(false, 0, cfg.Runs)
		if err != nil {
			return rows, fmt.Errorf("%s: %w", w, err)
		}
		if err := g.Close(); err != nil {
			return rows, err
		}
		base, err := cudabench.CublasDgemm(0, large, cfg.Runs)
		if err != nil {
			return rows, err
		}
		kflops := n * cudabench.GemmFlops(large) / 1e3
		add(w, "tasks", kflops, "ns/kflop", elapsed(rs), "", "cublas")
		add(w, "cublas", kflops, "ns/kflop", scaled(base, n), fmt.Sprintf("%d cublasDgemm calls", n))
	}

	for _, p := range potrfs {
		w := fmt.Sprintf("potrf-%d-%d", p[0], p[1])
		r, err := cudabench.Potrf(cudabench.PotrfConfig{N: p[0], NBs: []int{p[1]}, Runs: cfg.Runs, Seed: uint64(p[0])})
		if err != nil {
			return rows, fmt.Errorf("%s: %w", w, err)
		}
		kflops := r.Flops() / 1e3
		tr := r.Tiled[0]
		note := fmt.Sprintf("factor differs from cuSOLVER's by %.1e", tr.MaxDiff)
		add(w, "resident", kflops, "ns/kflop", tr.Resident, note, "cusolver")
		add(w, "from-host", kflops, "ns/kflop", tr.FromHost, note, "cusolver+copies")
		add(w, "cusolver", kflops, "ns/kflop", r.SolverResident, "")
		add(w, "cusolver+copies", kflops, "ns/kflop", r.SolverCopies, "")
	}
	return rows, nil
}
