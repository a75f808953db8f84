package gpubench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/sim"
)

// ThroughputConfig describes a manager throughput run on one free-running
// simulated device: Tasks logical tasks without data are queued on the
// device while its first manager is held at a gate, then the gate opens and
// the run is timed until the last completion. A hook enqueues one no-op
// kernel for its whole ring and returns DONE, so each ring costs one launch
// and one event: the run measures what the manager spends per task, and what
// batching saves, independently of how fast workers can submit.
type ThroughputConfig struct {
	Tasks int
	// BatchMax <= 1 runs singletons (no collection); otherwise hooks collect
	// up to BatchMax tasks per ring.
	BatchMax int
	// Workers queueing the tasks (default 2).
	Workers int
	// Latency is the virtual duration of each kernel launch (sim.WithLatency):
	// with 0 the streams rarely fill and tasks seldom wait long enough to be
	// batched; a few microseconds is what a launch costs on a real GPU.
	Latency time.Duration
	// HostCost is host time the hook spends per launch (a spin on the
	// manager's goroutine), as a cuBLAS call does: when it exceeds Latency,
	// launches, not the device, limit the rate, and the streams never fill.
	HostCost time.Duration
	// PendingDrain is gpu.WithPendingDrain (0: the default); 1 is the
	// one-submission-per-iteration loop of the PaRSEC manager.
	PendingDrain int
}

// ThroughputResult is the outcome of a throughput run.
type ThroughputResult struct {
	Tasks   int
	Elapsed time.Duration
	// Rings is the number of hook calls, so Tasks/Rings is the mean batch.
	Rings int64
	// Episodes is the number of management episodes (elections won).
	Episodes uint64
}

// TasksPerSecond is Tasks / Elapsed.
func (r ThroughputResult) TasksPerSecond() float64 {
	return float64(r.Tasks) / r.Elapsed.Seconds()
}

// MeanBatch is the mean number of tasks per ring.
func (r ThroughputResult) MeanBatch() float64 {
	if r.Rings == 0 {
		return 0
	}
	return float64(r.Tasks) / float64(r.Rings)
}

type benchEC struct{}

func (benchEC) Priority() int32 { return 0 }

// benchHost completes tasks by counting them.
type benchHost struct {
	done   atomic.Int64
	failed atomic.Int64
	all    chan struct{}
	target int64
	once   sync.Once
}

func (h *benchHost) Complete(gpu.Worker, *gpu.Task) error {
	if h.done.Add(1) == h.target {
		h.once.Do(func() { close(h.all) })
	}
	return nil
}

func (h *benchHost) Cleanout(*gpu.Task, error) { h.failed.Add(1) }

func (h *benchHost) Reschedule(*gpu.Task) error {
	return errors.New("gpubench: throughput tasks are never rescheduled")
}

type benchWorker struct{}

func (benchWorker) FlushNextTask() {}

var noop = func() error { return nil }

// spin burns d of the calling goroutine's time, as a host-side launch does.
func spin(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// Throughput runs cfg and reports its time, from the opening of the gate to
// the last completion.
func Throughput(cfg ThroughputConfig) (ThroughputResult, error) {
	if cfg.Tasks <= 0 {
		return ThroughputResult{}, fmt.Errorf("%w: %d tasks", gpu.ErrBadArgument, cfg.Tasks)
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	host := &benchHost{all: make(chan struct{}), target: int64(cfg.Tasks) + 1}
	opts := []gpu.Option{gpu.WithCompleter(host), gpu.WithScheduler(host)}
	if cfg.PendingDrain > 0 {
		opts = append(opts, gpu.WithPendingDrain(cfg.PendingDrain))
	}
	devs, err := OpenBackends(opts, sim.New(sim.WithLatency(cfg.Latency)))
	if err != nil {
		return ThroughputResult{}, err
	}
	d := devs[0].Device()
	var rings atomic.Int64
	policy := gpu.BatchPolicy{Max: cfg.BatchMax}
	hook := func(_ *gpu.Device, t *gpu.Task, s *gpu.Stream) gpu.Result {
		rings.Add(1)
		if cfg.BatchMax > 1 {
			if _, err := s.CollectBatch(t, policy.Match, nil); err != nil {
				return gpu.Error
			}
		}
		spin(cfg.HostCost)
		if err := s.Backend().(*sim.Stream).Enqueue("kernel", noop); err != nil {
			return gpu.Error
		}
		return gpu.Done
	}
	inc := &gpu.Incarnation{Name: "bench", Batch: cfg.BatchMax > 1, Submit: hook}
	gate, held := make(chan struct{}), make(chan struct{})
	gateInc := &gpu.Incarnation{Name: "gate", Submit: func(d *gpu.Device, t *gpu.Task, s *gpu.Stream) gpu.Result {
		close(held)
		<-gate
		return hook(d, t, s)
	}}
	mgr := make(chan error, 1)
	go func() { mgr <- d.Submit(context.Background(), benchWorker{}, d.NewTask(benchEC{}, gateInc)) }()
	<-held
	var wg sync.WaitGroup
	errs := make(chan error, cfg.Workers)
	for w := range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := cfg.Tasks / cfg.Workers
			if w < cfg.Tasks%cfg.Workers {
				n++
			}
			for range n {
				if err := d.Submit(context.Background(), benchWorker{}, d.NewTask(benchEC{}, inc)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	start := time.Now()
	close(gate)
	var runErr error
	select {
	case runErr = <-errs:
	case <-host.all:
	case <-time.After(time.Minute):
		runErr = fmt.Errorf("sim: throughput run stuck at %d of %d tasks", host.done.Load(), cfg.Tasks)
	}
	elapsed := time.Since(start)
	if runErr == nil {
		runErr = <-mgr // the manager returns after the last release
	}
	if runErr == nil && host.failed.Load() > 0 {
		runErr = fmt.Errorf("sim: %d throughput tasks failed", host.failed.Load())
	}
	episodes := d.Stats().Episodes
	if err := d.Close(); err != nil && runErr == nil {
		runErr = err
	}
	// The gate task is the manager's own and is not counted.
	return ThroughputResult{Tasks: cfg.Tasks, Elapsed: elapsed, Rings: rings.Load() - 1, Episodes: episodes}, runErr
}
