package rt_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/jdf2go/jdf2go/rt"
)

// The stencil program, hand-written as codegen would emit it. V is a Vector of K blocks.
//
//	S(t, k)
//	  t = 0 .. T
//	  k = 0 .. K-1
//	  : V(k)
//	READ  C <- (t == 0) ? V(k) : Y S(t-1, k)
//	READ  L <- (t > 0 && k > 0) ? Y S(t-1, k-1) : NULL
//	READ  R <- (t > 0 && k < K-1) ? Y S(t-1, k+1) : NULL
//	WRITE Y <- NEW
//	        -> (t < T) ? C S(t+1, k)
//	        -> (t < T && k < K-1) ? L S(t+1, k+1)
//	        -> (t < T && k > 0) ? R S(t+1, k-1)
//	        -> (t == T) ? V(k)
//	BODY { Y[i] = 0.5*C[i] + 0.25*(left neighbour) + 0.25*(right neighbour) + 1 } END
type stencil struct {
	T, K int
	V    *rt.Vector
}

const (
	flowC = iota
	flowL
	flowR
	flowY
)

var stencilS rt.TaskClass

func st(tp *rt.Taskpool) *stencil { return tp.Globals().(*stencil) }

func stencilComplete(tp *rt.Taskpool, l *rt.Locals) bool {
	g := st(tp)
	return l[0] >= 0 && l[0] <= g.T && l[1] >= 0 && l[1] <= g.K-1
}

func init() {
	stencilS = rt.TaskClass{
		Name: "S", ID: 0, Locals: []string{"t", "k"}, Params: []int{0, 1},
		Flows: []rt.Flow{{Name: "C", Access: rt.Read}, {Name: "L", Access: rt.Read},
			{Name: "R", Access: rt.Read}, {Name: "Y", Access: rt.Write}},
		Readiness: rt.Mask,
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			g := st(tp)
			for t := 0; t <= g.T; t++ {
				l[0] = t
				for k := 0; k <= g.K-1; k++ {
					l[1] = k
					if !yield(l) {
						return
					}
				}
			}
		},
		Complete: stencilComplete,
		Goal: func(tp *rt.Taskpool, l *rt.Locals) uint32 {
			g := st(tp)
			t, k := l[0], l[1]
			var m uint32
			if t > 0 {
				m |= 1 << flowC
			}
			if t > 0 && k > 0 {
				m |= 1 << flowL
			}
			if t > 0 && k < g.K-1 {
				m |= 1 << flowR
			}
			return m
		},
		Affinity: func(tp *rt.Taskpool, l *rt.Locals) (rt.Collection, rt.Index) {
			return st(tp).V, rt.Ix(l[1])
		},
		Prepare: func(task *rt.Task) error {
			tp, l := task.Taskpool(), task.Locals()
			g := st(tp)
			t, k := l[0], l[1]
			if t == 0 {
				task.SetFlow(flowC, g.V.DataOf(rt.Ix(k)).Host())
			}
			if !(t > 0 && k > 0) {
				task.SetFlow(flowL, nil)
			}
			if !(t > 0 && k < g.K-1) {
				task.SetFlow(flowR, nil)
			}
			y, err := tp.NewCopy("DEFAULT")
			if err != nil {
				return fmt.Errorf("flow Y: %w", err)
			}
			task.SetFlow(flowY, y)
			return nil
		},
		Successors: func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
			g := st(tp)
			t, k := l[0], l[1]
			if flows&(1<<flowY) == 0 {
				return
			}
			if t < g.T {
				e.L[0], e.L[1] = t+1, k
				if stencilComplete(tp, &e.L) {
					e.Task(flowY, 0, &stencilS, flowC)
				}
			}
			if t < g.T && k < g.K-1 {
				e.L[0], e.L[1] = t+1, k+1
				if stencilComplete(tp, &e.L) {
					e.Task(flowY, 1, &stencilS, flowL)
				}
			}
			if t < g.T && k > 0 {
				e.L[0], e.L[1] = t+1, k-1
				if stencilComplete(tp, &e.L) {
					e.Task(flowY, 2, &stencilS, flowR)
				}
			}
			if t == g.T {
				e.Data(flowY, 3, g.V, rt.Ix(k))
			}
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: stencilBody}},
	}
}

