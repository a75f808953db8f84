package gputest

import (
	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/gpu"
)

// Gemm is the taskpool globals of the tiled product C = C + A·B (A has
// MT×KT tiles, B KT×NT, C MT×NT, all with the same tile size):
//
//	GEMM(m, n, k)
//	  READ A <- A(m, k)
//	  READ B <- B(k, n)
//	  RW   C <- (k == 0) ? C(m, n) : C GEMM(m, n, k-1)
//	         -> (k < KT-1) ? C GEMM(m, n, k+1) : C(m, n)
//	BODY [type=GPU batch=true]  Dgemm on the task's stream; a ring of
//	                            tasks of equal tile shapes is one
//	                            DgemmBatched call
//	BODY                        rt/blas Dgemm
//
// With Batch set the GPU body collects up to BatchMax ready tasks of its
// stream into one batched product.
type Gemm struct {
	A, B, C  *rt.TiledMatrix
	Mode     WriteBack
	Batch    bool
	BatchMax int
	CPU      *blas.Impl
}

// NewGemm returns the product's taskpool.
func NewGemm(g *Gemm) *rt.Taskpool { return rt.NewTaskpool("Gemm", g, &tiledGemmC) }

func gg(tp *rt.Taskpool) *Gemm { return tp.Globals().(*Gemm) }

var tiledGemmC rt.TaskClass

var tiledGemmGPU = &gpu.Incarnation{Name: "GEMM/gpu", Batch: true, Submit: tiledGemmSubmit, StageOut: stageOut}

func init() {
	tiledGemmC = rt.TaskClass{
		Name: "GEMM", ID: 0, Locals: []string{"m", "n", "k"}, Params: []int{0, 1, 2},
		Flows: []rt.Flow{{Name: "A", Access: rt.Read}, {Name: "B", Access: rt.Read}, {Name: "C", Access: rt.RW}},
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			g := gg(tp)
			for m := 0; m < g.C.MT; m++ {
				for n := 0; n < g.C.NT; n++ {
					for k := 0; k < g.A.NT; k++ {
						l[0], l[1], l[2] = m, n, k
						if !yield(l) {
							return
						}
					}
				}
			}
		},
		Complete: func(tp *rt.Taskpool, l *rt.Locals) bool {
			g := gg(tp)
			return l[0] >= 0 && l[0] < g.C.MT && l[1] >= 0 && l[1] < g.C.NT && l[2] >= 0 && l[2] < g.A.NT
		},
		Goal: func(tp *rt.Taskpool, l *rt.Locals) uint32 {
			if l[2] > 0 {
				return 1
			}
			return 0
		},
		Prepare: func(t *rt.Task) error {
			g := gg(t.Taskpool())
			m, n, k := t.Locals()[0], t.Locals()[1], t.Locals()[2]
			element(t, 0, g.A, m, k)
			element(t, 1, g.B, k, n)
			if k == 0 {
				element(t, 2, g.C, m, n)
			}
			return nil
		},
		Successors: func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
			g := gg(tp)
			m, n, k := l[0], l[1], l[2]
			if flows&4 == 0 {
				return
			}
			if k < g.A.NT-1 {
				e.L[0], e.L[1], e.L[2] = m, n, k+1
				e.Task(2, 0, &tiledGemmC, 2)
				return
			}
			e.Data(2, 1, g.C, ix2(m, n))
		},
		Affinity: func(tp *rt.Taskpool, l *rt.Locals) (rt.Collection, rt.Index) { return gg(tp).C, ix2(l[0], l[1]) },
		Incarnations: incarnations(tiledGemmGPU, func(t *rt.Task) (int, int) { return t.Locals()[0], t.Locals()[1] }, func(t *rt.Task) error {
			g := gg(t.Taskpool())
			m, n, k := t.Locals()[0], t.Locals()[1], t.Locals()[2]
			cpu := g.CPU
			if cpu == nil {
				cpu = blas.Gonum()
			}
			return cpu.Dgemm(blas.NoTrans, blas.NoTrans, g.C.TileRows(m), g.C.TileCols(n), g.A.TileCols(k),
				1, t.Flow(0).Float64s(), g.A.MB, t.Flow(1).Float64s(), g.B.MB, 1, t.Flow(2).Float64s(), g.C.MB)
		}),
	}
}

