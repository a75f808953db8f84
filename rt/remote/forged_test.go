package remote

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/ce"
)

// The forged-message program: S(k) and W(k), k = 0 .. n-1, on the owner of V(k), all waiting
// for an input that no task sends; S(k) -> W(k+1 mod n). Only messages from the test move it.
type forgeProg struct {
	n   int
	v   *rt.Vector
	got *atomic.Value // what W received
}

var classS, classW rt.TaskClass

func fp(tp *rt.Taskpool) *forgeProg { return tp.Globals().(*forgeProg) }

func init() {
	space := func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
		for k := 0; k < fp(tp).n; k++ {
			l[0] = k
			if !yield(l) {
				return
			}
		}
	}
	complete := func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < fp(tp).n }
	aff := func(tp *rt.Taskpool, l *rt.Locals) (rt.Collection, rt.Index) { return fp(tp).v, rt.Ix(l[0]) }
	one := func(tp *rt.Taskpool, l *rt.Locals) uint32 { return 1 }
	classS = rt.TaskClass{Name: "S", ID: 0, Locals: []string{"k"}, Params: []int{0},
		Flows: []rt.Flow{{Name: "X", Access: rt.RW}}, Space: space, Complete: complete, Goal: one, Affinity: aff,
		Successors: func(tp *rt.Taskpool, l *rt.Locals, f rt.FlowMask, e *rt.Edges) {
			e.L[0] = (l[0] + 1) % fp(tp).n
			e.Task(0, 0, &classW, 0)
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(t *rt.Task) error { return nil }}},
	}
	classW = rt.TaskClass{Name: "W", ID: 1, Locals: []string{"k"}, Params: []int{0},
		Flows: []rt.Flow{{Name: "X", Access: rt.Read}}, Space: space, Complete: complete, Goal: one, Affinity: aff,
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(t *rt.Task) error {
			fp(t.Taskpool()).got.Store(append([]float64(nil), t.Flow(0).Float64s()...))
			return nil
		}}},
	}
}

// forge sends h with payload from rank 0's Node to rank 1.
func forge(t *testing.T, n *Node, h header, payload []byte) {
	b := h.encode(nil)
	b = append(b, payload...)
	m, err := n.other.NewMsg(context.Background(), len(b))
	if err != nil {
		t.Error(err)
		return
	}
	copy(m.Bytes(), b)
	if err := n.other.SendAM(1, ce.TagActivate, m, nil); err != nil {
		t.Error(err)
	}
}

func f64bytes(x ...float64) []byte { return append([]byte(nil), asBytes(x)...) }

