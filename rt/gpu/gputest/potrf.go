package gputest

import (
	"log/slog"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/gpu"
)

// WriteBack says which written tiles GPU tasks copy back to the host.
type WriteBack uint8

// Write-back modes.
const (
	// WriteFinal copies each tile back once, from the task that writes its
	// final value.
	WriteFinal WriteBack = iota
	// WriteNone leaves every result on the device.
	WriteNone
)

// Potrf is the taskpool globals of the tiled Cholesky factorization
// A = L·Lᵀ (lower, right-looking), potrf.jdf with GPU bodies:
//
//	POTRF(k)    RW T <- (k == 0) ? A(k, k) : T SYRK(k-1, k)      -> T TRSM(k+1..MT-1, k), A(k, k)
//	TRSM(m, k)  READ T <- T POTRF(k)
//	            RW C <- (k == 0) ? A(m, k) : C GEMM(m, k, k-1)   -> A SYRK(k, m), A GEMM(m, k+1..m-1, k),
//	                                                                B GEMM(m+1..MT-1, m, k), A(m, k)
//	SYRK(k, m)  READ A <- C TRSM(m, k)
//	            RW T <- (k == 0) ? A(m, m) : T SYRK(k-1, m)      -> (m == k+1) ? T POTRF(m) : T SYRK(k+1, m)
//	GEMM(m, n, k) READ A <- C TRSM(m, k), READ B <- C TRSM(n, k)
//	            RW C <- (k == 0) ? A(m, n) : C GEMM(m, n, k-1)   -> (n == k+1) ? C TRSM(m, n) : C GEMM(m, n, k+1)
//
// with the priorities of examples/potrf.jdf. Bodies: [type=GPU] with
// cuSOLVER/cuBLAS semantics (Dpotrf, Dtrsm, Dsyrk, Dgemm on the task's
// stream), then the CPU body on CPU (rt/blas default kernels).
type Potrf struct {
	A    *rt.TiledMatrix
	Mode WriteBack
	// CPU runs the CPU incarnation (nil: blas.Gonum()).
	CPU *blas.Impl
}

// NewPotrf returns the factorization's taskpool.
func NewPotrf(a *rt.TiledMatrix, mode WriteBack) *rt.Taskpool {
	return rt.NewTaskpool("Potrf", &Potrf{A: a, Mode: mode}, &potrfC, &trsmC, &syrkC, &gemmC)
}

func pg(tp *rt.Taskpool) *Potrf { return tp.Globals().(*Potrf) }

func (g *Potrf) cpu() *blas.Impl {
	if g.CPU != nil {
		return g.CPU
	}
	return blas.Gonum()
}

var potrfC, trsmC, syrkC, gemmC rt.TaskClass

func ix2(i, j int) rt.Index { return rt.Index{N: 2, I: [rt.MaxIndex]int{i, j}} }

// element binds flow i of task to element (m, n) of a.
func element(task *rt.Task, i int, a *rt.TiledMatrix, m, n int) {
	task.SetFlow(i, a.DataOf(ix2(m, n)).Host())
}

func rtTask(t *gpu.Task) (*rt.Task, *Potrf) {
	task := t.EC().(*rt.Task)
	return task, pg(task.Taskpool())
}

// failed logs why a GPU body gives up (the manager reports ERROR with the
// task's name) and returns gpu.Error.
func failed(t *gpu.Task, err error) gpu.Result {
	slog.Error("gputest: GPU body failed", "task", t.EC(), "err", err)
	return gpu.Error
}

// incarnations is the GPU body gi, on the device that owns the tile the
// task writes (tile returns it), then the CPU body. Keeping every writer of
// a tile on one device is what lets WriteFinal skip intermediate
// write-backs with several devices.
func incarnations(gi *gpu.Incarnation, tile func(t *rt.Task) (int, int), hook func(*rt.Task) error) []rt.Incarnation {
	sel := func(t *rt.Task) int {
		i, j := tile(t)
		return i + 7*j
	}
	return []rt.Incarnation{{Kind: rt.GPU, Device: gi, Select: sel}, {Kind: rt.CPU, Hook: hook}}
}

