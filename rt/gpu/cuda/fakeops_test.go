package cuda

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	gblas "gonum.org/v1/gonum/blas"
	gblasimpl "gonum.org/v1/gonum/blas/gonum"
	glapack "gonum.org/v1/gonum/lapack/gonum"

	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/gpu/driver"
)

// fakeOps runs the backend on the CPU: device memory is Go memory at fake
// addresses, each stream is a goroutine running its operations in order,
// events mark a stream position, and the BLAS subset runs on rt/blas. It
// keeps CUDA's semantics where the backend depends on them: copies and
// kernels run after the call returns, an event completes once the work
// before its record ran, a failure of stream work is sticky and reported by
// every later query and synchronization.
type fakeOps struct {
	mu      sync.Mutex
	cond    *sync.Cond
	allocs  []*fakeAlloc // sorted by base
	next    uint64
	hosts   map[unsafe.Pointer][]uint64
	streams map[Stream]*fakeStream
	events  map[Event]*fakeEvent
	handles uintptr
	wg      sync.WaitGroup

	free, total int64
	kernels     map[Function]fakeKernel
	impls       map[string]fakeKernel

	// Fault injection.
	queryFault atomic.Pointer[func(Event) error]
	allocFault atomic.Pointer[func(n int) error]

	setCurrents, memAllocs, memFrees, hostAllocs, syncs atomic.Int64

	peers      map[Context]bool // peer contexts whose access was enabled
	peerCopies atomic.Int64
}

// fakeKernel is a kernel's CPU implementation over the raw argument slots.
type fakeKernel func(f *fakeOps, args []uint64) error

type fakeAlloc struct {
	base  uint64
	words []uint64
}

type fakeStream struct {
	ops                []func() error
	head               int
	enqueued, executed uint64
	err                error
	closed             bool
	gate               sync.Mutex // held by a test to pause the stream
}

type fakeEvent struct {
	s    *fakeStream
	mark uint64
}

func newFakeOps(total int64) *fakeOps {
	f := &fakeOps{next: 1 << 40, hosts: map[unsafe.Pointer][]uint64{}, streams: map[Stream]*fakeStream{},
		events: map[Event]*fakeEvent{}, free: total, total: total, kernels: map[Function]fakeKernel{},
		impls: map[string]fakeKernel{}}
	f.cond = sync.NewCond(&f.mu)
	return f
}

func (f *fakeOps) handle() uintptr { f.handles++; return f.handles }

// resolve returns the device memory from p to the end of its allocation,
// which must hold n bytes.
func (f *fakeOps) resolve(p DevicePtr, n int) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := sort.Search(len(f.allocs), func(i int) bool { return f.allocs[i].base > uint64(p) }) - 1
	if i < 0 {
		return nil, driverError("fake", 1)
	}
	a := f.allocs[i]
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&a.words[0])), len(a.words)*8)
	off := int(uint64(p) - a.base)
	if off+n > len(raw) {
		return nil, fmt.Errorf("fake: [%#x, +%d) is outside its allocation: %w", uint64(p), n, driverError("fake", 700))
	}
	return raw[off:], nil
}

func (f *fakeOps) float64s(p DevicePtr) ([]float64, error) {
	raw, err := f.resolve(p, 0)
	if err != nil {
		return nil, err
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(&raw[0])), len(raw)/8), nil
}

// enqueue appends an operation to stream s.
func (f *fakeOps) enqueue(s Stream, op func() error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.streams[s]
	if st == nil || st.closed {
		return driverError("fake enqueue", 400)
	}
	st.ops = append(st.ops, op)
	st.enqueued++
	f.cond.Broadcast()
	return nil
}

func (f *fakeOps) run(st *fakeStream) {
	defer f.wg.Done()
	for {
		f.mu.Lock()
		for st.head == len(st.ops) && !st.closed {
			f.cond.Wait()
		}
		if st.head == len(st.ops) {
			f.mu.Unlock()
			return
		}
		op := st.ops[st.head]
		st.ops[st.head] = nil
		st.head++
		f.mu.Unlock()
		st.gate.Lock()
		err := op()
		st.gate.Unlock()
		f.mu.Lock()
		if err != nil && st.err == nil {
			st.err = err
		}
		st.executed++
		f.cond.Broadcast()
		f.mu.Unlock()
	}
}

