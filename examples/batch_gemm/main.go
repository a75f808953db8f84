// Command batch_gemm runs examples/batch_gemm.jdf: many small independent GEMM tasks
// Z(i) += X(i mod D)·Y(i mod D) whose GPU body collects up to -batch ready tasks into one
// batched launch. It checks every product against the CPU and prints the time, the
// tasks/s, the share of the tasks each device and the CPU ran, the mean number of tasks per
// launch on the devices, and their managers' busy time per task. By default (-resident) the blocks are staged on their
// devices before the timed run, which then moves no data; with -resident=false every task
// copies its result block in. -runs N runs the taskpool N times on the same data (each run
// adds the products once more) and prints every run's time and their median: the first
// run pays for what the later ones find warm (the device's wrappers, the workers' pools).
//
//	JDF2GO_GPUS=sim:1 go run ./examples/batch_gemm -tasks 20000 -nb 32 -batch 32
//	./batch_gemm -gpus cuda -tasks 100000 -nb 64 -batch 512
//
// -gpus picks the devices (none, sim:N, cuda or auto; by default $JDF2GO_GPUS, else
// auto: every CUDA GPU when there is one). The simulated and CUDA backends are linked in,
// so the same binary (CGO_ENABLED=0) runs on a GPU machine. With a CUDA device the blocks
// live in page-locked memory.
package main

//go:generate go run github.com/jdf2go/jdf2go/cmd/jdf2go gen -o batch_gemm_jdf.go ../batch_gemm.jdf

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/cuda"
	_ "github.com/jdf2go/jdf2go/rt/gpu/sim"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "batch_gemm:", err)
		os.Exit(1)
	}
}

// maxError is the accuracy every product must reach, relative to its largest entry.
const maxError = 1e-12

