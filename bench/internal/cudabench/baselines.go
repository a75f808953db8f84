package cudabench

import (
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/jdf2go/jdf2go/rt/gpu/cuda"
)

// The baselines are what a user would write with the binding alone, timed
// in the same process as the task runs: one cuBLAS call, one strided-
// batched call, a launch-record-query loop.

// rawDevice is device ordinal bound to the calling goroutine's locked
// thread, with a stream, timing events and the baseline kernels.
type rawDevice struct {
	dev        cuda.Device
	s          cuda.Stream
	start, end cuda.Event
	mod        cuda.Module
	fill       cuda.Function
	empty      cuda.Function
}

// withRawDevice runs fn with ordinal's primary context current on a locked
// thread.
func withRawDevice(ordinal int, fn func(r *rawDevice) error) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r := &rawDevice{}
	if r.dev, err = cuda.GetDevice(ordinal); err != nil {
		return err
	}
	ctx, err := r.dev.PrimaryCtxRetain()
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, r.dev.PrimaryCtxRelease()) }()
	if err := ctx.SetCurrent(); err != nil {
		return err
	}
	major, minor, err := r.dev.ComputeCapability()
	if err != nil {
		return err
	}
	image, err := cuda.Compile(kernelSource, "cudabench.cu", fmt.Sprintf("--gpu-architecture=sm_%d%d", major, minor))
	if err != nil {
		return err
	}
	if r.mod, err = cuda.ModuleLoadData(image); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, r.mod.Unload()) }()
	if r.fill, err = r.mod.Function("cudabench_fill_random"); err != nil {
		return err
	}
	if r.empty, err = r.mod.Function("cudabench_empty_raw"); err != nil {
		return err
	}
	if r.s, err = cuda.NewStream(); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, r.s.Destroy()) }()
	if r.start, err = cuda.NewTimingEvent(); err != nil {
		return err
	}
	defer r.start.Destroy()
	if r.end, err = cuda.NewTimingEvent(); err != nil {
		return err
	}
	defer r.end.Destroy()
	return fn(r)
}

func (r *rawDevice) random(p cuda.DevicePtr, n int, seed uint64) error {
	var args cuda.KernelArgs
	args.Ptr(p).Int64(int64(n)).Uint64(seed)
	return r.fill.Launch(cuda.Dim3{X: 1056, Y: 1, Z: 1}, cuda.Dim3{X: 256, Y: 1, Z: 1}, 0, r.s, &args)
}

// timed runs op warm+runs times, timing the last runs with events.
func (r *rawDevice) timed(warm, runs int, op func() error) ([]time.Duration, error) {
	for range warm {
		if err := op(); err != nil {
			return nil, err
		}
	}
	var out []time.Duration
	for range runs {
		if err := r.start.Record(r.s); err != nil {
			return out, err
		}
		if err := op(); err != nil {
			return out, err
		}
		if err := r.end.Record(r.s); err != nil {
			return out, err
		}
		if err := r.end.Synchronize(); err != nil {
			return out, err
		}
		d, err := cuda.ElapsedTime(r.start, r.end)
		if err != nil {
			return out, err
		}
		out = append(out, d)
	}
	return out, nil
}

// alloc allocates n bytes per pointer and frees them with the returned
// function.
func alloc(bytes int, ps ...*cuda.DevicePtr) (free func() error, err error) {
	free = func() error {
		var errs []error
		for _, p := range ps {
			if *p != 0 {
				errs = append(errs, cuda.MemFree(*p))
				*p = 0
			}
		}
		return errors.Join(errs...)
	}
	for _, p := range ps {
		if *p, err = cuda.MemAlloc(bytes); err != nil {
			return nil, errors.Join(err, free())
		}
	}
	return free, nil
}

