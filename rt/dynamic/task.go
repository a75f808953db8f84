package dynamic

// Running and completing inserted tasks.
//
// Actors: workers, which run a task's body through its class's CPU hook and then its class's
// Successors function (release); inserters, which add successors to tasks that have not
// completed (access.go).
//
// A task record lives from its insertion to its release, then goes back to a pool. Its
// generation (gen) grows by one at each release, under the record's lock, at the moment its
// successor list is taken: an inserter that finds the generation it recorded adds itself to
// the list, and one that finds another knows the task completed. So a reference held by a
// datum never needs clearing, and a record can be reused at once.
//
// Commute token: a task with Commute accesses takes each of those data's tokens in
// registration order before its body runs. A token held by another task puts this task on the
// token's waiting list (the hook returns rt.Async, so the worker moves on); the holder's
// release hands the token to the first waiter and reschedules it, and it goes on with the
// next token. Taking tokens in one global order cannot deadlock.

import (
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/jdf2go/jdf2go/rt"
)

// Task is an inserted task while its body runs. Bodies may read its name and insert more
// tasks into its graph; a Task must not be kept after the body returns.
type Task = task

type task struct {
	g    *Graph
	cls  *class
	seq  int64 // insertion number, the task's parameter in names and traces
	prio int32
	// loc holds seq in the slot rt copies when the task is made ready. It lives in the record
	// because rt takes a *rt.Locals through Impl, an interface: a Locals on the stack would
	// escape, one allocation per ready task.
	loc  rt.Locals
	run  func(*Task) error
	uses []use

	// deps counts the predecessors not yet completed, plus one while the task is inserted.
	deps atomic.Int32
	gen  atomic.Uint32
	mu   sync.Mutex // guards succ against a concurrent release
	succ []*task

	commutes int      // Commute uses
	held     int      // commute tokens held
	rtask    *rt.Task // the rt task while it waits for a token
	nested   bool     // inserted by a body
	body     *GPUBody // the GPU body, or nil (gpu.go)
	nextFree *task    // the graph's free lists
	sums     []uint64 // read-only checksums (debug mode)
	// running is set while the hook runs the CPU body, and scr is the scratch memory the
	// body took (Scratch), given back to the graph when the body returns.
	running bool
	scr     []float64

	// Across ranks (remote.go): the placement override, and what a transfer task moves.
	on  int    // On: the rank plus one; 0 when not set
	aff *datum // Affinity
	x   *xfer
}

// newTask returns a task record for an insertion; g.mu is held. Records are the graph's own:
// a release pushes its record on freed (only pushes: no record can come back to the top of
// the stack between a load and a swap, so the stack needs no counter), and the inserter takes
// the whole stack at once when its private list is empty. A sync.Pool would drop them at every
// collection, and a graph's records outlive none of its windows' worth.
func (g *Graph) newTask() *task {
	t := g.free
	if t == nil {
		if t = g.freed.Swap(nil); t == nil {
			return new(task)
		}
	}
	g.free, t.nextFree = t.nextFree, nil
	return t
}

// freeTask gives t's record back to its graph; any goroutine.
func (g *Graph) freeTask(t *task) {
	t.run = nil
	for {
		top := g.freed.Load()
		t.nextFree = top
		if g.freed.CompareAndSwap(top, t) {
			return
		}
	}
}

// countRecords turns on liveRecords, the task records taken by insertions and not yet
// released, for the memory test; off, it costs one load per insertion.
var (
	countRecords bool
	liveRecords  atomic.Int64
)

// Name returns the task's name: its class and insertion number, "GEMM(17)".
func (t *task) Name() string { return fmt.Sprintf("%s(%d)", t.cls.name, t.seq) }

// Graph returns the task's graph.
func (t *task) Graph() *Graph { return t.g }

// Insert inserts a task into the graph of the running task, in the graph's insertion order.
// It never waits for the window: a body that waited for tasks that cannot run before it ends
// would hang the graph.
func (t *task) Insert(name string, run func(*Task) error, args ...Arg) error {
	return t.g.insert(name, run, args, true)
}

// Scratch returns n float64s of memory for the temporaries of the running CPU body (the work
// array of a tile kernel, say), as rt.Task.Scratch does for a .jdf body. The memory is the
// body's until it returns; then it goes back to the graph, and a later body gets it again:
// a body must not keep it, nor hand it to a goroutine that outlives the body. Its contents
// are whatever an earlier body left. Every call of one body returns the same memory, so a
// body that needs two buffers asks once for their total length and slices it. Bodies that
// run at once get distinct memory.
//
// Scratch allocates only when no memory of n float64s is free: the graph keeps what it
// allocated, as much as its bodies used at once. It fails with rt.ErrScratch when n is
// negative or the task's CPU body is not running (a Task kept after its body returned).
// GPU bodies use gpu.Stream.Scratch.
//
// The graph keeps the memory, not the worker as for a .jdf body: rt names the worker on a
// task through the field that carries an inserted task's record (rt/dynamic.go), so it
// cannot do both. A body that calls Scratch takes a lock twice; one that does not, never.
func (t *task) Scratch(n int) ([]float64, error) {
	switch {
	case n < 0:
		return nil, fmt.Errorf("%w: Scratch(%d)", rt.ErrScratch, n)
	case !t.running:
		return nil, fmt.Errorf("%w: %s is not running its CPU body", rt.ErrScratch, t.Name())
	}
	if cap(t.scr) < n {
		if t.scr == nil {
			t.scr = t.g.takeScratch()
		}
		if cap(t.scr) < n {
			t.scr = make([]float64, n) // the smaller one is dropped: the larger serves both
		}
	}
	// A full slice expression: an append by the body reallocates instead of writing past n.
	return t.scr[:n:n], nil
}

