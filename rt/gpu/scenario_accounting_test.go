package gpu_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt/gpu"
)

// Scenarios 1 to 6 of docs/gpu.md, "Tests": accounting and election.

func TestScenario01_CounterMatchesLiveWrappers(t *testing.T) {
	h := newHarness(t, harnessConfig{opts: []gpu.Option{gpu.WithComputeStreams(2)}})
	var submitted, released atomic.Int32
	var owned []*ec
	calls := map[*ec]int{}
	inc := batchInc("M", func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		e := task.EC().(*ec)
		calls[e]++
		switch (calls[e] + int(e.id)) % 5 {
		case 0:
			return gpu.Next
		case 1:
			if calls[e] < 3 {
				for m := range task.Ring() {
					owned = append(owned, m.EC().(*ec))
				}
				return gpu.Async
			}
		case 2:
			s.CollectBatch(task, gpu.BatchPolicy{Max: 3}.Match, nil)
			for m := range task.Ring() {
				work(s, m.EC().(*ec).name)
			}
			if calls[e] < 3 {
				return gpu.Again
			}
			return gpu.Done
		}
		work(s, e.name)
		return gpu.Done
	})
	submit := func(e *ec) {
		t := h.d.NewTask(e, inc)
		t.OnRelease(func(*gpu.Task) { released.Add(1) })
		submitted.Add(1)
		h.submit(nil, t)
	}
	check := func(where string) {
		alive := submitted.Load() - released.Load()
		if got := h.d.Outstanding(); got != alive || got < 0 {
			t.Fatalf("%s: outstanding %d, %d counted wrappers alive", where, got, alive)
		}
	}
	var tasks []*ec
	for i := range 12 {
		e := newEC(fmt.Sprintf("m%d", i), int32(i%3))
		tasks = append(tasks, e)
		submit(e)
		check("after a submission")
	}
	for step := 0; h.mgr != nil || len(owned) > 0; step++ {
		if step > 5000 {
			t.Fatal("no end")
		}
		for _, e := range owned {
			submit(e) // the ASYNC owner reschedules
			check("after a resubmission")
		}
		owned = nil
		for _, s := range h.d.Streams() {
			if _, ok := h.stream(s.Name()).Step(); ok {
				break
			}
		}
		h.advance()
		check("at a quiescent point")
	}
	for _, e := range tasks {
		if e.completed.Load() != 1 {
			t.Errorf("%s completed %d times", e.name, e.completed.Load())
		}
	}
	if err := h.leakCheck(); err != nil {
		t.Fatal(err)
	}
}

// goSubmitAll starts one submission per worker, all released at the same
// moment; each reports its index on ret once Submit returned, its error on
// errs[i].
func goSubmitAll(h *harness, ws []*worker, tasks []*gpu.Task) (ret chan int, errs []chan error) {
	n := len(tasks)
	start := make(chan struct{})
	ret = make(chan int, n)
	errs = make([]chan error, n)
	for i := range n {
		errs[i] = make(chan error, 1)
		go func() {
			<-start
			errs[i] <- h.d.Submit(h.ctx, ws[i], tasks[i])
			ret <- i
		}()
	}
	close(start)
	return ret, errs
}

// waitElection waits until all submissions but one returned and the last
// one manages an idle device; its result channel becomes h.mgr.
func waitElection(t *testing.T, h *harness, ret chan int, errs []chan error, n int) []int {
	t.Helper()
	var returned []int
	idle := false
	for len(returned) < n-1 || !idle {
		select {
		case i := <-ret:
			if err := <-errs[i]; err != nil {
				t.Fatalf("submission %d: %v", i, err)
			}
			returned = append(returned, i)
		case <-h.idle:
			idle = true
		case <-time.After(stepTimeout):
			t.Fatalf("%d submissions returned, manager idle %v", len(returned), idle)
		}
	}
	back := map[int]bool{}
	for _, i := range returned {
		back[i] = true
	}
	for i := range n {
		if !back[i] {
			mgr := make(chan error, 1)
			go func() { <-ret; mgr <- <-errs[i] }()
			h.mgr = mgr
		}
	}
	return returned
}

func TestScenario02_OneManagerAmongN(t *testing.T) {
	const n = 8
	h := newHarness(t, harnessConfig{})
	shared := &sharedQ{}
	var ws []*worker
	var tasks []*gpu.Task
	var ecs []*ec
	for i := range n {
		ws = append(ws, &worker{id: int32(i), shared: shared})
		tk, e := h.task(fmt.Sprintf("g%d", i), 0, plain(h.j))
		tasks = append(tasks, tk)
		ecs = append(ecs, e)
	}
	ret, errs := goSubmitAll(h, ws, tasks)
	returned := waitElection(t, h, ret, errs, n)
	if len(returned) != n-1 || h.mgr == nil {
		t.Fatalf("%d submissions returned at once, want %d, and one manager", len(returned), n-1)
	}
	if got := h.d.Stats().Episodes; got != 1 {
		t.Fatalf("%d management episodes, want 1", got)
	}
	h.finish()
	for _, e := range ecs {
		if e.completed.Load() != 1 {
			t.Errorf("%s completed %d times", e.name, e.completed.Load())
		}
	}
	if h.d.Stats().Episodes != 1 || h.mgr != nil {
		t.Fatal("a manager remains")
	}
}