// TestForgedActivation: a well-formed message from the outside is delivered; each malformed
// one fails the taskpool on the receiver with its named error and on the sender with a
// RemoteError naming the receiver, and every message buffer is released.
func TestForgedActivation(t *testing.T) {
	good := header{kind: kindActivate, class: 0, nparams: 1, data: dataEager, typ: 1, size: 16}
	for _, c := range []struct {
		name    string
		h       func(h *header)
		payload []byte
		want    error
	}{
		{"unknown class", func(h *header) { h.class = 5 }, f64bytes(1, 2), ErrUnknownClass},
		{"unknown flow", func(h *header) { h.flow = 3 }, f64bytes(1, 2), ErrUnknownFlow},
		{"outside the space", func(h *header) { h.params[0] = 7 }, f64bytes(1, 2), ErrOutsideSpace},
		{"parameter count", func(h *header) { h.nparams = 2 }, f64bytes(1, 2), ErrOutsideSpace},
		{"short payload", func(h *header) {}, f64bytes(1), ErrSizeMismatch},
		{"unknown type", func(h *header) { h.typ = 9 }, f64bytes(1, 2), ErrTypeMismatch},
		{"no successor here", func(h *header) { h.params[0] = 1 }, f64bytes(1, 2), ErrNoSuccessor},
		// The first index past the end: the taskpool has two classes (S, W), S one flow, and
		// the wire types end at len(wireTypes). A bounds check that lets the index equal the
		// length indexes past the end on the comm goroutine instead of naming the error.
		{"class index equal to the class count", func(h *header) { h.class = 2 }, f64bytes(1, 2), ErrUnknownClass},
		{"flow index equal to the flow count", func(h *header) { h.flow = 1 }, f64bytes(1, 2), ErrUnknownFlow},
		{"type code equal to the type count", func(h *header) { h.typ = uint8(len(wireTypes)) }, f64bytes(1, 2), ErrTypeMismatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var got atomic.Value
			errs := make([]error, 2)
			err := Run(ctx, Config{Ranks: 2, Workers: 2, CE: []ce.Option{ce.Debug(true)}}, func(ctx context.Context, j *Job) error {
				v, _ := rt.NewVector(2, 1, 2, j.Rank)
				tp := rt.NewTaskpool("forge", &forgeProg{n: 2, v: v, got: &got}, &classS, &classW)
				if err := j.Add(tp); err != nil {
					return err
				}
				if j.Rank == 0 {
					forge(t, j.Node, good, f64bytes(3, 4)) // S(0) -> W(1) on rank 1
					bad := good
					c.h(&bad)
					for got.Load() == nil && ctx.Err() == nil {
						time.Sleep(time.Millisecond)
					}
					forge(t, j.Node, bad, c.payload)
				}
				errs[j.Rank] = tp.Wait(ctx)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if g, _ := got.Load().([]float64); fmt.Sprint(g) != "[3 4]" {
				t.Errorf("W(1) received %v, want [3 4]", g)
			}
			if !errors.Is(errs[1], c.want) || !errors.Is(errs[1], ErrMalformed) {
				t.Errorf("rank 1: %v, want %v", errs[1], c.want)
			}
			var re *RemoteError
			if !errors.As(errs[0], &re) || re.Rank != 1 || !strings.Contains(re.Cause, c.want.Error()) {
				t.Errorf("rank 0: %v, want a RemoteError from rank 1 naming %v", errs[0], c.want)
			}
		})
	}
}

// TestUnknownTaskpool: a message for a taskpool that is never added is kept, then reported by
// Close with ErrUnknownTaskpool.
func TestUnknownTaskpool(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := Run(ctx, Config{Ranks: 2, Workers: 2}, func(ctx context.Context, j *Job) error {
		if j.Rank == 0 {
			forge(t, j.Node, header{kind: kindActivate, tp: 42, nparams: 1}, nil)
		} else {
			for ctx.Err() == nil {
				j.Node.mu.Lock()
				n := len(j.Node.parked)
				j.Node.mu.Unlock()
				if n > 0 {
					break
				}
				time.Sleep(time.Millisecond)
			}
		}
		return j.Node.Barrier(ctx)
	})
	if !errors.Is(err, ErrUnknownTaskpool) || !strings.Contains(err.Error(), "rank 1") {
		t.Fatalf("err = %v, want ErrUnknownTaskpool on rank 1", err)
	}
}

// TestExpect: a receiver that expects another type or size of a flow fails the taskpool with
// ErrTypeMismatch or ErrSizeMismatch.
func TestExpect(t *testing.T) {
	good := header{kind: kindActivate, class: 0, nparams: 1, data: dataEager, typ: 1, size: 16}
	for _, c := range []struct {
		typ  string
		size int
		want error
	}{{"[]float32", -1, ErrTypeMismatch}, {"", 24, ErrSizeMismatch}, {"[]float64", 16, nil}} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var got atomic.Value
		errs := make([]error, 2)
		expect := Expect(func(tp *rt.Taskpool, class *rt.TaskClass, flow int) (string, int) { return c.typ, c.size })
		err := Run(ctx, Config{Ranks: 2, Workers: 2, Remote: []Option{expect}}, func(ctx context.Context, j *Job) error {
			v, _ := rt.NewVector(2, 1, 2, j.Rank)
			tp := rt.NewTaskpool("forge", &forgeProg{n: 2, v: v, got: &got}, &classS, &classW)
			if err := j.Add(tp); err != nil {
				return err
			}
			if j.Rank == 0 {
				forge(t, j.Node, good, f64bytes(3, 4))
			}
			if c.want == nil { // nothing fails: end the taskpool once W(1) ran
				for got.Load() == nil && ctx.Err() == nil {
					time.Sleep(time.Millisecond)
				}
				if err := j.Node.Barrier(ctx); err != nil {
					return err
				}
				tp.Cancel(errors.New("done"))
			}
			errs[j.Rank] = tp.Wait(ctx)
			return nil
		})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if c.want == nil {
			if g, _ := got.Load().([]float64); fmt.Sprint(g) != "[3 4]" {
				t.Errorf("expecting what is sent: W(1) received %v", g)
			}
			continue
		}
		if !errors.Is(errs[1], c.want) {
			t.Errorf("expect %q, %d bytes: rank 1: %v, want %v", c.typ, c.size, errs[1], c.want)
		}
	}
}

// TestOversizeEagerRefused: the activation tag carries at most the largest header plus the
// Eager threshold, so an activation whose eager payload does not fit is refused at the
// sender with ce.ErrTooLarge and never reaches the receiver; a payload of exactly the
// threshold is delivered.
func TestOversizeEagerRefused(t *testing.T) {
	const eager = 64
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got atomic.Value
	var sendErr error
	err := Run(ctx, Config{Ranks: 2, Workers: 2, Remote: []Option{Eager(eager)}}, func(ctx context.Context, j *Job) error {
		v, _ := rt.NewVector(2, 1, 2, j.Rank)
		tp := rt.NewTaskpool("forge", &forgeProg{n: 2, v: v, got: &got}, &classS, &classW)
		if err := j.Add(tp); err != nil {
			return err
		}
		if j.Rank == 0 {
			// S(0) -> W(1) on rank 1, first with one float64 more than the tag holds.
			h := header{kind: kindActivate, class: 0, nparams: 1, data: dataEager, typ: 1}
			over := maxHeaderLen(j.Size) + eager - h.len() + 8
			h.size = uint64(over)
			b := append(h.encode(nil), make([]byte, over)...)
			m, err := j.Node.other.NewMsg(ctx, len(b))
			if err != nil {
				return err
			}
			copy(m.Bytes(), b)
			sendErr = j.Node.other.SendAM(1, ce.TagActivate, m, nil)
			h.size = eager
			forge(t, j.Node, h, f64bytes(make([]float64, eager/8)...))
		}
		for got.Load() == nil && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		if err := j.Node.Barrier(ctx); err != nil {
			return err
		}
		done := errors.New("done")
		tp.Cancel(done)
		if err := tp.Wait(ctx); !errors.Is(err, done) {
			return fmt.Errorf("rank %d: %w", j.Rank, err)
		}
		return nil
	})
	if !errors.Is(sendErr, ce.ErrTooLarge) {
		t.Errorf("an eager payload above the threshold plus the largest header: SendAM = %v, want ce.ErrTooLarge", sendErr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if g, _ := got.Load().([]float64); len(g) != eager/8 {
		t.Errorf("W(1) received %d float64s, want the %d of the payload at the threshold", len(g), eager/8)
	}
}
