package rt

// Scratch memory of CPU bodies.
//
// Actors: a worker, which owns one scratch slice and runs one CPU body at a time; the body,
// which borrows the slice through Task.Scratch while its hook runs.
//
// Invariant: the slice is reachable only from the worker and, while a hook runs, from that
// hook's task (Task.aux names the worker, worker.execute, for incarnations that declare
// Scratch or Batch). Two bodies that run at once run on
// two workers, so they never share memory; two bodies on one worker run one after the other,
// so they share it without a lock. A body that keeps the slice after it returns (a goroutine
// of an Async body, say) races with the worker's next task: that is a misuse that rt cannot
// detect cheaply, and the race detector reports it.
//
// Rejected designs: a sync.Pool (a Get and a Put per call, and a collection may empty it, so a
// steady state can still allocate); a slice per task class (two workers running one class
// would share it); a field per task (a task would grow past its cache lines); naming the
// worker on every task (a store on a cache line that most tasks never touch, measurable on
// chains of empty tasks).

import "fmt"

// Scratch returns n float64s of memory that belong to the worker running t's CPU body, for
// the body's temporaries: the work array of a LAPACK-style tile kernel, say. The memory is
// valid until the body returns, and the worker's next task gets the same memory back: a body
// must not keep it, nor hand it to a goroutine that outlives the body. Its contents are
// whatever the worker's previous body left; every call returns the same memory, so a body
// that needs two buffers asks once for their total length and slices it.
//
// Scratch allocates only when n exceeds what the worker has: the worker then keeps the larger
// slice, until the Context closes. It must be called from a CPU body (a hook of a CPU
// incarnation that declares Scratch, as generated code does for a body that calls it, or a
// batch-capable one; the head of a batched CPU body's ring) on the hook's goroutine, and fails
// with ErrScratch otherwise, or when n is negative. GPU bodies use gpu.Stream.Scratch.
func (t *Task) Scratch(n int) ([]float64, error) {
	w, _ := t.aux.(*worker)
	switch {
	case n < 0:
		return nil, fmt.Errorf("%w: Scratch(%d)", ErrScratch, n)
	case w == nil || w.running != t:
		return nil, fmt.Errorf("%w: %v is not running a CPU body on a worker, or its incarnation does not declare Scratch", ErrScratch, t)
	}
	if cap(w.scratch) < n {
		w.scratch = make([]float64, n)
	}
	// A full slice expression: an append by the body reallocates instead of writing past n.
	return w.scratch[:n:n], nil
}