func TestScenario03_NoStrandedWrapperUnderStress(t *testing.T) {
	h := &host{j: &journal{}}
	jitter := func(r *rand.Rand) {
		switch r.IntN(4) {
		case 0:
			runtime.Gosched()
		case 1:
			time.Sleep(time.Duration(r.IntN(20)) * time.Microsecond)
		}
	}
	var rmu sync.Mutex
	rng := rand.New(rand.NewPCG(3, 3))
	// Delays right before the manager's decrements: in the completion and in
	// the release function, which runs just before the counter update.
	managerJitter := func() {
		rmu.Lock()
		r := rand.New(rand.NewPCG(rng.Uint64(), 0))
		rmu.Unlock()
		jitter(r)
	}
	h.onComplete = func(gpu.Worker, *gpu.Task) { managerJitter() }
	d, _ := freeDevice(t, h, nil)
	inc := &gpu.Incarnation{Name: "s", Submit: func(*gpu.Device, *gpu.Task, *gpu.Stream) gpu.Result { return gpu.Done }}
	shared := &sharedQ{}
	rounds := 300
	if testing.Short() {
		rounds = 50
	}
	for round := range rounds {
		const workers = 4
		var ecs []*ec
		var mu sync.Mutex
		var wg sync.WaitGroup
		for wi := range workers {
			w := &worker{id: int32(wi), shared: shared}
			r := rand.New(rand.NewPCG(uint64(round), uint64(wi)))
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range 1 + r.IntN(3) {
					jitter(r)
					e := newEC(fmt.Sprintf("r%d.w%d.%d", round, wi, k), 0)
					mu.Lock()
					ecs = append(ecs, e)
					mu.Unlock()
					tk := d.NewTask(e, inc)
					tk.OnRelease(func(*gpu.Task) { managerJitter() })
					if err := d.Submit(context.Background(), w, tk); err != nil {
						t.Error(err)
					}
				}
			}()
		}
		waitGroup(t, &wg, 30*time.Second)
		deadline := time.Now().Add(10 * time.Second)
		for _, e := range ecs {
			for e.completed.Load() == 0 {
				if time.Now().After(deadline) {
					t.Fatalf("round %d: %s never completed: pending %d, outstanding %d", round, e.name, d.Pending(), d.Outstanding())
				}
				runtime.Gosched()
			}
		}
		for d.Outstanding() != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: counter stays at %d", round, d.Outstanding())
			}
			runtime.Gosched()
		}
		if d.Pending() != 0 {
			t.Fatalf("round %d: %d wrappers stranded in device.pending", round, d.Pending())
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestScenario04_LeaveAtZeroNextManagerFinishes(t *testing.T) {
	const unit = 256
	h := newHarness(t, harnessConfig{opts: []gpu.Option{gpu.WithMemoryLimit(3 * unit)}})
	x := newHostData(make([]float64, unit/8)...)
	y := newHostData(make([]float64, unit/8)...)
	z := newHostData(make([]float64, 2*unit/8)...)
	writer := &gpu.Incarnation{Name: "W", Submit: fillHook(func(*gpu.Task) float64 { return 42 })}
	p := plain(h.j)
	a, _ := h.task("A", 0, writer, gpu.Flow{Data: x, Access: gpu.Write, Elem: gpu.Float64, KeepOnDevice: true})
	h.submit(nil, a)
	h.step("exec0") // A done; X stays dirty on the device; the manager leaves
	if h.mgr != nil || h.d.Outstanding() != 0 || x.HostVersion() != 1 {
		t.Fatalf("after A: manager %v, outstanding %d, X host version %d", h.mgr != nil, h.d.Outstanding(), x.HostVersion())
	}
	c, _ := h.task("C", 0, p, gpu.Flow{Data: y, Access: gpu.Read, Elem: gpu.Float64})
	h.submit(nil, c)
	h.step("in") // C runs, pinning Y
	b, eb := h.task("B", 0, p, gpu.Flow{Data: z, Access: gpu.Read, Elem: gpu.Float64})
	h.submit(nil, b)
	h.settle() // B cannot fit: NEXT, a write-back of X is queued
	if h.d.Stats().WriteBacks != 1 || h.d.StageOut().InFlight() != 1 {
		t.Fatalf("%d write-backs, %d in flight on stage-out; want 1, 1", h.d.Stats().WriteBacks, h.d.StageOut().InFlight())
	}
	h.step("exec0") // C done: Y is evictable, B reserves and stages in
	h.step("in")
	var counterAtLeave int32 = -1
	h.step("exec0") // B done: the counter reaches 0 and the manager leaves
	if h.mgr != nil {
		t.Fatal("the manager did not leave at counter 0")
	}
	counterAtLeave = h.d.Outstanding()
	if counterAtLeave != 0 || eb.completed.Load() != 1 || h.managerErr() != nil {
		t.Fatalf("leave: counter %d, B completed %d, err %v", counterAtLeave, eb.completed.Load(), h.managerErr())
	}
	if h.d.StageOut().InFlight() != 1 || x.HostVersion() != 1 {
		t.Fatal("the write-back should still be on the stage-out stream")
	}
	// A new submitter becomes manager and finishes the write-back.
	dtask, _ := h.task("D", 0, p)
	h.submit(nil, dtask)
	if h.mgr == nil {
		t.Fatal("D's worker is not managing")
	}
	h.step("out")
	if x.HostVersion() != 2 || x.buf[0] != 42 || h.d.StageOut().InFlight() != 0 {
		t.Fatalf("after the write-back: X version %d, X[0] %v", x.HostVersion(), x.buf[0])
	}
	h.finish()
	if got := h.d.Stats().Episodes; got != 3 {
		t.Fatalf("%d episodes, want 3", got)
	}
}

func TestScenario05_IdleLockKeepsSubmittersOut(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	var tasks []*gpu.Task
	var ws []*worker
	var ecs []*ec
	for i := range 3 {
		tk, e := h.task(fmt.Sprintf("g%d", i), 0, plain(h.j))
		tasks = append(tasks, tk)
		ecs = append(ecs, e)
		ws = append(ws, &worker{id: int32(i), shared: &sharedQ{}})
	}
	if !h.d.TryLockIdle() {
		t.Fatal("TryLockIdle failed on an idle device")
	}
	if h.d.TryLockIdle() {
		t.Fatal("the idle lock was taken twice")
	}
	ret, errs := goSubmitAll(h, ws, tasks)
	time.Sleep(20 * time.Millisecond) // the submitters spin meanwhile
	if len(ret) != 0 || h.d.Outstanding() != -1 || h.d.Pending() != 0 || h.d.Stats().Episodes != 0 {
		t.Fatalf("under the idle lock: %d returned, counter %d, %d pending, %d episodes",
			len(ret), h.d.Outstanding(), h.d.Pending(), h.d.Stats().Episodes)
	}
	h.d.UnlockIdle()
	if returned := waitElection(t, h, ret, errs, 3); len(returned) != 2 {
		t.Fatalf("%d submissions returned, want 2", len(returned))
	}
	h.finish()
	for _, e := range ecs {
		if e.completed.Load() != 1 {
			t.Errorf("%s completed %d times", e.name, e.completed.Load())
		}
	}
}

func TestScenario06_WriteBacksNeverCounted(t *testing.T) {
	const unit = 256
	var deltas []int32
	var dmu sync.Mutex
	h := &host{j: &journal{}}
	d, _ := freeDevice(t, h, nil, gpu.WithMemoryLimit(4*unit), gpu.WithCounterObserver(func(delta int32) {
		dmu.Lock()
		deltas = append(deltas, delta)
		dmu.Unlock()
	}))
	writer := &gpu.Incarnation{Name: "W", Submit: fillHook(func(t *gpu.Task) float64 {
		return float64(t.EC().(*ec).id)
	})}
	const n = 24
	var data []*hostData
	var ecs []*ec
	var wg sync.WaitGroup
	for wi := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &worker{id: int32(wi), shared: &sharedQ{}}
			for k := range n / 2 {
				x := newHostData(make([]float64, unit/8)...)
				e := newEC(fmt.Sprintf("w%d.%d", wi, k), 0)
				dmu.Lock()
				data, ecs = append(data, x), append(ecs, e)
				dmu.Unlock()
				tk := d.NewTask(e, writer, gpu.Flow{Data: x, Access: gpu.Write, Elem: gpu.Float64, KeepOnDevice: true})
				if err := d.Submit(context.Background(), w, tk); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	waitGroup(t, &wg, 30*time.Second)
	deadline := time.Now().Add(20 * time.Second)
	for d.Outstanding() != 0 || d.Stats().Executed != n {
		if time.Now().After(deadline) {
			t.Fatalf("not drained: outstanding %d, executed %d", d.Outstanding(), d.Stats().Executed)
		}
		runtime.Gosched()
	}
	st := d.Stats()
	if st.WriteBacks == 0 {
		t.Fatal("no write-back happened; the test needs memory pressure")
	}
	if err := d.Close(); err != nil { // writes back what is still dirty
		t.Fatal(err)
	}
	dmu.Lock()
	defer dmu.Unlock()
	var sum int32
	for _, dl := range deltas {
		if dl != -1 {
			t.Fatalf("a counter update of %d: only singletons were released", dl)
		}
		sum += dl
	}
	if sum != -n || len(deltas) != n {
		t.Fatalf("counter updates sum to %d in %d steps, want %d in %d (write-backs: %d)", sum, len(deltas), -n, n, st.WriteBacks)
	}
	for i, x := range data {
		if x.buf[0] != float64(ecs[i].id) || x.HostVersion() != 2 {
			t.Fatalf("%s: host copy %v version %d after Close, want %d version 2", ecs[i].name, x.buf[0], x.HostVersion(), ecs[i].id)
		}
	}
}
