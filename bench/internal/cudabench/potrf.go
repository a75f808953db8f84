package cudabench

import (
	"context"
	"errors"
	"fmt"
	"github.com/jdf2go/jdf2go/bench/internal/gpubench"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/jdf2go/jdf2go/examples/potrf/cholesky"
	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/cuda"
	"github.com/jdf2go/jdf2go/rt/gpu/gputest"
)

// PotrfConfig is a tiled Cholesky benchmark on one CUDA device: the
// gputest graph through rt (GPU bodies for POTRF (cuSOLVER), TRSM, SYRK and
// GEMM (cuBLAS), tiles in pinned host memory) at each tile size of NBs,
// against cuSOLVER's dpotrf on the dense matrix, in the same process.
type PotrfConfig struct {
	N       int
	NBs     []int
	Runs    int // timed runs of each variant, after one warm-up
	Workers int // rt workers (default 4)
	Seed    uint64
	Ordinal int // CUDA device
	// Device options for the tiled runs (streams, events).
	Options []gpu.Option
}

// TiledRuns are the tiled variants at one tile size:
//   - Resident: the tiles are on the device when the graph starts and the
//     factor stays there (cuSOLVER's situation on resident data);
//   - FromHost: the tiles start in pinned host memory and the factor ends
//     there; transfers overlap the computation.
//
// JDFResident and JDFFromHost are the same two starts for the code that
// jdf2go generates from examples/potrf.jdf (package cholesky), with rt's
// default write-backs (the final value of each tile, which goes to the
// collection, is copied back: in the resident variant too) and the CPU
// workers not sharing the work. Its TRSMs multiply by the inverses of the
// diagonal tiles (TRSM_INV, as programs with devices set it); JDFSolve is the
// resident start with TRSM_INV off, where they solve with cuBLAS's TRSM.
type TiledRuns struct {
	NB, Tasks                int
	Resident, FromHost       []time.Duration
	JDFResident, JDFFromHost []time.Duration
	JDFSolve                 []time.Duration
	// JDFDiff is the largest difference between the generated code's factor
	// and the hand-written graph's on the last tile row, relative to its
	// largest entry; JDFStageOuts the write-backs of one generated run.
	JDFDiff      float64
	JDFStageOuts uint64
	// MaxDiff is the largest difference between the tiled factor and
	// cuSOLVER's, relative to the largest entry of the factor.
	MaxDiff float64
	// Bytes copied directly from or to pinned memory, and through the
	// staging rings (0: the pinned tiles needed none).
	Direct, Staged int64
}

// PotrfResult holds the timed runs: the tiled ones per tile size, and
// cusolverDnDpotrf on the dense matrix on the device (SolverResident) and
// with its copies from and back to pinned host memory on one stream
// (SolverCopies), timed with events.
type PotrfResult struct {
	N              int
	Tiled          []TiledRuns
	SolverResident []time.Duration
	SolverCopies   []time.Duration
}

// Flops is the operation count of one factorization.
func (r PotrfResult) Flops() float64 { return blas.PotrfFlops(r.N) }

// TFlops converts a time into TFLOP/s.
func (r PotrfResult) TFlops(d time.Duration) float64 { return r.Flops() / d.Seconds() / 1e12 }

// Potrf runs the benchmark.
func Potrf(cfg PotrfConfig) (PotrfResult, error) {
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	if cfg.Runs <= 0 {
		cfg.Runs = 3
	}
	res := PotrfResult{N: cfg.N}
	// The tiles live in pinned memory until the tiled factors were compared
	// with cuSOLVER's.
	pool, err := cuda.NewPinnedPool(0)
	if err != nil {
		return res, err
	}
	var mats []*rt.TiledMatrix
	for _, nb := range cfg.NBs {
		tr := TiledRuns{NB: nb}
		a, err := tiledPotrf(cfg, nb, &tr, pool)
		res.Tiled = append(res.Tiled, tr)
		if err != nil {
			return res, errors.Join(fmt.Errorf("NB=%d: %w", nb, err), pool.Close())
		}
		mats = append(mats, a)
	}
	err = solverPotrf(cfg, &res, mats)
	return res, errors.Join(err, pool.Close())
}

