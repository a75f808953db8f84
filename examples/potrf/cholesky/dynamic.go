package cholesky

// The same factorisation as potrf.jdf, written as a dynamic task graph (rt/dynamic): the
// program inserts the tasks of the right-looking algorithm in its sequential order, each with
// the tiles it reads and writes, and the graph infers the dependencies from those accesses.
// For this matrix they are exactly potrf.jdf's: every tile is written by one chain of tasks
// (its updates in step order, then its POTRF or TRSM) and read only after its last write, so
// no write ever waits for a reader. The tile kernels make the same BLAS calls as potrf.jdf's
// CPU bodies and each tile sees its updates in the same order, so the two factors are equal
// bit for bit (TestDynamicMatchesPTG).
//
// Each class has one insertion method, which builds the task's body and its accesses; a
// class gains a placement across ranks by adding to its method's arguments, and the graph
// runs across ranks by the options FactorDynamic passes to dynamic.New.
//
// GPU bodies (InsertFactor with gpus): every task keeps its CPU body and gains a GPU body
// making potrf.jdf's device calls, so that rt shares the tasks between the CPU workers and
// the devices as for potrf.jdf. A GPU body sees its task only through its buffers, not its
// indices, so the tiles' shape is the body's own: the bodies are made once per
// factorisation and shape (a task's shape is that of the tile row it writes; only the
// ragged last row differs), and tasks of one shape form one class, whose GEMMs batch into
// one cuBLAS call. Rejected: a body per task (no batch could form, and a class per
// insertion), and potrf.jdf's TRSM by the inverse of L(k, k) (a tile and a solve per step
// for a gain on small tiles only).
//
// The kernels are methods here rather than calls shared with potrf.jdf's bodies, so that the
// generated taskpool stays as its .jdf writes it.

import (
	"context"
	"fmt"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/dynamic"
	"github.com/jdf2go/jdf2go/rt/gpu"
)

// FactorDynamic factors a in place on c, as Factor does, with the tasks inserted into a
// dynamic graph (rt/dynamic) created with opts, named "dpotrf" unless opts name it, and CPU
// bodies only (RunFactor gives them GPU bodies too). It returns when the factorisation is
// done, failed (the error names the task, "POTRF(12)", and the tile) or ctx ends.
func FactorDynamic(ctx context.Context, c *rt.Context, a *rt.TiledMatrix, impl *blas.Impl, opts ...dynamic.Option) error {
	g, err := dynamic.New(c, append([]dynamic.Option{dynamic.Name("dpotrf")}, opts...)...)
	if err != nil {
		return err
	}
	return RunFactor(ctx, g, a, impl, false)
}

// RunFactor inserts the factorisation of a into g (InsertFactor) and waits for g.
func RunFactor(ctx context.Context, g *dynamic.Graph, a *rt.TiledMatrix, impl *blas.Impl, gpus bool) error {
	err := InsertFactor(g, a, impl, gpus)
	// After a failed insertion Wait still closes the graph; once a task failed, the
	// insertions after it return its error, and Wait reports the task.
	if werr := g.Wait(ctx); werr != nil || err == nil {
		return werr
	}
	return err
}