// takeScratch returns the scratch memory a body gave back last, or nil.
func (g *Graph) takeScratch() []float64 {
	g.smu.Lock()
	defer g.smu.Unlock()
	n := len(g.spare)
	if n == 0 {
		return nil
	}
	s := g.spare[n-1]
	g.spare[n-1] = nil
	g.spare = g.spare[:n-1]
	return s
}

// putScratch gives back the scratch memory of a body that returned.
func (g *Graph) putScratch(s []float64) {
	g.smu.Lock()
	g.spare = append(g.spare, s)
	g.smu.Unlock()
}

// addSuccessor makes s wait for t if t is still at generation gen.
func (t *task) addSuccessor(gen uint32, s *task) {
	t.mu.Lock()
	if t.gen.Load() == gen {
		t.succ = append(t.succ, s)
		s.deps.Add(1)
	}
	t.mu.Unlock()
}

// hook is the CPU incarnation of every class: it takes the commute tokens, then runs the body.
func (g *Graph) hook(rtask *rt.Task) error {
	t := rt.Impl.Payload(rtask).(*task)
	for t.held < t.commutes {
		d := t.commuteDatum(t.held)
		if !d.acquire(t, rtask) {
			return rt.Async // rescheduled by the holder's release, holding d's token
		}
		t.held++
	}
	if g.coh.keep && g.recallFor(t, rtask, nil, rt.Impl.Incarnation(rtask)) {
		return rt.Async // rescheduled once the devices brought its data back (coherence.go)
	}
	if g.debug {
		t.checksum()
	}
	t.running = true
	err := call(t)
	t.running = false
	if t.scr != nil {
		g.putScratch(t.scr)
		t.scr = nil
	}
	if err == nil && g.debug {
		err = t.verifyReadOnly()
	}
	return err
}

// call runs t's body; a panic becomes an error with its stack.
func call(t *task) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return t.run(t)
}

// commuteDatum returns the datum of t's i-th Commute use in registration order.
func (t *task) commuteDatum(i int) *datum {
	var prev *datum
	for k := 0; k <= i; k++ {
		var best *datum
		for j := range t.uses {
			u := &t.uses[j]
			if u.mode == CommuteMode && (prev == nil || u.d.id > prev.id) && (best == nil || u.d.id < best.id) {
				best = u.d
			}
		}
		prev = best
	}
	return prev
}

// acquire takes d's token for t, or queues t on it and reports false.
func (d *datum) acquire(t *task, rtask *rt.Task) bool {
	d.cmu.Lock()
	defer d.cmu.Unlock()
	if d.owner == nil || d.owner == t {
		d.owner = t
		return true
	}
	t.rtask = rtask
	d.waiters = append(d.waiters, t)
	return false
}

// releaseToken gives d's token to its first waiter, if any, and reschedules that task.
func (d *datum) releaseToken() {
	d.cmu.Lock()
	var next *task
	if len(d.waiters) > 0 {
		next = d.waiters[0]
		copy(d.waiters, d.waiters[1:])
		d.waiters[len(d.waiters)-1] = nil
		d.waiters = d.waiters[:len(d.waiters)-1]
	}
	d.owner = next
	d.cmu.Unlock()
	if next != nil {
		next.held++
		rtask := next.rtask
		next.rtask = nil
		rtask.Reschedule(0)
	}
}

// release is the Successors function of every class: it runs once t's body succeeded, on the
// completing worker, and makes ready every successor whose last predecessor t was.
func (g *Graph) release(_ *rt.Taskpool, _ *rt.Locals, _ rt.FlowMask, e *rt.Edges) {
	t := rt.Impl.Payload(rt.Impl.From(e)).(*task)
	if g.devices {
		t.bumpVersions()
	}
	for i := 0; i < t.held; i++ {
		t.commuteDatum(i).releaseToken()
	}
	t.mu.Lock()
	t.gen.Add(1)
	succ := t.succ
	t.succ = nil
	t.mu.Unlock()
	for _, s := range succ {
		if s.deps.Add(-1) == 0 {
			g.ready(e, s)
		}
	}
	if countRecords {
		liveRecords.Add(-1) // before retire: the count never exceeds the window
	}
	g.retire(t)
	clear(succ)
	t.succ = succ[:0]
	g.freeTask(t)
}

// ready makes s ready on the releasing worker.
func (g *Graph) ready(e *rt.Edges, s *task) {
	rt.Impl.Ready(e, s.cls.tc, &s.loc, s.prio, s)
}

// checksum records the checksums of t's read-only data.
func (t *task) checksum() {
	t.sums = t.sums[:0]
	for _, u := range t.uses {
		if u.mode == ReadMode && u.d.sum != nil {
			t.sums = append(t.sums, u.d.sum())
		}
	}
}

// verifyReadOnly compares the checksums of t's read-only data with those taken before the
// body.
func (t *task) verifyReadOnly() error {
	k := 0
	for _, u := range t.uses {
		if u.mode == ReadMode && u.d.sum != nil {
			if u.d.sum() != t.sums[k] {
				return fmt.Errorf("%w: %s, declared read, changed", ErrReadOnlyWritten, u.d.name)
			}
			k++
		}
	}
	return nil
}
