package cuda

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/driver"
	"github.com/jdf2go/jdf2go/rt/gpu/gputest"
	"github.com/jdf2go/jdf2go/rt/rttest"
)

// The tests in this file drive the backend on a real GPU and skip without
// one (ErrUnavailable). On the GPU machine:
//
//	CGO_ENABLED=0 go test -c -o .gpu/cuda.test ./rt/gpu/cuda
//	.gpu/cuda.test -test.v -test.run 'Scenario|Episode|GPURT|GPUBackend'

const backendTestKernels = `
extern "C" __global__ void cudatest_spin(long long cycles) {
	long long start = clock64();
	while (clock64() - start < cycles) { }
}

// spin_mark spins, then stores v: whoever reads v knows the kernel ended.
extern "C" __global__ void cudatest_spin_mark(double* p, long long cycles, double v) {
	long long start = clock64();
	while (clock64() - start < cycles) { }
	p[0] = v;
}

extern "C" __global__ void cudatest_fault(double* p) { p[0] = 1.0; }
`

func init() {
	for _, name := range []string{"cudatest_spin", "cudatest_spin_mark", "cudatest_fault"} {
		if err := gpu.RegisterKernel(gpu.KernelSpec{Name: name, CUDA: backendTestKernels}); err != nil {
			panic(err)
		}
	}
}

