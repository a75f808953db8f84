package dynamic

// Graphs across ranks.
//
// Actors: the inserting goroutine of every rank, which runs the same insertion sequence
// everywhere (holding Graph.mu for each task); the workers of each rank, which run the tasks
// placed there and the transfer tasks below; each rank's remote.Node, whose comm goroutine
// hands arriving data to Receive.
//
// The protocol, as StarPU-MPI and PaRSEC's DTD run it:
//  1. Placement. Every rank computes the same rank for each task (rankOf): On, else the owner
//     of the Affinity datum, else the owner of the first datum it writes, else of the first
//     it accesses, else rank 0. A tile or block is owned by its collection's RankOf, a
//     registered value by rank 0.
//  2. Versions. Every rank keeps, per datum, under Graph.mu: the rank that holds its newest
//     version (the rank of its last writer, or its owner), a version number that each write
//     increments, and the ranks that hold that version. Ranks that do not run a task still
//     update this state, so that each knows where the next version lives.
//  3. Transfers. A task on rank R that reads a datum whose newest version R lacks causes one
//     transfer of (datum, version) from the holder H to R, and R then holds the version too:
//     one transfer per version and rank, however many tasks on R read it. On H it is a send
//     task that reads the datum locally (it waits for the writer of the version, and a later
//     writer there waits for it); on R a receive task that writes the datum locally (it waits
//     for the local readers of the old contents, and for the arrival), before the task that
//     needs it. Other ranks insert nothing. The data travel through rt/remote (SendData,
//     Receiver): eager up to its threshold, a Get from the holder's memory above it, in
//     which case the send task completes only once the Get has (rt.Async), so the memory
//     does not change under it.
//  4. Flush. Wait (and Flush, earlier) transfers every datum whose owner lacks its newest
//     version from the holder to the owner, so that collections and registered values hold
//     the results on their owners when Wait returns.
//  5. Termination and errors are rt/remote's for taskpools: a receive task is counted by its
//     taskpool, so a rank's graph ends once its tasks are done and its offered data fetched;
//     a failure anywhere reaches every rank (ErrRemoteFailure), a lost peer fails every rank
//     (ce.ErrPeerLost).
//
// Invariants: the per-datum state is the same on every rank after every insertion; a
// transfer key (datum, version) is sent at most once to a rank, and exactly one receive task
// there waits for it; arrivals before that task is inserted are kept until it is.
//
// Rejected designs: broadcasting each task's completion to every rank (the owner-computes
// rule makes every rank know the location of each version without a message); letting a
// writer on another rank write straight into the owner's memory (it would race with the
// owner's readers); commute groups across ranks (a token shared by ranks needs a distributed
// mutex: across ranks Commute orders its tasks as ReadWrite does, in insertion order, which
// is one of the orders Commute allows); tasks inserted by bodies (the other ranks could not
// see them: they fail with ErrNestedAcrossRanks).

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/remote"
)

// Errors of graphs across ranks.
var (
	// ErrNoNode: a graph on a Context of several ranks created without Distributed.
	ErrNoNode = errors.New("dynamic: the context runs several ranks; create the graph with Distributed")
	// ErrRank: On names a rank outside the job, or a datum's owner is outside it.
	ErrRank = errors.New("dynamic: rank out of range")
	// ErrNestedAcrossRanks: a body inserted a task into a graph across ranks, which the other
	// ranks could not record.
	ErrNestedAcrossRanks = errors.New("dynamic: tasks cannot insert tasks into a graph across ranks")
	// ErrGPUAcrossRanks: a task with a GPU body inserted into a graph across ranks.
	ErrGPUAcrossRanks = errors.New("dynamic: GPU bodies run on graphs of one rank")
)

// Distributed runs the graph across the ranks of n, the remote.Node of the Context the graph
// is created on (remote.Run's Job.Node). Every rank creates its graphs in the same order and
// inserts the same tasks; each task runs on one rank (On, Affinity), and data move between
// ranks as the tasks need them.
func Distributed(n *remote.Node) Option {
	return func(c *config) error {
		if n == nil {
			return fmt.Errorf("%w: nil remote.Node", rt.ErrBadOption)
		}
		c.node = n
		return nil
	}
}

type (
	onArg       int
	affinityArg struct{ d *datum }
)

func (onArg) arg()       {}
func (affinityArg) arg() {}

// On runs the task on rank r (from 0 to Graph.Size()-1).
func On(r int) Arg { return onArg(r) }

