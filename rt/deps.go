package rt

// Dependency tracking (docs/architecture.md decision 3).
//
// A task that is not ready yet lives in its class's dependency table, keyed by its
// mixed-radix key. An arrival (a predecessor releasing one output dependency) does:
//  1. compute the target's key and readiness goal (generated Goal);
//  2. if this arrival alone satisfies the goal (counter goal 1, or mask goal equal to this
//     flow's bit), build the task directly: it never enters the table (chains, broadcasts);
//  3. otherwise find or create the record (a Task from the worker's free list), attach the
//     copy to the flow, count the arrival down (or set the flow's bit), and when the goal is
//     met take the record out of the table and make the task ready.
//
// Two tables implement step 3 (the class's state picks one when the taskpool is added,
// startup.go):
//   - dense (most classes): one atomic slot per key of the parameters' bounding box, when that
//     box is not much larger than the class's instance count. No lock: the record is published
//     with a compare-and-swap, the arrivals count down with atomic read-modify-writes, and the
//     one that meets the goal replaces the slot with a marker, so that a late arrival is an
//     error (arriveDense). The table is allocated by the first arrival that needs a record,
//     and handed back to the Context for the next taskpool once every task has completed.
//   - sharded (classes with their own Key, huge or sparse boxes): 64 shards per class, each a
//     mutex and an open-addressed table (linear probing, backward-shift deletion, so a steady
//     state allocates nothing; Go maps may rehash on delete-heavy workloads). Shards are
//     padded to their own cache lines.
//
// The dense table exists because on a grid of CTL dependencies the sharded table's lock,
// unlock and probe dominate (the shard's cache lines bounce between the cores), and the dense
// one needs a single atomic per arrival; the rt bench suite compares the two.
//
// Each task becomes ready exactly once: in the sharded table the record is created and
// deleted under the shard lock and only the arrival that meets the goal deletes it; in the
// dense one a single compare-and-swap publishes the record and a single arrival sees the
// count reach zero (or the mask complete). Tasks ready at startup never enter a table.
//
// Local writers in a distributed run. Actors: the releasing worker, which walks the
// producer's successors (Edges.Task); the Remote, whose Activate and WriteBack the walk calls
// for successors and elements on other ranks; a local successor that receives the released
// version at an RW or WRITE flow (a writer); and the peer rank, which reads the value at once
// for an eager send, or later by pulling it from this rank's buffer (rendezvous).
//
// Invariant: no local writer of a version starts before every Remote call of the release
// that produced it has returned. A writer becomes ready only once the producer's arrival is
// made, and the walk holds that arrival back (Edges.late) and makes it after the walk
// (endLate); until then neither this worker's ready batch, a fanout, nor another worker's
// arrival at the same task can start it. So each Remote call sees the producer's values: an
// eager send copies them into its message, and a rendezvous send that finds a local writer
// copies them into a buffer of its own before it returns (rt/remote, send.go), since the
// peer pulls them after the writer may have started. Readers are not held back: they never
// change the buffer. With one rank, or a taskpool that never leaves its rank, nothing is held
// back.
//
// Rejected: holding every local arrival back (readers would wait for nothing); walking the
// successors twice, remote ones first (every release of a distributed run would pay for the
// few that have a local writer); making the writer wait for the peer's pull to complete (it
// needs a wait list on the copy and holds a worker's task back for a network round trip,
// where one copy of the value frees it at once).

import (
	"fmt"
	"sync"
	"sync/atomic"
)

const depShards = 64 // per class; a power of two

type depTable struct {
	shards [depShards]depShard
}

// depShard fills exactly two cache lines, so that neighbouring shards never share one. The
// most recently used record sits beside the mutex, so that repeated arrivals at one record (a
// gather, the second input of a grid task) touch the mutex's line and the task, not the table.
type depShard struct {
	mu     sync.Mutex
	hotKey uint64
	hot    *Task
	tab    openTable
	_      [128 - 8 - 16 - 32]byte
}