// openGPUBackend skips without a GPU and opens device 0.
func openGPUBackend(t *testing.T, opts ...Option) *Backend {
	t.Helper()
	requireGPU(t)
	b, err := OpenDevice(0, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// launchSpinK enqueues a kernel that spins for about cycles clock cycles.
func launchSpinK(s *DeviceStream, cycles int64) error {
	k, err := s.b.Kernel("cudatest_spin")
	if err != nil {
		return err
	}
	return s.Launch(k, gpu.Dim3{X: 1}, gpu.Dim3{X: 1}, 0, []any{cycles})
}

// Scenario 36: events recorded on real streams complete in record order
// and are queried without blocking; a failing query is a failure, never
// "not ready" (the manager fails the task instead of polling forever).
func TestScenario36_EventsInOrderNonBlocking(t *testing.T) {
	if os.Getenv("JDF2GO_CUDA_TEST_FAULT") == "1" {
		faultChild(t)
		return
	}
	b := openGPUBackend(t)
	defer b.Close()
	sb, err := b.NewStream("s36", 4)
	must(t, err)
	s := sb.(*DeviceStream)
	defer s.Close()
	must(t, launchSpinK(s, cyclesFor(t, 30*time.Millisecond)))
	must(t, s.Record(0))
	must(t, launchSpinK(s, cyclesFor(t, 30*time.Millisecond)))
	must(t, s.Record(1))
	must(t, s.Record(2))
	start := time.Now()
	var slowest time.Duration
	for {
		// Newest first: an event found done means every older one is done by
		// the time it is queried. Oldest first, a completion between two
		// queries would show a newer event done and an older one not.
		var done [3]bool
		for i := len(done) - 1; i >= 0; i-- {
			q := time.Now()
			d, err := s.Query(i)
			must(t, err)
			slowest = max(slowest, time.Since(q))
			done[i] = d
		}
		if (done[1] && !done[0]) || (done[2] && !done[1]) {
			t.Fatalf("completion out of record order: %v", done)
		}
		if done[0] && done[1] && done[2] {
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatal("events never complete")
		}
	}
	if total := time.Since(start); total < 50*time.Millisecond {
		t.Fatalf("two 30 ms kernels completed in %v", total)
	}
	if slowest > 2*time.Millisecond {
		t.Errorf("a query took %v: queries must not block", slowest)
	}
	t.Logf("in order, slowest query %v", slowest)

	// A kernel that faults breaks the context for good, so that part runs
	// in a child process.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run", "^TestScenario36_EventsInOrderNonBlocking$", "-test.v")
	cmd.Env = append(os.Environ(), "JDF2GO_CUDA_TEST_FAULT=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "FAULT-SURFACED") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "FAULT-SURFACED") {
			t.Log(strings.TrimSpace(l))
		}
	}
}

// faultChild submits a task whose kernel writes to an illegal address: the
// query of its event fails, and the manager fails the task.
func faultChild(t *testing.T) {
	b := openGPUBackend(t)
	h := newHost()
	d := newDevice(t, b, h)
	inc := &gpu.Incarnation{Name: "fault", Submit: func(_ *gpu.Device, _ *gpu.Task, s *gpu.Stream) gpu.Result {
		if err := s.Launch("cudatest_fault", gpu.Dim3{X: 1}, gpu.Dim3{X: 1}, driver.Ptr(16)); err != nil {
			return gpu.Error
		}
		return gpu.Done
	}}
	done := make(chan error, 1)
	go func() { done <- d.Submit(context.Background(), nil, d.NewTask(ec{1}, inc)) }()
	select {
	case err := <-done:
		if !errors.Is(err, gpu.ErrTaskFailed) {
			t.Fatalf("Submit: %v, want ErrTaskFailed", err)
		}
		fmt.Printf("FAULT-SURFACED: %v\n", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the manager polls a failed event forever")
	}
}

// Scenario 37: after a hook returns ERROR, the stream is quiesced before
// the cleanout: a long kernel the hook launched first has finished.
func TestScenario37_QuiesceWaitsForKernelAfterError(t *testing.T) {
	b := openGPUBackend(t)
	var ptr driver.Ptr
	var launched time.Time
	spin := cyclesFor(t, 200*time.Millisecond)
	cleaned := make(chan [2]any, 1)
	h := &markHost{host: newHost(), onCleanout: func() {
		var v [1]float64
		err := CopyFromDevice(v[:], DevicePtr(ptr))
		cleaned <- [2]any{v[0], errors.Join(err, nil)}
	}}
	d := openBackends(t, []gpu.Option{gpu.WithCompleter(h), gpu.WithScheduler(h.host), gpu.WithLogger(quiet)}, b)[0].Device()
	data := &hostData{b: make([]byte, 8)}
	inc := &gpu.Incarnation{Name: "fails", Submit: func(_ *gpu.Device, tk *gpu.Task, s *gpu.Stream) gpu.Result {
		ptr = tk.Buffer(0).Ptr
		launched = time.Now()
		if err := s.Launch("cudatest_spin_mark", gpu.Dim3{X: 1}, gpu.Dim3{X: 1}, tk.Buffer(0), spin, 42.0); err != nil {
			return gpu.Disable
		}
		return gpu.Error
	}}
	err := d.Submit(context.Background(), nil, d.NewTask(ec{1}, inc, gpu.Flow{Data: data, Access: gpu.ReadWrite, Elem: gpu.Float64}))
	if !errors.Is(err, gpu.ErrTaskFailed) {
		t.Fatalf("Submit: %v", err)
	}
	got := <-cleaned
	waited := time.Since(launched)
	if got[1] != nil {
		t.Fatal(got[1])
	}
	if got[0].(float64) != 42 {
		t.Fatalf("at cleanout the kernel had not finished (marker %v)", got[0])
	}
	if waited < 150*time.Millisecond {
		t.Fatalf("the manager returned %v after launching a 200 ms kernel", waited)
	}
	t.Logf("cleanout after %v, marker written", waited)
	must(t, d.Close())
}

type markHost struct {
	*host
	onCleanout func()
}

func (m *markHost) Cleanout(t *gpu.Task, cause error) {
	m.onCleanout()
	m.host.Cleanout(t, cause)
}

// callLog records the CUDA calls and the OS thread of each while installed.
type callLog struct {
	mu    sync.Mutex
	calls []call
}

type call struct {
	tid  int
	name string
}

func (l *callLog) install() (stop func()) {
	prev := SetCallObserver(func(name string) {
		tid := syscall.Gettid()
		l.mu.Lock()
		l.calls = append(l.calls, call{tid, name})
		l.mu.Unlock()
	})
	return func() { SetCallObserver(prev) }
}

// check verifies that the calls come in runs, one OS thread each, and that
// every run starts by making the context current there: nothing calls
// CUDA from a thread it did not bind, and no two threads interleave.
func (l *callLog) check(t *testing.T) (threads map[int]int) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	threads = map[int]int{}
	prev := -1
	for i, c := range l.calls {
		if c.tid != prev && c.name != "cuCtxSetCurrent" {
			t.Fatalf("call %d (%s) on thread %d follows a call on thread %d without binding the context first (%v)",
				i, c.name, c.tid, prev, l.calls[max(0, i-3):min(len(l.calls), i+2)])
		}
		threads[c.tid]++
		prev = c.tid
	}
	return threads
}

// Scenario 38: two management episodes on two OS threads, each with the
// device's primary context current; every CUDA call of an episode happens
// on its locked thread.
func TestScenario38_ManagerContextBinding(t *testing.T) {
	b := openGPUBackend(t)
	h := newHost()
	d := newDevice(t, b, h)
	type seen struct {
		tid int
		ctx Context
		err error
	}
	var hooks []seen
	data := &hostData{b: make([]byte, 1<<20)}
	inc := &gpu.Incarnation{Name: "where", Submit: func(_ *gpu.Device, tk *gpu.Task, s *gpu.Stream) gpu.Result {
		c, err := CurrentContext()
		hooks = append(hooks, seen{syscall.Gettid(), c, err})
		buf := tk.Buffer(0)
		if err := s.Dgemm(blas.NoTrans, blas.NoTrans, 16, 16, 16, 1, buf.Slice(0, 256), 16, buf.Slice(256, 512), 16, 0, buf.Slice(512, 768), 16); err != nil {
			return gpu.Error
		}
		return gpu.Done
	}}
	// NewDevice loads the runtime's own kernel on a goroutine of its own,
	// which binds the context on its thread: the log is for the episodes.
	must(t, d.Ready(t.Context()))
	var log callLog
	stop := log.install()
	episode := func(i int, hold chan struct{}, tids chan int) {
		runtime.LockOSThread() // keep this thread while the other episode runs
		defer runtime.UnlockOSThread()
		tids <- syscall.Gettid()
		err := d.Submit(context.Background(), nil, d.NewTask(ec{i}, inc, gpu.Flow{Data: data, Access: gpu.ReadWrite, Elem: gpu.Float64}))
		if err != nil {
			t.Error(err)
		}
		<-hold
	}
	hold := make(chan struct{})
	tids := make(chan int, 2)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); episode(1, hold, tids) }()
	t1 := <-tids
	for d.Stats().Executed < 1 {
		time.Sleep(time.Millisecond)
	}
	go func() { defer wg.Done(); episode(2, hold, tids) }()
	t2 := <-tids
	for d.Stats().Executed < 2 {
		time.Sleep(time.Millisecond)
	}
	close(hold)
	wg.Wait()
	stop()
	if t1 == t2 {
		t.Fatalf("both episodes ran on thread %d", t1)
	}
	if len(hooks) != 2 || hooks[0].tid != t1 || hooks[1].tid != t2 {
		t.Fatalf("hooks ran on %+v, episodes on %d and %d", hooks, t1, t2)
	}
	for _, hk := range hooks {
		if hk.err != nil || hk.ctx != b.Context() {
			t.Fatalf("hook saw context %#x (%v), want the primary context %#x", hk.ctx, hk.err, b.Context())
		}
	}
	threads := log.check(t)
	if len(threads) != 2 || threads[t1] == 0 || threads[t2] == 0 {
		t.Fatalf("CUDA calls by thread %v, want only the episodes' threads %d and %d", threads, t1, t2)
	}
	t.Logf("episode threads %d and %d; CUDA calls per thread %v", t1, t2, threads)
	must(t, d.Close())
}