// pause holds stream s before its next operation until the returned
// function runs.
func (f *fakeOps) pause(s Stream) (resume func()) {
	f.mu.Lock()
	st := f.streams[s]
	f.mu.Unlock()
	st.gate.Lock()
	return st.gate.Unlock
}

// fail makes the next operation of s fail with err (a sticky failure).
func (f *fakeOps) fail(s Stream, err error) error {
	return f.enqueue(s, func() error { return err })
}

func (f *fakeOps) setCurrent(Context) error { f.setCurrents.Add(1); return nil }

func (f *fakeOps) memGetInfo() (int64, int64, error) { return f.free, f.total, nil }

func (f *fakeOps) memAlloc(n int) (DevicePtr, error) {
	if fn := f.allocFault.Load(); fn != nil {
		if err := (*fn)(n); err != nil {
			return 0, err
		}
	}
	f.memAllocs.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	a := &fakeAlloc{base: f.next, words: make([]uint64, (n+7)/8)}
	f.next += uint64(n+4095)&^4095 + 1<<20
	f.allocs = append(f.allocs, a)
	return DevicePtr(a.base), nil
}

func (f *fakeOps) memFree(p DevicePtr) error {
	f.memFrees.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	i := slices.IndexFunc(f.allocs, func(a *fakeAlloc) bool { return a.base == uint64(p) })
	if i < 0 {
		return driverError("cuMemFree_v2", 1)
	}
	f.allocs = slices.Delete(f.allocs, i, i+1)
	return nil
}

func (f *fakeOps) hostAlloc(n int) (HostMem, error) {
	f.hostAllocs.Add(1)
	w := make([]uint64, (n+7)/8)
	f.mu.Lock()
	defer f.mu.Unlock()
	p := unsafe.Pointer(&w[0])
	f.hosts[p] = w
	return HostMem{p: p, n: n}, nil
}

func (f *fakeOps) hostFree(h HostMem) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.hosts[h.p]; !ok {
		return driverError("cuMemFreeHost", 1)
	}
	delete(f.hosts, h.p)
	return nil
}

func (f *fakeOps) streamCreate() (Stream, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := Stream(f.handle())
	st := &fakeStream{}
	f.streams[s] = st
	f.wg.Add(1)
	go f.run(st)
	return s, nil
}

func (f *fakeOps) streamDestroy(s Stream) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.streams[s]
	if st == nil {
		return driverError("cuStreamDestroy_v2", 400)
	}
	st.closed = true
	f.cond.Broadcast()
	delete(f.streams, s)
	return nil
}

func (f *fakeOps) streamSync(s Stream) error {
	f.syncs.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.streams[s]
	if st == nil {
		return driverError("cuStreamSynchronize", 400)
	}
	for st.executed < st.enqueued {
		f.cond.Wait()
	}
	return st.err
}

func (f *fakeOps) eventCreate() (Event, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := Event(f.handle())
	f.events[e] = &fakeEvent{}
	return e, nil
}

func (f *fakeOps) eventDestroy(e Event) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.events, e)
	return nil
}

func (f *fakeOps) eventRecord(e Event, s Stream) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	ev, st := f.events[e], f.streams[s]
	if ev == nil || st == nil {
		return driverError("cuEventRecord", 400)
	}
	ev.s, ev.mark = st, st.enqueued
	return nil
}

