package gpu_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/sim"
)

// harness runs a device on a manual simulated backend in lockstep with the
// test: the manager's backoff (called whenever an iteration made no
// progress, and while quiescing) hands control to the test and waits for it
// to come back. Between two steps the manager is blocked, so the test reads
// the device's state at a quiescent point, advances streams op by op, and
// submits; every scenario is deterministic.
type harness struct {
	t    *testing.T
	be   *sim.Device
	d    *gpu.Device
	j    *journal
	host *host
	prof *gpu.TraceRecorder

	ctx    context.Context
	cancel context.CancelFunc
	idle   chan struct{}
	resume chan struct{}
	mgr    chan error // the current manager's Submit result; nil: no manager
	errs   []error    // errors returned by managers

	mu     sync.Mutex
	deltas []int32 // counter updates, in order
}

type harnessConfig struct {
	sim  []sim.Option
	opts []gpu.Option
}

func newHarness(t *testing.T, cfg harnessConfig) *harness {
	t.Helper()
	h := &harness{t: t, j: &journal{}, prof: gpu.NewTraceRecorder(),
		idle: make(chan struct{}), resume: make(chan struct{})}
	h.host = &host{j: h.j}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.be = sim.New(append([]sim.Option{sim.Manual()}, cfg.sim...)...)
	opts := []gpu.Option{
		gpu.WithComputeStreams(1),
		gpu.WithCompleter(h.host),
		gpu.WithScheduler(h.host),
		gpu.WithProfiler(h.prof),
		gpu.WithBackoff(h.backoff),
		gpu.WithCounterObserver(func(delta int32) {
			h.mu.Lock()
			h.deltas = append(h.deltas, delta)
			h.mu.Unlock()
		}),
	}
	d, err := gpu.NewDevice(h.be, append(opts, cfg.opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	h.d = d
	t.Cleanup(func() {
		if h.mgr != nil {
			h.abandon()
		}
		h.cancel()
	})
	return h
}

func (h *harness) backoff(int) {
	h.idle <- struct{}{}
	<-h.resume
}

const stepTimeout = 10 * time.Second

// goSubmit starts a submission on its own goroutine (acting as worker w)
// and returns the channel of its result.
func (h *harness) goSubmit(w gpu.Worker, task *gpu.Task) chan error {
	done := make(chan error, 1)
	go func() { done <- h.d.Submit(h.ctx, w, task) }()
	return done
}

// submit submits task and returns once the submission returned (it lost the
// election, or managed a whole episode) or became a manager that is now idle.
func (h *harness) submit(w gpu.Worker, task *gpu.Task) {
	h.t.Helper()
	done := h.goSubmit(w, task)
	select {
	case err := <-done:
		if err != nil {
			h.errs = append(h.errs, err)
		}
	case <-h.idle:
		if h.mgr != nil {
			h.t.Fatal("a second manager went idle")
		}
		h.mgr = done
	case <-time.After(stepTimeout):
		h.t.Fatal("submit: no return and no idle manager")
	}
}

// adopt makes done the current manager's result channel and waits for it to
// go idle or finish.
func (h *harness) adopt(done chan error) {
	h.t.Helper()
	h.mgr = done
	h.wait()
}

// wait waits until the manager is idle again or has left.
func (h *harness) wait() {
	h.t.Helper()
	select {
	case <-h.idle:
	case err := <-h.mgr:
		h.mgr = nil
		if err != nil {
			h.errs = append(h.errs, err)
		}
	case <-time.After(stepTimeout):
		h.t.Fatal("manager neither idle nor gone")
	}
}

// advance lets an idle manager run until it is idle again or leaves. It
// reports whether a manager is still there.
func (h *harness) advance() bool {
	h.t.Helper()
	if h.mgr == nil {
		return false
	}
	h.resume <- struct{}{}
	h.wait()
	return h.mgr != nil
}

// stream returns the simulated stream of that name.
func (h *harness) stream(name string) *sim.Stream {
	h.t.Helper()
	s := h.be.Stream(name)
	if s == nil {
		h.t.Fatalf("no stream %q", name)
	}
	return s
}

// step runs one operation of a stream and lets the manager react.
func (h *harness) step(name string) string {
	h.t.Helper()
	label, ok := h.stream(name).Step()
	if !ok {
		h.t.Fatalf("step %s: nothing queued", name)
	}
	h.advance()
	return label
}

// drain runs every queued operation of every stream, lets the manager react,
// and repeats until the manager leaves.
func (h *harness) drain() {
	h.t.Helper()
	for i := 0; h.mgr != nil; i++ {
		if i > 10000 {
			h.t.Fatal("drain: the manager does not leave")
		}
		for _, s := range h.d.Streams() {
			h.stream(s.Name()).Drain()
		}
		h.advance()
	}
}

// abandon stops an idle manager through its context.
func (h *harness) abandon() {
	h.cancel()
	select {
	case h.resume <- struct{}{}:
	case <-time.After(stepTimeout):
	}
	select {
	case <-h.mgr:
	case <-time.After(stepTimeout):
		h.t.Error("abandoned manager did not return")
	}
	h.mgr = nil
}

// leakCheck reports unreleased wrappers and a non-zero counter once the
// work is supposed to be over.
func (h *harness) leakCheck() error {
	st := h.d.Stats()
	if st.Outstanding != 0 || st.Live != 0 {
		return fmt.Errorf("leak: outstanding counter %d, %d unreleased wrappers", st.Outstanding, st.Live)
	}
	return nil
}

// finish drains the device and checks that nothing leaked and that Close
// succeeds.
func (h *harness) finish() {
	h.t.Helper()
	h.drain()
	if err := h.leakCheck(); err != nil {
		h.t.Fatal(err)
	}
	if err := h.d.Close(); err != nil {
		h.t.Fatal(err)
	}
}

// close closes the device while running the operations it enqueues (the
// write-back of dirty copies) on the manual streams.
func (h *harness) close() error {
	h.t.Helper()
	done := make(chan error, 1)
	go func() { done <- h.d.Close() }()
	for {
		select {
		case err := <-done:
			return err
		case <-time.After(100 * time.Microsecond):
			for _, s := range h.d.Streams() {
				h.stream(s.Name()).Drain()
			}
		}
	}
}

func (h *harness) counterDeltas() []int32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int32(nil), h.deltas...)
}

