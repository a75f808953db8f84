package gpu_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/sim"
)

// TestStressRandomHookResults drives a free-running simulated device with
// 10^5 random hook results (every result, unknown values, batches with
// random actions including invalid ones, AGAIN continuations, ASYNC hand-offs
// resubmitted by an owner, data flows under memory pressure with evictions
// and write-backs, slow operations) from two workers and the owner. At the
// end every logical task ended exactly once, nothing leaked and the counter
// is zero.
func TestStressRandomHookResults(t *testing.T) {
	const hookTarget = 100_000
	const unit = 256
	h := &host{j: &journal{}}
	d, _ := freeDevice(t, h,
		[]sim.Option{sim.WithFaults(&sim.Faults{Delay: func(stream, label string) time.Duration {
			if label == "slow" {
				return 20 * time.Microsecond
			}
			return 0
		}})},
		gpu.WithMemoryLimit(12*unit), gpu.WithComputeStreams(2))
	var hookCalls, ended, submittedECs atomic.Int64
	// The hooks run on the manager only (one at a time, handed over through
	// the counter), so their random source needs no lock.
	rng := rand.New(rand.NewPCG(5, 5))
	shared := make([]*hostData, 8)
	for i := range shared {
		shared[i] = newHostData(make([]float64, unit/8)...)
	}

	var omu sync.Mutex
	var owned []*ec
	wake := make(chan struct{}, 1)

	var inc *gpu.Incarnation
	match := func(cand, head *gpu.Task, _ any) gpu.Action {
		switch x := rng.IntN(100); {
		case x < 60:
			return gpu.Accept
		case x < 85:
			return gpu.Reject
		case x < 99:
			return gpu.Stop
		default:
			return gpu.Action(3 + x) // invalid
		}
	}
	steps := map[*gpu.Task]int{}
	inc = &gpu.Incarnation{Name: "stress", Batch: true, Submit: func(dev *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		hookCalls.Add(1)
		if !task.Continuation() {
			delete(steps, task)
			if rng.IntN(3) > 0 {
				if _, err := s.CollectBatch(task, match, nil); err != nil {
					if !errors.Is(err, gpu.ErrInvalidAction) {
						t.Errorf("collect: %v", err)
					}
					return gpu.Error
				}
			}
		}
		work := func() gpu.Result {
			for m := range task.Ring() {
				label := "k"
				if rng.IntN(50) == 0 {
					label = "slow"
				}
				if err := s.Backend().(*sim.Stream).Enqueue(label, func() error { return nil }); err != nil {
					return gpu.Error
				}
				_ = m
			}
			return gpu.Done
		}
		switch x := rng.IntN(1000); {
		case x < 600:
			return work()
		case x < 800:
			if steps[task] >= 3 {
				return work()
			}
			steps[task]++
			if r := work(); r != gpu.Done {
				return r
			}
			return gpu.Again
		case x < 900:
			return gpu.Next
		case x < 960:
			omu.Lock()
			for m := range task.Ring() {
				owned = append(owned, m.EC().(*ec))
			}
			omu.Unlock()
			select {
			case wake <- struct{}{}:
			default:
			}
			return gpu.Async
		case x < 975:
			return gpu.Error
		case x < 990:
			return gpu.Disable
		case x < 995:
			work()
			return 7 // DONE
		default:
			return -42 // ERROR
		}
	}}
	h.onComplete = func(gpu.Worker, *gpu.Task) { ended.Add(1) }

	newWrapper := func(e *ec, r *rand.Rand) *gpu.Task {
		var flows []gpu.Flow
		if r.IntN(2) == 0 {
			flows = append(flows, gpu.Flow{Data: shared[r.IntN(len(shared))], Access: gpu.Read, Elem: gpu.Float64})
		}
		if r.IntN(3) == 0 {
			flows = append(flows, gpu.Flow{Data: newHostData(make([]float64, unit/8)...), Access: gpu.Write,
				Elem: gpu.Float64, KeepOnDevice: r.IntN(2) == 0})
		}
		return d.NewTask(e, inc, flows...)
	}
	submit := func(w gpu.Worker, tk *gpu.Task) {
		if err := d.Submit(context.Background(), w, tk); err != nil &&
			!errors.Is(err, gpu.ErrTaskFailed) && !errors.Is(err, gpu.ErrDeviceDisabled) {
			t.Errorf("submit: %v", err)
		}
	}

	var all sync.Map // *ec -> struct{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for wi := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(wi), 9))
			w := &worker{id: int32(wi), shared: &sharedQ{}}
			for i := 0; hookCalls.Load() < hookTarget; i++ {
				// Like a scheduler, feed the device about as fast as it
				// drains, so its queues stay bounded.
				for d.Outstanding() > 512 {
					time.Sleep(50 * time.Microsecond)
				}
				e := newEC(fmt.Sprintf("w%d.%d", wi, i), int32(r.IntN(5)))
				all.Store(e, struct{}{})
				submittedECs.Add(1)
				submit(w, newWrapper(e, r))
				if i%64 == 0 {
					runtime.Gosched()
				}
			}
		}()
	}
	// The ASYNC owner reschedules every task it received, through a new
	// wrapper.
	ownerDone := make(chan struct{})
	go func() {
		defer close(ownerDone)
		r := rand.New(rand.NewPCG(7, 7))
		for {
			omu.Lock()
			batch := owned
			owned = nil
			omu.Unlock()
			for _, e := range batch {
				submit(nil, newWrapper(e, r))
			}
			if len(batch) > 0 {
				continue
			}
			select {
			case <-wake:
			case <-stop:
				omu.Lock()
				left := len(owned)
				omu.Unlock()
				if left == 0 {
					return
				}
			case <-time.After(time.Millisecond):
			}
		}
	}()
	waitGroup(t, &wg, 60*time.Second)

	deadline := time.Now().Add(60 * time.Second)
	for {
		omu.Lock()
		pendingOwned := len(owned)
		omu.Unlock()
		var done, total int
		all.Range(func(k, _ any) bool {
			total++
			if k.(*ec).ended() > 0 {
				done++
			}
			return true
		})
		if done == total && pendingOwned == 0 && d.Outstanding() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not drained: %d of %d tasks ended, %d owned, outstanding %d, pending %d",
				done, total, pendingOwned, d.Outstanding(), d.Pending())
		}
		time.Sleep(time.Millisecond)
	}
	close(stop)
	<-ownerDone

	var completed, cleanedOut int64
	all.Range(func(k, _ any) bool {
		e := k.(*ec)
		if e.ended() != 1 {
			t.Errorf("%s ended %d times (completed %d, cleaned %d)", e.name, e.ended(), e.completed.Load(), e.cleaned.Load())
		}
		completed += int64(e.completed.Load())
		cleanedOut += int64(e.cleaned.Load())
		return true
	})
	st := d.Stats()
	if st.Outstanding != 0 || st.Live != 0 {
		t.Fatalf("leak: outstanding %d, live %d", st.Outstanding, st.Live)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if hookCalls.Load() < hookTarget {
		t.Fatalf("%d hook results, want at least %d", hookCalls.Load(), hookTarget)
	}
	t.Logf("%d hook results over %d tasks: %d completed, %d cleaned out; %d episodes, %d evictions, %d write-backs",
		hookCalls.Load(), submittedECs.Load(), completed, cleanedOut, st.Episodes, st.Evictions, st.WriteBacks)
	if st.Evictions == 0 || st.WriteBacks == 0 {
		t.Errorf("the run did not exercise the memory paths: %d evictions, %d write-backs", st.Evictions, st.WriteBacks)
	}
}
