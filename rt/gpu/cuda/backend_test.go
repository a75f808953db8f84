package cuda

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/driver"
	"github.com/jdf2go/jdf2go/rt/gpu/gputest"
	"github.com/jdf2go/jdf2go/rt/rttest"
)

// These tests run the backend over the CPU fake of the CUDA libraries
// (fakeops_test.go): the pool, the staging rings, the deferred completions
// and failures, and the manager on top. The same logic runs on a GPU in
// gpu_backend_test.go.

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// fakeClosed checks that closing the backend gave everything back.
func fakeClosed(t *testing.T, f *fakeOps) {
	t.Helper()
	f.close()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.allocs) != 0 || len(f.hosts) != 0 || len(f.streams) != 0 || len(f.events) != 0 {
		t.Fatalf("after Close: %d device allocations, %d pinned, %d streams, %d events",
			len(f.allocs), len(f.hosts), len(f.streams), len(f.events))
	}
}

func stream(t *testing.T, b *Backend) *DeviceStream {
	t.Helper()
	s, err := b.NewStream("test", 4)
	if err != nil {
		t.Fatal(err)
	}
	return s.(*DeviceStream)
}

// waitQuery polls slot until it completes or fails.
func waitQuery(t *testing.T, s *DeviceStream, slot int) error {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		done, err := s.Query(slot)
		if err != nil || done {
			return err
		}
		if time.Now().After(deadline) {
			t.Fatalf("slot %d of %s never completes", slot, s.name)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestFakeStagedCopyOutWaitsForTheManagersQuery(t *testing.T) {
	b, f := newFakeBackend(t, 1<<30)
	s := stream(t, b)
	const n = 40 << 10
	p, err := b.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	src := randomBytes(n, 1)
	if err := s.CopyHtoD(p, src); err != nil { // Go memory: staged
		t.Fatal(err)
	}
	must(t, s.Record(0))
	clear(src) // the source may change once the call returned
	if err := waitQuery(t, s, 0); err != nil {
		t.Fatal(err)
	}
	resume := f.pause(s.s)
	dst := slices.Repeat([]byte{0xee}, n)
	must(t, s.CopyDtoH(dst, p))
	must(t, s.Record(1))
	// The copy cannot have run: the stream is paused. The destination is
	// untouched, and stays so while the event is pending.
	for range 3 {
		if done, err := s.Query(1); done || err != nil {
			t.Fatalf("query of a paused stream: %v %v", done, err)
		}
	}
	if slices.ContainsFunc(dst, func(x byte) bool { return x != 0xee }) {
		t.Fatal("the Go destination changed before the copy completed")
	}
	// An earlier event does not deliver a later copy.
	if done, err := s.Query(0); !done || err != nil {
		t.Fatalf("earlier event: %v %v", done, err)
	}
	if dst[0] != 0xee {
		t.Fatal("the query of an earlier event delivered a later copy")
	}
	resume()
	if err := waitQuery(t, s, 1); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(dst, randomBytes(n, 1)) {
		t.Fatal("the staged round trip changed the data")
	}
	if st := s.Stats(); st.StagedBytes != 2*n || st.DirectBytes != 0 {
		t.Fatalf("stats %+v", st)
	}
	must(t, b.Free(p))
	must(t, s.Close())
	must(t, b.Close())
	fakeClosed(t, f)
}

func TestFakeStagingRingWaitsWhenFull(t *testing.T) {
	b, f := newFakeBackend(t, 1<<30, StagingBytes(64<<10))
	s := stream(t, b)
	const n = 1 << 20 // 16 rings' worth, in 16 KiB pieces
	p, err := b.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	src := randomBytes(n, 2)
	must(t, s.CopyHtoD(p, src))
	dst := make([]byte, n)
	must(t, s.CopyDtoH(dst, p))
	must(t, s.Record(0))
	if err := waitQuery(t, s, 0); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(src, dst) {
		t.Fatal("a round trip through a small ring changed the data")
	}
	st := s.Stats()
	if st.Waits == 0 || st.StagedBytes != 2*n {
		t.Fatalf("stats %+v: a 1 MiB copy through a 64 KiB ring must wait", st)
	}
	if s.bulk.used != 0 || s.q.len() != 0 {
		t.Fatalf("ring holds %d bytes and %d deferred items after completion", s.bulk.used, s.q.len())
	}
	must(t, b.Free(p))
	must(t, b.Close())
	fakeClosed(t, f)
}

func TestFakePinnedCopiesAreDirect(t *testing.T) {
	b, f := newFakeBackend(t, 1<<30)
	s := stream(t, b)
	pool := newPinnedPool(1<<20, f.hostAlloc, f.hostFree)
	defer pool.Close()
	const n = 100 << 10
	src, err := pool.Bytes(n)
	if err != nil {
		t.Fatal(err)
	}
	copy(src, randomBytes(n, 3))
	dst, err := pool.Bytes(n)
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	hostAllocs := f.hostAllocs.Load()
	must(t, s.CopyHtoD(p, src))
	must(t, s.CopyDtoH(dst, p))
	must(t, s.Record(0))
	if err := waitQuery(t, s, 0); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(src, dst) {
		t.Fatal("pinned round trip changed the data")
	}
	if st := s.Stats(); st.DirectBytes != 2*n || st.StagedBytes != 0 || f.hostAllocs.Load() != hostAllocs {
		t.Fatalf("stats %+v, %d new pinned allocations: pinned memory must not be staged", st, f.hostAllocs.Load()-hostAllocs)
	}
	must(t, b.Close())
	must(t, pool.Close())
	fakeClosed(t, f)
}

// upload copies a Go slice to new pool memory through s and waits.
func (s *DeviceStream) upload(t *testing.T, a []float64) driver.Ptr {
	t.Helper()
	p, err := s.b.Alloc(int64(max(len(a), 1) * 8))
	if err != nil {
		t.Fatal(err)
	}
	must(t, s.CopyHtoD(p, driver.Float64sAsBytes(a)))
	must(t, s.syncAll())
	return p
}

func (s *DeviceStream) download(t *testing.T, p driver.Ptr, n int) []float64 {
	t.Helper()
	out := make([]float64, n)
	must(t, s.CopyDtoH(driver.Float64sAsBytes(out), p))
	must(t, s.syncAll())
	return out
}

func TestFakePotrfFailsTheNextQueryOnce(t *testing.T) {
	b, f := newFakeBackend(t, 1<<30)
	s := stream(t, b)
	const n = 12
	good := rttest.RandomSPD(n, 5)
	bad := slices.Clone(good)
	bad[5+5*n] = -100
	pg, pb := s.upload(t, good), s.upload(t, bad)
	must(t, s.Dpotrf(blas.Lower, n, pg, n))
	must(t, s.Record(0))
	if err := waitQuery(t, s, 0); err != nil {
		t.Fatalf("positive definite: %v", err)
	}
	must(t, s.Dpotrf(blas.Lower, n, pb, n))
	must(t, s.Record(1))
	err := waitQuery(t, s, 1)
	if !errors.Is(err, driver.ErrNotPositiveDefinite) || !strings.Contains(err.Error(), "order 6") {
		t.Fatalf("not positive definite: %v", err)
	}
	must(t, s.Record(2))
	if err := waitQuery(t, s, 2); err != nil {
		t.Fatalf("the failure was reported twice: %v", err)
	}
	want := slices.Clone(good)
	must(t, blas.Gonum().Dpotrf(blas.Lower, n, want, n))
	got := s.download(t, pg, n*n)
	for j := range n {
		for i := j; i < n; i++ {
			if math.Abs(got[i+j*n]-want[i+j*n]) > 1e-12 {
				t.Fatalf("L[%d,%d] = %g, want %g", i, j, got[i+j*n], want[i+j*n])
			}
		}
	}
	// The workspace grows for a larger matrix; the old one is freed once
	// the work queued before it completed.
	big := s.upload(t, rttest.RandomSPD(3*n, 6))
	before := b.PoolStats().Live
	must(t, s.Dpotrf(blas.Lower, 3*n, big, 3*n))
	must(t, s.Record(3))
	if err := waitQuery(t, s, 3); err != nil {
		t.Fatal(err)
	}
	if live := b.PoolStats().Live; live != before {
		t.Fatalf("%d live blocks after the workspace grew, want %d (old one freed)", live, before)
	}
	must(t, b.Close())
	fakeClosed(t, f)
}

func TestFakeDgemmBatched(t *testing.T) {
	b, f := newFakeBackend(t, 1<<30)
	s := stream(t, b)
	const nb, count = 8, 37
	rng := rand.New(rand.NewPCG(7, 7))
	mats := func() ([][]float64, []driver.Ptr) {
		var hs [][]float64
		var ps []driver.Ptr
		for range count {
			h := make([]float64, nb*nb)
			for i := range h {
				h[i] = rng.Float64() - 0.5
			}
			hs = append(hs, h)
			ps = append(ps, s.upload(t, h))
		}
		return hs, ps
	}
	ha, pa := mats()
	hb, pb := mats()
	hc, pc := mats()
	// Reverse C: not at a constant distance, so pointer arrays are used.
	slices.Reverse(pc)
	slices.Reverse(hc)
	must(t, s.DgemmBatched(blas.NoTrans, blas.Trans, nb, nb, nb, -1, pa, nb, pb, nb, 1, pc, nb))
	for i := range count {
		must(t, blas.Gonum().Dgemm(blas.NoTrans, blas.Trans, nb, nb, nb, -1, ha[i], nb, hb[i], nb, 1, hc[i], nb))
	}
	for i := range count {
		if got := s.download(t, pc[i], nb*nb); maxRelDiff(got, hc[i]) > 1e-14 {
			t.Fatalf("product %d differs", i)
		}
	}
	// Contiguous tiles go to the strided-batched call.
	block, err := b.Alloc(3 * count * nb * nb * 8)
	if err != nil {
		t.Fatal(err)
	}
	tile := func(i int) driver.Ptr { return block + driver.Ptr(i*nb*nb*8) }
	var a2, b2, c2 []driver.Ptr
	for i := range count {
		for j, h := range [][]float64{ha[i], hb[i], hc[i]} {
			must(t, s.CopyHtoD(tile(3*i+j), driver.Float64sAsBytes(h)))
		}
		a2, b2, c2 = append(a2, tile(3*i)), append(b2, tile(3*i+1)), append(c2, tile(3*i+2))
	}
	must(t, s.DgemmBatched(blas.NoTrans, blas.Trans, nb, nb, nb, -1, a2, nb, b2, nb, 1, c2, nb))
	for i := range count {
		must(t, blas.Gonum().Dgemm(blas.NoTrans, blas.Trans, nb, nb, nb, -1, ha[i], nb, hb[i], nb, 1, hc[i], nb))
		if got := s.download(t, c2[i], nb*nb); maxRelDiff(got, hc[i]) > 1e-14 {
			t.Fatalf("strided product %d differs", i)
		}
	}
	if st := s.Stats(); st.Batched != 1 || st.Strided != 1 {
		t.Fatalf("stats %+v: want one pointer-array call and one strided call", st)
	}
	if s.meta.used != 0 || s.dmeta.used != 0 {
		t.Fatalf("pointer rings hold %d and %d bytes after completion", s.meta.used, s.dmeta.used)
	}
	must(t, b.Close())
	fakeClosed(t, f)
}

func TestFakeLaunchArguments(t *testing.T) {
	b, f := newFakeBackend(t, 1<<30)
	var got []uint64
	f.defineKernel("cudatest.args", func(_ *fakeOps, args []uint64) error { got = args; return nil })
	if err := gpu.RegisterKernel(gpu.KernelSpec{Name: "cudatest.args", CUDA: "unused by the fake"}); err != nil &&
		!errors.Is(err, driver.ErrDuplicateKernel) {
		t.Fatal(err)
	}
	k, err := b.Kernel("cudatest.args")
	if err != nil {
		t.Fatal(err)
	}
	if k2, _ := b.Kernel("cudatest.args"); k2 != k {
		t.Error("a kernel was loaded twice")
	}
	s := stream(t, b)
	buf := gpu.Buffer{Ptr: 0x1000, Len: 4, Elem: gpu.Float64}
	must(t, s.Launch(k, gpu.Dim3{X: 2}, gpu.Dim3{X: 32}, 0,
		[]any{buf, -3, int64(1 << 40), 2.5, float32(0.5), uint32(7), driver.Ptr(0x2000)}))
	must(t, s.syncAll())
	want := []uint64{0x1000, uint64(uint32(0xfffffffd)), 1 << 40, math.Float64bits(2.5), uint64(math.Float32bits(0.5)), 7, 0x2000}
	if !slices.Equal(got, want) {
		t.Fatalf("kernel saw %#x, want %#x", got, want)
	}
	for _, bad := range [][]any{{"text"}, {1 << 40}, {struct{}{}}} {
		if err := s.Launch(k, gpu.Dim3{X: 1}, gpu.Dim3{X: 1}, 0, bad); !errors.Is(err, ErrBadArgument) {
			t.Errorf("Launch(%v): %v", bad, err)
		}
	}
	if err := s.Launch(k, gpu.Dim3{X: -1}, gpu.Dim3{X: 1}, 0, nil); !errors.Is(err, ErrBadArgument) {
		t.Errorf("negative grid: %v", err)
	}
	if _, err := b.Kernel("cudatest.no-such-kernel"); !errors.Is(err, driver.ErrUnknownKernel) {
		t.Errorf("unknown kernel: %v", err)
	}
	must(t, b.Close())
	fakeClosed(t, f)
}

// ---------------------------------------------------------------- manager

// host completes wrappers for a device used without rt.
type host struct {
	mu        sync.Mutex
	completed map[gpu.EC]int
	failed    map[gpu.EC]error
}

func newHost() *host { return &host{completed: map[gpu.EC]int{}, failed: map[gpu.EC]error{}} }

func (h *host) Complete(_ gpu.Worker, t *gpu.Task) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.completed[t.EC()]++
	return nil
}

func (h *host) Cleanout(t *gpu.Task, cause error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failed[t.EC()] = cause
}

func (h *host) Reschedule(*gpu.Task) error { return errors.New("no CPU here") }

type ec struct{ id int }

func (ec) Priority() int32 { return 0 }

// hostData is a gpu.Data over a Go (or pinned) byte slice.
type hostData struct {
	b       []byte
	version atomic.Uint64
}

func (d *hostData) HostBytes() []byte       { return d.b }
func (d *hostData) HostVersion() uint64     { return d.version.Load() }
func (d *hostData) SetHostVersion(v uint64) { d.version.Store(v) }

func newDevice(t *testing.T, b *Backend, h *host, opts ...gpu.Option) *gpu.Device {
	t.Helper()
	return openBackends(t, append([]gpu.Option{gpu.WithCompleter(h), gpu.WithScheduler(h), gpu.WithLogger(quiet)}, opts...), b)[0].Device()
}

var openSeq atomic.Int64

// openBackends opens bes, linked, through gpu.Open: it registers them under a
// name of their own (driver.Instances).
func openBackends(t *testing.T, opts []gpu.Option, bes ...driver.Backend) []*gpu.RTDevice {
	t.Helper()
	name := fmt.Sprintf("cuda-test-%d", openSeq.Add(1))
	driver.Register(name, driver.Instances(bes...))
	devs, err := gpu.Open(name, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return devs
}

func TestFakeQueryErrorsAreFailures(t *testing.T) {
	b, f := newFakeBackend(t, 1<<30)
	s := stream(t, b)
	must(t, s.Record(0))
	fault := func(Event) error { return driverError("cuEventQuery", 700) }
	f.queryFault.Store(&fault)
	if done, err := s.Query(0); done || !errors.Is(err, &Error{Lib: LibDriver, Code: 700}) {
		t.Fatalf("query with a failing driver: %v %v", done, err)
	}
	f.queryFault.Store(nil)
	must(t, s.Close())
	// A sticky failure of stream work fails every later query, and through
	// the manager the task fails instead of waiting forever.
	h := newHost()
	d := newDevice(t, b, h)
	inc := &gpu.Incarnation{Name: "fail", Submit: func(_ *gpu.Device, _ *gpu.Task, st *gpu.Stream) gpu.Result {
		if err := f.fail(st.Backend().(*DeviceStream).s, driverError("kernel", 719)); err != nil {
			return gpu.Error
		}
		return gpu.Done
	}}
	x := ec{1}
	done := make(chan error, 1)
	go func() { done <- d.Submit(context.Background(), nil, d.NewTask(x, inc)) }()
	select {
	case err := <-done:
		if !errors.Is(err, gpu.ErrTaskFailed) || !strings.Contains(err.Error(), "CUDA_ERROR_LAUNCH_FAILED") {
			t.Fatalf("Submit: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a failed stream left the manager waiting")
	}
	if h.failed[x] == nil || h.completed[x] != 0 {
		t.Fatalf("failed %v, completed %d", h.failed[x], h.completed[x])
	}
	// The device is unusable after a sticky failure; closing it still
	// releases everything (the fake keeps failing its synchronization).
	_ = d.Close()
	fakeClosed(t, f)
}

// Two tasks read the same datum: the first one's copy to the device is
// still in flight when the second is staged in. The second must not run
// before the copy landed (a manager fix; with skip-empty-events it went
// straight to its exec stage).
func TestFakeSecondReaderWaitsForTheCopyInFlight(t *testing.T) {
	b, f := newFakeBackend(t, 1<<30)
	h := newHost()
	d := newDevice(t, b, h)
	data := &hostData{b: randomBytes(4096, 9)}
	var seen [2][]byte
	mk := func(i int) *gpu.Incarnation {
		return &gpu.Incarnation{Name: "reader", Submit: func(_ *gpu.Device, t *gpu.Task, s *gpu.Stream) gpu.Result {
			ds := s.Backend().(*DeviceStream)
			out := make([]byte, 4096)
			seen[i] = out
			if err := ds.CopyDtoH(out, t.Buffer(0).Ptr); err != nil {
				return gpu.Error
			}
			return gpu.Done
		}}
	}
	in := d.StageIn().Backend().(*DeviceStream)
	resume := f.pause(in.s)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- d.Submit(context.Background(), nil, d.NewTask(ec{i}, mk(i), gpu.Flow{Data: data, Access: gpu.Read}))
		}()
	}
	time.Sleep(20 * time.Millisecond) // both staged in behind the paused copy
	resume()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range seen {
		if !slices.Equal(s, data.b) {
			t.Fatalf("reader %d saw the device copy before it landed", i)
		}
	}
	must(t, d.Close())
	fakeClosed(t, f)
}

func TestFakeDataThatCannotFitFails(t *testing.T) {
	b, f := newFakeBackend(t, 1<<20, MemFraction(1))
	h := newHost()
	d := newDevice(t, b, h)
	data := &hostData{b: make([]byte, 2<<20)}
	inc := &gpu.Incarnation{Name: "big", Submit: func(*gpu.Device, *gpu.Task, *gpu.Stream) gpu.Result { return gpu.Done }}
	err := d.Submit(context.Background(), nil, d.NewTask(ec{1}, inc, gpu.Flow{Data: data, Access: gpu.Read}))
	if !errors.Is(err, driver.ErrOutOfMemory) {
		t.Fatalf("2 MiB on a 1 MiB device: %v", err)
	}
	must(t, d.Close())
	fakeClosed(t, f)
}

// ---------------------------------------------------------------- rt

// rtRun runs taskpools on a context with devs and checks they succeed.
func rtRun(t *testing.T, devs []*gpu.RTDevice, tps ...*rt.Taskpool) {
	t.Helper()
	c, err := rt.New(rt.Workers(2), rt.Devices(gpu.RTDevices(devs)...))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, tp := range tps {
		must(t, c.Add(tp))
		must(t, tp.Wait(ctx))
	}
	must(t, c.Close())
}

// tiledPotrfCase factors a random SPD matrix on devs with the gputest
// graph and checks the factor against the CPU; pin moves the tiles to
// pinned memory first.
func tiledPotrfCase(t *testing.T, devs []*gpu.RTDevice, n, nb int, alloc rt.Alloc) {
	t.Helper()
	dense := rttest.RandomSPD(n, uint64(n))
	want := slices.Clone(dense)
	must(t, blas.Gonum().Dpotrf(blas.Lower, n, want, n))
	a, err := rt.NewTiledMatrixAlloc(n, n, nb, nb, 1, 1, 0, alloc)
	must(t, err)
	a.FillFromDense(dense, n)
	rtRun(t, devs, gputest.NewPotrf(a, gputest.WriteFinal))
	if d := gputest.FactorDiff(a, want, n); d > 1e-12 {
		t.Fatalf("tiled potrf n=%d nb=%d differs from the CPU by %.3g", n, nb, d)
	}
}

// tiledGemmCase multiplies random tiled matrices on devs and checks C.
func tiledGemmCase(t *testing.T, devs []*gpu.RTDevice, m, n, k, nb int, batch bool) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(m), uint64(k)))
	mat := func(r, c int) (*rt.TiledMatrix, []float64) {
		x, err := rt.NewTiledMatrix(r, c, nb, nb, 1, 1, 0)
		must(t, err)
		d := make([]float64, r*c)
		for i := range d {
			d[i] = rng.Float64() - 0.5
		}
		x.FillFromDense(d, r)
		return x, d
	}
	a, da := mat(m, k)
	b, db := mat(k, n)
	c, dc := mat(m, n)
	must(t, blas.Gonum().Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, da, m, db, k, 1, dc, m))
	rtRun(t, devs, gputest.NewGemm(&gputest.Gemm{A: a, B: b, C: c, Batch: batch, BatchMax: 16}))
	got := make([]float64, m*n)
	c.GatherToDense(got, m)
	if d := maxRelDiff(got, dc); d > 1e-13 {
		t.Fatalf("tiled gemm %dx%dx%d batch=%v differs from the CPU by %.3g", m, n, k, batch, d)
	}
}

