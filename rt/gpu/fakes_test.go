package gpu_test

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/driver"
)

// ec is a fake logical task: it counts what happens to it.
type ec struct {
	name        string
	id          uint64
	prio        atomic.Int32
	completed   atomic.Int32
	cleaned     atomic.Int32
	rescheduled atomic.Int32
	released    atomic.Int32 // wrappers released for it
	succ        *cpuTask     // successor enabled by its completion (scenario 35)
}

var ecIDs atomic.Uint64

func newEC(name string, prio int32) *ec {
	e := &ec{name: name, id: ecIDs.Add(1)}
	e.prio.Store(prio)
	return e
}

func (e *ec) Priority() int32 { return e.prio.Load() }
func (e *ec) TraceID() gpu.TraceID {
	return gpu.TraceID{Class: e.name, Event: e.id, Taskpool: 1}
}
func (e *ec) String() string { return e.name }

// ended reports how many times the task ended (completed or cleaned out).
func (e *ec) ended() int32 { return e.completed.Load() + e.cleaned.Load() }

// hostData is a fake rt.Data: a float64 host copy with a version.
type hostData struct {
	buf []float64
	ver atomic.Uint64
}

func newHostData(vals ...float64) *hostData {
	h := &hostData{buf: vals}
	h.ver.Store(1)
	return h
}

func (h *hostData) HostBytes() []byte       { return driver.Float64sAsBytes(h.buf) }
func (h *hostData) HostVersion() uint64     { return h.ver.Load() }
func (h *hostData) SetHostVersion(v uint64) { h.ver.Store(v) }

// journal records the order of events across the manager and the hooks.
type journal struct {
	mu  sync.Mutex
	log []string
}

func (j *journal) add(format string, args ...any) {
	j.mu.Lock()
	j.log = append(j.log, fmt.Sprintf(format, args...))
	j.mu.Unlock()
}

func (j *journal) entries() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.log)
}

// host is the fake runtime: Completer and Scheduler.
type host struct {
	j *journal
	// onComplete runs inside Complete, after the bookkeeping.
	onComplete func(w gpu.Worker, t *gpu.Task)
	// resubmit, when set, takes rescheduled tasks.
	resubmit func(e *ec)
}

func (h *host) Complete(w gpu.Worker, t *gpu.Task) error {
	e := t.EC().(*ec)
	if e.completed.Add(1) != 1 {
		return fmt.Errorf("%s completed twice", e.name)
	}
	h.j.add("complete %s", e.name)
	if h.onComplete != nil {
		h.onComplete(w, t)
	}
	return nil
}

func (h *host) Cleanout(t *gpu.Task, cause error) {
	e := t.EC().(*ec)
	e.cleaned.Add(1)
	h.j.add("cleanout %s", e.name)
}

func (h *host) Reschedule(t *gpu.Task) error {
	e := t.EC().(*ec)
	e.rescheduled.Add(1)
	h.j.add("reschedule %s", e.name)
	if h.resubmit != nil {
		h.resubmit(e)
	}
	return nil
}

// cpuTask is a task of the fake CPU scheduler (scenarios 2, 3, 34, 35).
type cpuTask struct {
	name string
	ran  atomic.Int32
	by   atomic.Int32 // id of the worker that ran it
}

// sharedQ is the fake shared scheduler queue.
type sharedQ struct {
	mu sync.Mutex
	q  []*cpuTask
}

func (s *sharedQ) push(t *cpuTask) {
	s.mu.Lock()
	s.q = append(s.q, t)
	s.mu.Unlock()
}

func (s *sharedQ) pop() *cpuTask {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.q) == 0 {
		return nil
	}
	t := s.q[0]
	s.q = s.q[1:]
	return t
}

func (s *sharedQ) contains(t *cpuTask) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.q, t)
}

// worker is a fake CPU worker with a private next_task slot; only the
// goroutine running as this worker touches the slot.
type worker struct {
	id      int32
	slot    *cpuTask
	shared  *sharedQ
	flushes atomic.Int32
	j       *journal
}

func (w *worker) FlushNextTask() {
	w.flushes.Add(1)
	if w.slot != nil {
		if w.j != nil {
			w.j.add("flush %s", w.slot.name)
		}
		w.shared.push(w.slot)
		w.slot = nil
	}
}

// next takes the worker's next task: the private slot first, then the
// shared queue.
func (w *worker) next() *cpuTask {
	if t := w.slot; t != nil {
		w.slot = nil
		return t
	}
	return w.shared.pop()
}

func (w *worker) run(t *cpuTask) {
	t.ran.Add(1)
	t.by.Store(w.id)
}

// script hands out scripted hook results: Next returns them in order, then
// keeps returning the last one. It is safe for concurrent use.
type script struct {
	mu      sync.Mutex
	results []gpu.Result
	i       int
}

// newScript returns a script of the given results.
func newScript(results ...gpu.Result) *script { return &script{results: results} }

// Next returns the next scripted result.
func (s *script) Next() gpu.Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.results) == 0 {
		return gpu.Done
	}
	r := s.results[min(s.i, len(s.results)-1)]
	s.i++
	return r
}

// Calls returns how many results were handed out.
func (s *script) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.i
}
