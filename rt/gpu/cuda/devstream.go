package cuda

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/gpu/driver"
)

// DeviceStream is one non-blocking CUDA stream of a Backend
// (driver.Stream), with its events, its cuBLAS and cuSOLVER handles
// (created on first use), its cuSOLVER workspace and its staging rings.
//
// Completion bookkeeping. Every Record is numbered. Host-side work owed to
// enqueued stream work (releasing staging space, copying staged data out to
// its Go destination, checking a factorization's status word, freeing
// scratch memory) is queued with the number of records made before it;
// when a Query finds an event complete, the work queued before that event's
// record runs, in order, before Query returns. So the manager's own
// event/complete path drives it: a staged device-to-host copy has reached
// its Go slice when the manager sees the stage-out event, and a failure
// found that way (a matrix that is not positive definite) is the error of
// that query, like any failure found while the stream ran. When a ring is
// full the stream is synchronized and everything queued runs.
//
// Only the manager of the device uses a stream (the manager's contract), so
// it has no lock.
type DeviceStream struct {
	b    *Backend
	name string
	s    Stream

	events    []Event
	recs      uint64   // records made
	slotRec   []uint64 // number of the last record of each event slot
	completed uint64   // highest record number known complete
	q         deferredQueue
	fails     []failure

	// Rings, created on first use: bulk stages copies of host memory that
	// is not pinned; meta holds pointer arrays and status words on the
	// host, dmeta their device side.
	bulk, meta, dmeta ring
	bulkMem, metaMem  HostMem
	dmetaMem          driver.Ptr

	blas      Blas
	haveBlas  bool
	solver    *Solver
	work      driver.Ptr
	workBytes int64
	lwork     map[potrfKey]int
	trtriWork map[trtriKey][2]int // device and host bytes
	hostWork  []byte              // cuSOLVER's host workspace
	hostOld   [][]byte            // replaced host workspaces, kept for work in flight
	args      KernelArgs

	stats  streamCounters
	closed bool
}

// streamCounters are atomics so that statistics can be read while the
// manager runs.
type streamCounters struct {
	direct, staged, waits, batched, strided atomic.Int64
}

type potrfKey struct {
	uplo   Fill
	n, lda int
}

type trtriKey struct {
	uplo   Fill
	diag   DiagType
	n, lda int
}

// StreamStats counts what a stream did with host memory.
type StreamStats struct {
	DirectBytes int64 // copied straight from or to pinned host memory
	StagedBytes int64 // copied through the staging ring
	Waits       int64 // times a full ring made the stream synchronize
	Batched     int64 // DgemmBatched calls through pointer arrays
	Strided     int64 // DgemmBatched calls turned into strided-batched ones
}

func (c *streamCounters) snapshot() StreamStats {
	return StreamStats{DirectBytes: c.direct.Load(), StagedBytes: c.staged.Load(), Waits: c.waits.Load(),
		Batched: c.batched.Load(), Strided: c.strided.Load()}
}

func (t *StreamStats) add(o StreamStats) {
	t.DirectBytes += o.DirectBytes
	t.StagedBytes += o.StagedBytes
	t.Waits += o.Waits
	t.Batched += o.Batched
	t.Strided += o.Strided
}

var _ driver.Stream = (*DeviceStream)(nil)

// Stream returns the CUDA stream, for bodies that call the binding
// directly (on the manager's thread, inside a hook).
func (s *DeviceStream) Stream() Stream { return s.s }

// Blas returns the stream's cuBLAS handle, creating it on first use.
func (s *DeviceStream) Blas() (Blas, error) {
	if !s.haveBlas {
		h, err := s.b.ops.blasCreate(s.s)
		if err != nil {
			return Blas{}, err
		}
		s.blas, s.haveBlas = h, true
	}
	return s.blas, nil
}