func init() {
	potrfC = rt.TaskClass{
		Name: "POTRF", ID: 0, Locals: []string{"k"}, Params: []int{0},
		Flows:        []rt.Flow{{Name: "T", Access: rt.RW}},
		HighPriority: true,
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			for k := 0; k < pg(tp).A.MT; k++ {
				l[0] = k
				if !yield(l) {
					return
				}
			}
		},
		Complete: potrfIn,
		Goal: func(tp *rt.Taskpool, l *rt.Locals) uint32 {
			if l[0] > 0 {
				return 1
			}
			return 0
		},
		Prepare: func(t *rt.Task) error {
			if t.Locals()[0] == 0 {
				element(t, 0, pg(t.Taskpool()).A, 0, 0)
			}
			return nil
		},
		Successors: func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
			g, k := pg(tp), l[0]
			if flows&1 == 0 {
				return
			}
			for m := k + 1; m < g.A.MT; m++ {
				e.L[0], e.L[1] = k, m
				e.Task(0, 0, &trsmC, 0)
			}
			e.Data(0, 1, g.A, ix2(k, k))
		},
		Priority: func(tp *rt.Taskpool, l *rt.Locals) int32 { return int32(4*(pg(tp).A.MT-l[0]) + 3) },
		Affinity: func(tp *rt.Taskpool, l *rt.Locals) (rt.Collection, rt.Index) { return pg(tp).A, ix2(l[0], l[0]) },
		Incarnations: incarnations(&gpu.Incarnation{Name: "POTRF/gpu", Submit: potrfGPU, StageOut: stageOut},
			func(t *rt.Task) (int, int) { return t.Locals()[0], t.Locals()[0] },
			func(t *rt.Task) error {
				g, k := pg(t.Taskpool()), t.Locals()[0]
				return g.cpu().Dpotrf(blas.Lower, g.A.TileRows(k), t.Flow(0).Float64s(), g.A.MB)
			}),
	}
	trsmC = rt.TaskClass{
		Name: "TRSM", ID: 1, Locals: []string{"k", "m"}, Params: []int{1, 0},
		Flows: []rt.Flow{{Name: "T", Access: rt.Read}, {Name: "C", Access: rt.RW}},
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			mt := pg(tp).A.MT
			for k := 0; k < mt-1; k++ {
				for m := k + 1; m < mt; m++ {
					l[0], l[1] = k, m
					if !yield(l) {
						return
					}
				}
			}
		},
		Complete: trsmIn,
		Goal: func(tp *rt.Taskpool, l *rt.Locals) uint32 {
			if l[0] > 0 {
				return 2
			}
			return 1
		},
		Prepare: func(t *rt.Task) error {
			if t.Locals()[0] == 0 {
				element(t, 1, pg(t.Taskpool()).A, t.Locals()[1], 0)
			}
			return nil
		},
		Successors: func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
			g, k, m := pg(tp), l[0], l[1]
			if flows&2 == 0 {
				return
			}
			e.L[0], e.L[1] = k, m
			e.Task(1, 0, &syrkC, 0)
			for n := k + 1; n < m; n++ {
				e.L[0], e.L[1], e.L[2] = k, m, n
				e.Task(1, 1, &gemmC, 0)
			}
			for r := m + 1; r < g.A.MT; r++ {
				e.L[0], e.L[1], e.L[2] = k, r, m
				e.Task(1, 2, &gemmC, 1)
			}
			e.Data(1, 3, g.A, ix2(m, k))
		},
		Priority: func(tp *rt.Taskpool, l *rt.Locals) int32 { return int32(4*(pg(tp).A.MT-l[0]) + 2) },
		Affinity: func(tp *rt.Taskpool, l *rt.Locals) (rt.Collection, rt.Index) { return pg(tp).A, ix2(l[1], l[0]) },
		Incarnations: incarnations(&gpu.Incarnation{Name: "TRSM/gpu", Submit: trsmGPU, StageOut: stageOut},
			func(t *rt.Task) (int, int) { return t.Locals()[1], t.Locals()[0] },
			func(t *rt.Task) error {
				g, k, m := pg(t.Taskpool()), t.Locals()[0], t.Locals()[1]
				return g.cpu().Dtrsm(blas.Right, blas.Lower, blas.Trans, blas.NonUnit, g.A.TileRows(m), g.A.TileCols(k),
					1, t.Flow(0).Float64s(), g.A.MB, t.Flow(1).Float64s(), g.A.MB)
			}),
	}
	syrkC = rt.TaskClass{
		Name: "SYRK", ID: 2, Locals: []string{"k", "m"}, Params: []int{0, 1},
		Flows:    []rt.Flow{{Name: "A", Access: rt.Read}, {Name: "T", Access: rt.RW}},
		Space:    trsmC.Space,
		Complete: func(tp *rt.Taskpool, l *rt.Locals) bool { return trsmIn(tp, l) },
		Goal:     trsmC.Goal,
		Prepare: func(t *rt.Task) error {
			if t.Locals()[0] == 0 {
				m := t.Locals()[1]
				element(t, 1, pg(t.Taskpool()).A, m, m)
			}
			return nil
		},
		Successors: func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
			k, m := l[0], l[1]
			if flows&2 == 0 {
				return
			}
			if m == k+1 {
				e.L[0] = m
				e.Task(1, 0, &potrfC, 0)
				return
			}
			e.L[0], e.L[1] = k+1, m
			e.Task(1, 1, &syrkC, 1)
		},
		Priority: func(tp *rt.Taskpool, l *rt.Locals) int32 { return int32(4*(pg(tp).A.MT-l[1]) + 1) },
		Affinity: func(tp *rt.Taskpool, l *rt.Locals) (rt.Collection, rt.Index) { return pg(tp).A, ix2(l[1], l[1]) },
		Incarnations: incarnations(&gpu.Incarnation{Name: "SYRK/gpu", Submit: syrkGPU, StageOut: stageOut},
			func(t *rt.Task) (int, int) { return t.Locals()[1], t.Locals()[1] },
			func(t *rt.Task) error {
				g, k, m := pg(t.Taskpool()), t.Locals()[0], t.Locals()[1]
				return g.cpu().Dsyrk(blas.Lower, blas.NoTrans, g.A.TileRows(m), g.A.TileCols(k),
					-1, t.Flow(0).Float64s(), g.A.MB, 1, t.Flow(1).Float64s(), g.A.MB)
			}),
	}
	gemmC = rt.TaskClass{
		Name: "GEMM", ID: 3, Locals: []string{"k", "m", "n"}, Params: []int{1, 2, 0},
		Flows: []rt.Flow{{Name: "A", Access: rt.Read}, {Name: "B", Access: rt.Read}, {Name: "C", Access: rt.RW}},
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			mt := pg(tp).A.MT
			for k := 0; k < mt-2; k++ {
				for m := k + 2; m < mt; m++ {
					for n := k + 1; n < m; n++ {
						l[0], l[1], l[2] = k, m, n
						if !yield(l) {
							return
						}
					}
				}
			}
		},
		Complete: gemmIn,
		Goal: func(tp *rt.Taskpool, l *rt.Locals) uint32 {
			if l[0] > 0 {
				return 3
			}
			return 2
		},
		Prepare: func(t *rt.Task) error {
			if t.Locals()[0] == 0 {
				element(t, 2, pg(t.Taskpool()).A, t.Locals()[1], t.Locals()[2])
			}
			return nil
		},
		Successors: func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
			k, m, n := l[0], l[1], l[2]
			if flows&4 == 0 {
				return
			}
			if n == k+1 {
				e.L[0], e.L[1] = n, m
				e.Task(2, 0, &trsmC, 1)
				return
			}
			e.L[0], e.L[1], e.L[2] = k+1, m, n
			e.Task(2, 1, &gemmC, 2)
		},
		Priority: func(tp *rt.Taskpool, l *rt.Locals) int32 { return int32(4 * (pg(tp).A.MT - l[2])) },
		Affinity: func(tp *rt.Taskpool, l *rt.Locals) (rt.Collection, rt.Index) { return pg(tp).A, ix2(l[1], l[2]) },
		Incarnations: incarnations(&gpu.Incarnation{Name: "GEMM/gpu", Submit: gemmGPU, StageOut: stageOut},
			func(t *rt.Task) (int, int) { return t.Locals()[1], t.Locals()[2] },
			func(t *rt.Task) error {
				g, k, m, n := pg(t.Taskpool()), t.Locals()[0], t.Locals()[1], t.Locals()[2]
				return g.cpu().Dgemm(blas.NoTrans, blas.Trans, g.A.TileRows(m), g.A.TileRows(n), g.A.TileCols(k),
					-1, t.Flow(0).Float64s(), g.A.MB, t.Flow(1).Float64s(), g.A.MB, 1, t.Flow(2).Float64s(), g.A.MB)
			}),
	}
}