func run(args []string, stdout io.Writer) (err error) {
	fs := flag.NewFlagSet("batch_gemm", flag.ContinueOnError)
	tasks := fs.Int("tasks", 10000, "GEMM tasks")
	nb := fs.Int("nb", 32, "block size")
	pairs := fs.Int("pairs", 16, "distinct operand pairs (D)")
	batch := fs.Int("batch", 32, "batch_max: tasks per batched launch")
	workers := fs.Int("workers", 0, "workers (0: all cores)")
	fs.Func("dashboard", "serve a live dashboard of the run on `ADDR` (localhost:8080; same as $JDF2GO_DASHBOARD)", func(a string) error { return os.Setenv("JDF2GO_DASHBOARD", a) })
	backend := fs.String("blas", "auto", "CPU kernels: auto, gonum or openblas")
	gpus := fs.String("gpus", "", "devices: none, sim:N, cuda or auto (default: $"+gpu.EnvDevices+", else auto)")
	check := fs.Bool("check", true, "check every product against the CPU")
	resident := fs.Bool("resident", true, "stage the blocks on their devices before the timed run")
	runs := fs.Int("runs", 1, "timed runs of the taskpool, on the same data")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the timed runs to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *tasks < 1 || *nb < 1 || *pairs < 1 || *batch < 1 || *runs < 1 {
		return fmt.Errorf("-tasks %d, -nb %d, -pairs %d, -batch %d and -runs %d must be positive", *tasks, *nb, *pairs, *batch, *runs)
	}
	impl, err := blas.Select(*backend)
	if err != nil {
		return err
	}
	devs, err := gpu.Open(*gpus)
	if err != nil {
		return err
	}
	var pool *cuda.PinnedPool
	defer func() {
		for _, d := range devs {
			err = errors.Join(err, d.Close())
		}
		if pool != nil {
			err = errors.Join(err, pool.Close())
		}
	}()
	var alloc rt.Alloc
	for _, d := range devs {
		if d.Device().Info().Type == gpu.TypeCUDA && pool == nil {
			if pool, err = cuda.NewPinnedPool(0); err != nil {
				return err
			}
			alloc = pool.Float64s
		}
	}
	p, err := newProblem(*tasks, *nb, *pairs, alloc, *check)
	if err != nil {
		return err
	}
	opts := []rt.Option{rt.Devices(gpu.RTDevices(devs)...)}
	if *workers > 0 {
		opts = append(opts, rt.Workers(*workers))
	}
	ctx, err := rt.New(opts...)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "batch_gemm: %d tasks of %dx%d blocks, batch_max %d, %d workers, BLAS %s, devices: %s\n",
		*tasks, *nb, *nb, *batch, ctx.Workers(), impl.Config(), gpu.Describe(devs))
	if *resident && len(devs) > 0 {
		start := time.Now()
		if err := p.stage(devs); err != nil {
			return errors.Join(err, ctx.Close())
		}
		fmt.Fprintf(stdout, "  staged the blocks in %v\n", time.Since(start).Round(time.Millisecond))
	}
	before := counts(devs)
	stop, err := startProfile(*cpuprofile)
	if err != nil {
		return errors.Join(err, ctx.Close())
	}
	times := make([]time.Duration, 0, *runs)
	for range *runs {
		var tp *BatchGemm
		if tp, err = NewBatchGemm(*nb, p.a, p.b, p.c, *batch, impl); err != nil {
			break
		}
		start := time.Now()
		if err = ctx.Add(tp.Taskpool); err == nil {
			err = tp.Wait(context.Background())
		}
		times = append(times, time.Since(start))
		if err != nil {
			break
		}
	}
	if perr := stop(); err == nil {
		err = perr
	}
	if cerr := ctx.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	rate := func(what string, d time.Duration) {
		flops := float64(*tasks) * 2 * math.Pow(float64(*nb), 3)
		fmt.Fprintf(stdout, "  %s%v, %.0f tasks/s, %.2f GFLOP/s\n", what, d.Round(time.Microsecond),
			float64(*tasks)/d.Seconds(), flops/d.Seconds()/1e9)
	}
	if len(times) == 1 {
		rate("", times[0])
	} else {
		for i, d := range times {
			rate(fmt.Sprintf("run %d: ", i+1), d)
		}
		rate("median: ", median(times))
	}
	fmt.Fprintf(stdout, "  tasks: %s\n", shares(int64(*tasks**runs), devs, before))
	if *check {
		for _, d := range devs {
			if err := d.Close(); err != nil {
				return err
			}
		}
		worst, err := p.check(impl, *runs)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "  largest relative error: %.3g\n", worst)
		if !(worst < maxError) {
			return fmt.Errorf("relative error %g is not below %g", worst, maxError)
		}
	}
	return nil
}