// Affinity runs the task on the rank that owns d.
func Affinity[T any](d *Data[T]) Arg { return affinityArg{inner(d)} }

// placeArg records a placement argument of t. g.mu is held.
func (t *task) placeArg(a Arg) error {
	switch a := a.(type) {
	case onArg:
		if int(a) < 0 || int(a) >= t.g.Size() {
			return fmt.Errorf("%w: On(%d) in a graph of %d ranks", ErrRank, int(a), t.g.Size())
		}
		t.on = int(a) + 1
	case affinityArg:
		switch {
		case a.d == nil:
			return fmt.Errorf("%w: Affinity", ErrNilData)
		case a.d.g != t.g:
			return fmt.Errorf("%w: %s", ErrForeignData, a.d.name)
		}
		t.aff = a.d
	}
	return nil
}

// Rank returns this rank, 0 on a graph of one rank.
func (g *Graph) Rank() int {
	if g.dist == nil {
		return 0
	}
	return g.dist.me
}

// Size returns the number of ranks the graph runs on.
func (g *Graph) Size() int {
	if g.dist == nil {
		return 1
	}
	return g.dist.size
}

// Flush inserts, on a graph across ranks, the transfers that return every datum's newest
// version to its owner, as Wait does before it closes the graph; it does not wait for them.
// Every rank calls it at the same point of the insertion sequence. On one rank it does
// nothing.
func (g *Graph) Flush() error {
	if err := g.tp.Err(); err != nil {
		return err
	}
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return ErrGraphDone
	}
	moved := g.dist.flush()
	g.mu.Unlock()
	g.dist.start(moved)
	return g.flushDevices()
}

// ranks is a graph's state across ranks, and the Receiver of its data.
type ranks struct {
	g        *Graph
	node     *remote.Node
	me, size int
	colls    atomic.Uint64 // collections numbered so far
	nvalues  uint64        // registered values numbered so far (under Graph.mu)
	data     []*datum      // every datum with a rankState, for flush (under Graph.mu)
	send     *class        // the transfer tasks' classes, made on first use (under Graph.mu)
	recv     *class

	mu      sync.Mutex // arrivals and the receive tasks waiting for them
	arrived map[remote.DataKey]arrival
	waiting map[remote.DataKey]*task
}

type arrival struct {
	cp  *rt.Copy
	src int
}

// rankState is where a datum's versions are (protocol step 2); under Graph.mu.
type rankState struct {
	owner   int
	wire    uint64 // the datum's number, the same on every rank
	holder  int    // the rank that holds the newest version
	version uint64
	has     []uint64 // bit r: rank r holds the newest version
}

func (s *rankState) holds(r int) bool { return s.has[r/64]&(1<<(r%64)) != 0 }
func (s *rankState) add(r int)        { s.has[r/64] |= 1 << (r % 64) }

// only leaves r as the one rank holding the newest version.
func (s *rankState) only(r int) {
	clear(s.has)
	s.add(r)
}

// xfer is what a transfer task moves: version key of d, to or from peer.
type xfer struct {
	d       *datum
	key     remote.DataKey
	peer    int
	sending bool
	offered bool     // send: the data went out; the hook runs again once the Get is done
	cp      *rt.Copy // receive: the arrived copy
	src     int      // receive: the rank it came from
}

// addRanks adds g's taskpool to c through n.
func (g *Graph) addRanks(c *rt.Context, n *remote.Node) error {
	g.dist = &ranks{g: g, node: n, me: n.Rank(), size: n.Size(),
		arrived: map[remote.DataKey]arrival{}, waiting: map[remote.DataKey]*task{}}
	return n.AddGraph(c, g.tp, g.dist)
}

// newCollection numbers a matrix or vector of the graph (0 on one rank).
func (x *ranks) newCollection() uint64 {
	if x == nil {
		return 0
	}
	return x.colls.Add(1)
}

// landing returns a datum of n float64 for the versions of an element stored on another
// rank, or nil on one rank.
func (x *ranks) landing(n int, key uint64) *rt.Data {
	if x == nil {
		return nil
	}
	return rt.NewData(key, make([]float64, n))
}

// track gives d, element key of collection coll owned by rank owner, its rankState. g.mu is
// held.
func (x *ranks) track(d *datum, owner int, coll, key uint64) {
	if x == nil {
		return
	}
	s := &rankState{owner: owner, holder: owner, wire: coll<<40 | key, has: make([]uint64, (x.size+63)/64)}
	if owner >= 0 && owner < x.size {
		s.add(owner)
	}
	d.rk = s
	x.data = append(x.data, d)
}