// Every CUDA call of the management episodes of an rt program (tiled
// Cholesky and batched GEMM, several workers, data staged from Go memory)
// happens on the episode's thread after binding the context there.
func TestEpisodeCUDACallsOnLockedThread(t *testing.T) {
	b := openGPUBackend(t)
	d := openBackends(t, []gpu.Option{gpu.WithLogger(quiet)}, b)[0]
	must(t, d.Device().Ready(t.Context())) // as in scenario 38
	var log callLog
	stop := log.install()
	tiledPotrfCase(t, []*gpu.RTDevice{d}, 700, 128, nil)
	tiledGemmCase(t, []*gpu.RTDevice{d}, 512, 384, 640, 64, true)
	stop()
	threads := log.check(t)
	n := 0
	for _, c := range threads {
		n += c
	}
	t.Logf("%d CUDA calls on %d threads, %d episodes", n, len(threads), d.Device().Stats().Episodes)
	must(t, d.Close())
}

// ptrPool is a bounded per-stream pool of pointer-array slots for batched
// GEMM bodies (scenario 39): pinned host arrays and their device copies.
type ptrPool struct {
	free     []int
	host     [][]uint64
	dev      []driver.Ptr
	inUse    int
	maxInUse int
}

// Scenario 39: a batched GEMM body with a bounded pool of pointer-array
// slots per stream checks for a free slot before collecting, returns AGAIN
// (without collecting) when none is free, and gives one slot back per DONE
// ring from complete_stage.
func TestScenario39_BatchedGemmBoundedPointerPool(t *testing.T) {
	b := openGPUBackend(t)
	h := newHost()
	d := newDevice(t, b, h, gpu.WithComputeStreams(1))
	const nb, tasks, slotsPerStream, ringCap = 64, 96, 2, 8
	pinned, err := NewPinnedPool(1 << 20)
	must(t, err)
	defer pinned.Close()
	pools := map[*gpu.Stream]*ptrPool{}
	for k := range d.NumCompute() {
		p := &ptrPool{}
		for i := range slotsPerStream {
			raw, err := pinned.Bytes(3 * ringCap * 8)
			must(t, err)
			p.host = append(p.host, unsafeUint64s(raw))
			dp, err := b.Alloc(3 * ringCap * 8)
			must(t, err)
			p.dev = append(p.dev, dp)
			p.free = append(p.free, i)
		}
		pools[d.Compute(k)] = p
	}
	spin := cyclesFor(t, time.Millisecond)
	var agains, dones, completes, rings atomic.Int64
	var maxRing atomic.Int64
	inc := &gpu.Incarnation{Name: "bgemm", Batch: true}
	inc.Submit = func(_ *gpu.Device, head *gpu.Task, s *gpu.Stream) gpu.Result {
		pool := pools[s]
		if len(pool.free) == 0 {
			// Backpressure before collecting: an ordinary singleton retry.
			agains.Add(1)
			return gpu.Again
		}
		slot := pool.free[len(pool.free)-1]
		pool.free = pool.free[:len(pool.free)-1]
		pool.inUse++
		pool.maxInUse = max(pool.maxInUse, pool.inUse)
		if _, err := s.CollectBatch(head, gpu.BatchPolicy{Max: ringCap}.Match, nil); err != nil {
			return gpu.Error
		}
		n := head.RingLen()
		rings.Add(1)
		if int64(n) > maxRing.Load() {
			maxRing.Store(int64(n))
		}
		arr := pool.host[slot]
		i := 0
		for x := range head.Ring() {
			arr[i], arr[n+i], arr[2*n+i] = uint64(x.Buffer(0).Ptr), uint64(x.Buffer(1).Ptr), uint64(x.Buffer(2).Ptr)
			i++
		}
		ds := s.Backend().(*DeviceStream)
		hm, _ := pinnedAt(unsafeBytes(arr[:3*n]))
		dev := DevicePtr(pool.dev[slot])
		if err := launchSpinK(ds, spin); err != nil {
			return gpu.Error
		}
		if err := MemcpyHtoDAsync(dev, hm, ds.Stream()); err != nil {
			return gpu.Error
		}
		blasH, err := ds.Blas()
		if err != nil {
			return gpu.Error
		}
		if err := blasH.DgemmBatched(OpN, OpN, nb, nb, nb, 1, dev, nb, dev+DevicePtr(8*n), nb, 0, dev+DevicePtr(16*n), nb, n); err != nil {
			return gpu.Error
		}
		head.SetCompleteStage(func(*gpu.Device, *gpu.Task, *gpu.Stream) gpu.Result {
			pool.free = append(pool.free, slot)
			pool.inUse--
			completes.Add(1)
			return gpu.Done
		})
		dones.Add(1)
		return gpu.Done
	}
	rng := newRand(39)
	var as, bs, cs []*hostData
	var wantC [][]float64
	for range tasks {
		a, bm := randMat(rng, nb*nb), randMat(rng, nb*nb)
		c := make([]float64, nb*nb)
		must(t, blas.Gonum().Dgemm(blas.NoTrans, blas.NoTrans, nb, nb, nb, 1, a, nb, bm, nb, 0, c, nb))
		as, bs, wantC = append(as, &hostData{b: driver.Float64sAsBytes(a)}), append(bs, &hostData{b: driver.Float64sAsBytes(bm)}), append(wantC, c)
		cs = append(cs, &hostData{b: make([]byte, nb*nb*8)})
	}
	var wg sync.WaitGroup
	for i := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := d.Submit(context.Background(), nil, d.NewTask(ec{i}, inc,
				gpu.Flow{Data: as[i], Access: gpu.Read, Elem: gpu.Float64}, gpu.Flow{Data: bs[i], Access: gpu.Read, Elem: gpu.Float64},
				gpu.Flow{Data: cs[i], Access: gpu.Write, Elem: gpu.Float64})); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for d.Outstanding() != 0 {
		time.Sleep(time.Millisecond)
	}
	for i := range tasks {
		got := bytesAsFloat64s(cs[i].b)
		if maxRelDiff(got, wantC[i]) > 1e-13 {
			t.Fatalf("task %d: product differs", i)
		}
		if h.completed[ec{i}] != 1 {
			t.Fatalf("task %d completed %d times", i, h.completed[ec{i}])
		}
	}
	for s, p := range pools {
		if p.maxInUse > slotsPerStream || p.inUse != 0 || len(p.free) != slotsPerStream {
			t.Fatalf("%s: %d slots at most in use, %d still in use", s.Name(), p.maxInUse, p.inUse)
		}
	}
	if agains.Load() == 0 || dones.Load() != completes.Load() || maxRing.Load() > ringCap || rings.Load() >= tasks {
		t.Fatalf("%d AGAIN, %d DONE rings, %d complete_stage calls, largest ring %d, %d rings for %d tasks",
			agains.Load(), dones.Load(), completes.Load(), maxRing.Load(), rings.Load(), tasks)
	}
	t.Logf("%d tasks in %d rings (largest %d), %d AGAIN for backpressure, %d slots released by complete_stage",
		tasks, rings.Load(), maxRing.Load(), agains.Load(), completes.Load())
	for _, p := range pools {
		for _, dp := range p.dev {
			must(t, b.Free(dp))
		}
	}
	must(t, d.Close())
}