func potrfIn(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < pg(tp).A.MT }

func trsmIn(tp *rt.Taskpool, l *rt.Locals) bool {
	k, m := l[0], l[1]
	return k >= 0 && k < pg(tp).A.MT-1 && m > k && m < pg(tp).A.MT
}

func gemmIn(tp *rt.Taskpool, l *rt.Locals) bool {
	k, m, n := l[0], l[1], l[2]
	return k >= 0 && m >= k+2 && m < pg(tp).A.MT && n > k && n < m
}

func potrfGPU(_ *gpu.Device, t *gpu.Task, s *gpu.Stream) gpu.Result {
	task, g := rtTask(t)
	k := task.Locals()[0]
	if err := s.Dpotrf(blas.Lower, g.A.TileRows(k), t.Buffer(0), g.A.MB); err != nil {
		return failed(t, err)
	}
	return gpu.Done
}

func trsmGPU(_ *gpu.Device, t *gpu.Task, s *gpu.Stream) gpu.Result {
	task, g := rtTask(t)
	k, m := task.Locals()[0], task.Locals()[1]
	if err := s.Dtrsm(blas.Right, blas.Lower, blas.Trans, blas.NonUnit, g.A.TileRows(m), g.A.TileCols(k),
		1, t.Buffer(0), g.A.MB, t.Buffer(1), g.A.MB); err != nil {
		return failed(t, err)
	}
	return gpu.Done
}