// withOperands runs fn with a cuBLAS handle on r's stream and three device
// buffers of elems random doubles each.
func withOperands(ordinal, elems int, fn func(r *rawDevice, h cuda.Blas, a, b, c cuda.DevicePtr) error) error {
	return withRawDevice(ordinal, func(r *rawDevice) (err error) {
		var a, b, c cuda.DevicePtr
		free, err := alloc(elems*8, &a, &b, &c)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, free()) }()
		for i, p := range []cuda.DevicePtr{a, b, c} {
			if err := r.random(p, elems, uint64(i+1)); err != nil {
				return err
			}
		}
		h, err := cuda.NewBlas()
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, h.Destroy()) }()
		if err := h.SetStream(r.s); err != nil {
			return err
		}
		return fn(r, h, a, b, c)
	})
}

// CublasDgemm times C = A·B with cuBLAS on n×n random matrices on the
// device: runs calls after two warm-up calls.
func CublasDgemm(ordinal, n, runs int) (ds []time.Duration, err error) {
	err = withOperands(ordinal, n*n, func(r *rawDevice, h cuda.Blas, a, b, c cuda.DevicePtr) error {
		ds, err = r.timed(2, runs, func() error { return h.Dgemm(cuda.OpN, cuda.OpN, n, n, n, 1, a, n, b, n, 0, c, n) })
		return err
	})
	return ds, err
}

// CublasStridedBatched times count products of nb×nb tiles in one
// cublasDgemmStridedBatched call.
func CublasStridedBatched(ordinal, nb, count, runs int) (ds []time.Duration, err error) {
	err = withOperands(ordinal, nb*nb*count, func(r *rawDevice, h cuda.Blas, a, b, c cuda.DevicePtr) error {
		st := int64(nb * nb)
		ds, err = r.timed(2, runs, func() error {
			return h.DgemmStridedBatched(cuda.OpN, cuda.OpN, nb, nb, nb, 1, a, nb, st, b, nb, st, 0, c, nb, st, count)
		})
		return err
	})
	return ds, err
}

// LaunchRoundTrip is the time per iteration of launching the empty kernel,
// recording an event and polling it until done, from Go: the floor of a
// singleton task.
func LaunchRoundTrip(ordinal, iters int) (per time.Duration, err error) {
	err = withRawDevice(ordinal, func(r *rawDevice) error {
		e, err := cuda.NewEvent()
		if err != nil {
			return err
		}
		defer e.Destroy()
		var args cuda.KernelArgs
		loop := func(n int) (time.Duration, error) {
			start := time.Now()
			for range n {
				if err := r.empty.Launch(cuda.Dim3{X: 1, Y: 1, Z: 1}, cuda.Dim3{X: 32, Y: 1, Z: 1}, 0, r.s, &args); err != nil {
					return 0, err
				}
				if err := e.Record(r.s); err != nil {
					return 0, err
				}
				for {
					done, err := e.Query()
					if err != nil {
						return 0, err
					}
					if done {
						break
					}
				}
			}
			return time.Since(start) / time.Duration(n), nil
		}
		if _, err := loop(iters / 10); err != nil {
			return err
		}
		per, err = loop(iters)
		return err
	})
	return per, err
}

// LaunchCosts is the host time of the driver calls a singleton task makes,
// each averaged over many calls on one locked thread with the context
// current, and the floor of a pipelined loop that makes only those calls.
type LaunchCosts struct {
	Call        time.Duration // cuDriverGetVersion: a purego call that does nothing
	SetCurrent  time.Duration // cuCtxSetCurrent of the current context
	Launch      time.Duration // cuLaunchKernel of the empty kernel, nothing waited for
	Record      time.Duration // cuEventRecord, nothing waited for
	QueryDone   time.Duration // cuEventQuery of a completed event
	QueryStream time.Duration // cuStreamQuery of an idle stream
	// Pipelined is the time per task of launching the empty kernel and
	// recording an event behind it on 4 streams in turn, querying each
	// stream's oldest of 4 events before reusing it: what the manager's
	// driver calls cost per singleton task when nothing else runs.
	Pipelined time.Duration
	// Serial is the same with one stream and each event waited for before the
	// next launch (LaunchRoundTrip): the device's round trip.
	Serial time.Duration
}