// gemmShape is the (rows, cols, inner) shape of a GEMM task's product.
func gemmShape(t *gpu.Task) (m, n, k int) {
	task := t.EC().(*rt.Task)
	g := gg(task.Taskpool())
	return g.C.TileRows(task.Locals()[0]), g.C.TileCols(task.Locals()[1]), g.A.TileCols(task.Locals()[2])
}

// sameShape accepts candidates whose product has the head's shape.
func sameShape(cand, head *gpu.Task) gpu.Action {
	m, n, k := gemmShape(head)
	if cm, cn, ck := gemmShape(cand); cm != m || cn != n || ck != k {
		return gpu.Reject
	}
	return gpu.Accept
}

func tiledGemmSubmit(_ *gpu.Device, t *gpu.Task, s *gpu.Stream) gpu.Result {
	task := t.EC().(*rt.Task)
	g := gg(task.Taskpool())
	if g.Batch {
		if _, err := s.CollectBatch(t, gpu.BatchPolicy{Max: g.BatchMax, User: sameShape}.Match, nil); err != nil {
			return failed(t, err)
		}
	}
	m, n, k := gemmShape(t)
	if t.IsSingleton() {
		if err := s.Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, t.Buffer(0), g.A.MB, t.Buffer(1), g.B.MB, 1, t.Buffer(2), g.C.MB); err != nil {
			return failed(t, err)
		}
		return gpu.Done
	}
	var a, b, c []gpu.Buffer
	for x := range t.Ring() {
		a, b, c = append(a, x.Buffer(0)), append(b, x.Buffer(1)), append(c, x.Buffer(2))
	}
	if err := s.DgemmBatched(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, g.A.MB, b, g.B.MB, 1, c, g.C.MB); err != nil {
		return failed(t, err)
	}
	return gpu.Done
}

// gemmFinal returns the flow of a GEMM task that carries its tile's final
// value, or -1.
func gemmFinal(g *Gemm, task *rt.Task) int {
	if task.Locals()[2] == g.A.NT-1 {
		return 2
	}
	return -1
}

// Touch is the globals of a graph that reads the tiles of A (the lower
// triangle and diagonal when Lower) on a GPU and does nothing else: it
// stages them in, so that a following graph finds them resident.
//
//	TOUCH(m, n)  READ T <- A(m, n)  BODY [type=GPU] {} END  BODY {} END
type Touch struct {
	A     *rt.TiledMatrix
	Lower bool
}

// NewTouch returns the staging graph's taskpool.
func NewTouch(a *rt.TiledMatrix, lower bool) *rt.Taskpool {
	return rt.NewTaskpool("Touch", &Touch{A: a, Lower: lower}, &touchC)
}

var touchC rt.TaskClass

func init() {
	tg := func(tp *rt.Taskpool) *Touch { return tp.Globals().(*Touch) }
	touchC = rt.TaskClass{
		Name: "TOUCH", ID: 0, Locals: []string{"m", "n"}, Params: []int{0, 1},
		Flows: []rt.Flow{{Name: "T", Access: rt.Read}},
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			g := tg(tp)
			for n := 0; n < g.A.NT; n++ {
				for m := 0; m < g.A.MT; m++ {
					if g.Lower && m < n {
						continue
					}
					l[0], l[1] = m, n
					if !yield(l) {
						return
					}
				}
			}
		},
		Complete: func(tp *rt.Taskpool, l *rt.Locals) bool {
			g := tg(tp)
			return l[0] >= 0 && l[0] < g.A.MT && l[1] >= 0 && l[1] < g.A.NT && (!g.Lower || l[0] >= l[1])
		},
		Prepare: func(t *rt.Task) error {
			element(t, 0, tg(t.Taskpool()).A, t.Locals()[0], t.Locals()[1])
			return nil
		},
		Affinity: func(tp *rt.Taskpool, l *rt.Locals) (rt.Collection, rt.Index) { return tg(tp).A, ix2(l[0], l[1]) },
		Incarnations: incarnations(&gpu.Incarnation{Name: "TOUCH/gpu",
			Submit: func(*gpu.Device, *gpu.Task, *gpu.Stream) gpu.Result { return gpu.Done }},
			func(t *rt.Task) (int, int) { return t.Locals()[0], t.Locals()[1] },
			func(*rt.Task) error { return nil }),
	}
}