// trackValue tracks a registered value: rank 0 owns it. g.mu is held.
func (x *ranks) trackValue(d *datum) {
	if x == nil {
		return
	}
	x.track(d, 0, 0, x.nvalues)
	x.nvalues++
}

// rankOf returns the rank that runs t (protocol step 1).
func (x *ranks) rankOf(t *task) int {
	switch {
	case t.on > 0:
		return t.on - 1
	case t.aff != nil:
		return t.aff.rk.owner
	}
	for _, u := range t.uses {
		if u.mode.writes() {
			return u.d.rk.owner
		}
	}
	for _, u := range t.uses {
		if u.mode != ScratchMode {
			return u.d.rk.owner
		}
	}
	return 0
}

// place records t's accesses (protocol steps 2 and 3) and reports whether t runs here; it
// returns the transfer tasks it linked, for start. Nothing changes when it fails. g.mu is
// held.
func (x *ranks) place(t *task) (moved []*task, here bool, err error) {
	r := x.rankOf(t)
	if r < 0 || r >= x.size {
		return nil, false, fmt.Errorf("%w: %s runs on rank %d of %d", ErrRank, t.Name(), r, x.size)
	}
	for _, u := range t.uses {
		s := u.d.rk
		if u.mode == ScratchMode || u.mode == WriteMode || s.holds(r) {
			continue
		}
		if s.owner < 0 || s.owner >= x.size {
			return nil, false, fmt.Errorf("%w: %s is owned by rank %d of %d", ErrRank, u.d.name, s.owner, x.size)
		}
		if _, err := remote.Bytes(u.d.d.Host().Value); err != nil {
			return nil, false, fmt.Errorf("%s read on rank %d: %w", u.d.name, r, err)
		}
	}
	for i := range t.uses {
		u := &t.uses[i]
		if u.mode == CommuteMode {
			u.mode = ReadWriteMode // no commute group across ranks
		}
		if u.mode == ScratchMode {
			continue
		}
		s := u.d.rk
		if u.mode != WriteMode && !s.holds(r) {
			moved = x.transfer(moved, t.seq, t.prio, u.d, s.holder, r)
		}
		if u.mode.writes() {
			s.version++
			s.holder = r
			s.only(r)
		}
	}
	return moved, r == x.me, nil
}

// transfer moves the newest version of d from rank from to rank to: a send task here when
// this rank is from, a receive task when it is to. g.mu is held.
func (x *ranks) transfer(moved []*task, seq int64, prio int32, d *datum, from, to int) []*task {
	s := d.rk
	key := remote.DataKey{Datum: s.wire, Version: s.version}
	s.add(to)
	if x.me != from && x.me != to {
		return moved
	}
	g := x.g
	t := g.newTask()
	t.g, t.run, t.prio, t.nested, t.commutes, t.held, t.body = g, nil, prio, false, 0, 0, nil
	t.on, t.aff = 0, nil
	t.seq = seq
	t.uses = append(t.uses[:0], use{d, ReadMode})
	t.x = &xfer{d: d, key: key, peer: to, sending: true}
	if x.me == to {
		t.uses[0].mode = WriteMode
		t.x.peer, t.x.sending = from, false
	}
	t.cls = x.class(t.x.sending)
	t.deps.Store(1)
	if !t.x.sending {
		x.mu.Lock()
		if a, ok := x.arrived[key]; ok {
			delete(x.arrived, key)
			t.x.cp, t.x.src = a.cp, a.src
		} else {
			if x.waiting[key] != nil {
				panic(fmt.Sprintf("dynamic: two receive tasks for datum %d version %d", key.Datum, key.Version))
			}
			t.deps.Add(1) // the arrival
			x.waiting[key] = t
		}
		x.mu.Unlock()
	}
	rt.Impl.AddTasks(g.tp, t.cls.tc, 1)
	g.inserted.Store(g.inserted.Load() + 1)
	t.link()
	if countRecords {
		liveRecords.Add(1)
	}
	return append(moved, t)
}

// flush returns every datum's newest version to its owner (protocol step 4). g.mu is held.
func (x *ranks) flush() []*task {
	if x == nil {
		return nil
	}
	var moved []*task
	for _, d := range x.data {
		if s := d.rk; s.owner >= 0 && s.owner < x.size && !s.holds(s.owner) {
			moved = x.transfer(moved, x.g.seq, 0, d, s.holder, s.owner)
		}
	}
	return moved
}