// PrepareCompute implements driver.ComputePreparer: it creates the stream's
// cuBLAS and cuSOLVER handles and its pointer-array rings now, when the
// device opens, instead of in the first bodies, and calls each operation of
// the BLAS subset once on scratch memory. The first call of each operation
// in a process is slow (the libraries initialize, and lazy module loading
// loads the kernels), which a tiled Cholesky would otherwise pay inside its
// first tasks; TestCUDAColdStart measures the first calls after these small
// ones, and docs/gpu.md, "CUDA", gives the figures.
func (s *DeviceStream) PrepareCompute() error {
	if err := s.b.bind(); err != nil {
		return err
	}
	defer s.b.unbind()
	if _, err := s.Blas(); err != nil {
		return err
	}
	if err := s.solverHandle(); err != nil {
		return err
	}
	if err := s.hostRing(&s.meta, &s.metaMem, metaBytes); err != nil {
		return err
	}
	if err := s.deviceRing(); err != nil {
		return err
	}
	return s.warmUp()
}

// Sizes of the warm-up calls: square operands of warmN (the backend's warm,
// which tests lower; the kernels of the larger tiles belong to the same
// families), a factorization of warmPotrfN (its identity matrix goes through
// the pinned meta ring) and batches of warmBatchN products, each at most
// what the operands hold.
const (
	warmN      = 512
	warmPotrfN = 320
	warmBatchN = 32
)

// warmUp calls every operation of the BLAS subset once on scratch memory (TRSM
// in the two forms of a tiled Cholesky) and waits for them. The operands are
// whatever the memory holds: the results are not used.
func (s *DeviceStream) warmUp() (err error) {
	n := s.b.warm
	if n <= 0 {
		return nil
	}
	bytes := int64(n * n * 8)
	var p [3]driver.Ptr
	defer func() {
		for _, q := range p {
			if q != 0 {
				err = errors.Join(err, s.b.pool.Free(q))
			}
		}
	}()
	for i := range p {
		if p[i], err = s.b.pool.Alloc(bytes); err != nil {
			return err
		}
	}
	bsz, pn := min(warmBatchN, n/2), min(warmPotrfN, n)
	steps := []func() error{
		func() error { return s.Dgemm(blas.NoTrans, blas.Trans, n, n, n, -1, p[0], n, p[1], n, 1, p[2], n) },
		func() error { return s.Dsyrk(blas.Lower, blas.NoTrans, n, n, -1, p[0], n, 1, p[2], n) },
		func() error {
			return s.Dtrsm(blas.Right, blas.Lower, blas.Trans, blas.NonUnit, n, n, 1, p[0], n, p[1], n)
		},
		func() error {
			// The inverse of a triangle by a solve (InvertLower's fallback).
			return s.Dtrsm(blas.Left, blas.Lower, blas.NoTrans, blas.NonUnit, n, n, 1, p[0], n, p[1], n)
		},
		func() error {
			return s.Dtrmm(blas.Right, blas.Lower, blas.Trans, blas.NonUnit, n, n, 1, p[0], n, p[1], n)
		},
		func() error {
			b, st := bsz, int64(bsz*bsz)
			return s.DgemmStridedBatched(blas.NoTrans, blas.NoTrans, b, b, b, 1, p[0], b, st, p[1], b, st, 1, p[2], b, st, 2)
		},
		func() error {
			// Uneven distances: the pointer-array path.
			b := bsz
			at := func(q driver.Ptr, i int) driver.Ptr { return q + driver.Ptr(i*b*b*8) }
			ps := func(q driver.Ptr) []driver.Ptr { return []driver.Ptr{at(q, 0), at(q, 1), at(q, 3)} }
			return s.DgemmBatched(blas.NoTrans, blas.NoTrans, b, b, b, 1, ps(p[0]), b, ps(p[1]), b, 1, ps(p[2]), b)
		},
		func() error {
			m, size := pn, int64(pn*pn*8)
			off, consumed, err := s.reserve(&s.meta, size, 64)
			if err != nil {
				return err
			}
			id := unsafe.Slice((*float64)(hostPiece(s.metaMem, off, size).p), m*m)
			clear(id)
			for i := range m {
				id[i*m+i] = 1
			}
			err = s.b.ops.htod(DevicePtr(p[2]), hostPiece(s.metaMem, off, size), s.s)
			s.q.push(deferred{epoch: s.recs, meta: consumed})
			if err != nil {
				return err
			}
			return s.Dpotrf(blas.Lower, m, p[2], m)
		},
		// Last: a cuSOLVER older than its generic TRTRI lacks only this one.
		func() error { return s.Dtrtri(blas.Lower, blas.NonUnit, n, p[0], n) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return errors.Join(err, s.syncAll())
		}
	}
	err = s.syncAll()
	s.fails = s.fails[:0]
	return err
}