// startProfile starts a CPU profile written to path (none when path is empty) and returns
// the function that stops it and closes the file.
func startProfile(path string) (func() error, error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

// problem holds the operands, the results and the initial results.
type problem struct {
	nb, pairs int
	a, b, c   *rt.Vector
	c0        []float64 // C before the run, for the check (nil without -check)
}

// newProblem fills the operands and the result blocks with random numbers; keep saves a
// copy of the result blocks for check. Each block has a generator of its own, so the
// blocks are filled on all cores and the numbers do not depend on how many there are.
func newProblem(tasks, nb, pairs int, alloc rt.Alloc, keep bool) (*problem, error) {
	block := nb * nb
	p := &problem{nb: nb, pairs: pairs}
	var err error
	if p.a, err = rt.NewVectorAlloc(pairs*block, block, 1, 0, alloc); err != nil {
		return nil, err
	}
	if p.b, err = rt.NewVectorAlloc(pairs*block, block, 1, 0, alloc); err != nil {
		return nil, err
	}
	if p.c, err = rt.NewVectorAlloc(tasks*block, block, 1, 0, alloc); err != nil {
		return nil, err
	}
	if keep {
		p.c0 = make([]float64, tasks*block)
	}
	fill := func(x []float64, stream, k int) {
		r := rand.New(rand.NewPCG(uint64(nb), uint64(stream)<<40|uint64(k)))
		for i := range x {
			x[i] = r.Float64() - 0.5
		}
	}
	for k := range pairs {
		fill(p.a.Block(k), 0, k)
		fill(p.b.Block(k), 1, k)
	}
	var wg sync.WaitGroup
	parts := runtime.GOMAXPROCS(0)
	for part := range parts {
		wg.Go(func() {
			for k := tasks * part / parts; k < tasks*(part+1)/parts; k++ {
				c := p.c.Block(k)
				fill(c, 2, k)
				if keep {
					copy(p.c0[k*block:], c)
				}
			}
		})
	}
	wg.Wait()
	return p, nil
}

// stage puts the operands on every device and result block i on device i mod len(devs),
// where `device = i` runs task i.
func (p *problem) stage(devs []*gpu.RTDevice) error {
	operands := make([]*rt.Data, 0, 2*p.pairs)
	for k := range p.pairs {
		operands = append(operands, p.a.DataOf(rt.Ix(k)), p.b.DataOf(rt.Ix(k)))
	}
	results := make([][]*rt.Data, len(devs))
	for k := range p.c.NT {
		results[k%len(devs)] = append(results[k%len(devs)], p.c.DataOf(rt.Ix(k)))
	}
	for i, d := range devs {
		if err := d.Prefetch(context.Background(), slices.Concat(operands, results[i])...); err != nil {
			return err
		}
	}
	return nil
}

// check recomputes every block on the CPU, adding its product runs times, and returns the
// largest error relative to the largest entry of its block.
func (p *problem) check(impl *blas.Impl, runs int) (float64, error) {
	block := p.nb * p.nb
	want := make([]float64, block)
	worst := 0.0
	for k := range p.c.NT {
		copy(want, p.c0[k*block:(k+1)*block])
		j := k % p.pairs
		for range runs {
			if err := impl.Dgemm(blas.NoTrans, blas.NoTrans, p.nb, p.nb, p.nb, 1, p.a.Block(j), p.nb, p.b.Block(j), p.nb, 1, want, p.nb); err != nil {
				return 0, err
			}
		}
		var diff, scale float64
		for i, g := range p.c.Block(k) {
			diff = math.Max(diff, math.Abs(g-want[i]))
			scale = math.Max(scale, math.Abs(want[i]))
		}
		worst = math.Max(worst, diff/math.Max(scale, math.SmallestNonzeroFloat64))
	}
	return worst, nil
}

// median returns the median of ds (the mean of the middle two for an even count).
func median(ds []time.Duration) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// launchCounts is what a device has done so far: tasks completed, exec records (one per
// launched ring), and its manager's busy time.
type launchCounts struct {
	tasks, rings uint64
	busy         time.Duration
}

func counts(devs []*gpu.RTDevice) []launchCounts {
	out := make([]launchCounts, len(devs))
	for i, d := range devs {
		st := d.Device().Stats()
		out[i].tasks, out[i].busy = st.Executed, st.Busy
		for k := range d.Device().NumCompute() {
			out[i].rings += d.Device().Compute(k).Records()
		}
	}
	return out
}

// shares formats how many of total tasks each device ran since before (with its mean
// number of tasks per launch and its manager's busy time per task), and the CPU the rest.
func shares(total int64, devs []*gpu.RTDevice, before []launchCounts) string {
	now := counts(devs)
	cpu := total
	var parts []string
	for i, d := range devs {
		k, rings := int64(now[i].tasks-before[i].tasks), now[i].rings-before[i].rings
		cpu -= k
		mean, busy := 0.0, 0.0
		if rings > 0 {
			mean = float64(k) / float64(rings)
		}
		if k > 0 {
			busy = (now[i].busy - before[i].busy).Seconds() * 1e6 / float64(k)
		}
		parts = append(parts, fmt.Sprintf("%s %d (%.1f%%, %.1f per launch, manager busy %.2f µs per task)",
			d.Device().Name(), k, 100*float64(k)/float64(total), mean, busy))
	}
	return strings.Join(append([]string{fmt.Sprintf("CPU %d (%.1f%%)", cpu, 100*float64(cpu)/float64(total))}, parts...), ", ")
}