// The rt end-to-end tests use JDF2GO_GPUS=cuda, as a program would.
func openRTFromEnv(t *testing.T) []*gpu.RTDevice {
	t.Helper()
	requireGPU(t)
	t.Setenv(gpu.EnvDevices, "cuda")
	devs, err := gpu.Open("", gpu.WithLogger(quiet))
	must(t, err)
	if len(devs) == 0 {
		t.Fatal("JDF2GO_GPUS=cuda opened no device on a machine with CUDA")
	}
	return devs
}

func closeRT(t *testing.T, devs []*gpu.RTDevice) {
	t.Helper()
	for _, d := range devs {
		must(t, d.Close())
	}
}

func TestGPURTTiledGemm(t *testing.T) {
	devs := openRTFromEnv(t)
	tiledGemmCase(t, devs, 1000, 900, 1100, 128, false)
	tiledGemmCase(t, devs, 1024, 1024, 1024, 128, true)
	st := totalStats(devs)
	batched, strided := st.Batched, st.Strided
	if batched+strided == 0 {
		t.Fatal("batched GEMM made no batched call")
	}
	t.Logf("batched calls: %d with pointer arrays, %d strided", batched, strided)
	closeRT(t, devs)
}

func TestGPURTTiledPotrf(t *testing.T) {
	devs := openRTFromEnv(t)
	tiledPotrfCase(t, devs, 1000, 128, nil) // Go memory: staged
	pool, err := NewPinnedPool(0)
	must(t, err)
	defer pool.Close()
	before := totalStats(devs)
	tiledPotrfCase(t, devs, 1500, 256, pool.Float64s)
	after := totalStats(devs)
	if after.StagedBytes != before.StagedBytes || after.DirectBytes == before.DirectBytes {
		t.Fatalf("pinned tiles were staged: %+v then %+v", before, after)
	}
	// A tile that is not positive definite fails the taskpool with the
	// cause, through cuSOLVER's status word.
	const n, nb = 512, 128
	dense := rttest.RandomSPD(n, 1)
	dense[300+300*n] = -1e6
	a, err := rt.NewTiledMatrix(n, n, nb, nb, 1, 1, 0)
	must(t, err)
	a.FillFromDense(dense, n)
	c, err := rt.New(rt.Workers(2), rt.Devices(gpu.RTDevices(devs)...))
	must(t, err)
	tp := gputest.NewPotrf(a, gputest.WriteFinal)
	must(t, c.Add(tp))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := tp.Wait(ctx); !errors.Is(err, driver.ErrNotPositiveDefinite) || !strings.Contains(err.Error(), "POTRF(2)") {
		t.Fatalf("Wait: %v, want POTRF(2) failing with ErrNotPositiveDefinite", err)
	}
	must(t, c.Close())
	closeRT(t, devs)
}