// solverHandle creates the stream's cuSOLVER handle on first use.
func (s *DeviceStream) solverHandle() error {
	if s.solver != nil {
		return nil
	}
	sv, err := s.b.ops.solverCreate(s.s)
	if err != nil {
		return err
	}
	s.solver = sv
	return nil
}

// Stats returns the stream's statistics.
func (s *DeviceStream) Stats() StreamStats { return s.stats.snapshot() }

// Record implements driver.Stream.
func (s *DeviceStream) Record(slot int) error {
	if slot < 0 || slot >= len(s.events) {
		return fmt.Errorf("%w: event slot %d of %d on %s", ErrBadArgument, slot, len(s.events), s.name)
	}
	if slot == len(s.events)-1 {
		// The quiescing marker is also used by gpu.Device.Close, outside
		// any management episode.
		if err := s.b.bind(); err != nil {
			return err
		}
		defer s.b.unbind()
	}
	if err := s.b.ops.eventRecord(s.events[slot], s.s); err != nil {
		return err
	}
	s.recs++
	s.slotRec[slot] = s.recs
	return nil
}

// Query implements driver.Stream: complete, not yet, or the error of a
// failed event query or of work that failed before the event (never "not
// ready" for a failure).
func (s *DeviceStream) Query(slot int) (bool, error) {
	if slot < 0 || slot >= len(s.events) {
		return false, fmt.Errorf("%w: event slot %d of %d on %s", ErrBadArgument, slot, len(s.events), s.name)
	}
	if slot == len(s.events)-1 {
		if err := s.b.bind(); err != nil {
			return false, err
		}
		defer s.b.unbind()
	}
	done, err := s.b.ops.eventQuery(s.events[slot])
	if err != nil || !done {
		return false, err
	}
	r := s.slotRec[slot]
	if r > s.completed {
		s.completed = r
		if s.q.len() > 0 {
			s.retire(s.completed)
		}
	}
	if len(s.fails) > 0 {
		if err := s.takeFailure(r); err != nil {
			return false, err
		}
	}
	return true, nil
}

// retire runs the deferred work queued before record number upTo.
func (s *DeviceStream) retire(upTo uint64) {
	for d := s.q.front(); d != nil && d.epoch < upTo; d = s.q.front() {
		s.run(d)
		s.q.pop()
	}
}

// run performs one deferred item.
func (s *DeviceStream) run(d *deferred) {
	if d.dst != nil {
		copy(d.dst, d.src)
	}
	if d.info != nil {
		if info := *d.info; info != 0 {
			var err error
			if info > 0 {
				err = fmt.Errorf("%w: Dpotrf on %s: the leading minor of order %d of the %d×%d matrix is not positive definite",
					driver.ErrNotPositiveDefinite, s.name, info, d.order, d.order)
			} else {
				err = fmt.Errorf("%w: Dpotrf on %s: argument %d is invalid", ErrBadArgument, s.name, -info)
			}
			s.fails = append(s.fails, failure{epoch: d.epoch, err: err})
		}
	}
	if d.free != 0 {
		if err := s.b.pool.Free(d.free); err != nil {
			s.fails = append(s.fails, failure{epoch: d.epoch, err: err})
		}
	}
	s.bulk.release(d.bulk)
	s.meta.release(d.meta)
	s.dmeta.release(d.dmeta)
}

// takeFailure removes and returns the oldest failure of work enqueued
// before record r.
func (s *DeviceStream) takeFailure(r uint64) error {
	for i, f := range s.fails {
		if f.epoch < r {
			s.fails = append(s.fails[:i], s.fails[i+1:]...)
			return f.err
		}
	}
	return nil
}

// syncAll waits until everything enqueued on the stream has run, then runs
// all deferred work.
func (s *DeviceStream) syncAll() error {
	if err := s.b.ops.streamSync(s.s); err != nil {
		return err
	}
	for d := s.q.front(); d != nil; d = s.q.front() {
		s.run(d)
		s.q.pop()
	}
	return nil
}