func syrkGPU(_ *gpu.Device, t *gpu.Task, s *gpu.Stream) gpu.Result {
	task, g := rtTask(t)
	k, m := task.Locals()[0], task.Locals()[1]
	if err := s.Dsyrk(blas.Lower, blas.NoTrans, g.A.TileRows(m), g.A.TileCols(k),
		-1, t.Buffer(0), g.A.MB, 1, t.Buffer(1), g.A.MB); err != nil {
		return failed(t, err)
	}
	return gpu.Done
}

func gemmGPU(_ *gpu.Device, t *gpu.Task, s *gpu.Stream) gpu.Result {
	task, g := rtTask(t)
	k, m, n := task.Locals()[0], task.Locals()[1], task.Locals()[2]
	if err := s.Dgemm(blas.NoTrans, blas.Trans, g.A.TileRows(m), g.A.TileRows(n), g.A.TileCols(k),
		-1, t.Buffer(0), g.A.MB, t.Buffer(1), g.A.MB, 1, t.Buffer(2), g.A.MB); err != nil {
		return failed(t, err)
	}
	return gpu.Done
}

// finalFlow returns the flow of a Cholesky task that carries the final
// value of its tile, or -1.
func finalFlow(task *rt.Task) int {
	switch task.Class() {
	case &potrfC:
		return 0
	case &trsmC:
		return 1
	}
	return -1
}

// stageOut is the custom stage-out of every GPU body of the package: it
// copies the flow that holds a final tile back to its host copy (mode
// WriteFinal) and nothing else.
func stageOut(_ *gpu.Device, t *gpu.Task, s *gpu.Stream) (int, gpu.Result) {
	task := t.EC().(*rt.Task)
	var mode WriteBack
	fl := -1
	switch g := task.Taskpool().Globals().(type) {
	case *Potrf:
		mode, fl = g.Mode, finalFlow(task)
	case *Gemm:
		mode, fl = g.Mode, gemmFinal(g, task)
	}
	if mode == WriteNone || fl < 0 {
		return 0, gpu.Done
	}
	b := t.Buffer(fl)
	host := t.Flow(fl).Data.HostBytes()
	if int64(len(host)) < b.Bytes() {
		return 0, failed(t, gpu.ErrMisuse)
	}
	if err := s.Backend().CopyDtoH(host[:b.Bytes()], b.Ptr); err != nil {
		return 0, failed(t, err)
	}
	return 1, gpu.Done
}

// Tasks returns the number of tasks of a factorization with mt tile rows.
func Tasks(mt int) int {
	n := mt // POTRF
	n += mt * (mt - 1) / 2 * 2
	for k := 0; k < mt-2; k++ {
		r := mt - k - 2
		n += r * (r + 1) / 2
	}
	return n
}