func totalStats(devs []*gpu.RTDevice) StreamStats {
	var s StreamStats
	for _, d := range devs {
		if b, ok := backendOf(d); ok {
			s.add(b.StreamStats())
		}
	}
	return s
}

// TestGPUBackendStagingAndPool checks staged copies of every size through
// a small ring, and the pool's out-of-memory error, on the device.
func TestGPUBackendStagingAndPool(t *testing.T) {
	b := openGPUBackend(t, StagingBytes(1<<20), MemFraction(0.02))
	sb, err := b.NewStream("staging", 4)
	must(t, err)
	s := sb.(*DeviceStream)
	for _, n := range []int{1, 100, 4096, 1 << 20, 5<<20 + 3} {
		p, err := b.Alloc(int64(n))
		must(t, err)
		src := randomBytes(n, uint64(n))
		must(t, s.CopyHtoD(p, src))
		dst := make([]byte, n)
		must(t, s.CopyDtoH(dst, p))
		must(t, s.Record(0))
		must(t, waitQuery(t, s, 0))
		if !slices.Equal(src, dst) {
			t.Fatalf("%d bytes: staged round trip changed the data", n)
		}
		must(t, b.Free(p))
	}
	free, total, _ := b.MemInfo()
	if _, err := b.Alloc(total + 1); !errors.Is(err, driver.ErrOutOfMemory) {
		t.Fatalf("Alloc beyond the pool: %v", err)
	}
	t.Logf("pool %.1f GiB (%.1f free), stream stats %+v", float64(total)/(1<<30), float64(free)/(1<<30), s.Stats())
	must(t, b.Close())
}