// reserve takes n bytes of r, waiting for the stream when the ring is full.
func (s *DeviceStream) reserve(r *ring, n, align int64) (off, consumed int64, err error) {
	if off, consumed, ok := r.alloc(n, align); ok {
		return off, consumed, nil
	}
	if n > r.size {
		return 0, 0, fmt.Errorf("%w: %d bytes do not fit a ring of %d on %s", ErrBadArgument, n, r.size, s.name)
	}
	s.stats.waits.Add(1)
	if err := s.syncAll(); err != nil {
		return 0, 0, err
	}
	if off, consumed, ok := r.alloc(n, align); ok {
		return off, consumed, nil
	}
	return 0, 0, fmt.Errorf("cuda: ring of %s still full after synchronizing (%d of %d bytes held)", s.name, r.used, r.size)
}

// PrepareTransfers implements driver.TransferPreparer: it allocates the pinned
// ring that stages copies of ordinary host memory now, when the device opens,
// and not in the first copy of a run.
func (s *DeviceStream) PrepareTransfers() error {
	if err := s.b.bind(); err != nil {
		return err
	}
	defer s.b.unbind()
	return s.hostRing(&s.bulk, &s.bulkMem, s.b.staging)
}

// hostRing makes sure a pinned ring has its memory.
func (s *DeviceStream) hostRing(r *ring, mem *HostMem, size int) error {
	if mem.p != nil {
		return nil
	}
	h, err := s.b.ops.hostAlloc(size)
	if err != nil {
		return fmt.Errorf("cuda: staging ring of %d bytes for %s: %w", size, s.name, err)
	}
	*mem = h
	*r = ring{size: int64(size)}
	return nil
}

func (s *DeviceStream) deviceRing() error {
	if s.dmetaMem != 0 {
		return nil
	}
	p, err := s.b.pool.Alloc(dmetaBytes)
	if err != nil {
		return fmt.Errorf("cuda: pointer-array ring for %s: %w", s.name, err)
	}
	s.dmetaMem = p
	s.dmeta = ring{size: dmetaBytes}
	return nil
}

// hostPiece is bytes [off, off+n) of pinned memory h.
func hostPiece(h HostMem, off, n int64) HostMem {
	return HostMem{p: unsafe.Add(h.p, off), n: int(n)}
}

// CopyHtoD implements driver.Stream. Pinned source memory is copied
// directly; any other is copied into the staging ring first.
func (s *DeviceStream) CopyHtoD(dst driver.Ptr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	if err := s.b.bind(); err != nil {
		return err
	}
	defer s.b.unbind()
	if h, ok := pinnedAt(src); ok {
		s.stats.direct.Add(int64(len(src)))
		return s.b.ops.htod(DevicePtr(dst), h, s.s)
	}
	if err := s.hostRing(&s.bulk, &s.bulkMem, s.b.staging); err != nil {
		return err
	}
	piece := s.bulk.size / 4
	for off := int64(0); off < int64(len(src)); {
		n := min(int64(len(src))-off, piece)
		ro, consumed, err := s.reserve(&s.bulk, n, 64)
		if err != nil {
			return err
		}
		buf := hostPiece(s.bulkMem, ro, n)
		copy(buf.Bytes(), src[off:off+n])
		err = s.b.ops.htod(DevicePtr(dst)+DevicePtr(off), buf, s.s)
		s.q.push(deferred{epoch: s.recs, bulk: consumed})
		if err != nil {
			return err
		}
		s.stats.staged.Add(n)
		off += n
	}
	return nil
}

// CopyDtoH implements driver.Stream. A destination that is not pinned
// receives the data from the staging ring when the manager's query of a
// later event finds the copy complete.
func (s *DeviceStream) CopyDtoH(dst []byte, src driver.Ptr) error {
	if len(dst) == 0 {
		return nil
	}
	if err := s.b.bind(); err != nil {
		return err
	}
	defer s.b.unbind()
	if h, ok := pinnedAt(dst); ok {
		s.stats.direct.Add(int64(len(dst)))
		return s.b.ops.dtoh(h, DevicePtr(src), s.s)
	}
	if err := s.hostRing(&s.bulk, &s.bulkMem, s.b.staging); err != nil {
		return err
	}
	piece := s.bulk.size / 4
	for off := int64(0); off < int64(len(dst)); {
		n := min(int64(len(dst))-off, piece)
		ro, consumed, err := s.reserve(&s.bulk, n, 64)
		if err != nil {
			return err
		}
		buf := hostPiece(s.bulkMem, ro, n)
		if err := s.b.ops.dtoh(buf, DevicePtr(src)+DevicePtr(off), s.s); err != nil {
			s.q.push(deferred{epoch: s.recs, bulk: consumed})
			return err
		}
		s.q.push(deferred{epoch: s.recs, bulk: consumed, dst: dst[off : off+n], src: buf.Bytes()})
		s.stats.staged.Add(n)
		off += n
	}
	return nil
}