// MeasureLaunchCosts measures LaunchCosts on device ordinal with iters calls
// of each kind (after a tenth as many as warm-up).
func MeasureLaunchCosts(ordinal, iters int) (LaunchCosts, error) {
	var lc LaunchCosts
	err := withRawDevice(ordinal, func(r *rawDevice) (err error) {
		// per times op alone: in rounds of 256 calls, each followed by an
		// untimed synchronization, so that launches never wait for a full
		// launch queue (that would time the device, not the call).
		per := func(op func() error) (time.Duration, error) {
			const round = 256
			timed := func(rounds int) (time.Duration, error) {
				var el time.Duration
				for range rounds {
					start := time.Now()
					for range round {
						if err := op(); err != nil {
							return 0, err
						}
					}
					el += time.Since(start)
					if err := r.s.Synchronize(); err != nil {
						return 0, err
					}
				}
				return el, nil
			}
			if _, err := timed(1); err != nil { // warm-up
				return 0, err
			}
			rounds := max(iters/round, 1)
			el, err := timed(rounds)
			return el / time.Duration(rounds*round), err
		}
		ctx, err := cuda.CurrentContext()
		if err != nil {
			return err
		}
		var args cuda.KernelArgs
		launch := func() error {
			return r.empty.Launch(cuda.Dim3{X: 1, Y: 1, Z: 1}, cuda.Dim3{X: 32, Y: 1, Z: 1}, 0, r.s, &args)
		}
		e, err := cuda.NewEvent()
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, e.Destroy()) }()
		steps := []struct {
			d  *time.Duration
			op func() error
		}{
			{&lc.Call, func() error { _, err := cuda.DriverVersion(); return err }},
			{&lc.SetCurrent, ctx.SetCurrent},
			{&lc.Launch, launch},
			{&lc.Record, func() error { return e.Record(r.s) }},
			{&lc.QueryDone, func() error {
				done, err := e.Query()
				if err == nil && !done {
					err = errors.New("cudabench: event of an idle stream not done")
				}
				return err
			}},
			{&lc.QueryStream, func() error { _, err := r.s.Query(); return err }},
		}
		for _, st := range steps {
			if *st.d, err = per(st.op); err != nil {
				return err
			}
		}
		lc.Pipelined, err = pipelined(r, iters)
		return err
	})
	if err != nil {
		return lc, err
	}
	lc.Serial, err = LaunchRoundTrip(ordinal, iters)
	return lc, err
}

// pipelined is the manager's driver calls alone: 4 streams with 4 event slots
// each, one launch and one record per task, and the oldest slot of a stream
// queried (until done) before the slot is reused.
func pipelined(r *rawDevice, iters int) (time.Duration, error) {
	const streams, slots = 4, 4
	var ss [streams]cuda.Stream
	var evs [streams][slots]cuda.Event
	var used [streams]int
	defer func() {
		for i := range ss {
			for _, e := range evs[i] {
				if e != 0 {
					_ = e.Destroy()
				}
			}
			if ss[i] != 0 {
				_ = ss[i].Destroy()
			}
		}
	}()
	for i := range ss {
		var err error
		if ss[i], err = cuda.NewStream(); err != nil {
			return 0, err
		}
		for k := range evs[i] {
			if evs[i][k], err = cuda.NewEvent(); err != nil {
				return 0, err
			}
		}
	}
	var args cuda.KernelArgs
	run := func(n int) (time.Duration, error) {
		start := time.Now()
		for t := range n {
			s := t % streams
			k := (t / streams) % slots
			if used[s] >= slots {
				for {
					done, err := evs[s][k].Query()
					if err != nil {
						return 0, err
					}
					if done {
						break
					}
				}
			}
			if err := r.empty.Launch(cuda.Dim3{X: 1, Y: 1, Z: 1}, cuda.Dim3{X: 32, Y: 1, Z: 1}, 0, ss[s], &args); err != nil {
				return 0, err
			}
			if err := evs[s][k].Record(ss[s]); err != nil {
				return 0, err
			}
			used[s]++
		}
		for i := range ss {
			if err := ss[i].Synchronize(); err != nil {
				return 0, err
			}
		}
		return time.Since(start) / time.Duration(n), nil
	}
	if _, err := run(iters / 10); err != nil {
		return 0, err
	}
	return run(iters)
}