func (f *fakeOps) eventQuery(e Event) (bool, error) {
	if fn := f.queryFault.Load(); fn != nil {
		if err := (*fn)(e); err != nil {
			return false, err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	ev := f.events[e]
	if ev == nil {
		return false, driverError("cuEventQuery", 400)
	}
	if ev.s == nil {
		return true, nil
	}
	if ev.s.err != nil {
		return false, ev.s.err
	}
	return ev.s.executed >= ev.mark, nil
}

func (f *fakeOps) htod(dst DevicePtr, src HostMem, s Stream) error {
	mem, err := f.resolve(dst, src.n)
	if err != nil {
		return err
	}
	return f.enqueue(s, func() error { copy(mem[:src.n], src.Bytes()); return nil })
}

func (f *fakeOps) dtoh(dst HostMem, src DevicePtr, s Stream) error {
	mem, err := f.resolve(src, dst.n)
	if err != nil {
		return err
	}
	return f.enqueue(s, func() error { copy(dst.Bytes(), mem[:dst.n]); return nil })
}

func (f *fakeOps) dtod(dst, src DevicePtr, n int, s Stream) error {
	to, err := f.resolve(dst, n)
	if err != nil {
		return err
	}
	from, err := f.resolve(src, n)
	if err != nil {
		return err
	}
	return f.enqueue(s, func() error { copy(to[:n], from[:n]); return nil })
}

// The fake's devices share one address space; peer access is recorded per
// peer context and required by peerCopy, as the driver does.
func (f *fakeOps) canAccessPeer(dev, peer Device) (bool, error) { return dev != peer, nil }

func (f *fakeOps) enablePeerAccess(peer Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.peers == nil {
		f.peers = map[Context]bool{}
	}
	if f.peers[peer] {
		return driverError("cuCtxEnablePeerAccess", 704)
	}
	f.peers[peer] = true
	return nil
}

func (f *fakeOps) peerCopy(dst DevicePtr, _ Context, src DevicePtr, srcCtx Context, n int, s Stream) error {
	f.mu.Lock()
	enabled := f.peers[srcCtx]
	f.mu.Unlock()
	if !enabled {
		return driverError("cuMemcpyPeerAsync", 705)
	}
	f.peerCopies.Add(1)
	return f.dtod(dst, src, n, s)
}

// blasStreams maps fake handles to their streams.
var fakeBlasStreams sync.Map // uintptr -> Stream

func (f *fakeOps) blasCreate(s Stream) (Blas, error) {
	f.mu.Lock()
	h := f.handle()
	f.mu.Unlock()
	fakeBlasStreams.Store(h, s)
	return Blas{h: h}, nil
}

func (f *fakeOps) blasDestroy(h Blas) error { fakeBlasStreams.Delete(h.h); return nil }

func blasStream(h Blas) Stream { s, _ := fakeBlasStreams.Load(h.h); return s.(Stream) }

// mats resolves device pointers at enqueue time, as the real library
// would fail a launch on a bad pointer.
func (f *fakeOps) mats(ps ...DevicePtr) ([][]float64, error) {
	out := make([][]float64, len(ps))
	for i, p := range ps {
		m, err := f.float64s(p)
		if err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}

func (f *fakeOps) dgemm(h Blas, tA, tB Op, m, n, k int, alpha float64, a DevicePtr, lda int, b DevicePtr, ldb int, beta float64, c DevicePtr, ldc int) error {
	ms, err := f.mats(a, b, c)
	if err != nil {
		return err
	}
	return f.enqueue(blasStream(h), func() error {
		return blas.Gonum().Dgemm(blasTrans(tA), blasTrans(tB), m, n, k, alpha, ms[0], lda, ms[1], ldb, beta, ms[2], ldc)
	})
}

func (f *fakeOps) dtrsm(h Blas, side SideMode, uplo Fill, tA Op, diag DiagType, m, n int, alpha float64, a DevicePtr, lda int, b DevicePtr, ldb int) error {
	ms, err := f.mats(a, b)
	if err != nil {
		return err
	}
	bs, bd := blas.Left, blas.NonUnit
	if side == SideRight {
		bs = blas.Right
	}
	if diag == DiagUnit {
		bd = blas.Unit
	}
	return f.enqueue(blasStream(h), func() error {
		return blas.Gonum().Dtrsm(bs, blasUplo(uplo), blasTrans(tA), bd, m, n, alpha, ms[0], lda, ms[1], ldb)
	})
}

func (f *fakeOps) dtrmm(h Blas, side SideMode, uplo Fill, tA Op, diag DiagType, m, n int, alpha float64, a DevicePtr, lda int, b DevicePtr, ldb int) error {
	ms, err := f.mats(a, b)
	if err != nil {
		return err
	}
	return f.enqueue(blasStream(h), func() error {
		colDtrmm(side, uplo, tA, diag, m, n, alpha, ms[0], lda, ms[1], ldb)
		return nil
	})
}

// The column-major triangular product and inverse of the fake and of the
// GPU tests' references run gonum's row-major routines on the transpose: a
// column-major matrix is, byte for byte, its row-major transpose, so the
// side and the triangle swap.

func gonumTri(side SideMode, uplo Fill, diag DiagType) (gblas.Side, gblas.Uplo, gblas.Diag) {
	gs, gu, gd := gblas.Right, gblas.Upper, gblas.NonUnit
	if side == SideRight {
		gs = gblas.Left
	}
	if uplo == FillUpper {
		gu = gblas.Lower
	}
	if diag == DiagUnit {
		gd = gblas.Unit
	}
	return gs, gu, gd
}

func colDtrmm(side SideMode, uplo Fill, tA Op, diag DiagType, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	gs, gu, gd := gonumTri(side, uplo, diag)
	gt := gblas.NoTrans
	if tA == OpT {
		gt = gblas.Trans
	}
	gblasimpl.Implementation{}.Dtrmm(gs, gu, gt, gd, n, m, alpha, a, lda, b, ldb)
}

func colDtrtri(uplo Fill, diag DiagType, n int, a []float64, lda int) {
	_, gu, gd := gonumTri(SideLeft, uplo, diag)
	glapack.Implementation{}.Dtrtri(gu, gd, n, a, lda)
}

func (f *fakeOps) dsyrk(h Blas, uplo Fill, t Op, n, k int, alpha float64, a DevicePtr, lda int, beta float64, c DevicePtr, ldc int) error {
	ms, err := f.mats(a, c)
	if err != nil {
		return err
	}
	return f.enqueue(blasStream(h), func() error {
		return blas.Gonum().Dsyrk(blasUplo(uplo), blasTrans(t), n, k, alpha, ms[0], lda, beta, ms[1], ldc)
	})
}

func (f *fakeOps) dgemmStridedBatched(h Blas, tA, tB Op, m, n, k int, alpha float64, a DevicePtr, lda int, strideA int64,
	b DevicePtr, ldb int, strideB int64, beta float64, c DevicePtr, ldc int, strideC int64, count int) error {
	ms, err := f.mats(a, b, c)
	if err != nil {
		return err
	}
	return f.enqueue(blasStream(h), func() error {
		for i := range int64(count) {
			if err := blas.Gonum().Dgemm(blasTrans(tA), blasTrans(tB), m, n, k, alpha, ms[0][i*strideA:], lda, ms[1][i*strideB:], ldb,
				beta, ms[2][i*strideC:], ldc); err != nil {
				return err
			}
		}
		return nil
	})
}

func (f *fakeOps) dgemmBatched(h Blas, tA, tB Op, m, n, k int, alpha float64, a DevicePtr, lda int, b DevicePtr, ldb int,
	beta float64, c DevicePtr, ldc int, count int) error {
	// The pointer arrays are read when the stream runs the call, after the
	// copy that fills them.
	return f.enqueue(blasStream(h), func() error {
		var arrays [3][]byte
		for i, p := range []DevicePtr{a, b, c} {
			raw, err := f.resolve(p, count*8)
			if err != nil {
				return err
			}
			arrays[i] = raw
		}
		for i := range count {
			var mats [3][]float64
			for j := range 3 {
				p := DevicePtr(*(*uint64)(unsafe.Pointer(&arrays[j][i*8])))
				m, err := f.float64s(p)
				if err != nil {
					return err
				}
				mats[j] = m
			}
			if err := blas.Gonum().Dgemm(blasTrans(tA), blasTrans(tB), m, n, k, alpha, mats[0], lda, mats[1], ldb, beta, mats[2], ldc); err != nil {
				return err
			}
		}
		return nil
	})
}

func (f *fakeOps) solverCreate(s Stream) (*Solver, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &Solver{h: f.handle(), stream: s}, nil
}

func (f *fakeOps) solverDestroy(*Solver) error { return nil }

func (f *fakeOps) potrfBufferSize(sv *Solver, uplo Fill, n int, a DevicePtr, lda int) (int, error) {
	return 2*n + 7, nil
}

func (f *fakeOps) potrf(sv *Solver, uplo Fill, n int, a DevicePtr, lda int, work DevicePtr, lwork int, info DevicePtr) error {
	ms, err := f.mats(a, work)
	if err != nil {
		return err
	}
	if len(ms[1]) < lwork {
		return cusolverError("cusolverDnDpotrf", 3)
	}
	word, err := f.resolve(info, 4)
	if err != nil {
		return err
	}
	return f.enqueue(sv.stream, func() error {
		*(*int32)(unsafe.Pointer(&word[0])) = int32(cholesky(uplo, n, ms[0], lda))
		return nil
	})
}

func (f *fakeOps) trtriBufferSize(sv *Solver, uplo Fill, diag DiagType, n int, a DevicePtr, lda int) (int, int, error) {
	return 8*n + 16, 0, nil
}

func (f *fakeOps) trtri(sv *Solver, uplo Fill, diag DiagType, n int, a DevicePtr, lda int, work DevicePtr, workBytes int, host []byte, info DevicePtr) error {
	ms, err := f.mats(a, work)
	if err != nil {
		return err
	}
	if len(ms[1])*8 < 8*n+16 || workBytes < 8*n+16 {
		return cusolverError("cusolverDnXtrtri", 3)
	}
	return f.enqueue(sv.stream, func() error {
		colDtrtri(uplo, diag, n, ms[0], lda)
		return nil
	})
}

// cholesky factors in place and returns LAPACK's info.
func cholesky(uplo Fill, n int, a []float64, lda int) int {
	at := func(i, j int) *float64 { // element (i, j) of the lower factor
		if uplo == FillUpper {
			i, j = j, i
		}
		return &a[i+j*lda]
	}
	for j := range n {
		d := *at(j, j)
		for k := range j {
			d -= *at(j, k) * *at(j, k)
		}
		if !(d > 0) {
			return j + 1
		}
		d = math.Sqrt(d)
		*at(j, j) = d
		for i := j + 1; i < n; i++ {
			v := *at(i, j)
			for k := range j {
				v -= *at(i, k) * *at(j, k)
			}
			*at(i, j) = v / d
		}
	}
	return 0
}

// defineKernel gives the fake a CPU implementation for kernels named name.
func (f *fakeOps) defineKernel(name string, k fakeKernel) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.impls[name] = k
}

func (f *fakeOps) kernel(spec driver.KernelSpec, arch string) (Function, Module, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := f.impls[spec.Name]
	if k == nil {
		return 0, 0, fmt.Errorf("fake: no CPU implementation of kernel %q: %w", spec.Name, nvrtcError("nvrtcCompileProgram", 6, ""))
	}
	fn := Function(f.handle())
	f.kernels[fn] = k
	return fn, Module(f.handle()), nil
}

func (f *fakeOps) moduleUnload(Module) error { return nil }

func (f *fakeOps) launch(fn Function, grid, block Dim3, shared int, s Stream, args *KernelArgs) error {
	f.mu.Lock()
	k := f.kernels[fn]
	f.mu.Unlock()
	if k == nil {
		return driverError("cuLaunchKernel", 400)
	}
	vals := slices.Clone(args.vals[:args.n])
	return f.enqueue(s, func() error { return k(f, vals) })
}

// close waits for the stream goroutines, which exit once their streams are
// destroyed.
func (f *fakeOps) close() { f.wg.Wait() }

// newFakeBackend is a backend over a fake device of total bytes.
func newFakeBackend(t testing.TB, total int64, opts ...Option) (*Backend, *fakeOps) {
	t.Helper()
	f := newFakeOps(total)
	return fakeDevice(t, f, 0, opts...), f
}

// fakeDevice opens device ordinal of the fake f (its context is ordinal+1).
func fakeDevice(t testing.TB, f *fakeOps, ordinal int, opts ...Option) *Backend {
	t.Helper()
	cfg := config{memFraction: DefaultMemFraction, staging: DefaultStagingBytes, chunk: 64 << 20, warm: 32}
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.check(); err != nil {
		t.Fatal(err)
	}
	b, err := newBackend(f, ordinal, fmt.Sprintf("fake%d", ordinal), "sm_fake", Context(ordinal+1), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
