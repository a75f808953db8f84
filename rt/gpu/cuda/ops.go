package cuda

import (
	"crypto/sha256"
	"fmt"
	"sync"

	"github.com/jdf2go/jdf2go/rt/gpu/driver"
)

// ops is the part of the CUDA libraries that the backend drives. realOps
// calls the binding; the package's tests substitute a CPU fake, so that the
// backend's own logic (memory pool, staging rings, deferred completions,
// failures reported at the next query, the manager on top) is tested
// without a GPU.
type ops interface {
	setCurrent(Context) error
	memGetInfo() (free, total int64, err error)
	memAlloc(n int) (DevicePtr, error)
	memFree(DevicePtr) error
	hostAlloc(n int) (HostMem, error)
	hostFree(HostMem) error

	streamCreate() (Stream, error)
	streamDestroy(Stream) error
	streamSync(Stream) error
	eventCreate() (Event, error)
	eventDestroy(Event) error
	eventRecord(Event, Stream) error
	eventQuery(Event) (bool, error)

	htod(dst DevicePtr, src HostMem, s Stream) error
	dtoh(dst HostMem, src DevicePtr, s Stream) error
	dtod(dst, src DevicePtr, n int, s Stream) error

	// Peer access: copies between two devices of the process.
	canAccessPeer(dev, peer Device) (bool, error)
	// enablePeerAccess enables access from the current context to peer's.
	enablePeerAccess(peer Context) error
	peerCopy(dst DevicePtr, dstCtx Context, src DevicePtr, srcCtx Context, n int, s Stream) error

	blasCreate(s Stream) (Blas, error)
	blasDestroy(Blas) error
	dgemm(h Blas, tA, tB Op, m, n, k int, alpha float64, a DevicePtr, lda int, b DevicePtr, ldb int, beta float64, c DevicePtr, ldc int) error
	dtrsm(h Blas, side SideMode, uplo Fill, tA Op, diag DiagType, m, n int, alpha float64, a DevicePtr, lda int, b DevicePtr, ldb int) error
	dtrmm(h Blas, side SideMode, uplo Fill, tA Op, diag DiagType, m, n int, alpha float64, a DevicePtr, lda int, b DevicePtr, ldb int) error
	dsyrk(h Blas, uplo Fill, t Op, n, k int, alpha float64, a DevicePtr, lda int, beta float64, c DevicePtr, ldc int) error
	dgemmStridedBatched(h Blas, tA, tB Op, m, n, k int, alpha float64, a DevicePtr, lda int, strideA int64,
		b DevicePtr, ldb int, strideB int64, beta float64, c DevicePtr, ldc int, strideC int64, count int) error
	dgemmBatched(h Blas, tA, tB Op, m, n, k int, alpha float64, a DevicePtr, lda int, b DevicePtr, ldb int,
		beta float64, c DevicePtr, ldc int, count int) error

	solverCreate(s Stream) (*Solver, error)
	solverDestroy(*Solver) error
	potrfBufferSize(sv *Solver, uplo Fill, n int, a DevicePtr, lda int) (int, error)
	potrf(sv *Solver, uplo Fill, n int, a DevicePtr, lda int, work DevicePtr, lwork int, info DevicePtr) error
	trtriBufferSize(sv *Solver, uplo Fill, diag DiagType, n int, a DevicePtr, lda int) (dev, host int, err error)
	trtri(sv *Solver, uplo Fill, diag DiagType, n int, a DevicePtr, lda int, work DevicePtr, workBytes int, host []byte, info DevicePtr) error

	// kernel loads spec's CUDA source, compiled for arch ("sm_90"), into
	// the current context.
	kernel(spec driver.KernelSpec, arch string) (Function, Module, error)
	moduleUnload(Module) error
	launch(fn Function, grid, block Dim3, shared int, s Stream, args *KernelArgs) error
}

// realOps is ops over the binding.
type realOps struct{}

func (realOps) setCurrent(c Context) error                      { return c.SetCurrent() }
func (realOps) memGetInfo() (int64, int64, error)               { return MemGetInfo() }
func (realOps) memAlloc(n int) (DevicePtr, error)               { return MemAlloc(n) }
func (realOps) memFree(p DevicePtr) error                       { return MemFree(p) }
func (realOps) hostAlloc(n int) (HostMem, error)                { return MemHostAlloc(n, HostAllocPortable) }
func (realOps) hostFree(h HostMem) error                        { return h.Free() }
func (realOps) streamCreate() (Stream, error)                   { return NewStream() }
func (realOps) streamDestroy(s Stream) error                    { return s.Destroy() }
func (realOps) streamSync(s Stream) error                       { return s.Synchronize() }
func (realOps) eventCreate() (Event, error)                     { return NewEvent() }
func (realOps) eventDestroy(e Event) error                      { return e.Destroy() }
func (realOps) eventRecord(e Event, s Stream) error             { return e.Record(s) }
func (realOps) eventQuery(e Event) (bool, error)                { return e.Query() }
func (realOps) htod(dst DevicePtr, src HostMem, s Stream) error { return MemcpyHtoDAsync(dst, src, s) }
func (realOps) dtoh(dst HostMem, src DevicePtr, s Stream) error { return MemcpyDtoHAsync(dst, src, s) }
func (realOps) dtod(dst, src DevicePtr, n int, s Stream) error {
	return MemcpyDtoDAsync(dst, src, n, s)
}

func (realOps) canAccessPeer(dev, peer Device) (bool, error) { return dev.CanAccessPeer(peer) }
func (realOps) enablePeerAccess(peer Context) error          { return EnablePeerAccess(peer) }
func (realOps) peerCopy(dst DevicePtr, dstCtx Context, src DevicePtr, srcCtx Context, n int, s Stream) error {
	return MemcpyPeerAsync(dst, dstCtx, src, srcCtx, n, s)
}