func fakeRTDevice(t *testing.T) (*gpu.RTDevice, *Backend, *fakeOps) {
	t.Helper()
	b, f := newFakeBackend(t, 1<<30)
	return openBackends(t, []gpu.Option{gpu.WithLogger(quiet)}, b)[0], b, f
}

func TestFakeRTTiledGemmAndPotrf(t *testing.T) {
	d, b, f := fakeRTDevice(t)
	devs := []*gpu.RTDevice{d}
	tiledGemmCase(t, devs, 100, 96, 130, 32, false)
	tiledGemmCase(t, devs, 96, 96, 128, 32, true)
	tiledPotrfCase(t, devs, 150, 32, nil)
	staged := b.StreamStats()
	if staged.StagedBytes == 0 || staged.DirectBytes != 0 {
		t.Fatalf("Go-memory tiles: %+v", staged)
	}
	pool := newPinnedPool(1<<20, f.hostAlloc, f.hostFree)
	tiledPotrfCase(t, devs, 150, 32, pool.Float64s)
	pinned := b.StreamStats()
	if pinned.StagedBytes != staged.StagedBytes || pinned.DirectBytes == 0 {
		t.Fatalf("pinned tiles were staged: before %+v, after %+v", staged, pinned)
	}
	if st := d.Device().Stats(); st.Outstanding != 0 || st.Live != 0 {
		t.Fatalf("device stats %+v", st)
	}
	must(t, d.Close())
	must(t, pool.Close())
	fakeClosed(t, f)
}

