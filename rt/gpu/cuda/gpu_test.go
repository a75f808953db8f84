package cuda

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt/blas"
)

// The tests in this file need a CUDA device and skip without one. On the
// GPU machine (no Go there) run the binary built here:
//
//	CGO_ENABLED=0 go test -c -o .gpu/cuda.test ./rt/gpu/cuda
//	.gpu/cuda.test -test.v -test.run 'CUDA|GPU'

// gpuSkipReason says whether err (from Init) means "no GPU here", and the
// message to skip with.
func gpuSkipReason(err error) (string, bool) {
	if errors.Is(err, ErrUnavailable) {
		return "skipped: " + err.Error(), true
	}
	return "", false
}

var (
	gpuOnce sync.Once
	gpuDev  Device
	gpuCtx  Context
	gpuErr  error
)

// requireGPU skips without CUDA, and otherwise locks the test to its OS
// thread with device 0's primary context current there.
func requireGPU(t testing.TB) {
	t.Helper()
	if err := Init(); err != nil {
		if reason, skip := gpuSkipReason(err); skip {
			t.Skip(reason)
		}
		t.Fatal(err)
	}
	gpuOnce.Do(func() {
		if gpuDev, gpuErr = GetDevice(0); gpuErr == nil {
			gpuCtx, gpuErr = gpuDev.PrimaryCtxRetain()
		}
	})
	if gpuErr != nil {
		t.Fatal(gpuErr)
	}
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	if err := gpuCtx.SetCurrent(); err != nil {
		t.Fatal(err)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func mustAlloc(t testing.TB, bytes int) DevicePtr {
	t.Helper()
	p, err := MemAlloc(bytes)
	must(t, err)
	t.Cleanup(func() { _ = MemFree(p) })
	return p
}

// allocFreed allocates device memory that the caller frees itself.
func allocFreed(t testing.TB, bytes int) DevicePtr {
	t.Helper()
	p, err := MemAlloc(bytes)
	must(t, err)
	return p
}

func mustStream(t testing.TB) Stream {
	t.Helper()
	s, err := NewStream()
	must(t, err)
	t.Cleanup(func() { _ = s.Destroy() })
	return s
}

// mustBlas returns a cuBLAS handle on s, destroyed when the test ends.
func mustBlas(t testing.TB, s Stream) Blas {
	t.Helper()
	h, err := NewBlas()
	must(t, err)
	t.Cleanup(func() { must(t, h.Destroy()) })
	must(t, h.SetStream(s))
	return h
}

// testKernels is the CUDA C source of the kernels the tests launch.
const testKernels = `
extern "C" __global__ void axpby(double* y, const double* x, double a, double b, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = a * x[i] + b * y[i];
}

extern "C" __global__ void spin(long long cycles) {
	long long start = clock64();
	while (clock64() - start < cycles) { }
}

extern "C" __global__ void empty() { }

__device__ unsigned long long mix(unsigned long long z) {
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

__device__ double uniform(unsigned long long h) {
	return (double)(h >> 11) * (1.0 / 9007199254740992.0) - 0.5;
}

// fill_random fills n doubles with uniform values in [-0.5, 0.5).
extern "C" __global__ void fill_random(double* a, long long n, unsigned long long seed) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
		a[i] = uniform(mix(seed ^ mix((unsigned long long)i)));
}

// fill_spd writes a symmetric, diagonally dominant n×n matrix: off-diagonal
// values in [-0.5, 0.5), diagonal n.
extern "C" __global__ void fill_spd(double* a, int n, long long lda, unsigned long long seed) {
	long long total = (long long)n * n;
	for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < total; k += (long long)gridDim.x * blockDim.x) {
		long long j = k / n, i = k % n;
		long long lo = i < j ? i : j, hi = i < j ? j : i;
		a[i + j * lda] = (i == j) ? (double)n : uniform(mix(seed ^ mix((unsigned long long)(lo * n + hi))));
	}
}
`

type kernelSet struct {
	arch                                 string
	axpby, spin, empty, fillRand, fillSP Function
	compileTime                          time.Duration
}

var (
	kernelsOnce sync.Once
	kernelsVal  kernelSet
	kernelsErr  error
)

// kernels compiles testKernels once for the device's own architecture and
// loads them into the primary context.
func kernels(t testing.TB) kernelSet {
	t.Helper()
	kernelsOnce.Do(func() {
		major, minor, err := gpuDev.ComputeCapability()
		if err != nil {
			kernelsErr = err
			return
		}
		k := kernelSet{arch: fmt.Sprintf("sm_%d%d", major, minor)}
		start := time.Now()
		image, err := Compile(testKernels, "test_kernels.cu", "--gpu-architecture="+k.arch)
		if err != nil {
			kernelsErr = err
			return
		}
		k.compileTime = time.Since(start)
		mod, err := ModuleLoadData(image)
		if err != nil {
			kernelsErr = err
			return
		}
		for _, fn := range []struct {
			name string
			dst  *Function
		}{{"axpby", &k.axpby}, {"spin", &k.spin}, {"empty", &k.empty}, {"fill_random", &k.fillRand}, {"fill_spd", &k.fillSP}} {
			if *fn.dst, err = mod.Function(fn.name); err != nil {
				kernelsErr = err
				return
			}
		}
		kernelsVal = k
	})
	must(t, kernelsErr)
	return kernelsVal
}

var fillGrid, fillBlock = Dim3{1056, 1, 1}, Dim3{256, 1, 1}

func fillRandom(t testing.TB, p DevicePtr, n int, seed uint64, s Stream) {
	t.Helper()
	var args KernelArgs
	args.Ptr(p).Int64(int64(n)).Uint64(seed)
	must(t, kernels(t).fillRand.Launch(fillGrid, fillBlock, 0, s, &args))
}

func fillSPD(t testing.TB, p DevicePtr, n, lda int, seed uint64, s Stream) {
	t.Helper()
	var args KernelArgs
	args.Ptr(p).Int32(int32(n)).Int64(int64(lda)).Uint64(seed)
	must(t, kernels(t).fillSP.Launch(fillGrid, fillBlock, 0, s, &args))
}

func TestCUDADeviceProperties(t *testing.T) {
	requireGPU(t)
	ver, err := DriverVersion()
	must(t, err)
	count, err := DeviceCount()
	must(t, err)
	name, err := gpuDev.Name()
	must(t, err)
	major, minor, err := gpuDev.ComputeCapability()
	must(t, err)
	total, err := gpuDev.TotalMem()
	must(t, err)
	free, ctxTotal, err := MemGetInfo()
	must(t, err)
	attrs := map[string]DeviceAttribute{
		"SMs": AttrMultiprocessorCount, "L2 bytes": AttrL2CacheSize, "async engines": AttrAsyncEngineCount,
		"clock kHz": AttrClockRate, "warp": AttrWarpSize, "max threads/block": AttrMaxThreadsPerBlock,
		"smem optin": AttrMaxSharedMemoryPerBlockOptin, "unified addressing": AttrUnifiedAddressing,
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		v, err := gpuDev.Attribute(attrs[k])
		must(t, err)
		parts = append(parts, fmt.Sprintf("%s=%d", k, v))
	}
	t.Logf("driver %d, %d device(s); device 0: %q, compute capability %d.%d, %.1f GiB (free %.1f GiB); %s",
		ver, count, name, major, minor, float64(total)/(1<<30), float64(free)/(1<<30), strings.Join(parts, " "))
	t.Logf("libraries: %s", LibraryPath("driver"))
	if count < 1 || name == "" || major < 1 || total <= 0 || ctxTotal <= 0 || free <= 0 || free > ctxTotal {
		t.Errorf("implausible device properties")
	}
	if warp, _ := gpuDev.Attribute(AttrWarpSize); warp != 32 {
		t.Errorf("warp size %d: the attribute numbers are wrong", warp)
	}
	ctx, err := CurrentContext()
	must(t, err)
	if ctx != gpuCtx {
		t.Errorf("current context %#x, want the primary context %#x", ctx, gpuCtx)
	}
	// The fallback table must agree with the driver wherever both know a
	// code.
	for code, want := range driverNames {
		if got, _, ok := driverNameFromLibrary(code); got != want {
			t.Errorf("CUresult %d: driver says %q (known: %v), table says %s", code, got, ok, want)
		}
	}
}

func TestCUDACopyRoundTrip(t *testing.T) {
	requireGPU(t)
	const bytes = 8 << 20
	h1, err := MemHostAlloc(bytes, HostAllocPortable)
	must(t, err)
	defer func() { must(t, h1.Free()) }()
	h2, err := MemHostAlloc(bytes, 0)
	must(t, err)
	defer func() { must(t, h2.Free()) }()
	src := h1.Float64s()
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range src {
		src[i] = rng.Float64()
	}
	for i := range h2.Float64s() {
		h2.Float64s()[i] = math.NaN()
	}
	d1, d2 := mustAlloc(t, bytes), mustAlloc(t, bytes)
	s := mustStream(t)
	must(t, MemcpyHtoDAsync(d1, h1, s))
	must(t, MemcpyDtoDAsync(d2, d1, bytes, s))
	must(t, MemcpyDtoHAsync(h2, d2, s))
	must(t, s.Synchronize())
	if !slices.Equal(h1.Float64s(), h2.Float64s()) {
		t.Fatal("pinned → device → device → pinned round trip changed the data")
	}
	// Part of a buffer, at an offset on both sides.
	part, err := h2.Sub(1024, 4096)
	must(t, err)
	must(t, MemsetD8Async(d2, 0, bytes, s))
	must(t, MemcpyHtoDAsync(d2.Add(2048), part, s))
	back := make([]byte, 4096+2048)
	must(t, s.Synchronize())
	must(t, CopyFromDevice(back, d2))
	if !slices.Equal(back[2048:], part.Bytes()) || slices.ContainsFunc(back[:2048], func(b byte) bool { return b != 0 }) {
		t.Error("sub-buffer copy landed in the wrong place")
	}
	// Go memory goes through the synchronous copies only.
	goSrc := []float64{1, 2, 3, math.Pi}
	must(t, CopyToDevice(d1, goSrc))
	must(t, MemcpyDtoD(d2, d1, 32))
	goDst := make([]float64, 4)
	must(t, CopyFromDevice(goDst, d2))
	if !slices.Equal(goSrc, goDst) {
		t.Errorf("synchronous copies gave %v", goDst)
	}
	small, err := h1.Sub(0, 32)
	must(t, err)
	must(t, MemcpyDtoH(small, d2))
	must(t, MemsetD8(d1, 0xff, 32))
	must(t, MemcpyHtoD(d1, small))
	must(t, CopyFromDevice(goDst, d1))
	if !slices.Equal(goSrc, goDst) {
		t.Errorf("pinned synchronous copies gave %v", goDst)
	}
}

// cyclesFor is about how many SM clock cycles d takes (at the highest
// clock: an idle clock only makes the spin longer).
func cyclesFor(t testing.TB, d time.Duration) int64 {
	khz, err := gpuDev.Attribute(AttrClockRate)
	if err != nil || khz <= 0 {
		t.Logf("clock rate attribute: %d, %v; assuming 2 GHz", khz, err)
		khz = 2_000_000
	}
	return int64(khz) * 1000 * int64(d) / int64(time.Second)
}

func launchSpin(t testing.TB, d time.Duration, s Stream) {
	t.Helper()
	var args KernelArgs
	args.Int64(cyclesFor(t, d))
	must(t, kernels(t).spin.Launch(Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, s, &args))
}

func TestCUDAStreamEventOrdering(t *testing.T) {
	requireGPU(t)
	s1, s2 := mustStream(t), mustStream(t)
	var evs [3]Event
	for i := range evs {
		e, err := NewEvent()
		must(t, err)
		defer e.Destroy()
		evs[i] = e
	}
	e1, e2, e3 := evs[0], evs[1], evs[2]
	launchSpin(t, 40*time.Millisecond, s1)
	must(t, e1.Record(s1))
	launchSpin(t, 40*time.Millisecond, s1)
	must(t, e2.Record(s1))
	must(t, s2.WaitEvent(e2)) // s2's later work waits for e2
	must(t, e3.Record(s2))
	start := time.Now()
	done1, err1 := e1.Query()
	done2, err2 := e2.Query()
	done3, err3 := e3.Query()
	sdone, serr := s1.Query()
	queryTime := time.Since(start)
	must(t, errors.Join(err1, err2, err3, serr))
	if done1 || done2 || done3 || sdone {
		t.Fatalf("work reported done while a 40 ms kernel runs: e1=%v e2=%v e3=%v s1=%v", done1, done2, done3, sdone)
	}
	if queryTime > 10*time.Millisecond {
		t.Errorf("four queries took %v: a query must not wait", queryTime)
	}
	// Poll until all are done: completion follows record order on s1, and
	// e3 (on s2, behind e2) never completes before e2.
	polls := 0
	for {
		d1, err1 := e1.Query()
		d2, err2 := e2.Query()
		d3, err3 := e3.Query()
		must(t, errors.Join(err1, err2, err3))
		polls++
		if d2 && !d1 {
			t.Fatal("e2 completed before e1 on the same stream")
		}
		if d3 && !d2 {
			t.Fatal("e3 completed before the event it waits for")
		}
		if d1 && d2 && d3 {
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatal("events not complete after 5 s")
		}
	}
	if done, err := s1.Query(); !done || err != nil {
		t.Errorf("stream query after completion: %v, %v", done, err)
	}
	must(t, e1.Synchronize())
	t.Logf("4 queries of pending work took %v; %d polls until completion after %v", queryTime, polls, time.Since(start))
}

// blasTrans maps a cuBLAS op to the CPU BLAS transpose.
func blasTrans(op Op) blas.Transpose {
	if op == OpT {
		return blas.Trans
	}
	return blas.NoTrans
}

func blasUplo(f Fill) blas.Uplo {
	if f == FillUpper {
		return blas.Upper
	}
	return blas.Lower
}

func randHost(rng *rand.Rand, n int) []float64 {
	a := make([]float64, n)
	for i := range a {
		a[i] = rng.Float64()*2 - 1
	}
	return a
}

func maxRelDiff(got, want []float64) float64 {
	var d, s float64
	for i := range want {
		d = math.Max(d, math.Abs(got[i]-want[i]))
		s = math.Max(s, math.Abs(want[i]))
	}
	if math.IsNaN(d) {
		return math.Inf(1)
	}
	return d / math.Max(s, 1)
}

// upload copies a to new device memory.
func upload(t testing.TB, a []float64) DevicePtr {
	t.Helper()
	p := mustAlloc(t, max(len(a), 1)*8)
	must(t, CopyToDevice(p, a))
	return p
}

func download(t testing.TB, p DevicePtr, n int, s Stream) []float64 {
	t.Helper()
	must(t, s.Synchronize())
	out := make([]float64, n)
	must(t, CopyFromDevice(out, p))
	return out
}

func TestCUDABlas(t *testing.T) {
	requireGPU(t)
	s := mustStream(t)
	h := mustBlas(t, s)
	ver, err := h.Version()
	must(t, err)
	t.Logf("cuBLAS %d from %s", ver, LibraryPath("cublas"))
	cpu := blas.Gonum()
	rng := rand.New(rand.NewPCG(2, 2))
	const m, n, k = 67, 45, 33

	for _, tA := range []Op{OpN, OpT} {
		for _, tB := range []Op{OpN, OpT} {
			ar, ac := m, k
			if tA == OpT {
				ar, ac = k, m
			}
			br, bc := k, n
			if tB == OpT {
				br, bc = n, k
			}
			lda, ldb, ldc := ar+3, br+1, m+2
			a, b, c := randHost(rng, lda*ac), randHost(rng, ldb*bc), randHost(rng, ldc*n)
			want := slices.Clone(c)
			must(t, cpu.Dgemm(blasTrans(tA), blasTrans(tB), m, n, k, 1.5, a, lda, b, ldb, -0.5, want, ldc))
			dc := upload(t, c)
			must(t, h.Dgemm(tA, tB, m, n, k, 1.5, upload(t, a), lda, upload(t, b), ldb, -0.5, dc, ldc))
			if d := maxRelDiff(download(t, dc, len(c), s), want); d > 1e-13 {
				t.Errorf("Dgemm %d%d: differs from the CPU by %.3g", tA, tB, d)
			}
		}
	}

	for _, side := range []SideMode{SideLeft, SideRight} {
		for _, uplo := range []Fill{FillLower, FillUpper} {
			for _, tA := range []Op{OpN, OpT} {
				na := m
				bside := blas.Left
				if side == SideRight {
					na, bside = n, blas.Right
				}
				lda, ldb := na+1, m+3
				a := randHost(rng, lda*na)
				for i := 0; i < na; i++ {
					for j := 0; j < na; j++ {
						a[i+j*lda] /= float64(na)
					}
					a[i+i*lda] = 2
				}
				b := randHost(rng, ldb*n)
				want := slices.Clone(b)
				must(t, cpu.Dtrsm(bside, blasUplo(uplo), blasTrans(tA), blas.NonUnit, m, n, 0.75, a, lda, want, ldb))
				db := upload(t, b)
				must(t, h.Dtrsm(side, uplo, tA, DiagNonUnit, m, n, 0.75, upload(t, a), lda, db, ldb))
				if d := maxRelDiff(download(t, db, len(b), s), want); d > 1e-12 {
					t.Errorf("Dtrsm side=%d uplo=%d t=%d: differs from the CPU by %.3g", side, uplo, tA, d)
				}
			}
		}
	}

	for _, uplo := range []Fill{FillLower, FillUpper} {
		for _, tr := range []Op{OpN, OpT} {
			ar, ac := n, k
			if tr == OpT {
				ar, ac = k, n
			}
			lda, ldc := ar+2, n+1
			a, c := randHost(rng, lda*ac), randHost(rng, ldc*n)
			want := slices.Clone(c)
			must(t, cpu.Dsyrk(blasUplo(uplo), blasTrans(tr), n, k, -1, a, lda, 0.5, want, ldc))
			dc := upload(t, c)
			must(t, h.Dsyrk(uplo, tr, n, k, -1, upload(t, a), lda, 0.5, dc, ldc))
			if d := maxRelDiff(download(t, dc, len(c), s), want); d > 1e-13 {
				t.Errorf("Dsyrk uplo=%d t=%d: differs from the CPU by %.3g", uplo, tr, d)
			}
		}
	}

	// Batched products of nb×nb tiles, strided and through pointer arrays.
	const nb, count = 24, 37
	stride := nb * nb
	a, b, c := randHost(rng, stride*count), randHost(rng, stride*count), randHost(rng, stride*count)
	want := slices.Clone(c)
	for i := 0; i < count; i++ {
		o := i * stride
		must(t, cpu.Dgemm(blas.NoTrans, blas.Trans, nb, nb, nb, -1, a[o:], nb, b[o:], nb, 1, want[o:], nb))
	}
	da, db, dc := upload(t, a), upload(t, b), upload(t, c)
	must(t, h.DgemmStridedBatched(OpN, OpT, nb, nb, nb, -1, da, nb, int64(stride), db, nb, int64(stride), 1, dc, nb, int64(stride), count))
	if d := maxRelDiff(download(t, dc, len(c), s), want); d > 1e-13 {
		t.Errorf("DgemmStridedBatched: differs from the CPU by %.3g", d)
	}
	dc2 := upload(t, c)
	var pa, pb, pc []uint64
	for i := 0; i < count; i++ {
		// Reverse the order of the batch: the pointers, not the layout,
		// define it.
		j := count - 1 - i
		pa = append(pa, uint64(da.Add(j*stride*8)))
		pb = append(pb, uint64(db.Add(j*stride*8)))
		pc = append(pc, uint64(dc2.Add(j*stride*8)))
	}
	arrays := mustAlloc(t, 3*count*8)
	must(t, CopyToDevice(arrays, slices.Concat(pa, pb, pc)))
	must(t, h.DgemmBatched(OpN, OpT, nb, nb, nb, -1, arrays, nb, arrays.Add(count*8), nb, 1, arrays.Add(2*count*8), nb, count))
	if d := maxRelDiff(download(t, dc2, len(c), s), want); d > 1e-13 {
		t.Errorf("DgemmBatched: differs from the CPU by %.3g", d)
	}
	if n := testing.AllocsPerRun(100, func() {
		_ = h.Dgemm(OpN, OpT, nb, nb, nb, -1, da, nb, db, nb, 1, dc, nb)
	}); n != 0 {
		t.Errorf("Dgemm: %v allocations per call", n)
	}
	// A status error comes back named.
	err = h.Dgemm(OpN, OpN, -1, 1, 1, 1, da, 1, db, 1, 0, dc, 1)
	var ce *Error
	if !errors.As(err, &ce) || ce.Lib != LibCublas || ce.Name != "CUBLAS_STATUS_INVALID_VALUE" {
		t.Errorf("Dgemm with m=-1: err = %v", err)
	}
}

func TestCUDASolverPotrf(t *testing.T) {
	requireGPU(t)
	s := mustStream(t)
	sv, err := NewSolver(s)
	must(t, err)
	defer func() { must(t, sv.Destroy()) }()
	t.Logf("cuSOLVER from %s", LibraryPath("cusolver"))
	for _, n := range []int{1, 300, 1000} {
		for _, uplo := range []Fill{FillLower, FillUpper} {
			lda := n + 5
			a := make([]float64, lda*n)
			must(t, blas.FillSPD(n, a, lda, uint64(n)))
			want := slices.Clone(a)
			must(t, blas.Gonum().Dpotrf(blasUplo(uplo), n, want, lda))
			da := upload(t, a)
			must(t, sv.Dpotrf(uplo, n, da, lda))
			info, err := sv.Info()
			must(t, err)
			if info != 0 {
				t.Fatalf("n=%d uplo=%d: info %d for a positive definite matrix", n, uplo, info)
			}
			if d := maxRelDiff(download(t, da, len(a), s), want); d > 1e-12 {
				t.Errorf("Dpotrf n=%d uplo=%d: differs from the CPU by %.3g", n, uplo, d)
			}
		}
	}
	work := make([]float64, 128*128)
	must(t, blas.FillSPD(128, work, 128, 1))
	dw := upload(t, work)
	must(t, sv.Dpotrf(FillLower, 128, dw, 128)) // sizes the workspace
	if n := testing.AllocsPerRun(20, func() { _ = sv.Dpotrf(FillLower, 128, dw, 128) }); n != 0 {
		t.Errorf("Dpotrf: %v allocations per call", n)
	}
	// A matrix whose leading minor of order 8 is indefinite.
	const n = 64
	a := make([]float64, n*n)
	must(t, blas.FillSPD(n, a, n, 5))
	a[7+7*n] = -1
	must(t, sv.Dpotrf(FillLower, n, upload(t, a), n))
	info, err := sv.Info()
	must(t, err)
	if info != 8 {
		t.Errorf("indefinite matrix: info %d, want 8", info)
	}
}

// The triangular product in place (C = B) and cuSOLVER's triangular
// inverse, against gonum; the inverse leaves the other triangle alone.
func TestCUDATrmmAndTrtri(t *testing.T) {
	requireGPU(t)
	s := mustStream(t)
	h := mustBlas(t, s)
	sv, err := NewSolver(s)
	must(t, err)
	defer func() { must(t, sv.Destroy()) }()
	rng := rand.New(rand.NewPCG(9, 9))
	const m, n = 67, 45
	for _, side := range []SideMode{SideLeft, SideRight} {
		for _, uplo := range []Fill{FillLower, FillUpper} {
			for _, tA := range []Op{OpN, OpT} {
				na := m
				if side == SideRight {
					na = n
				}
				lda, ldb := na+1, m+3
				a, b := randHost(rng, lda*na), randHost(rng, ldb*n)
				want := slices.Clone(b)
				colDtrmm(side, uplo, tA, DiagNonUnit, m, n, 0.75, a, lda, want, ldb)
				db := upload(t, b)
				must(t, h.Dtrmm(side, uplo, tA, DiagNonUnit, m, n, 0.75, upload(t, a), lda, db, ldb, db, ldb))
				if d := maxRelDiff(download(t, db, len(b), s), want); d > 1e-12 {
					t.Errorf("Dtrmm side=%d uplo=%d t=%d: differs from the CPU by %.3g", side, uplo, tA, d)
				}
			}
		}
	}
	for _, nt := range []int{1, 100, 512} {
		for _, uplo := range []Fill{FillLower, FillUpper} {
			lda := nt + 3
			a := randHost(rng, lda*nt)
			for i := range a {
				a[i] /= float64(nt) // well conditioned
			}
			for i := range nt {
				a[i+i*lda] = 2
			}
			want := slices.Clone(a)
			colDtrtri(uplo, DiagNonUnit, nt, want, lda)
			da := upload(t, a)
			dev, host, err := sv.DtrtriBufferSize(uplo, DiagNonUnit, nt, da, lda)
			must(t, err)
			work, err := MemAlloc(max(dev, 8))
			must(t, err)
			must(t, sv.DtrtriWorkspace(uplo, DiagNonUnit, nt, da, lda, work, max(dev, 8), make([]byte, host), sv.InfoPtr()))
			info, err := sv.Info()
			must(t, err)
			if d := maxRelDiff(download(t, da, len(a), s), want); d > 1e-12 || info != 0 {
				t.Errorf("Dtrtri n=%d uplo=%d: differs from the CPU by %.3g, info %d", nt, uplo, d, info)
			}
			must(t, MemFree(work))
		}
	}
}

func TestCUDANVRTC(t *testing.T) {
	requireGPU(t)
	major, minor, err := NVRTCVersion()
	must(t, err)
	k := kernels(t) // compiled for the real architecture: a CUBIN
	t.Logf("NVRTC %d.%d from %s compiled the test kernels for %s in %v", major, minor, LibraryPath("nvrtc"), k.arch, k.compileTime)
	for code, want := range nvrtcNames {
		if got, err := NVRTCErrorString(code); err != nil || got != want {
			t.Errorf("nvrtcResult %d: NVRTC says %q, table says %q", code, got, want)
		}
	}

	// The same kernel through PTX, which the driver compiles when loading.
	p, err := NewProgram(testKernels, "test_kernels.cu")
	must(t, err)
	defer p.Destroy()
	must(t, p.Compile("--gpu-architecture=compute_"+strings.TrimPrefix(k.arch, "sm_")))
	ptx, err := p.PTX()
	must(t, err)
	if !strings.Contains(string(ptx), ".entry axpby") {
		t.Fatalf("PTX without the axpby entry:\n%.300s", ptx)
	}
	mod, err := ModuleLoadData(ptx)
	must(t, err)
	defer mod.Unload()
	axpbyPTX, err := mod.Function("axpby")
	must(t, err)

	s := mustStream(t)
	const n = 10000
	rng := rand.New(rand.NewPCG(3, 3))
	x, y := randHost(rng, n), randHost(rng, n)
	dx := upload(t, x)
	var args KernelArgs
	for _, fn := range []Function{k.axpby, axpbyPTX} {
		dy := upload(t, y)
		args.Reset().Ptr(dy).Ptr(dx).Float64(2.5).Float64(-1).Int32(n)
		must(t, fn.Launch(Dim3{(n + 255) / 256, 1, 1}, Dim3{256, 1, 1}, 0, s, &args))
		got := download(t, dy, n, s)
		for i := range got {
			// The device contracts a·x + b·y into a fused multiply-add,
			// so the last bit may differ from Go's two roundings.
			if want := 2.5*x[i] - y[i]; math.Abs(got[i]-want) > 1e-15*math.Max(1, math.Abs(want)) {
				t.Fatalf("axpby[%d] = %g, want %g", i, got[i], want)
			}
		}
	}
	if _, err := mod.Function("no_such_kernel"); !errors.Is(err, &Error{Lib: LibDriver, Code: 500}) {
		t.Errorf("missing kernel: err = %v, want CUDA_ERROR_NOT_FOUND", err)
	}
	_, err = Compile("extern \"C\" __global__ void broken() { undeclared_name = 1; }", "broken.cu", "--gpu-architecture="+k.arch)
	var ce *Error
	if !errors.As(err, &ce) || ce.Lib != LibNvrtc || ce.Name != "NVRTC_ERROR_COMPILATION" || !strings.Contains(ce.Desc, "undeclared_name") {
		t.Errorf("compile error: %v", err)
	}
	if n := testing.AllocsPerRun(100, func() {
		_ = k.empty.Launch(Dim3{1, 1, 1}, Dim3{32, 1, 1}, 0, s, args.Reset())
	}); n != 0 {
		t.Errorf("Launch: %v allocations per call", n)
	}
	must(t, s.Synchronize())
}

// stats is the median, min and max of durations.
func stats(ds []time.Duration) (med, lo, hi time.Duration) {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2], s[0], s[len(s)-1]
}

// timeOnStream runs op reps times (after warm warm-up runs), each timed
// with events on s.
func timeOnStream(t testing.TB, s Stream, warm, reps int, op func()) []time.Duration {
	t.Helper()
	start, err := NewTimingEvent()
	must(t, err)
	defer start.Destroy()
	end, err := NewTimingEvent()
	must(t, err)
	defer end.Destroy()
	for range warm {
		op()
	}
	must(t, s.Synchronize())
	var ds []time.Duration
	for range reps {
		must(t, start.Record(s))
		op()
		must(t, end.Record(s))
		must(t, end.Synchronize())
		d, err := ElapsedTime(start, end)
		must(t, err)
		ds = append(ds, d)
	}
	return ds
}

// TestCUDAFigures measures what the binding offers the GPU manager and the
// baselines, and prints it as FIGURE lines.
func TestCUDAFigures(t *testing.T) {
	requireGPU(t)
	s := mustStream(t)
	k := kernels(t)

	// Event record + query round trip on an idle stream, from Go.
	e, err := NewEvent()
	must(t, err)
	defer e.Destroy()
	// recordAndPoll records e after op and polls it until done, as the
	// manager's progress loop does; it returns the time per iteration.
	recordAndPoll := func(iters int, op func()) time.Duration {
		start := time.Now()
		for range iters {
			op()
			must(t, e.Record(s))
			for {
				done, err := e.Query()
				must(t, err)
				if done {
					break
				}
			}
		}
		return time.Since(start) / time.Duration(iters)
	}
	roundTrip := func(iters int) time.Duration { return recordAndPoll(iters, func() {}) }
	roundTrip(2000)
	var rts []time.Duration
	for range 5 {
		rts = append(rts, roundTrip(20000))
	}
	med, lo, hi := stats(rts)
	t.Logf("FIGURE event record+query round trip: %v (min %v, max %v; 5 × 20000)", med, lo, hi)
	if n := testing.AllocsPerRun(1000, func() { _ = e.Record(s); _, _ = e.Query() }); n != 0 {
		t.Errorf("event record+query: %v allocations", n)
	}
	must(t, s.Synchronize())

	// An empty kernel launch plus its event, the floor of a singleton task.
	var noArgs KernelArgs
	launchRT := func(iters int) time.Duration {
		return recordAndPoll(iters, func() { must(t, k.empty.Launch(Dim3{1, 1, 1}, Dim3{32, 1, 1}, 0, s, &noArgs)) })
	}
	launchRT(1000)
	t.Logf("FIGURE empty kernel launch + record + query until done: %v", launchRT(20000))

	h := mustBlas(t, s)

	// dgemm at N=8192 on random data.
	const gn = 8192
	ga, gb, gc := allocFreed(t, gn*gn*8), allocFreed(t, gn*gn*8), allocFreed(t, gn*gn*8)
	for i, p := range []DevicePtr{ga, gb, gc} {
		fillRandom(t, p, gn*gn, uint64(i+1), s)
	}
	ds := timeOnStream(t, s, 2, 10, func() {
		must(t, h.Dgemm(OpN, OpN, gn, gn, gn, 1, ga, gn, gb, gn, 0, gc, gn))
	})
	med, lo, hi = stats(ds)
	tf := func(flops float64, d time.Duration) float64 { return flops / d.Seconds() / 1e12 }
	t.Logf("FIGURE cuBLAS dgemm N=%d: %.1f TFLOP/s (median of 10; min %.1f, max %.1f; %v per call)",
		gn, tf(blas.GemmFlops(gn, gn, gn), med), tf(blas.GemmFlops(gn, gn, gn), hi), tf(blas.GemmFlops(gn, gn, gn), lo), med)
	for _, p := range []DevicePtr{ga, gb, gc} {
		must(t, MemFree(p))
	}

	// Strided-batched dgemm of nb×nb tiles, C −= A·Bᵀ as in a Cholesky update.
	for _, c := range []struct{ nb, count int }{{32, 100000}, {64, 50000}, {128, 20000}} {
		size := c.nb * c.nb * c.count * 8
		a, b, cc := allocFreed(t, size), allocFreed(t, size), allocFreed(t, size)
		for i, p := range []DevicePtr{a, b, cc} {
			fillRandom(t, p, size/8, uint64(10+i), s)
		}
		stride := int64(c.nb * c.nb)
		for _, tB := range []Op{OpN, OpT} {
			ds := timeOnStream(t, s, 2, 10, func() {
				must(t, h.DgemmStridedBatched(OpN, tB, c.nb, c.nb, c.nb, -1, a, c.nb, stride, b, c.nb, stride, 1, cc, c.nb, stride, c.count))
			})
			med, lo, hi := stats(ds)
			rate := func(d time.Duration) float64 { return float64(c.count) / d.Seconds() / 1e6 }
			t.Logf("FIGURE strided-batched dgemm nb=%d op=N%c: %.1f M gemm/s (%.1f TFLOP/s; batch %d; median of 10, min %.1f, max %.1f M/s)",
				c.nb, "NT"[tB], rate(med), tf(blas.GemmFlops(c.nb, c.nb, c.nb)*float64(c.count), med), c.count, rate(hi), rate(lo))
		}
		for _, p := range []DevicePtr{a, b, cc} {
			must(t, MemFree(p))
		}
	}

	// cuSOLVER dpotrf on resident data: the factorization alone, timed with
	// events, restored from a pristine copy before each run.
	sv, err := NewSolver(s)
	must(t, err)
	defer sv.Destroy()
	for _, n := range []int{4096, 8192, 16384, 32768} {
		bytes := n * n * 8
		pristine, work := allocFreed(t, bytes), allocFreed(t, bytes)
		fillSPD(t, pristine, n, n, uint64(n), s)
		var ds []time.Duration
		for rep := range 4 {
			must(t, MemcpyDtoDAsync(work, pristine, bytes, s))
			d := timeOnStream(t, s, 0, 1, func() { must(t, sv.Dpotrf(FillLower, n, work, n)) })
			info, err := sv.Info()
			must(t, err)
			if info != 0 {
				t.Fatalf("dpotrf N=%d: info %d", n, info)
			}
			if rep > 0 { // the first run is the warm-up
				ds = append(ds, d[0])
			}
		}
		med, lo, hi := stats(ds)
		t.Logf("FIGURE cuSOLVER dpotrf N=%d resident: %.1f TFLOP/s (%v; median of 3, min %.1f, max %.1f)",
			n, tf(blas.PotrfFlops(n), med), med, tf(blas.PotrfFlops(n), hi), tf(blas.PotrfFlops(n), lo))
		resident := med
		if n >= 8192 {
			// The comparator of a task runtime: copy in from pinned host
			// memory, factor, copy out, all on one stream, timed with events.
			host, err := MemHostAlloc(bytes, 0)
			must(t, err)
			must(t, MemcpyDtoHAsync(host, pristine, s))
			var e2e []time.Duration
			for rep := range 3 {
				d := timeOnStream(t, s, 0, 1, func() {
					must(t, MemcpyHtoDAsync(work, host, s))
					must(t, sv.Dpotrf(FillLower, n, work, n))
					must(t, MemcpyDtoHAsync(host, work, s))
				})
				if rep > 0 {
					e2e = append(e2e, d[0])
				}
				info, err := sv.Info()
				must(t, err)
				if info != 0 {
					t.Fatalf("dpotrf N=%d from host: info %d", n, info)
				}
				must(t, MemcpyDtoDAsync(work, pristine, bytes, s))
				must(t, MemcpyDtoHAsync(host, pristine, s))
			}
			med, lo, hi := stats(e2e)
			copies := med - resident
			t.Logf("FIGURE cuSOLVER dpotrf N=%d plus copies from pinned host memory: %.1f TFLOP/s (%v; min %v, max %v of 2; the copies add %v, %.1f GB/s for 2 × %.2f GB)",
				n, tf(blas.PotrfFlops(n), med), med, lo, hi, copies, 2*float64(bytes)/copies.Seconds()/1e9, float64(bytes)/1e9)
			must(t, host.Free())
		}
		must(t, MemFree(pristine))
		must(t, MemFree(work))
	}
}

// TestCUDAQueryErrors comes last: it feeds the driver bad handles on
// purpose.
func TestCUDAQueryErrors(t *testing.T) {
	requireGPU(t)
	done, err := Event(0).Query()
	var ce *Error
	if done || !errors.As(err, &ce) || ce.Lib != LibDriver || errors.Is(err, ErrNotReady) {
		t.Fatalf("query of a null event: done=%v err=%v, want a driver error", done, err)
	}
	t.Logf("query of a null event: %v", err)
	// Timing-disabled events cannot be timed: documented as
	// CUDA_ERROR_INVALID_HANDLE.
	s := mustStream(t)
	e1, err := NewEvent()
	must(t, err)
	defer e1.Destroy()
	e2, err := NewEvent()
	must(t, err)
	defer e2.Destroy()
	must(t, e1.Record(s))
	must(t, e2.Record(s))
	must(t, e2.Synchronize())
	if _, err := ElapsedTime(e1, e2); !errors.Is(err, ErrInvalidHandle) {
		t.Errorf("ElapsedTime of untimed events: err = %v, want CUDA_ERROR_INVALID_HANDLE", err)
	}
	free, _, err := MemGetInfo()
	must(t, err)
	if p, err := MemAlloc(int(free) + 1<<30); !errors.Is(err, ErrOutOfMemory) {
		t.Errorf("MemAlloc(free + 1 GiB): err = %v, want CUDA_ERROR_OUT_OF_MEMORY", err)
		if err == nil {
			_ = MemFree(p)
		}
	}
}