func (realOps) blasCreate(s Stream) (Blas, error) {
	h, err := NewBlas()
	if err != nil {
		return Blas{}, err
	}
	if err := h.SetStream(s); err != nil {
		_ = h.Destroy()
		return Blas{}, err
	}
	return h, nil
}

func (realOps) blasDestroy(h Blas) error { return h.Destroy() }

func (realOps) dgemm(h Blas, tA, tB Op, m, n, k int, alpha float64, a DevicePtr, lda int, b DevicePtr, ldb int, beta float64, c DevicePtr, ldc int) error {
	return h.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func (realOps) dtrsm(h Blas, side SideMode, uplo Fill, tA Op, diag DiagType, m, n int, alpha float64, a DevicePtr, lda int, b DevicePtr, ldb int) error {
	return h.Dtrsm(side, uplo, tA, diag, m, n, alpha, a, lda, b, ldb)
}

// dtrmm is in place: cuBLAS's product is out of place, and C = B is the
// overlap it allows.
func (realOps) dtrmm(h Blas, side SideMode, uplo Fill, tA Op, diag DiagType, m, n int, alpha float64, a DevicePtr, lda int, b DevicePtr, ldb int) error {
	return h.Dtrmm(side, uplo, tA, diag, m, n, alpha, a, lda, b, ldb, b, ldb)
}

func (realOps) dsyrk(h Blas, uplo Fill, t Op, n, k int, alpha float64, a DevicePtr, lda int, beta float64, c DevicePtr, ldc int) error {
	return h.Dsyrk(uplo, t, n, k, alpha, a, lda, beta, c, ldc)
}

func (realOps) dgemmStridedBatched(h Blas, tA, tB Op, m, n, k int, alpha float64, a DevicePtr, lda int, strideA int64,
	b DevicePtr, ldb int, strideB int64, beta float64, c DevicePtr, ldc int, strideC int64, count int) error {
	return h.DgemmStridedBatched(tA, tB, m, n, k, alpha, a, lda, strideA, b, ldb, strideB, beta, c, ldc, strideC, count)
}

func (realOps) dgemmBatched(h Blas, tA, tB Op, m, n, k int, alpha float64, a DevicePtr, lda int, b DevicePtr, ldb int,
	beta float64, c DevicePtr, ldc int, count int) error {
	return h.DgemmBatched(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, count)
}

func (realOps) solverCreate(s Stream) (*Solver, error) { return NewSolver(s) }
func (realOps) solverDestroy(sv *Solver) error         { return sv.Destroy() }

func (realOps) potrfBufferSize(sv *Solver, uplo Fill, n int, a DevicePtr, lda int) (int, error) {
	return sv.DpotrfBufferSize(uplo, n, a, lda)
}

func (realOps) potrf(sv *Solver, uplo Fill, n int, a DevicePtr, lda int, work DevicePtr, lwork int, info DevicePtr) error {
	return sv.DpotrfWorkspace(uplo, n, a, lda, work, lwork, info)
}

func (realOps) trtriBufferSize(sv *Solver, uplo Fill, diag DiagType, n int, a DevicePtr, lda int) (int, int, error) {
	return sv.DtrtriBufferSize(uplo, diag, n, a, lda)
}

func (realOps) trtri(sv *Solver, uplo Fill, diag DiagType, n int, a DevicePtr, lda int, work DevicePtr, workBytes int, host []byte, info DevicePtr) error {
	return sv.DtrtriWorkspace(uplo, diag, n, a, lda, work, workBytes, host, info)
}

func (realOps) kernel(spec driver.KernelSpec, arch string) (Function, Module, error) {
	image, err := compileCached(spec, arch)
	if err != nil {
		return 0, 0, err
	}
	mod, err := ModuleLoadData(image)
	if err != nil {
		return 0, 0, fmt.Errorf("cuda: load kernel %q: %w", spec.Name, err)
	}
	fn, err := mod.Function(spec.Entry)
	if err != nil {
		_ = mod.Unload()
		return 0, 0, fmt.Errorf("cuda: kernel %q has no entry %q: %w", spec.Name, spec.Entry, err)
	}
	return fn, mod, nil
}

func (realOps) moduleUnload(m Module) error { return m.Unload() }

func (realOps) launch(fn Function, grid, block Dim3, shared int, s Stream, args *KernelArgs) error {
	return fn.Launch(grid, block, shared, s, args)
}

// Compiled kernels are cached per process by architecture and source, so a
// program with several devices of one architecture compiles each kernel once.
var compiled struct {
	sync.Mutex
	byKey map[[32]byte]*compileResult
}

type compileResult struct {
	once  sync.Once
	image []byte
	err   error
}

// compileCached compiles spec's CUDA source for arch with NVRTC, once per
// (architecture, source) in the process.
func compileCached(spec driver.KernelSpec, arch string) ([]byte, error) {
	key := sha256.Sum256([]byte(arch + "\x00" + spec.Name + "\x00" + spec.CUDA))
	compiled.Lock()
	if compiled.byKey == nil {
		compiled.byKey = make(map[[32]byte]*compileResult)
	}
	r := compiled.byKey[key]
	if r == nil {
		r = &compileResult{}
		compiled.byKey[key] = r
	}
	compiled.Unlock()
	r.once.Do(func() {
		r.image, r.err = Compile(spec.CUDA, spec.Name+".cu", "--gpu-architecture="+arch)
		if r.err != nil {
			r.err = fmt.Errorf("cuda: compile kernel %q for %s: %w", spec.Name, arch, r.err)
		}
	})
	return r.image, r.err
}
