package rt_test

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jdf2go/jdf2go/rt"
)

// The distributed chain: R(k), k = 0 .. N-1, runs on rank k mod 2 (affinity V(k), a Vector
// distributed over 2 ranks); R(k) -> R(k+1) by CTL, so every dependency crosses ranks.
type distChain struct {
	n   int
	v   *rt.Vector
	ran *[]atomic.Int32
}

var distR rt.TaskClass

func dc(tp *rt.Taskpool) *distChain { return tp.Globals().(*distChain) }

func init() {
	distR = rt.TaskClass{Name: "R", Locals: []string{"k"}, Params: []int{0},
		Flows: []rt.Flow{{Name: "X", Access: rt.CTL}},
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			for k := 0; k < dc(tp).n; k++ {
				l[0] = k
				if !yield(l) {
					return
				}
			}
		},
		Complete: func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < dc(tp).n },
		Goal:     func(tp *rt.Taskpool, l *rt.Locals) uint32 { return uint32(min(l[0], 1)) },
		Affinity: func(tp *rt.Taskpool, l *rt.Locals) (rt.Collection, rt.Index) { return dc(tp).v, rt.Ix(l[0]) },
		Successors: func(tp *rt.Taskpool, l *rt.Locals, f rt.FlowMask, e *rt.Edges) {
			e.L[0] = l[0] + 1
			if e.L[0] < dc(tp).n {
				e.Task(0, 0, &distR, 0)
			}
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(t *rt.Task) error {
			(*dc(t.Taskpool()).ran)[t.Locals()[0]].Add(1)
			return nil
		}}},
	}
}

// loopback is an in-process Remote: it delivers activations to the taskpool of the other rank.
type loopback struct {
	mu    sync.Mutex
	peers [2]*rt.Taskpool
	sent  atomic.Int32
}

func (lb *loopback) Activate(w rt.Worker, src *rt.Task, flow int, peer *rt.TaskClass, peerFlow int, l *rt.Locals, rank int) error {
	lb.sent.Add(1)
	tp := src.Taskpool()
	rt.Impl. // src is recycled once Activate returns
			AddActions(tp, 1) // held open until the "ack"
	ll := *l
	lb.mu.Lock()
	dst := lb.peers[rank]
	lb.mu.Unlock()
	go func() { // the communication goroutine of the other rank
		defer rt.Impl.AddActions(tp, -1)
		if err := rt.Impl.Deliver(dst, peer, peerFlow, &ll, nil); err != nil {
			panic(err)
		}
	}()
	return nil
}

func (lb *loopback) WriteBack(w rt.Worker, src *rt.Task, flow int, coll rt.Collection, ix rt.Index, rank int) error {
	return errors.New("not used")
}

func TestTwoRanksInProcess(t *testing.T) {
	const n = 200
	ran := make([]atomic.Int32, n)
	lb := &loopback{}
	var tps [2]*rt.Taskpool
	var ctxs [2]*rt.Context
	for r := 0; r < 2; r++ {
		ctxs[r] = newCtx(t, rt.Workers(1), rt.Rank(r, 2, lb))
		v, _ := rt.NewVector(n, 1, 2, r)
		tps[r] = rt.NewTaskpool("dist", &distChain{n: n, v: v, ran: &ran}, &distR)
		lb.mu.Lock()
		lb.peers[r] = tps[r]
		lb.mu.Unlock()
	}
	// Rank 1 first: it has no startup task, and an arrival must find its taskpool added (rt/ce
	// keeps early activations aside until then).
	for _, r := range []int{1, 0} {
		if err := ctxs[r].Add(tps[r]); err != nil {
			t.Fatal(err)
		}
	}
	for r := 0; r < 2; r++ {
		if err := wait(t, tps[r]); err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
		if tps[r].Total() != n/2 {
			t.Fatalf("rank %d counts %d local tasks, want %d", r, tps[r].Total(), n/2)
		}
	}
	for k := range ran {
		if ran[k].Load() != 1 {
			t.Fatalf("R(%d) ran %d times", k, ran[k].Load())
		}
	}
	if lb.sent.Load() != n-1 {
		t.Fatalf("%d activations sent, want %d", lb.sent.Load(), n-1)
	}
}

func TestRemoteWithoutCarrier(t *testing.T) {
	c := newCtx(t, rt.Workers(1), rt.Rank(0, 2, nil))
	ran := make([]atomic.Int32, 4)
	v, _ := rt.NewVector(4, 1, 2, 0)
	err := run(t, c, rt.NewTaskpool("dist", &distChain{n: 4, v: v, ran: &ran}, &distR))
	if err == nil || !strings.Contains(err.Error(), "no Remote registered") {
		t.Fatalf("err = %v", err)
	}
}