// stencilBody is the generated wrapper plus the user body.
func stencilBody(task *rt.Task) error {
	C, L, R, Y := task.Flow(flowC).Float64s(), task.Flow(flowL).Float64s(),
		task.Flow(flowR).Float64s(), task.Flow(flowY).Float64s()
	stencilKernel(Y, C, L, R)
	return nil
}

func stencilKernel(Y, C, L, R []float64) {
	n := len(C)
	for i := range Y {
		left, right := 0.0, 0.0
		switch {
		case i > 0:
			left = C[i-1]
		case L != nil:
			left = L[n-1]
		}
		switch {
		case i < n-1:
			right = C[i+1]
		case R != nil:
			right = R[0]
		}
		Y[i] = 0.5*C[i] + 0.25*left + 0.25*right + 1
	}
}

// stencilRun runs the program and returns the final vector.
func stencilRun(t *testing.T, c *rt.Context, T, K, nb int) []float64 {
	t.Helper()
	v, err := rt.NewVector(K*nb, nb, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < K; k++ {
		for i, b := 0, v.Block(k); i < nb; i++ {
			b[i] = math.Sin(float64(k*nb + i))
		}
	}
	tp := rt.NewTaskpool("stencil", &stencil{T: T, K: K, V: v}, &stencilS)
	tp.SetArena("DEFAULT", rt.NewArena(8*nb))
	mustRun(t, c, tp)
	out := make([]float64, 0, K*nb)
	for k := 0; k < K; k++ {
		out = append(out, v.Block(k)...)
	}
	return out
}

// stencilRef is the sequential reference.
func stencilRef(T, K, nb int) []float64 {
	cur := make([]float64, K*nb)
	for i := range cur {
		cur[i] = math.Sin(float64(i))
	}
	for t := 0; t <= T; t++ {
		next := make([]float64, K*nb)
		for k := 0; k < K; k++ {
			var L, R []float64
			if t > 0 && k > 0 {
				L = cur[(k-1)*nb : k*nb]
			}
			if t > 0 && k < K-1 {
				R = cur[(k+1)*nb : (k+2)*nb]
			}
			stencilKernel(next[k*nb:(k+1)*nb], cur[k*nb:(k+1)*nb], L, R)
		}
		cur = next
	}
	return cur
}

// A 1-worker run equals a 2-worker run (and the sequential reference) bit for bit, under every
// scheduler: data flows, NEW buffers from an arena, NULL inputs, broadcast of one copy to three
// readers and write-back to a collection.
func TestStencilDeterministic(t *testing.T) {
	T, K, nb := 30, 24, 16
	want := stencilRef(T, K, nb)
	for _, sched := range schedulers {
		for _, workers := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/%d", sched, workers), func(t *testing.T) {
				c := newCtx(t, rt.Workers(workers), rt.Scheduler(sched))
				got := stencilRun(t, c, T, K, nb)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("element %d = %v, want %v", i, got[i], want[i])
					}
				}
			})
		}
	}
}

// Without the arena, Prepare's error names the task and the flow.
func TestMissingArena(t *testing.T) {
	c := newCtx(t, rt.Workers(1))
	v, _ := rt.NewVector(4, 1, 1, 0)
	err := run(t, c, rt.NewTaskpool("stencil", &stencil{T: 1, K: 4, V: v}, &stencilS))
	if !errors.Is(err, rt.ErrNoArena) || !strings.Contains(err.Error(), "S(0, ") ||
		!strings.Contains(err.Error(), "flow Y") {
		t.Fatalf("err = %v", err)
	}
}