// Two devices of the fake, linked by gpu.Open (cuCtxEnablePeerAccess): the tiled
// Cholesky with every tile's writers pinned to one device reads the tiles that
// other devices wrote through peer copies (cuMemcpyPeerAsync), never from
// stale host copies, and matches the CPU.
func TestFakePeerCopies(t *testing.T) {
	f := newFakeOps(1 << 31)
	b0, b1 := fakeDevice(t, f, 0), fakeDevice(t, f, 1)
	if ok, err := b0.EnablePeer(b0); ok || err != nil {
		t.Fatalf("a device is its own peer: %v, %v", ok, err)
	}
	devs := openBackends(t, []gpu.Option{gpu.WithLogger(quiet)}, b0, b1)
	if len(devs[0].Device().Peers()) != 1 || len(devs[1].Device().Peers()) != 1 {
		t.Fatal("the fake devices are not linked")
	}
	// Enabling again is not an error (CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED).
	if ok, err := b0.EnablePeer(b1); !ok || err != nil {
		t.Fatalf("second EnablePeer: %v, %v", ok, err)
	}
	tiledPotrfCase(t, devs, 256, 32, nil)
	var copies, released uint64
	for _, d := range devs {
		st := d.Device().Stats()
		copies += st.PeerCopies
		released += st.D2DDirect + st.D2DCommands
		must(t, d.Close())
	}
	if copies == 0 || int64(copies) != f.peerCopies.Load() || released != copies {
		t.Fatalf("%d peer copies (%d by the fake), %d reader releases", copies, f.peerCopies.Load(), released)
	}
	fakeClosed(t, f)
}

