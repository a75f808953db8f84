package cudabench

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt/gpu/cuda"
)

// TestGPUFigures measures the docs/runtime.md, "Benchmarks" workloads on CUDA device 0
// and prints them as FIGURE lines with their goals. It skips without a GPU.
// On the GPU machine (no Go there), with the binary built here:
//
//	CGO_ENABLED=0 go test -c -o .gpu/cudabench.test ./bench/internal/cudabench
//	.gpu/cudabench.test -test.v -test.run GPUFigures
//
// JDF2GO_BENCH_RUNS sets the timed runs per variant (3), and
// JDF2GO_BENCH_POTRF the Cholesky sizes as N:NB[:NB...] lists
// ("16384:1024:2048,32768:1024:2048"); JDF2GO_BENCH_ONLY
// selects subtests by name (empty, gemm, large, tiles, potrf; all by default).
func TestGPUFigures(t *testing.T) {
	if n, _ := cuda.Count(); n == 0 {
		t.Skip("skipped: no CUDA device: ", cuda.Init())
	}
	runs := 3
	if v, err := strconv.Atoi(os.Getenv("JDF2GO_BENCH_RUNS")); err == nil && v > 0 {
		runs = v
	}
	only := os.Getenv("JDF2GO_BENCH_ONLY")
	want := func(name string) bool { return only == "" || strings.Contains(only, name) }
	pool, err := cuda.NewPinnedPool(0)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	pinned := pool.Bytes
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

	if want("empty") {
		t.Run("empty", func(t *testing.T) {
			be, err := cuda.OpenDevice(0)
			if err != nil {
				t.Fatal(err)
			}
			rs, err := EmptyKernels(be, 100_000, runs)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := LaunchRoundTrip(0, 20_000)
			if err != nil {
				t.Fatal(err)
			}
			lc, err := MeasureLaunchCosts(0, 20_000)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("FIGURE driver calls from Go (host time per call): no-op call %.2f µs, cuCtxSetCurrent %.2f, cuLaunchKernel %.2f, cuEventRecord %.2f, cuEventQuery (done) %.2f, cuStreamQuery (idle) %.2f; launch+record+query pipelined on 4 streams %.2f µs/task, serial round trip %.2f µs",
				us(lc.Call), us(lc.SetCurrent), us(lc.Launch), us(lc.Record), us(lc.QueryDone), us(lc.QueryStream), us(lc.Pipelined), us(lc.Serial))
			lo, hi := Spread(rs)
			m := Median(rs)
			t.Logf("FIGURE singleton empty-kernel tasks through the manager: %.2f µs/task (%.0f k tasks/s; median of %d × 100k, min %.2f, max %.2f µs/task); goal <= 3 µs; raw launch+record+query loop %.2f µs",
				us(PerTask(m)), m.TasksPerSecond()/1e3, runs, us(lo)/1e5, us(hi)/1e5, us(raw))
		})
	}

	if want("gemm") {
		for _, nb := range []int{32, 64, 128} {
			t.Run(fmt.Sprintf("gemm%d", nb), func(t *testing.T) {
				be, err := cuda.OpenDevice(0)
				if err != nil {
					t.Fatal(err)
				}
				const tasks = 100_000
				g, err := NewGemmDevice(be, nb, tasks, 64, pinned)
				if err != nil {
					t.Fatal(err)
				}
				single, err := g.Run(false, 0, runs)
				if err != nil {
					t.Fatal(err)
				}
				batched, err := g.Run(true, 4096, runs)
				if err != nil {
					t.Fatal(err)
				}
				worst, err := g.Check(8)
				if err != nil {
					t.Fatal(err)
				}
				st := be.StreamStats()
				if err := g.Close(); err != nil {
					t.Fatal(err)
				}
				count := min(tasks, (8<<30)/(3*nb*nb*8))
				base, err := CublasStridedBatched(0, nb, count, runs)
				if err != nil {
					t.Fatal(err)
				}
				ms, mb := Median(single), Median(batched)
				slices.Sort(base)
				t.Logf("FIGURE %d independent GEMM tasks nb=%d: batch=true %.2f M tasks/s (mean ring %.0f; %d pointer-array and %d strided calls), batch=false %.3f M tasks/s (%.2f µs/task): %.1f× (goal >= 10×%s); cuBLAS strided-batched %.1f M gemm/s (batch %d); max rel. error %.1e",
					tasks, nb, mb.TasksPerSecond()/1e6, mb.MeanBatch(), st.Batched, st.Strided, ms.TasksPerSecond()/1e6, us(PerTask(ms)),
					mb.TasksPerSecond()/ms.TasksPerSecond(), map[bool]string{true: ", >= 1 M tasks/s", false: ""}[nb == 32],
					float64(count)/base[len(base)/2].Seconds()/1e6, count, worst)
				if worst > 1e-12 {
					t.Errorf("GEMM tasks computed wrong products (%.2g)", worst)
				}
			})
		}
	}

	if want("large") {
		t.Run("large", func(t *testing.T) {
			const nb, tasks = 8192, 8
			be, err := cuda.OpenDevice(0)
			if err != nil {
				t.Fatal(err)
			}
			g, err := NewGemmDevice(be, nb, tasks, 1, pinned)
			if err != nil {
				t.Fatal(err)
			}
			rs, err := g.Run(false, 0, runs)
			if err != nil {
				t.Fatal(err)
			}
			if err := g.Close(); err != nil {
				t.Fatal(err)
			}
			base, err := CublasDgemm(0, nb, 5)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(base)
			m := Median(rs)
			tasksTF := GemmFlops(nb) * tasks / m.Elapsed.Seconds() / 1e12
			blasTF := GemmFlops(nb) / base[len(base)/2].Seconds() / 1e12
			t.Logf("FIGURE %d GEMM tasks nb=%d through the manager: %.1f TFLOP/s (%v per run); cuBLAS dgemm N=%d: %.1f TFLOP/s; %.0f%% (goal >= 85%%)",
				tasks, nb, tasksTF, m.Elapsed, nb, blasTF, 100*tasksTF/blasTF)
		})
	}

	if want("tiles") {
		for _, nb := range []int{256, 512, 1024, 2048} {
			cs, err := TileCosts(0, nb, 200)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cs {
				t.Logf("FIGURE tile kernel %s nb=%d: host %.1f µs per call on an idle stream, %.1f µs per call back to back; device %.1f µs per call (%.1f TFLOP/s) on one stream",
					c.Op, nb, us(c.Host), us(c.Pipelined), us(c.Kern), c.Flops/c.Kern.Seconds()/1e12)
			}
			const count = 32
			base, err := CublasStridedBatched(0, nb, count, runs)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(base)
			per := base[len(base)/2] / count
			t.Logf("FIGURE tile kernel gemm nb=%d in a strided-batched call of %d: device %.1f µs per product (%.1f TFLOP/s)",
				nb, count, us(per), GemmFlops(nb)/per.Seconds()/1e12)
		}
	}

	if want("potrf") {
		sizes := os.Getenv("JDF2GO_BENCH_POTRF")
		if sizes == "" {
			sizes = "16384:1024:2048,32768:1024:2048"
		}
		for _, p := range strings.Split(sizes, ",") {
			f := strings.Split(p, ":")
			n, err := strconv.Atoi(f[0])
			var nbs []int
			for _, x := range f[1:] {
				nb, e := strconv.Atoi(x)
				err = errors.Join(err, e)
				nbs = append(nbs, nb)
			}
			if err != nil || len(nbs) == 0 {
				t.Fatalf("JDF2GO_BENCH_POTRF: %q: want N:NB[:NB...]", p)
			}
			t.Run(fmt.Sprintf("potrf%d", n), func(t *testing.T) {
				r, err := Potrf(PotrfConfig{N: n, NBs: nbs, Runs: runs, Seed: uint64(n)})
				if err != nil {
					t.Fatal(err)
				}
				med := func(ds []time.Duration) time.Duration {
					s := slices.Clone(ds)
					slices.Sort(s)
					return s[len(s)/2]
				}
				sres, scop := med(r.SolverResident), med(r.SolverCopies)
				t.Logf("FIGURE cuSOLVER dpotrf N=%d: resident %.1f TFLOP/s (%v), plus copies from and to pinned host memory %.1f TFLOP/s (%v); runs %v and %v",
					n, r.TFlops(sres), sres, r.TFlops(scop), scop, r.SolverResident, r.SolverCopies)
				for _, tr := range r.Tiled {
					res, host := med(tr.Resident), med(tr.FromHost)
					t.Logf("FIGURE tiled potrf N=%d NB=%d (%d tasks) through rt: resident %.1f TFLOP/s (%v) = %.2f× cuSOLVER (goal >= 0.8); from pinned host memory %.1f TFLOP/s (%v) = %.2f× cuSOLVER+copies (goal >= 1.2); factor differs by %.1e; %.1f GB direct, %d B staged; runs %v and %v",
						n, tr.NB, tr.Tasks, r.TFlops(res), res, float64(sres)/float64(res), r.TFlops(host), host, float64(scop)/float64(host),
						tr.MaxDiff, float64(tr.Direct)/1e9, tr.Staged, tr.Resident, tr.FromHost)
					jres, jhost, jsolve := med(tr.JDFResident), med(tr.JDFFromHost), med(tr.JDFSolve)
					t.Logf("FIGURE generated potrf.jdf N=%d NB=%d through rt (no CPU sharing): resident %.1f TFLOP/s (%v) = %.2f× cuSOLVER (goal >= 0.8), %.2f× the hand-written graph; from pinned host memory %.1f TFLOP/s (%v) = %.2f× cuSOLVER+copies (goal >= 1.2); %d tiles written back per run; last tile row differs from the hand-written factor by %.1e; runs %v and %v",
						n, tr.NB, r.TFlops(jres), jres, float64(sres)/float64(jres), float64(res)/float64(jres),
						r.TFlops(jhost), jhost, float64(scop)/float64(jhost), tr.JDFStageOuts, tr.JDFDiff, tr.JDFResident, tr.JDFFromHost)
					t.Logf("FIGURE generated potrf.jdf N=%d NB=%d with TRSM_INV off (cuBLAS TRSM): resident %.1f TFLOP/s (%v) = %.2f× cuSOLVER; runs %v",
						n, tr.NB, r.TFlops(jsolve), jsolve, float64(sres)/float64(jsolve), tr.JDFSolve)
					// The generated code multiplies by inverses where the hand-written graph solves:
					// the factors agree to rounding, not bit for bit.
					if tr.JDFDiff > 1e-10 {
						t.Errorf("NB=%d: the generated code's factor differs from the hand-written one by %.2g", tr.NB, tr.JDFDiff)
					}
					if tr.MaxDiff > 1e-9 {
						t.Errorf("NB=%d: the tiled factor differs from cuSOLVER's by %.2g", tr.NB, tr.MaxDiff)
					}
					// The generated code's identity tile (UseInverses) lives on the Go heap: it is
					// staged once per run with inverses; nothing else may be.
					if identity := int64(2*(runs+1)) * int64(tr.NB*tr.NB*8); tr.Staged > identity {
						t.Errorf("NB=%d: pinned tiles were staged (%d bytes, %d for the identity tiles)", tr.NB, tr.Staged, identity)
					}
				}
			})
		}
	}
}