// tiledPotrf runs the tiled variants and returns the matrix holding the
// tiled factor.
func tiledPotrf(cfg PotrfConfig, nb int, res *TiledRuns, pool *cuda.PinnedPool) (a *rt.TiledMatrix, err error) {
	be, err := cuda.OpenDevice(cfg.Ordinal)
	if err != nil {
		return nil, err
	}
	devs, err := gpubench.OpenBackends(cfg.Options, be)
	if err != nil {
		return nil, errors.Join(err, be.Close())
	}
	dev := devs[0]
	if err := dev.Device().Ready(context.Background()); err != nil {
		return nil, errors.Join(err, dev.Close())
	}
	// The hand-written graph pins tasks to the device (Select); the generated
	// one leaves the choice to rt, told not to share with the CPU workers.
	c, err := rt.New(rt.Workers(cfg.Workers), rt.Devices(dev), rt.ShareWork(false))
	if err != nil {
		return nil, errors.Join(err, dev.Close())
	}
	defer func() {
		err = errors.Join(err, c.Close(), dev.Close())
		st := be.StreamStats()
		res.Direct, res.Staged = st.DirectBytes, st.StagedBytes
	}()
	a, err = rt.NewTiledMatrix(cfg.N, cfg.N, nb, nb, 1, 1, 0)
	if err != nil {
		return nil, err
	}
	lower := func(i, j int) bool { return i >= j }
	if err := cuda.PinTiles(a, pool, lower); err != nil {
		return nil, err
	}
	fillLower(a, cfg.Seed)
	res.Tasks = gputest.Tasks(a.MT)
	run := func(tp *rt.Taskpool) (time.Duration, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		start := time.Now()
		if err := c.Add(tp); err != nil {
			return 0, err
		}
		err := tp.Wait(ctx)
		return time.Since(start), err
	}
	jdf := func(tp *cholesky.Potrf) *rt.Taskpool { return tp.Taskpool }
	for r := range 3 * (cfg.Runs + 1) {
		// The last run starts from host memory and leaves its factor there, for the comparison below.
		solve, resident := r%3 == 0, r%3 != 2
		fillLower(a, cfg.Seed)
		bumpLower(a)
		if resident {
			if _, err := run(gputest.NewTouch(a, true)); err != nil {
				return nil, fmt.Errorf("staging the tiles: %w", err)
			}
		}
		runtime.GC()
		tp, err := cholesky.NewPotrf(a, blas.Gonum())
		if err != nil {
			return nil, err
		}
		if !solve {
			if err := tp.UseInverses(); err != nil {
				return nil, err
			}
		}
		before := dev.Device().Stats().StageOuts
		d, err := run(jdf(tp))
		if err != nil {
			return nil, fmt.Errorf("generated potrf (resident %v, TRSM_INV %v): %w", resident, !solve, err)
		}
		if !solve {
			res.JDFStageOuts = dev.Device().Stats().StageOuts - before
		}
		switch {
		case r < 3:
		case solve:
			res.JDFSolve = append(res.JDFSolve, d)
		case resident:
			res.JDFResident = append(res.JDFResident, d)
		default:
			res.JDFFromHost = append(res.JDFFromHost, d)
		}
	}
	lastRow := make([][]float64, a.NT)
	for j := range lastRow {
		lastRow[j] = slices.Clone(a.Tile(a.MT-1, j))
	}
	for r := range cfg.Runs + 1 {
		fillLower(a, cfg.Seed)
		bumpLower(a)
		if _, err := run(gputest.NewTouch(a, true)); err != nil {
			return nil, fmt.Errorf("staging the tiles: %w", err)
		}
		d, err := run(gputest.NewPotrf(a, gputest.WriteNone))
		if err != nil {
			return nil, fmt.Errorf("resident run: %w", err)
		}
		if r > 0 {
			res.Resident = append(res.Resident, d)
		}
	}
	for r := range cfg.Runs + 1 {
		if r > 0 {
			fillLower(a, cfg.Seed) // the previous run left the factor there
		}
		bumpLower(a)
		runtime.GC()
		d, err := run(gputest.NewPotrf(a, gputest.WriteFinal))
		if err != nil {
			return nil, fmt.Errorf("run from host memory: %w", err)
		}
		if r > 0 {
			res.FromHost = append(res.FromHost, d)
		}
	}
	var diff, scale float64
	for j, want := range lastRow {
		for i, g := range a.Tile(a.MT-1, j) {
			diff = math.Max(diff, math.Abs(g-want[i]))
			scale = math.Max(scale, math.Abs(g))
		}
	}
	res.JDFDiff = diff / math.Max(scale, math.SmallestNonzeroFloat64)
	return a, nil
}