// CopyDtoD implements driver.Stream.
func (s *DeviceStream) CopyDtoD(dst, src driver.Ptr, n int64) error {
	if n <= 0 {
		return nil
	}
	return s.b.ops.dtod(DevicePtr(dst), DevicePtr(src), int(n), s.s)
}

// CopyPeer implements driver.PeerStream: a copy from the memory of another CUDA
// device (linked with Backend.EnablePeer) into this stream's device.
func (s *DeviceStream) CopyPeer(dst driver.Ptr, from driver.Backend, src driver.Ptr, n int64) error {
	fb, ok := from.(*Backend)
	if !ok {
		return badArgf("peer copy from %T, not a CUDA device", from)
	}
	if n <= 0 {
		return nil
	}
	return s.b.ops.peerCopy(DevicePtr(dst), s.b.ctx, DevicePtr(src), fb.ctx, int(n), s.s)
}

func cudaOp(t blas.Transpose) Op {
	if t == blas.Trans {
		return OpT
	}
	return OpN
}

func cudaFill(u blas.Uplo) Fill {
	if u == blas.Upper {
		return FillUpper
	}
	return FillLower
}

func cudaSide(sd blas.Side) SideMode {
	if sd == blas.Right {
		return SideRight
	}
	return SideLeft
}

func cudaDiag(d blas.Diag) DiagType {
	if d == blas.Unit {
		return DiagUnit
	}
	return DiagNonUnit
}

// Dgemm implements driver.BLAS with cuBLAS on the stream.
func (s *DeviceStream) Dgemm(ta, tb blas.Transpose, m, n, k int, alpha float64, a driver.Ptr, lda int, b driver.Ptr, ldb int, beta float64, c driver.Ptr, ldc int) error {
	h, err := s.Blas()
	if err != nil {
		return err
	}
	return s.b.ops.dgemm(h, cudaOp(ta), cudaOp(tb), m, n, k, alpha, DevicePtr(a), lda, DevicePtr(b), ldb, beta, DevicePtr(c), ldc)
}

// Dtrsm implements driver.BLAS with cuBLAS on the stream.
func (s *DeviceStream) Dtrsm(side blas.Side, uplo blas.Uplo, ta blas.Transpose, diag blas.Diag, m, n int, alpha float64, a driver.Ptr, lda int, b driver.Ptr, ldb int) error {
	h, err := s.Blas()
	if err != nil {
		return err
	}
	return s.b.ops.dtrsm(h, cudaSide(side), cudaFill(uplo), cudaOp(ta), cudaDiag(diag), m, n, alpha, DevicePtr(a), lda, DevicePtr(b), ldb)
}

// Dtrmm implements driver.BLAS with cuBLAS on the stream.
func (s *DeviceStream) Dtrmm(side blas.Side, uplo blas.Uplo, ta blas.Transpose, diag blas.Diag, m, n int, alpha float64, a driver.Ptr, lda int, b driver.Ptr, ldb int) error {
	h, err := s.Blas()
	if err != nil {
		return err
	}
	return s.b.ops.dtrmm(h, cudaSide(side), cudaFill(uplo), cudaOp(ta), cudaDiag(diag), m, n, alpha, DevicePtr(a), lda, DevicePtr(b), ldb)
}

// Dsyrk implements driver.BLAS with cuBLAS on the stream.
func (s *DeviceStream) Dsyrk(uplo blas.Uplo, t blas.Transpose, n, k int, alpha float64, a driver.Ptr, lda int, beta float64, c driver.Ptr, ldc int) error {
	h, err := s.Blas()
	if err != nil {
		return err
	}
	return s.b.ops.dsyrk(h, cudaFill(uplo), cudaOp(t), n, k, alpha, DevicePtr(a), lda, beta, DevicePtr(c), ldc)
}