// managerErr returns the errors managers returned, joined.
func (h *harness) managerErr() error { return errors.Join(h.errs...) }

// spans counts the trace records of one span name per task class, as begin
// and end counts.
func (h *harness) spans(name, class string) (begins, ends int) {
	for _, e := range h.prof.Events() {
		if e.Name != name || e.ID.Class != class {
			continue
		}
		if e.Begin {
			begins++
		} else {
			ends++
		}
	}
	return begins, ends
}

// ---------------------------------------------------------------- tasks

// work enqueues a no-op labelled operation on the stream, standing for the
// device work of a body.
func work(s *gpu.Stream, label string) {
	if err := s.Backend().(*sim.Stream).Enqueue(label, func() error { return nil }); err != nil {
		panic(err)
	}
}

// plain is an incarnation whose hook enqueues one operation labelled with
// the task name and returns DONE.
func plain(j *journal) *gpu.Incarnation {
	return &gpu.Incarnation{Name: "plain", Type: gpu.TypeAny, Submit: func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		j.add("hook %s", task.EC())
		work(s, task.EC().(*ec).name)
		return gpu.Done
	}}
}

// task makes a wrapper of a new logical task on h's device and records its
// releases.
func (h *harness) task(name string, prio int32, inc *gpu.Incarnation, flows ...gpu.Flow) (*gpu.Task, *ec) {
	e := newEC(name, prio)
	t := h.d.NewTask(e, inc, flows...)
	t.OnRelease(func(w *gpu.Task) {
		e.released.Add(1)
		h.j.add("release %s", e.name)
	})
	return t, e
}

// names maps wrappers to their task names.
func names(ts []*gpu.Task) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.EC().(*ec).name
	}
	return out
}

func ringNames(head *gpu.Task) []string {
	var out []string
	for t := range head.Ring() {
		out = append(out, t.EC().(*ec).name)
	}
	return out
}

// fill submits n blockers of the plain incarnation; with one compute stream
// and 4 slots, 4 of them make the stream full.
func (h *harness) fill(n int, inc *gpu.Incarnation) []*ec {
	h.t.Helper()
	var out []*ec
	for i := range n {
		t, e := h.task(fmt.Sprintf("b%d", i+1), 0, inc)
		h.submit(nil, t)
		out = append(out, e)
	}
	h.settle()
	return out
}

// settle lets the manager take every pending wrapper (one per iteration).
func (h *harness) settle() {
	h.t.Helper()
	for i := 0; h.mgr != nil && h.d.Pending() > 0; i++ {
		if i > 1000 {
			h.t.Fatal("settle: pending wrappers are not taken")
		}
		h.advance()
	}
}

func countEntries(log []string, entry string) int {
	n := 0
	for _, e := range log {
		if e == entry {
			n++
		}
	}
	return n
}

func indexOf(log []string, entry string) int {
	for i, e := range log {
		if e == entry {
			return i
		}
	}
	return -1
}

// waitGroup waits for wg with a deadline, so that a submitter stuck in a
// broken manager fails the test with a message instead of hanging it.
func waitGroup(t *testing.T, wg *sync.WaitGroup, d time.Duration) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("submitters still running after %v", d)
	}
}
