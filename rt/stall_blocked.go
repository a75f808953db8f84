package rt

// Naming the tasks of a stall that received no input.
//
// A task that received no input has no record in its class's dependency table, and neither
// has one that ran with a goal of one arrival (its only arrival made it ready at once): the
// tables cannot tell them apart, so a stall on a pure cycle found nothing to name. The walk
// here tells them apart through predecessors. In a stalled taskpool a task X with a goal and
// no record either ran, and then every predecessor ran, or received nothing, and then no
// predecessor ran. So X is blocked exactly when its first predecessor P is: P waits in a
// table (blocked), P started with no input to wait for or was made ready (it ran, so X ran),
// or P has no record either and the question moves to P. A chain of such questions that
// comes back to a task it asked about is a cycle, none of whose tasks can ever run.
//
// Only for the error of a stalled taskpool: nothing arrives meanwhile. The walk is bounded
// (blockedScan instances, blockedDepth questions each), so a huge space costs little; what
// it does not reach is counted, not named.

import "fmt"

const (
	blockedScan  = 1 << 16 // instances looked at, over every class
	blockedDepth = 64      // predecessors followed from one instance
)

// instState is what a stalled taskpool's tables say of an instance.
type instState uint8

const (
	instNone    instState = iota // no record: received nothing, or ran on a single arrival
	instWaiting                  // a record: some inputs arrived
	instRan                      // made ready (no goal, or the dense table's marker)
)

// state returns what cs's tables say of the instance in l.
func (cs *classState) state(l *Locals) instState {
	tc, tp := cs.tc, cs.tp
	if tc.Startup != nil && tc.Startup(tp, l) || tc.Startup == nil && tc.goal(tp, l) == 0 {
		return instRan
	}
	key, ok := cs.keyOf(tp, l)
	if !ok {
		return instNone
	}
	if d := cs.dense.Load(); d != nil && key < uint64(len(d.slots)) {
		switch t := d.slots[key].Load(); {
		case t == &readyRecord:
			return instRan
		case t != nil:
			return instWaiting
		}
		return instNone
	}
	sh, h := cs.deps.shard(key)
	sh.mu.Lock()
	t := sh.get(key, h)
	sh.mu.Unlock()
	if t != nil {
		return instWaiting
	}
	return instNone
}

// firstPred is an EdgeVisitor that keeps the first task predecessor of an instance.
type firstPred struct {
	tc  *TaskClass
	l   Locals
	set bool
}

func (f *firstPred) Task(_, _ int, peer *TaskClass, _ int, l *Locals) {
	if !f.set {
		f.tc, f.l, f.set = peer, *l, true
	}
}

func (f *firstPred) Data(int, int, Collection, Index) {}

// blocked reports whether the instance in l of cs, which has no record, can never run, and
// whether the reason is a cycle (rather than a task waiting in a table).
func (tp *Taskpool) blocked(cs *classState, l Locals) (blocked, cycle bool) {
	seen := make([]vertexKey, 0, 8)
	for range blockedDepth {
		k := keyOfVertex(cs.tc, &l)
		for _, s := range seen {
			if s == k {
				return true, true
			}
		}
		seen = append(seen, k)
		var p firstPred
		tp.visitPredecessors(cs.tc, &l, &p)
		if !p.set || p.tc.ID < 0 || p.tc.ID >= len(tp.cs) || tp.cs[p.tc.ID].tc != p.tc {
			return false, false
		}
		cs, l = &tp.cs[p.tc.ID], p.l
		switch cs.state(&l) {
		case instWaiting:
			return true, false
		case instRan:
			return false, false
		}
	}
	return false, false
}

// describeBlocked names up to max local instances that received no input and never can, with
// their inputs' sources: "C(0): no input arrived, blocked by a cycle; inputs X <- C(1)".
func (tp *Taskpool) describeBlocked(max int) (named []string) {
	defer func() {
		if r := recover(); r != nil { // Space, Goal and Predecessors are generated code
			named = append(named, fmt.Sprintf("(looking for blocked tasks panicked: %v)", r))
		}
	}()
	budget := blockedScan
	for i := range tp.cs {
		cs := &tp.cs[i]
		tc := cs.tc
		if tc.NoStartup || !tc.hasPredecessors() {
			continue
		}
		var l Locals
		tc.Space(tp, &l, func(l *Locals) bool {
			if budget--; budget < 0 || len(named) >= max {
				return false
			}
			if !tp.isLocal(tc, l) || cs.state(l) != instNone {
				return true
			}
			blocked, cycle := tp.blocked(cs, *l)
			if !blocked {
				return true
			}
			why := "blocked by a task that waits"
			if cycle {
				why = "blocked by a cycle"
			}
			s := fmt.Sprintf("%s: no input arrived, %s", taskName(tc, l), why)
			t := Task{cs: cs, l: *l}
			if srcs := cs.sources(&t); srcs != "" {
				s += "; inputs " + srcs
			}
			named = append(named, s)
			return true
		})
	}
	return named
}