// Dpotrf implements driver.BLAS with cuSOLVER on the stream, with the
// stream's workspace (grown from the pool as needed; a replaced workspace
// is freed once the work queued before it completed). The status word is
// copied to pinned memory behind the factorization; a matrix that is not
// positive definite fails the query of the next event with
// driver.ErrNotPositiveDefinite.
func (s *DeviceStream) Dpotrf(uplo blas.Uplo, n int, a driver.Ptr, lda int) error {
	if n == 0 {
		return nil
	}
	if err := s.solverHandle(); err != nil {
		return err
	}
	fill := cudaFill(uplo)
	key := potrfKey{fill, n, lda}
	lwork, ok := s.lwork[key]
	if !ok {
		var err error
		if lwork, err = s.b.ops.potrfBufferSize(s.solver, fill, n, DevicePtr(a), lda); err != nil {
			return err
		}
		s.lwork[key] = lwork
	}
	if err := s.reserveWork(int64(max(lwork, 1)) * 8); err != nil {
		return err
	}
	if err := s.hostRing(&s.meta, &s.metaMem, metaBytes); err != nil {
		return err
	}
	if err := s.deviceRing(); err != nil {
		return err
	}
	hoff, hc, err := s.reserve(&s.meta, 4, 16)
	if err != nil {
		return err
	}
	doff, dc, err := s.reserve(&s.dmeta, 4, 16)
	if err != nil {
		s.q.push(deferred{epoch: s.recs, meta: hc})
		return err
	}
	devInfo := DevicePtr(s.dmetaMem) + DevicePtr(doff)
	word := hostPiece(s.metaMem, hoff, 4)
	if err := s.b.ops.potrf(s.solver, fill, n, DevicePtr(a), lda, DevicePtr(s.work), lwork, devInfo); err != nil {
		s.q.push(deferred{epoch: s.recs, meta: hc, dmeta: dc})
		return err
	}
	if err := s.b.ops.dtoh(word, devInfo, s.s); err != nil {
		s.q.push(deferred{epoch: s.recs, meta: hc, dmeta: dc})
		return err
	}
	s.q.push(deferred{epoch: s.recs, meta: hc, dmeta: dc, info: (*int32)(word.p), order: n})
	return nil
}

// reserveWork makes the stream's cuSOLVER workspace at least need bytes. A
// replaced workspace is freed once the work queued before now completed.
func (s *DeviceStream) reserveWork(need int64) error {
	if need <= s.workBytes {
		return nil
	}
	p, err := s.b.pool.Alloc(need)
	if err != nil {
		return fmt.Errorf("cuda: cuSOLVER workspace of %d bytes on %s: %w", need, s.name, err)
	}
	if s.work != 0 {
		s.q.push(deferred{epoch: s.recs, free: s.work})
	}
	s.work, s.workBytes = p, need
	return nil
}

// Dtrtri implements driver.BLAS with cuSOLVER on the stream (its generic
// cusolverDnXtrtri), with the stream's workspace. LAPACK's info goes to the
// solver's own status word and is not read: like cuBLAS's Dtrsm, the
// inverse does not check the diagonal.
func (s *DeviceStream) Dtrtri(uplo blas.Uplo, diag blas.Diag, n int, a driver.Ptr, lda int) error {
	if n == 0 {
		return nil
	}
	if err := s.solverHandle(); err != nil {
		return err
	}
	key := trtriKey{cudaFill(uplo), cudaDiag(diag), n, lda}
	size, ok := s.trtriWork[key]
	if !ok {
		dev, host, err := s.b.ops.trtriBufferSize(s.solver, key.uplo, key.diag, n, DevicePtr(a), lda)
		if err != nil {
			return err
		}
		if s.trtriWork == nil {
			s.trtriWork = make(map[trtriKey][2]int)
		}
		size = [2]int{dev, host}
		s.trtriWork[key] = size
	}
	if err := s.reserveWork(int64(max(size[0], 8))); err != nil {
		return err
	}
	if size[1] > len(s.hostWork) {
		// Routines already queued may still use the old one: it stays
		// referenced until the stream closes.
		s.hostOld = append(s.hostOld, s.hostWork)
		s.hostWork = make([]byte, size[1])
	}
	return s.b.ops.trtri(s.solver, key.uplo, key.diag, n, DevicePtr(a), lda, DevicePtr(s.work), int(s.workBytes),
		s.hostWork[:size[1]], s.solver.InfoPtr())
}