func (sh *depShard) get(key, h uint64) *Task {
	if sh.hot != nil && sh.hotKey == key {
		return sh.hot
	}
	t := sh.tab.get(key, h)
	if t != nil {
		sh.hotKey, sh.hot = key, t
	}
	return t
}

func (sh *depShard) put(key, h uint64, t *Task) {
	sh.tab.put(key, h, t)
	sh.hotKey, sh.hot = key, t
}

func (sh *depShard) del(key, h uint64) {
	sh.tab.del(key, h)
	if sh.hotKey == key {
		sh.hot = nil
	}
}

// shard returns the shard of a key and the key's hash, which the shard's table reuses.
func (d *depTable) shard(key uint64) (*depShard, uint64) {
	h := mix(key)
	return &d.shards[h>>58&(depShards-1)], h
}

// mix is a 64-bit finaliser (murmur3) spreading consecutive keys.
func mix(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

// openTable maps keys to tasks; a nil task marks an empty slot.
type openTable struct {
	slots []tabSlot
	n     int
}

type tabSlot struct {
	key uint64
	t   *Task
}

func (m *openTable) get(key, h uint64) *Task {
	if m.n == 0 {
		return nil
	}
	mask := uint64(len(m.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &m.slots[i]
		if s.t == nil {
			return nil
		}
		if s.key == key {
			return s.t
		}
	}
}

func (m *openTable) put(key, h uint64, t *Task) {
	if (m.n+1)*4 > len(m.slots)*3 {
		m.grow()
	}
	mask := uint64(len(m.slots) - 1)
	i := h & mask
	for m.slots[i].t != nil {
		i = (i + 1) & mask
	}
	m.slots[i] = tabSlot{key, t}
	m.n++
}

func (m *openTable) grow() {
	old := m.slots
	m.slots = make([]tabSlot, max(16, 2*len(old)))
	m.n = 0
	for _, s := range old {
		if s.t != nil {
			m.put(s.key, mix(s.key), s.t)
		}
	}
}

func (m *openTable) del(key, h uint64) {
	mask := uint64(len(m.slots) - 1)
	i := h & mask
	for m.slots[i].key != key || m.slots[i].t == nil {
		if m.slots[i].t == nil {
			return
		}
		i = (i + 1) & mask
	}
	// Backward-shift: move later entries of the probe run into the hole when their home slot
	// does not lie cyclically in (hole, j].
	for j := (i + 1) & mask; m.slots[j].t != nil; j = (j + 1) & mask {
		h := mix(m.slots[j].key) & mask
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			m.slots[i] = m.slots[j]
			i = j
		}
	}
	m.slots[i] = tabSlot{}
	m.n--
}

// Edges is the visitor that generated successor and predecessor iteration reports to. The
// generated function fills L with the peer instance's locals (its parameter slots, then the
// peer class's Complete) before each Task call. One Edges per worker is reused for every
// task, so the generated code must not keep it or its L.
type Edges struct {
	// L is the scratch Locals of the peer instance.
	L Locals

	w   *worker
	tp  *Taskpool
	src *Task
	err error

	// visit, when set, receives the calls instead of the release logic (Verify, DOT, tests).
	visit EdgeVisitor

	// n counts the local arrivals of the release; past fanInline they go into fan, the
	// arrivals deferred to another worker (fanout.go).
	n   int
	fan *fanout

	// late holds the release's local arrivals at flows that write, in a run with several
	// ranks: they are made once every remote send of the release has been made (endLate).
	late []lateArrival
}

// lateArrival is a local arrival at a writing flow, held back until the end of a release.
type lateArrival struct {
	c        *Copy
	peer     *TaskClass
	peerFlow int
	l        Locals
}

// endLate makes the arrivals that the release held back for its remote sends (see "Local
// writers in a distributed run" above).
func (e *Edges) endLate() {
	for i := range e.late {
		if a := &e.late[i]; e.err == nil { // else the taskpool fails: drop the arrivals
			e.n++
			e.err = e.w.arrive(e.tp, a.c, a.peer, a.peerFlow, &a.l)
		}
		e.late[i] = lateArrival{}
	}
	e.late = e.late[:0]
}

// EdgeVisitor receives the dependencies enumerated by a TaskClass's Successors or
// Predecessors when rt walks the graph without running it (Impl.VisitSuccessors, Verify).
type EdgeVisitor interface {
	// Task reports a dependency between flow of the visited instance and peerFlow of the
	// instance of peer whose locals are in l; l is only valid during the call.
	Task(flow, dep int, peer *TaskClass, peerFlow int, l *Locals)
	// Data reports a dependency between flow and element ix of collection c.
	Data(flow, dep int, c Collection, ix Index)
}

// Task reports the output (or input) dependency from flow of the current task to peerFlow of
// the instance of class peer whose locals are in e.L. dep is the dependency's index within the
// flow, for diagnostics.
func (e *Edges) Task(flow, dep int, peer *TaskClass, peerFlow int) {
	if e.visit != nil {
		e.visit.Task(flow, dep, peer, peerFlow, &e.L)
		return
	}
	if e.err != nil {
		return
	}
	tp := e.tp
	var c *Copy
	if flow >= 0 && flow < MaxFlows {
		c = e.src.flows[flow]
	}
	if c == nil && peerFlow >= 0 && peerFlow < len(peer.Flows) && peer.Flows[peerFlow].Access != CTL &&
		e.src.boundNull(flow) {
		e.err = errNullForwarded(e.src, flow, peer, peerFlow, &e.L)
		return
	}
	if tp.ctx.cfg.nranks > 1 && !tp.local {
		if peer.Affinity != nil {
			if coll, ix := peer.Affinity(tp, &e.L); coll != nil {
				if r := coll.RankOf(ix); r != tp.ctx.cfg.rank {
					e.err = e.w.activateRemote(e.src, flow, peer, peerFlow, &e.L, r)
					return
				}
			}
		}
		if c != nil && peerFlow >= 0 && peerFlow < len(peer.Flows) && peer.Flows[peerFlow].Access.writes() {
			// A local writer: it arrives after every send of this release (endLate).
			e.late = append(e.late, lateArrival{c: c, peer: peer, peerFlow: peerFlow, l: e.L})
			return
		}
	}
	if e.n >= fanInline && e.deferArrival(c, peer, peerFlow) {
		return
	}
	e.n++
	e.err = e.w.arrive(tp, c, peer, peerFlow, &e.L)
}

// Data reports a dependency between flow and element ix of collection c. For an output, rt
// writes the flow's data back into the element unless it already is the element's host copy.
func (e *Edges) Data(flow, dep int, c Collection, ix Index) {
	if e.visit != nil {
		e.visit.Data(flow, dep, c, ix)
		return
	}
	if e.err != nil {
		return
	}
	src := e.src.flows[flow]
	if src == nil {
		return
	}
	if r := c.RankOf(ix); r != e.tp.ctx.cfg.rank && !e.tp.local {
		e.err = e.w.writeBackRemote(e.src, flow, c, ix, r)
		return
	}
	d := c.DataOf(ix)
	if d == nil {
		e.err = fmt.Errorf("flow %s: collection has no element %v", e.src.cs.tc.Flows[flow].Name, ix)
		return
	}
	if dst := d.Host(); dst != src {
		if err := writeBack(dst, src); err != nil {
			e.err = fmt.Errorf("flow %s to %v: %w", e.src.cs.tc.Flows[flow].Name, ix, err)
		}
	}
}

// arrive delivers one dependency, carrying copy c (nil for CTL), to flow peerFlow of the
// local instance of peer whose locals are in l.
func (w *worker) arrive(tp *Taskpool, c *Copy, peer *TaskClass, peerFlow int, l *Locals) error {
	if peer.ID < 0 || peer.ID >= len(tp.cs) || tp.cs[peer.ID].tc != peer {
		return fmt.Errorf("%w: class %s (ID %d) is not in taskpool %s",
			ErrBadTaskClass, peer.Name, peer.ID, tp.name)
	}
	if peerFlow < 0 || peerFlow >= len(peer.Flows) {
		return fmt.Errorf("%w: %s has no flow %d", ErrDependency, taskName(peer, l), peerFlow)
	}
	cs := &tp.cs[peer.ID]
	key, ok := cs.keyOf(tp, l)
	if !ok {
		return fmt.Errorf("%w: %s", ErrOutsideSpace, taskName(peer, l))
	}
	goal := peer.goal(tp, l)
	bit := uint32(1) << uint(peerFlow)
	mask := peer.Readiness == Mask
	if (!mask && goal == 1) || (mask && goal == bit) {
		t := w.newTask()
		w.initTask(t, tp, cs, l, key)
		if c != nil {
			t.flows[peerFlow] = c
			t.held = bit
			c.retain()
		}
		w.makeReady(t)
		return nil
	}
	if goal == 0 || (mask && goal&bit == 0) {
		return fmt.Errorf("%w: %s flow %s receives an input it does not expect",
			ErrDependency, taskName(peer, l), peer.Flows[peerFlow].Name)
	}
	if cs.denseN > 0 {
		return w.arriveDense(tp, cs, c, peer, peerFlow, l, key, goal, mask)
	}
	sh, h := cs.deps.shard(key)
	sh.mu.Lock()
	t := sh.get(key, h)
	if t == nil {
		t = w.newTask()
		w.initTask(t, tp, cs, l, key)
		if mask {
			t.pending = 0
		} else {
			t.pending = goal
		}
		sh.put(key, h, t)
	}
	if c != nil {
		if t.held&bit != 0 {
			sh.mu.Unlock()
			return errTwice(peer, peerFlow, l, "data twice")
		}
		t.flows[peerFlow] = c
		t.held |= bit
		c.retain()
	}
	var ready bool
	if mask {
		if t.pending&bit != 0 {
			sh.mu.Unlock()
			return errTwice(peer, peerFlow, l, "two arrivals")
		}
		t.pending |= bit
		ready = t.pending == goal
	} else {
		t.pending--
		ready = t.pending == 0
	}
	if ready {
		sh.del(key, h)
	}
	sh.mu.Unlock()
	if ready {
		w.makeReady(t)
	}
	return nil
}

// denseTable is the dense dependency table of a class: a slot per key.
type denseTable struct{ slots []atomic.Pointer[Task] }

// denseKeep bounds the tables a Context keeps for reuse.
const denseKeep = 4

// newDense installs a dense table for cs (one a finished taskpool left, cleared, or a new
// one) and returns it, or the one a concurrent arrival installed first. Reuse keeps
// repeated runs of a program from allocating (and the garbage collector from scanning) a
// fresh table each time.
func (cs *classState) newDense() *denseTable {
	c := cs.tp.ctx
	var d *denseTable
	c.denseMu.Lock()
	for i, x := range c.denseFree {
		if len(x.slots) == cs.denseN {
			d = x
			c.denseFree = append(c.denseFree[:i], c.denseFree[i+1:]...)
			break
		}
	}
	c.denseMu.Unlock()
	if d != nil {
		clear(d.slots)
	} else {
		d = &denseTable{slots: make([]atomic.Pointer[Task], cs.denseN)}
	}
	if cs.dense.CompareAndSwap(nil, d) {
		return d
	}
	c.putDense(d)
	return cs.dense.Load()
}

// putDense keeps d for a later taskpool, unless enough are kept.
func (c *Context) putDense(d *denseTable) {
	c.denseMu.Lock()
	if len(c.denseFree) < denseKeep {
		c.denseFree = append(c.denseFree, d)
	}
	c.denseMu.Unlock()
}

// recycleDense hands the dense tables of a taskpool whose tasks have all completed to its
// Context: no arrival can reach them any more.
func (tp *Taskpool) recycleDense() {
	for i := range tp.cs {
		if d := tp.cs[i].dense.Swap(nil); d != nil {
			tp.ctx.putDense(d)
		}
	}
}

// readyRecord marks, in a dense table, the slot of an instance that became ready, so that a
// late arrival is reported instead of creating the instance again.
var readyRecord Task

// arriveDense is the table step of arrive for a class with a dense table. The first arrival
// builds the record with its own arrival already counted and its copy attached, then
// publishes it in the key's slot with a compare-and-swap; a creator that loses the race
// drops its record and arrives at the winner's. Later arrivals attach their copy, then count
// themselves with an atomic decrement (or an atomic or of the flow's bit); the one that
// meets the goal is the only one that sees it met, replaces the slot with a marker (a later
// arrival is an error) and makes the task ready. Sequentially consistent atomics order
// every attachment before that arrival.
func (w *worker) arriveDense(tp *Taskpool, cs *classState, c *Copy, peer *TaskClass, peerFlow int,
	l *Locals, key uint64, goal uint32, mask bool) error {
	d := cs.dense.Load()
	if d == nil {
		d = cs.newDense()
	}
	slot := &d.slots[key]
	bit := uint32(1) << uint(peerFlow)
	t := slot.Load()
	if t == nil {
		// The goal needs more than this arrival (arrive handled the others), so a fresh
		// record is never complete.
		nt := w.newTask()
		w.initTask(nt, tp, cs, l, key)
		if mask {
			nt.pending = bit
		} else {
			nt.pending = goal - 1
		}
		if c != nil {
			nt.flows[peerFlow] = c
			nt.held = bit
			c.retain()
		}
		if slot.CompareAndSwap(nil, nt) {
			return nil
		}
		w.freeTask(nt) // releases the copy it retained
		t = slot.Load()
	}
	if t == &readyRecord {
		return errTooMany(peer, peerFlow, l, goal)
	}
	if c != nil {
		if atomic.OrUint32(&t.held, bit)&bit != 0 {
			return errTwice(peer, peerFlow, l, "data twice")
		}
		t.flows[peerFlow] = c
		c.retain()
	}
	if mask {
		old := atomic.OrUint32(&t.pending, bit)
		if old&bit != 0 {
			return errTwice(peer, peerFlow, l, "two arrivals")
		}
		if old|bit != goal {
			return nil
		}
	} else if c == nil && w.id >= 0 && w.edges.src != nil && goal >= creditMax {
		return w.credit(slot, t, peer, peerFlow, goal)
	} else if n := atomic.AddUint32(&t.pending, ^uint32(0)); n != 0 {
		if n > goal { // wrapped below zero
			return errTooMany(peer, peerFlow, l, goal)
		}
		return nil
	}
	slot.Store(&readyRecord)
	w.makeReady(t)
	return nil
}

// boundNull reports whether t's input chain of flow selects NULL.
func (t *Task) boundNull(flow int) bool {
	tc := t.cs.tc
	for i := range tc.Inputs {
		if ch := &tc.Inputs[i]; ch.Flow == flow {
			return ch.Select(t.cs.tp, &t.l).kind == inputNull
		}
	}
	return false
}

// errNullForwarded reports an output of src's flow, which holds no data (its input was
// NULL), to a data flow of the instance of peer in l.
func errNullForwarded(src *Task, flow int, peer *TaskClass, peerFlow int, l *Locals) error {
	return fmt.Errorf("%w: %s flow %s forwards NULL to %s flow %s (NULL is an input only: the flow holds no data to send)",
		ErrNullForwarded, src, src.cs.tc.Flows[flow].Name, taskName(peer, l), peer.Flows[peerFlow].Name)
}

// errTooMany reports an arrival at an instance whose goal was already met (dense tables
// only: the sharded table has forgotten the instance by then).
func errTooMany(peer *TaskClass, peerFlow int, l *Locals, goal uint32) error {
	return fmt.Errorf("%w: %s flow %s receives more inputs than its goal (%d)",
		ErrDependency, taskName(peer, l), peer.Flows[peerFlow].Name, goal)
}

// errTwice reports a second copy ("data twice") or a second arrival ("two arrivals") on one
// flow.
func errTwice(peer *TaskClass, peerFlow int, l *Locals, what string) error {
	return fmt.Errorf("%w: %s flow %s receives %s",
		ErrDependency, taskName(peer, l), peer.Flows[peerFlow].Name, what)
}

// initTask fills a fresh task for the instance in l and computes its priority.
func (w *worker) initTask(t *Task, tp *Taskpool, cs *classState, l *Locals, key uint64) {
	t.cs, t.key, t.hi = cs, key, cs.tc.HighPriority
	copy(t.l[:cs.nlocals], l[:cs.nlocals])
	t.prio = tp.prio
	if cs.tc.Priority != nil {
		t.prio += cs.tc.Priority(tp, &t.l)
	}
}

// Arrival credits. Many CTL arrivals at one record (a gather: every task of a class releasing
// the same sink) would otherwise each decrement the record's count with an atomic operation on
// one cache line, which all cores fight over. A worker instead counts, in its credit,
// consecutive CTL arrivals at one published dense record whose goal is at least creditMax
// while it runs tasks of one class, and applies them with one atomic subtraction: when
// creditMax have gathered, when an arrival goes to another record, before it runs a task of
// another class, before it parks, and when it flushes its next_task slot (device managers). So
// a record waits for a worker's credit at most as long as that worker keeps running tasks of
// the class that produced it. Only records that already exist gather credits: the first
// arrival publishes the record as before, and a record can become ready only once every credit
// is applied, so it cannot be recycled meanwhile; a credit found applied to a record no longer
// in its slot means more arrivals than the goal, reported as usual. A credit on a record of a
// failed taskpool is dropped unread: the record may already be scrubbed (credTP keeps the
// scrub waiting until then).

// creditMax bounds the arrivals a worker gathers before applying them. Only records whose
// goal is at least as large gather credits: a record with a few inputs sees little
// contention, and a credit held on its last input would make it wait while the worker runs
// on, maybe for a whole long task of the same class.
const creditMax = 64

// arrivalCredit is a worker's pending arrivals at one dense record.
type arrivalCredit struct {
	t        *Task
	slot     *atomic.Pointer[Task]
	src      *classState // the class whose tasks produced the arrivals
	n        uint32
	goal     uint32
	peerFlow int
}

// credit counts one CTL arrival at the published record t of a dense table (in slot).
func (w *worker) credit(slot *atomic.Pointer[Task], t *Task, peer *TaskClass, peerFlow int, goal uint32) error {
	cr := &w.cred
	if cr.t == t {
		if cr.n++; cr.n >= creditMax {
			return w.applyCredit()
		}
		return nil
	}
	err := w.applyCredit()
	src := w.edges.src.cs
	w.cred = arrivalCredit{t: t, slot: slot, src: src, n: 1, goal: goal, peerFlow: peerFlow}
	w.credTP.Store(src.tp)
	return err
}

// applyCredit applies the worker's credit, making its record ready if it was the last input.
func (w *worker) applyCredit() error {
	cr := w.cred
	if cr.t == nil {
		return nil
	}
	w.cred = arrivalCredit{}
	defer w.credTP.Store(nil)
	if cr.src.tp.failed.Load() {
		return nil
	}
	t := cr.t
	if cr.slot.Load() != t { // made ready without these arrivals: there are too many
		return errTooMany(t.cs.tc, cr.peerFlow, &t.l, cr.goal)
	}
	n := atomic.AddUint32(&t.pending, -cr.n)
	if n == 0 {
		cr.slot.Store(&readyRecord)
		w.makeReady(t)
		return nil
	}
	if n > cr.goal { // wrapped below zero
		return errTooMany(t.cs.tc, cr.peerFlow, &t.l, cr.goal)
	}
	return nil
}

// settleCredit applies the worker's credit outside a release and hands what became ready to
// the next_task slot and the scheduler. An error fails the record's taskpool.
func (w *worker) settleCredit() {
	if w.cred.t == nil {
		return
	}
	tp := w.cred.src.tp
	if err := w.applyCredit(); err != nil {
		tp.fail(&TaskError{Taskpool: tp.name, Task: "arrivals", Err: err})
	}
	w.flushReady()
}