// TestFakeComputeStreamsPreparedAtOpen: opening a device creates the cuBLAS
// and cuSOLVER handles of its compute streams (and only theirs) and calls
// each operation once, so that the first bodies do not pay for loading the
// libraries and their kernels; bodies then reuse the handles. The transfer
// streams have their staging rings from the start.
func TestFakeComputeStreamsPreparedAtOpen(t *testing.T) {
	d, b, f := fakeRTDevice(t)
	b.mu.Lock()
	streams := slices.Clone(b.streams)
	b.mu.Unlock()
	if len(streams) != 2+d.Device().NumCompute() {
		t.Fatalf("%d streams", len(streams))
	}
	handles := map[string]uintptr{}
	for _, s := range streams {
		compute := strings.HasPrefix(s.name, "exec")
		if prepared := s.haveBlas && s.solver != nil && s.metaMem.p != nil && s.dmetaMem != 0; prepared != compute {
			t.Errorf("stream %s: prepared %v", s.name, prepared)
		}
		// The transfer streams have their staging ring; compute streams stage nothing.
		if staging := s.bulkMem.p != nil; staging == compute {
			t.Errorf("stream %s: staging ring allocated %v", s.name, staging)
		}
		// The warm-up calls each operation once: the pointer-array batched
		// call is the one a statistic counts.
		if warmed := s.Stats().Batched == 1 && len(s.lwork) == 1; warmed != compute {
			t.Errorf("stream %s: warmed up %v (%+v, %d cuSOLVER sizes)", s.name, warmed, s.Stats(), len(s.lwork))
		}
		if compute {
			handles[s.name] = s.blas.h
		}
	}
	tiledPotrfCase(t, []*gpu.RTDevice{d}, 96, 32, nil)
	for _, s := range streams {
		if h, ok := handles[s.name]; ok && s.blas.h != h {
			t.Errorf("stream %s: cuBLAS handle %d replaced by %d", s.name, h, s.blas.h)
		}
	}
	must(t, d.Close())
	fakeClosed(t, f)
}