// backendOf finds the CUDA backend of a device through one of its streams.
func backendOf(d *gpu.RTDevice) (*Backend, bool) {
	s, ok := d.Device().StageIn().Backend().(*DeviceStream)
	if !ok {
		return nil, false
	}
	return s.b, true
}

func unsafeUint64s(b []byte) []uint64 {
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/8)
}

func unsafeBytes(u []uint64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(u))), len(u)*8)
}

func bytesAsFloat64s(b []byte) []float64 {
	f, err := driver.BytesAsFloat64s(b)
	if err != nil {
		panic(err)
	}
	return f
}

func newRand(seed uint64) *randSource { return &randSource{s: seed} }

// randSource is a splitmix64 stream of values in [-0.5, 0.5).
type randSource struct{ s uint64 }

func (r *randSource) next() float64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11)/(1<<53) - 0.5
}

func randMat(r *randSource, n int) []float64 {
	m := make([]float64, n)
	for i := range m {
		m[i] = r.next()
	}
	return m
}

// Scenario 40 on two GPUs (skipped with fewer): the devices of JDF2GO_GPUS=cuda
// are linked (cuCtxEnablePeerAccess), and the tiled Cholesky, each tile's
// writers pinned to one device, reads the tiles another device wrote through
// peer copies (cuMemcpyPeerAsync), never from stale host copies. Every peer
// reader is released through the source device's counter, directly or by a
// counted D2D_COMPLETE command; the factor matches the CPU's.
func TestScenario40_D2DCompleteGPU(t *testing.T) {
	requireGPU(t)
	if n, err := Count(); err != nil || n < 2 {
		t.Skipf("skipped: %d CUDA devices (%v); scenario 40 needs two", n, err)
	}
	devs := openRTFromEnv(t)
	for _, d := range devs {
		if len(d.Device().Peers()) != len(devs)-1 {
			t.Fatalf("%s is linked to %d devices of %d", d.Name(), len(d.Device().Peers()), len(devs))
		}
	}
	tiledPotrfCase(t, devs, 4096, 512, nil)
	var copies, direct, commands uint64
	for _, d := range devs {
		st := d.Device().Stats()
		copies += st.PeerCopies
		direct += st.D2DDirect
		commands += st.D2DCommands
	}
	t.Logf("%d peer copies; readers released %d directly, %d by D2D_COMPLETE command", copies, direct, commands)
	if copies == 0 || direct+commands != copies {
		t.Fatalf("%d peer copies, %d + %d releases", copies, direct, commands)
	}
	closeRT(t, devs)
}