// start drops the insertion's hold on the transfer tasks that place or flush linked, making
// ready those with nothing left to wait for.
func (x *ranks) start(moved []*task) {
	for _, t := range moved {
		if t.deps.Add(-1) == 0 {
			x.schedule(t)
		}
	}
}

func (x *ranks) schedule(t *task) {
	var l rt.Locals
	l[0] = int(t.seq)
	_ = rt.Impl.Schedule(x.g.tp, t.cls.tc, &l, t.prio, t) // fails only once the graph has failed
}

// class returns the class of send or receive tasks, registering it on first use. g.mu is
// held.
func (x *ranks) class(sending bool) *class {
	p, name := &x.recv, "dynamic:recv"
	if sending {
		p, name = &x.send, "dynamic:send"
	}
	if *p == nil {
		c := &class{name: name}
		// High priority: a transfer task goes before every ready task of the graph, whatever
		// their priorities. A send's priority is that of the remote task that needs the
		// version, which a local task of the same step outranks (the TRSMs of a Cholesky
		// panel, all on the rank that owns the column, over the remote SYRK that needs the
		// first of them): a send waiting behind them leaves the peer idle, where a PTG
		// producer sends as it completes. A receive only copies and releases the reader, which
		// then ranks by its own priority. Among transfers, the readers' priorities order them.
		c.tc = &rt.TaskClass{Name: name, Locals: []string{"seq"}, Params: []int{0},
			Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: x.hook}},
			Successors:   x.g.release, HighPriority: true}
		if err := rt.Impl.AddClass(x.g.tp, c.tc); err != nil {
			// The taskpool failed: the task is never scheduled, and the graph's error is what
			// the inserter sees next.
			c.tc.ID = -1
		}
		*p = c
	}
	return *p
}

// hook runs a transfer task: a send, or the copy of an arrived version into the datum.
func (x *ranks) hook(rtask *rt.Task) error {
	t := rt.Impl.Payload(rtask).(*task)
	xf := t.x
	if xf.sending {
		if xf.offered {
			return nil // rescheduled: the peer's Get is done
		}
		xf.offered = true
		pending, err := x.node.SendData(x.g.tp, xf.key, xf.d.d.Host(), xf.peer, t.prio, func() { rtask.Reschedule(0) })
		if err != nil {
			return fmt.Errorf("%s to rank %d: %w", xf.d.name, xf.peer, err)
		}
		if pending {
			return rt.Async
		}
		return nil
	}
	cp := xf.cp
	xf.cp = nil
	defer rt.Impl.Release(cp)
	if xf.src != xf.peer {
		return fmt.Errorf("%w: %s version %d came from rank %d, expected from rank %d",
			remote.ErrMalformed, xf.d.name, xf.key.Version, xf.src, xf.peer)
	}
	dst := xf.d.d.Host().Value
	if reflect.TypeOf(dst) != reflect.TypeOf(cp.Value) {
		return fmt.Errorf("%w: %s is a %T here, rank %d sent a %T", remote.ErrTypeMismatch, xf.d.name, dst, xf.src, cp.Value)
	}
	db, err := remote.Bytes(dst)
	if err != nil {
		return err
	}
	sb, err := remote.Bytes(cp.Value)
	if err != nil {
		return err
	}
	if len(db) != len(sb) {
		return fmt.Errorf("%w: %s holds %d bytes here, rank %d sent %d", remote.ErrSizeMismatch, xf.d.name, len(db), xf.src, len(sb))
	}
	copy(db, sb)
	return nil
}

// Receive implements remote.Receiver: version key of a datum arrived from rank src. The
// receive task waiting for it becomes ready; one not inserted yet finds it on insertion.
func (x *ranks) Receive(src int, key remote.DataKey, cp *rt.Copy) error {
	rt.Impl.Retain(cp)
	x.mu.Lock()
	t := x.waiting[key]
	if t == nil {
		if _, dup := x.arrived[key]; dup {
			x.mu.Unlock()
			rt.Impl.Release(cp)
			return fmt.Errorf("%w: datum %d version %d arrived twice, the second time from rank %d",
				remote.ErrMalformed, key.Datum, key.Version, src)
		}
		x.arrived[key] = arrival{cp, src}
		x.mu.Unlock()
		return nil
	}
	delete(x.waiting, key)
	x.mu.Unlock()
	t.x.cp, t.x.src = cp, src
	if t.deps.Add(-1) == 0 {
		x.schedule(t)
	}
	return nil
}