// InsertFactor inserts the tasks of the factorisation of a into g, with the tile kernels of
// impl, in the order of the sequential right-looking algorithm: at step k, POTRF(k), the
// TRSMs of column k, then for each row m below k its SYRK and its GEMMs. With gpus, every
// task has a GPU body besides its CPU body, and runs where rt places it (on a context
// without devices, on the CPU). The caller waits for g. It returns the first insertion
// error (the graph's own error once a task failed).
func InsertFactor(g *dynamic.Graph, a *rt.TiledMatrix, impl *blas.Impl, gpus bool) error {
	if a == nil || impl == nil {
		return fmt.Errorf("cholesky: InsertFactor needs a matrix and a BLAS backend")
	}
	if a.MT != a.NT || a.MB != a.NB {
		return fmt.Errorf("cholesky: a %dx%d matrix of %dx%d tiles is not square", a.M, a.N, a.MB, a.NB)
	}
	f := &dynFactor{g: g, m: dynamic.NewMatrix(g, "A", a), a: a, impl: impl, mt: a.MT}
	if gpus {
		f.bodies = map[bodyKey]*dynamic.GPUBody{}
	}
	for k := range f.mt {
		if err := f.potrf(k); err != nil {
			return err
		}
		for m := k + 1; m < f.mt; m++ {
			if err := f.trsm(m, k); err != nil {
				return err
			}
		}
		// Row by row, SYRK(k, m) then the GEMMs of row m: each TRSM(m, k) then lists its
		// readers as potrf.jdf's output dependencies do (SYRK(k, m), GEMM(m, k+1 .. m-1, k),
		// GEMM(m+1 .. MT-1, m, k)), so that it makes them ready in the same order.
		for m := k + 1; m < f.mt; m++ {
			if err := f.syrk(k, m); err != nil {
				return err
			}
			for n := k + 1; n < m; n++ {
				if err := f.gemm(m, n, k); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// dynFactor inserts the tasks of one factorisation.
type dynFactor struct {
	g    *dynamic.Graph
	m    *dynamic.Matrix
	a    *rt.TiledMatrix
	impl *blas.Impl
	mt   int
	// bodies are the GPU bodies made so far, by class and shape; nil for CPU bodies only.
	bodies map[bodyKey]*dynamic.GPUBody
}

// The priorities of potrf.jdf's classes (its header explains them): column c of the factor is
// needed at step c, so a task writing a tile of column c gets 4*(MT - c), plus 3 for POTRF
// and for TRSM(k + 1, k), 2 for the other TRSMs, 1 for SYRK, which lie on the critical path.
// TestDynamicPriorities compares them with the generated taskpool's.

func potrfPriority(mt, k int) int32 { return int32(4*(mt-k) + 3) }

func trsmPriority(mt, m, k int) int32 {
	if m == k+1 {
		return int32(4*(mt-k) + 3)
	}
	return int32(4*(mt-k) + 2)
}

func syrkPriority(mt, m int) int32 { return int32(4*(mt-m) + 1) }

func gemmPriority(mt, n int) int32 { return int32(4 * (mt - n)) }

// potrf inserts POTRF(k): T = L(k, k), the Cholesky factor of the diagonal tile.
func (f *dynFactor) potrf(k int) error {
	t := f.m.Tile(k, k)
	return f.g.Insert("POTRF", func(*dynamic.Task) error { return f.potrfTile(k, t.Value()) },
		f.withGPU("POTRF", potrfGPU, k, dynamic.ReadWrite(t), dynamic.Priority(potrfPriority(f.mt, k)))...)
}

// trsm inserts TRSM(m, k): C = C * T^-T with T = L(k, k).
func (f *dynFactor) trsm(m, k int) error {
	t, c := f.m.Tile(k, k), f.m.Tile(m, k)
	return f.g.Insert("TRSM", func(*dynamic.Task) error { return f.trsmTile(m, k, t.Value(), c.Value()) },
		f.withGPU("TRSM", trsmGPU, m, dynamic.Read(t), dynamic.ReadWrite(c), dynamic.Priority(trsmPriority(f.mt, m, k)))...)
}

// syrk inserts SYRK(k, m): T = T - A * A^T with A = L(m, k) and T the diagonal tile m.
func (f *dynFactor) syrk(k, m int) error {
	a, t := f.m.Tile(m, k), f.m.Tile(m, m)
	return f.g.Insert("SYRK", func(*dynamic.Task) error { return f.syrkTile(k, m, a.Value(), t.Value()) },
		f.withGPU("SYRK", syrkGPU, m, dynamic.Read(a), dynamic.ReadWrite(t), dynamic.Priority(syrkPriority(f.mt, m)))...)
}

// gemm inserts GEMM(m, n, k): C = C - A * B^T with A = L(m, k), B = L(n, k), C = A(m, n).
func (f *dynFactor) gemm(m, n, k int) error {
	a, b, c := f.m.Tile(m, k), f.m.Tile(n, k), f.m.Tile(m, n)
	return f.g.Insert("GEMM", func(*dynamic.Task) error { return f.gemmTile(m, n, k, a.Value(), b.Value(), c.Value()) },
		f.withGPU("GEMM", gemmGPU, m, dynamic.Read(a), dynamic.Read(b), dynamic.ReadWrite(c), dynamic.Priority(gemmPriority(f.mt, n)))...)
}

// The CPU tile kernels: the calls of potrf.jdf's CPU bodies, with its arguments (column-major
// tiles, leading dimension MB; the last tile row and column may be ragged).

func (f *dynFactor) potrfTile(k int, t []float64) error {
	if err := f.impl.Dpotrf(blas.Lower, f.a.TileRows(k), t, f.a.MB); err != nil {
		return fmt.Errorf("tile (%d, %d): %w", k, k, err)
	}
	return nil
}

func (f *dynFactor) trsmTile(m, k int, t, c []float64) error {
	return f.impl.Dtrsm(blas.Right, blas.Lower, blas.Trans, blas.NonUnit,
		f.a.TileRows(m), f.a.TileCols(k), 1, t, f.a.MB, c, f.a.MB)
}

func (f *dynFactor) syrkTile(k, m int, a, t []float64) error {
	return f.impl.Dsyrk(blas.Lower, blas.NoTrans, f.a.TileRows(m), f.a.TileCols(k),
		-1, a, f.a.MB, 1, t, f.a.MB)
}

func (f *dynFactor) gemmTile(m, n, k int, a, b, c []float64) error {
	return f.impl.Dgemm(blas.NoTrans, blas.Trans, f.a.TileRows(m), f.a.TileRows(n), f.a.TileCols(k),
		-1, a, f.a.MB, b, f.a.MB, 1, c, f.a.MB)
}

// The GPU bodies: the calls of potrf.jdf's GPU bodies on the task's buffers, in the order of
// the task's accesses (the insertion methods above). Every task of the factorisation writes
// a tile of row r and its shape follows from r alone: its other tiles lie in columns below
// the last (TRSM(m, k), SYRK(k, m) and GEMM(m, n, k) have k, n < MT - 1), so they are full.

// bodyKey names a GPU body: its class and the rows of the tiles its tasks write.
type bodyKey struct {
	class string
	rows  int
}

// withGPU returns args with the GPU body of class for tasks writing a tile of row r, made
// by mk on first use, when the factorisation has GPU bodies.
func (f *dynFactor) withGPU(class string, mk func(rows, ld int) *dynamic.GPUBody, r int, args ...dynamic.Arg) []dynamic.Arg {
	if f.bodies == nil {
		return args
	}
	k := bodyKey{class, f.a.TileRows(r)}
	b := f.bodies[k]
	if b == nil {
		b = mk(k.rows, f.a.MB)
		f.bodies[k] = b
	}
	return append(args, b)
}

// The bodies, for tiles of rows rows and leading dimension ld.

func potrfGPU(rows, ld int) *dynamic.GPUBody {
	return dynamic.GPU(func(t *dynamic.GPUTask, s *gpu.Stream) gpu.Result {
		if err := s.Dpotrf(blas.Lower, rows, t.Buffer(0), ld); err != nil {
			return t.Fail(err)
		}
		return gpu.Done
	})
}

func trsmGPU(rows, ld int) *dynamic.GPUBody {
	return dynamic.GPU(func(t *dynamic.GPUTask, s *gpu.Stream) gpu.Result {
		if err := s.Dtrsm(blas.Right, blas.Lower, blas.Trans, blas.NonUnit, rows, ld, 1, t.Buffer(0), ld, t.Buffer(1), ld); err != nil {
			return t.Fail(err)
		}
		return gpu.Done
	})
}

func syrkGPU(rows, ld int) *dynamic.GPUBody {
	return dynamic.GPU(func(t *dynamic.GPUTask, s *gpu.Stream) gpu.Result {
		if err := s.Dsyrk(blas.Lower, blas.NoTrans, rows, ld, -1, t.Buffer(0), ld, 1, t.Buffer(1), ld); err != nil {
			return t.Fail(err)
		}
		return gpu.Done
	})
}

// gemmGPU's tasks waiting on a stream go in one batched call, up to potrf.jdf's GEMM_BATCH.
func gemmGPU(rows, ld int) *dynamic.GPUBody {
	return dynamic.GPU(func(t *dynamic.GPUTask, s *gpu.Stream) gpu.Result {
		n := t.RingLen()
		as, bs, cs := make([]gpu.Buffer, 0, n), make([]gpu.Buffer, 0, n), make([]gpu.Buffer, 0, n)
		for m := range t.Ring() {
			as, bs, cs = append(as, m.Buffer(0)), append(bs, m.Buffer(1)), append(cs, m.Buffer(2))
		}
		if err := s.DgemmBatched(blas.NoTrans, blas.Trans, rows, ld, ld, -1, as, ld, bs, ld, 1, cs, ld); err != nil {
			return t.Fail(err)
		}
		return gpu.Done
	}, dynamic.Batch(gemmBatch(ld), nil))
}
