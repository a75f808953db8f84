// Package cudabench holds the GPU benchmark workloads of docs/runtime.md, "Benchmarks":
// what the manager costs per task (empty kernels), what batching gains on
// small GEMM tasks, how close GEMM tasks get to one cuBLAS call on large
// tiles, and a tiled Cholesky through rt against cuSOLVER. The manager
// workloads take any driver.Backend (the simulated device runs them in CI);
// the Cholesky comparison needs CUDA. The benchmark driver's cuda suite and
// this package's GPU test print the same figures.
package cudabench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jdf2go/jdf2go/bench/internal/gpubench"
	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/driver"
)

// EmptyKernel is the kernel of the singleton benchmark: it does nothing, so
// a task costs what the manager and one launch cost.
const EmptyKernel = "cudabench.empty"

func init() {
	err := gpu.RegisterKernel(gpu.KernelSpec{
		Name:  EmptyKernel,
		CUDA:  `extern "C" __global__ void cudabench_empty() { }`,
		Entry: "cudabench_empty",
		Host:  func(gpu.HostMemory, gpu.Dim3, gpu.Dim3, []any) error { return nil },
	})
	if err != nil {
		panic(err)
	}
}

// Result is one timed run of tasks through the manager: the simulated
// device's throughput result (Tasks, Elapsed, Rings: hook calls that
// launched work, so Tasks/Rings is the mean batch).
type Result = gpubench.ThroughputResult

// PerTask is the time per task of r.
func PerTask(r Result) time.Duration { return r.Elapsed / time.Duration(max(r.Tasks, 1)) }

type benchEC struct{}

func (benchEC) Priority() int32 { return 0 }

// counter completes wrappers by counting them.
type counter struct {
	done, failed atomic.Int64
	target       int64
	all          chan struct{}
	once         sync.Once
	mu           sync.Mutex
	cause        error
}

func newCounter(target int) *counter {
	return &counter{target: int64(target), all: make(chan struct{})}
}

func (c *counter) Complete(gpu.Worker, *gpu.Task) error {
	if c.done.Add(1) == c.target {
		c.once.Do(func() { close(c.all) })
	}
	return nil
}

func (c *counter) Cleanout(_ *gpu.Task, cause error) {
	c.failed.Add(1)
	c.mu.Lock()
	if c.cause == nil {
		c.cause = cause
	}
	c.mu.Unlock()
	c.once.Do(func() { close(c.all) })
}

func (c *counter) Reschedule(*gpu.Task) error {
	return errors.New("cudabench: tasks are never rescheduled")
}

func (c *counter) reset(target int) {
	c.done.Store(0)
	c.target = int64(target)
	c.all = make(chan struct{})
	c.once = sync.Once{}
}

func (c *counter) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failed.Load() > 0 {
		return fmt.Errorf("cudabench: %d tasks failed, first: %w", c.failed.Load(), c.cause)
	}
	return nil
}

// gated queues n tasks (made by mk) on d while its manager is held in the
// hook of a gate task, then opens the gate and returns the time until the
// last completion: the manager's throughput, not the submitters'.
func gated(d *gpu.Device, c *counter, n, workers int, mk func(i int) *gpu.Task) (time.Duration, error) {
	c.reset(n + 1) // the gate task completes too
	gate, held := make(chan struct{}), make(chan struct{})
	gateInc := &gpu.Incarnation{Name: "gate", Submit: func(*gpu.Device, *gpu.Task, *gpu.Stream) gpu.Result {
		close(held)
		<-gate
		return gpu.Done
	}}
	mgr := make(chan error, 1)
	go func() { mgr <- d.Submit(context.Background(), nil, d.NewTask(benchEC{}, gateInc)) }()
	<-held
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				if err := d.Submit(context.Background(), nil, mk(i)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	start := time.Now()
	close(gate)
	var err error
	select {
	case err = <-errs:
	case <-c.all:
	case <-time.After(5 * time.Minute):
		err = fmt.Errorf("cudabench: stuck at %d of %d tasks", c.done.Load(), n)
	}
	elapsed := time.Since(start)
	if err == nil {
		err = <-mgr
	}
	return elapsed, errors.Join(err, c.err())
}

// EmptyKernels runs tasks singleton tasks that each launch the empty
// kernel and returns the runs' results (after a warm-up run).
func EmptyKernels(be driver.Backend, tasks, runs int) ([]Result, error) {
	c := newCounter(tasks)
	devs, err := gpubench.OpenBackends([]gpu.Option{gpu.WithCompleter(c), gpu.WithScheduler(c)}, be)
	if err != nil {
		return nil, err
	}
	d := devs[0].Device()
	var rings atomic.Int64
	inc := &gpu.Incarnation{Name: "empty", Submit: func(_ *gpu.Device, _ *gpu.Task, s *gpu.Stream) gpu.Result {
		rings.Add(1)
		if err := s.Launch(EmptyKernel, gpu.Dim3{X: 1}, gpu.Dim3{X: 32}); err != nil {
			return gpu.Error
		}
		return gpu.Done
	}}
	var out []Result
	for r := range runs + 1 {
		rings.Store(0)
		el, err := gated(d, c, tasks, 2, func(int) *gpu.Task { return d.NewTask(benchEC{}, inc) })
		if err != nil {
			return out, errors.Join(err, d.Close())
		}
		if r > 0 {
			out = append(out, Result{Tasks: tasks, Elapsed: el, Rings: rings.Load()})
		}
	}
	return out, d.Close()
}