// DgemmStridedBatched implements driver.BLAS with cuBLAS on the stream.
func (s *DeviceStream) DgemmStridedBatched(ta, tb blas.Transpose, m, n, k int, alpha float64, a driver.Ptr, lda int, strideA int64, b driver.Ptr, ldb int, strideB int64, beta float64, c driver.Ptr, ldc int, strideC int64, count int) error {
	h, err := s.Blas()
	if err != nil {
		return err
	}
	return s.b.ops.dgemmStridedBatched(h, cudaOp(ta), cudaOp(tb), m, n, k, alpha, DevicePtr(a), lda, strideA,
		DevicePtr(b), ldb, strideB, beta, DevicePtr(c), ldc, strideC, count)
}

// maxBatch bounds the pointer arrays of one cublasDgemmBatched call.
const maxBatch = 8192

// stride returns the common distance in float64 elements between
// consecutive pointers of p, when there is one and it is at least minStride.
func stride(p []driver.Ptr, minStride int64) (int64, bool) {
	d := int64(p[1]) - int64(p[0])
	if d < minStride*8 || d%8 != 0 {
		return 0, false
	}
	for i := 2; i < len(p); i++ {
		if int64(p[i])-int64(p[i-1]) != d {
			return 0, false
		}
	}
	return d / 8, true
}

// DgemmBatched implements driver.BLAS. Matrices laid out at a constant
// distance (a ring of tiles allocated one after the other) go to
// cublasDgemmStridedBatched; otherwise the pointer arrays are written to
// the stream's pinned ring, copied to its device ring and handed to
// cublasDgemmBatched, in pieces of at most 8192 products.
func (s *DeviceStream) DgemmBatched(ta, tb blas.Transpose, m, n, k int, alpha float64, a []driver.Ptr, lda int, b []driver.Ptr, ldb int, beta float64, c []driver.Ptr, ldc int) error {
	count := len(c)
	if count == 0 {
		return nil
	}
	if count == 1 {
		return s.Dgemm(ta, tb, m, n, k, alpha, a[0], lda, b[0], ldb, beta, c[0], ldc)
	}
	h, err := s.Blas()
	if err != nil {
		return err
	}
	if sa, ok := stride(a, 0); ok {
		if sb, ok := stride(b, 0); ok {
			// C matrices must not overlap.
			if sc, ok := stride(c, int64(ldc)*int64(max(n-1, 0))+int64(m)); ok {
				s.stats.strided.Add(1)
				return s.b.ops.dgemmStridedBatched(h, cudaOp(ta), cudaOp(tb), m, n, k, alpha, DevicePtr(a[0]), lda, sa,
					DevicePtr(b[0]), ldb, sb, beta, DevicePtr(c[0]), ldc, sc, count)
			}
		}
	}
	if err := s.hostRing(&s.meta, &s.metaMem, metaBytes); err != nil {
		return err
	}
	if err := s.deviceRing(); err != nil {
		return err
	}
	for lo := 0; lo < count; lo += maxBatch {
		hi := min(count, lo+maxBatch)
		cnt := hi - lo
		bytes := int64(3 * cnt * 8)
		hoff, hc, err := s.reserve(&s.meta, bytes, 64)
		if err != nil {
			return err
		}
		doff, dc, err := s.reserve(&s.dmeta, bytes, 256)
		if err != nil {
			s.q.push(deferred{epoch: s.recs, meta: hc})
			return err
		}
		arr := hostPiece(s.metaMem, hoff, bytes)
		ptrs := unsafe.Slice((*uint64)(arr.p), 3*cnt)
		for i := range cnt {
			ptrs[i] = uint64(a[lo+i])
			ptrs[cnt+i] = uint64(b[lo+i])
			ptrs[2*cnt+i] = uint64(c[lo+i])
		}
		dev := DevicePtr(s.dmetaMem) + DevicePtr(doff)
		err = s.b.ops.htod(dev, arr, s.s)
		if err == nil {
			err = s.b.ops.dgemmBatched(h, cudaOp(ta), cudaOp(tb), m, n, k, alpha, dev, lda,
				dev+DevicePtr(cnt*8), ldb, beta, dev+DevicePtr(2*cnt*8), ldc, cnt)
		}
		s.q.push(deferred{epoch: s.recs, meta: hc, dmeta: dc})
		if err != nil {
			return err
		}
		s.stats.batched.Add(1)
	}
	return nil
}

