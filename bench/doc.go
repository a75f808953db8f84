// Command bench is the benchmark driver behind `make bench` (docs/runtime.md, "Benchmarks"): it
// runs every registered suite that applies to this machine, prints one table, and writes
// bench/results.json and bench/report.html (report.go: the machine, every table, and plots).
//
// Usage:
//
//	go run ./bench [-runs 3] [-workers 1,2] [-suite REGEXP] [-quick] [-json bench/results.json]
//	    [-html bench/report.html] [-machine NAME] [-record bench/results]
//	go run ./bench -from bench/results.json [-html bench/report.html]
//
// results.json is stamped (record.go): the date, the commit the driver was built from, the
// command, and the machine (its name, CPU, memory, OS, Go, BLAS and GPUs). -record DIR also
// writes it to DIR/<date>-<machine>-<suite>.json (the suite pattern reduced to letters,
// digits and dashes, "all" without -suite) without overwriting an earlier file; bench/results/
// keeps the runs behind docs/performance.md's tables.
//
// Every figure is the median of -runs timed runs after one warm-up run, with min and max.
// Each row that measures jdf2go carries its ratios against baselines measured in the same run
// (time of jdf2go divided by time of the baseline: below 1 means jdf2go is faster), because
// the machines are shared and absolute times drift.
//
// # Adding a suite
//
// A suite is one file in this directory that registers itself from init:
//
//	func init() {
//		register(Suite{
//			Name:       "gpu",
//			Applicable: func() (bool, string) { return haveCUDA(), "no CUDA device" },
//			Run:        runGPU, // func(cfg *Config) ([]Row, error)
//		})
//	}
//
// Run returns rows; a row names its workload, workers and variant, holds a Stats (from
// cfg.Measure) and the unit's divisor (tasks, flops, bytes), and may set Baselines to the
// variants it is compared against, which must be rows of the same workload and workers
// returned by the same suite. A suite that does not apply is listed as "skipped: <reason>".
//
// # The dpotrf suite (dynamic graphs against PTG)
//
// The tiled Cholesky of examples/dpotrf (a dynamic graph, cholesky.FactorDynamic) against
// potrf.jdf's taskpool (cholesky.Factor) on one Context: N=8192 (-quick: 2048), NB 320 and
// 512, OpenBLAS single-threaded inside tasks, lfq, on the worker counts of -workers except 1.
// The variants alternate run by run after one warm-up each; the dynamic row carries its ratio
// to the ptg row (dpotrf_suite.go).
//
// # The rt suite (task throughput, docs/runtime.md, "Benchmarks")
//
// Workloads, all with empty bodies, timed from Context.Add (which includes the enumeration of
// the execution space) to the end of Taskpool.Wait, on an already started Context, with
// GOMAXPROCS set to the number of workers for every variant:
//
//   - independent: 1 M tasks without dependencies;
//   - chain: one chain of 1 M tasks linked by a CTL flow;
//   - 2chains: two such chains of 0.5 M tasks;
//   - grid: a 1024×1024 wavefront, T(i, j) after T(i-1, j) and T(i, j-1) (CTL);
//   - fanout: 1 → 100 k → 1 (broadcast, then a CTL gather of 100 k arrivals).
//
// Variants: jdf2go (rt, lfq scheduler), goroutines (one goroutine per task, started up front,
// waiting on a buffered channel for its inputs, joined with a WaitGroup) and pool (a minimal
// worker pool: a channel of ready task ids, one atomic counter of missing inputs per task, the
// first ready successor run directly by the worker that released it).
//
// # The compile suite (what the generated code costs to build)
//
// `go build` of the code that jdf2go generates, as a command, its dependencies already built:
// wall time and peak resident set of the go command and the compiler, for a priority of
// 5,000, 10,000 and 20,000 conditionals chained in else position and for programs of
// chain-like classes of 1.25, 2.5 and 5 MB (-quick: 500 to 2,000 conditionals, 25 to
// 100 KB). The programs go past the limits of check, which the suite lifts. The note of each
// size after the first gives the ratios of time and resident set to the size before: 2 per
// doubling is linear (compile_suite.go). The full sizes take long: the 5 MB program is about
// 25,000 classes.
//
// # The dynamic suite (tasks inserted from Go, docs/dynamic.md, "Cost")
//
// 100,000 empty tasks (-quick: 20,000) inserted by one goroutine into an rt/dynamic graph with
// a window of 10,000 and waited for, on 2 workers: 0 data (independent), 1 datum and 10 data
// read-write (chains). Baseline: StarPU's tasks_overhead from Debian's starpu-examples, with
// STARPU_NCPU=2 and as many buffers (at most 8, its limit), its own total time; absent, the
// note says so. The "10M tasks" row runs 10 M tasks (-quick: 1 M) through a window of 10,000
// in a child process (the driver with -dynamic-memory-child), each reading and writing one
// of 64 data in turn; its note gives the child's peak resident set and its resident set at
// one second and at most after.
package main