// solverPotrf runs the cuSOLVER variants and compares their factor with
// the tiled ones in mats.
func solverPotrf(cfg PotrfConfig, res *PotrfResult, mats []*rt.TiledMatrix) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	dev, err := cuda.GetDevice(cfg.Ordinal)
	if err != nil {
		return err
	}
	ctx, err := dev.PrimaryCtxRetain()
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, dev.PrimaryCtxRelease()) }()
	if err := ctx.SetCurrent(); err != nil {
		return err
	}
	major, minor, err := dev.ComputeCapability()
	if err != nil {
		return err
	}
	image, err := cuda.Compile(kernelSource, "cudabench.cu", fmt.Sprintf("--gpu-architecture=sm_%d%d", major, minor))
	if err != nil {
		return err
	}
	mod, err := cuda.ModuleLoadData(image)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, mod.Unload()) }()
	fill, err := mod.Function("cudabench_fill_spd")
	if err != nil {
		return err
	}
	s, err := cuda.NewStream()
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Destroy()) }()
	sv, err := cuda.NewSolver(s)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, sv.Destroy()) }()
	n := cfg.N
	bytes := n * n * 8
	pristine, err := cuda.MemAlloc(bytes)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, cuda.MemFree(pristine)) }()
	work, err := cuda.MemAlloc(bytes)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, cuda.MemFree(work)) }()
	var args cuda.KernelArgs
	args.Ptr(pristine).Int32(int32(n)).Int64(int64(n)).Uint64(cfg.Seed)
	if err := fill.Launch(cuda.Dim3{X: 1056, Y: 1, Z: 1}, cuda.Dim3{X: 256, Y: 1, Z: 1}, 0, s, &args); err != nil {
		return err
	}
	start, err := cuda.NewTimingEvent()
	if err != nil {
		return err
	}
	defer start.Destroy()
	end, err := cuda.NewTimingEvent()
	if err != nil {
		return err
	}
	defer end.Destroy()
	timed := func(op func() error) (time.Duration, error) {
		if err := start.Record(s); err != nil {
			return 0, err
		}
		if err := op(); err != nil {
			return 0, err
		}
		if err := end.Record(s); err != nil {
			return 0, err
		}
		if err := end.Synchronize(); err != nil {
			return 0, err
		}
		info, err := sv.Info()
		if err != nil {
			return 0, err
		}
		if info != 0 {
			return 0, fmt.Errorf("%w: cusolverDnDpotrf info %d", gpu.ErrNotPositiveDefinite, info)
		}
		return cuda.ElapsedTime(start, end)
	}
	for r := range cfg.Runs + 1 {
		if err := cuda.MemcpyDtoDAsync(work, pristine, bytes, s); err != nil {
			return err
		}
		d, err := timed(func() error { return sv.Dpotrf(cuda.FillLower, n, work, n) })
		if err != nil {
			return err
		}
		if r > 0 {
			res.SolverResident = append(res.SolverResident, d)
		}
	}
	host, err := cuda.MemHostAlloc(bytes, 0)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, host.Free()) }()
	for r := range cfg.Runs + 1 {
		if err := cuda.MemcpyDtoHAsync(host, pristine, s); err != nil {
			return err
		}
		d, err := timed(func() error {
			if err := cuda.MemcpyHtoDAsync(work, host, s); err != nil {
				return err
			}
			if err := sv.Dpotrf(cuda.FillLower, n, work, n); err != nil {
				return err
			}
			return cuda.MemcpyDtoHAsync(host, work, s)
		})
		if err != nil {
			return err
		}
		if r > 0 {
			res.SolverCopies = append(res.SolverCopies, d)
		}
	}
	for i, a := range mats {
		res.Tiled[i].MaxDiff = gputest.FactorDiff(a, host.Float64s(), n)
	}
	return nil
}