// dim turns a gpu geometry into a CUDA one; zero extents mean 1.
func dim(d driver.Dim3) (Dim3, error) {
	out := Dim3{X: 1, Y: 1, Z: 1}
	for i, v := range [3]int{d.X, d.Y, d.Z} {
		if v < 0 || v > math.MaxUint32 {
			return out, fmt.Errorf("%w: launch extent %v", ErrBadArgument, d)
		}
		if v == 0 {
			continue
		}
		switch i {
		case 0:
			out.X = uint32(v)
		case 1:
			out.Y = uint32(v)
		default:
			out.Z = uint32(v)
		}
	}
	return out, nil
}

// Launch implements driver.Stream. Arguments map to kernel parameters
// in order: driver.Buffer, driver.Ptr and DevicePtr to a pointer, int and int32 to
// int (an int outside its range is an error), uint32 to unsigned int, int64
// to long long, uint64 to unsigned long long, float64 to double and float32
// to float.
func (s *DeviceStream) Launch(k driver.Kernel, grid, block driver.Dim3, shared int, args []any) error {
	kk, ok := k.(*kernel)
	if !ok || kk.b != s.b {
		return fmt.Errorf("%w: kernel %s was not loaded by %s", ErrBadArgument, k.Name(), s.b.name)
	}
	g, err := dim(grid)
	if err != nil {
		return err
	}
	bl, err := dim(block)
	if err != nil {
		return err
	}
	a := s.args.Reset()
	for i, v := range args {
		switch v := v.(type) {
		case driver.Buffer:
			a.Ptr(DevicePtr(v.Ptr))
		case driver.Ptr:
			a.Ptr(DevicePtr(v))
		case DevicePtr:
			a.Ptr(v)
		case int:
			if v < math.MinInt32 || v > math.MaxInt32 {
				return fmt.Errorf("%w: kernel %s argument %d: %d does not fit a C int (pass an int64)", ErrBadArgument, kk.name, i, v)
			}
			a.Int32(int32(v))
		case int32:
			a.Int32(v)
		case uint32:
			a.Uint32(v)
		case int64:
			a.Int64(v)
		case uint64:
			a.Uint64(v)
		case float64:
			a.Float64(v)
		case float32:
			a.Float32(v)
		default:
			return fmt.Errorf("%w: kernel %s argument %d has type %T", ErrBadArgument, kk.name, i, v)
		}
	}
	return s.b.ops.launch(kk.fn, g, bl, shared, s.s, a)
}

// Close implements driver.Stream: it waits for the stream (the manager
// only closes quiescent streams; this makes sure no staged copy is still
// using a ring), runs the deferred work and frees everything.
func (s *DeviceStream) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if err := s.b.bind(); err != nil {
		return err
	}
	defer s.b.unbind()
	err := s.syncAll()
	return errors.Join(err, s.destroy())
}

// destroy frees the stream's resources; the stream is idle.
func (s *DeviceStream) destroy() error {
	o := s.b.ops
	var errs []error
	if s.haveBlas {
		errs = append(errs, o.blasDestroy(s.blas))
		s.haveBlas = false
	}
	if s.solver != nil {
		errs = append(errs, o.solverDestroy(s.solver))
		s.solver = nil
	}
	for _, e := range s.events {
		errs = append(errs, o.eventDestroy(e))
	}
	s.events = nil
	if s.s != 0 {
		errs = append(errs, o.streamDestroy(s.s))
		s.s = 0
	}
	for _, p := range []driver.Ptr{s.work, s.dmetaMem} {
		if p != 0 {
			errs = append(errs, s.b.pool.Free(p))
		}
	}
	s.work, s.dmetaMem = 0, 0
	for _, h := range []*HostMem{&s.bulkMem, &s.metaMem} {
		if h.p != nil {
			errs = append(errs, o.hostFree(*h))
			*h = HostMem{}
		}
	}
	return errors.Join(errs...)
}
