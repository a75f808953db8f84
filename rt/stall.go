package rt

// Stall detection.
//
// A taskpool stalls when it cannot progress although tasks remain: no task is ready or
// running, no task is owned by a device or an Async body, no communication is in flight.
// It happens when an input that a task waits for is never sent (a graph that Verify would
// reject). Without detection the taskpool would hang until its caller's deadline.
//
// The last worker to park takes a snapshot: the park count, the tasks away (Context.away)
// and the pending count of each running taskpool that has no action in flight. If after
// stallTimeout no worker has parked again (so none was woken), every worker is still parked,
// nothing is away, and a taskpool's pending count has not changed, nothing can change it any
// more: that taskpool fails with ErrStalled, naming up to 10 tasks that wait in its dependency
// tables and their missing inputs, up to 10 tasks that wait for an activation because no
// guard of one of their data flows holds (TaskClass.startsReady), and the first output that
// went nowhere because its target lies between the steps of a range (TaskClass.OffStep). A body that runs, however long, keeps its worker unparked;
// a task a device or an Async body owns is away: neither is ever taken for a stall.
//
// A rank of a distributed run cannot tell a stall from a wait for another rank's data, so
// detection is off with a Remote or several ranks.

import (
	"fmt"
	"reflect"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"
)

// defaultStallTimeout is how long every worker must have been parked, with tasks remaining
// and none away, before a taskpool is declared stalled.
const defaultStallTimeout = 500 * time.Millisecond

// maxStalledNamed bounds the waiting tasks an ErrStalled error names.
const maxStalledNamed = 10

// stallTimeout sets how long a taskpool must look stalled before it fails with ErrStalled
// (defaultStallTimeout); 0 turns stall detection off.
func stallTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("%w: stallTimeout(%v): want >= 0", ErrBadOption, d)
		}
		c.stall = d
		return nil
	}
}

// stallSnap is what the last worker to park saw.
type stallSnap struct {
	parks uint64
	tps   []*Taskpool
	left  []int64
}

// sleep parks the worker until it is woken; false when the Context closes. The last worker
// to park watches for a stall meanwhile.
func (w *worker) sleep() bool {
	c := w.c
	parks := c.parks.Add(1)
	var snap *stallSnap
	var timer *time.Timer
	var fire <-chan time.Time
	if c.nidle.Load() == int32(len(c.workers)) {
		if snap = c.stallCandidates(parks); snap != nil {
			timer = time.NewTimer(c.cfg.stall)
			fire = timer.C
		}
	}
	for {
		select {
		case <-w.wake:
			if timer != nil {
				timer.Stop()
			}
			return true
		case <-c.quit:
			if timer != nil {
				timer.Stop()
			}
			return false
		case <-fire:
			fire = nil
			if snap = c.checkStall(snap); snap != nil {
				timer.Reset(c.cfg.stall)
				fire = timer.C
			}
		}
	}
}

// stallCandidates returns the running taskpools that may be stalled, or nil.
func (c *Context) stallCandidates(parks uint64) *stallSnap {
	if c.cfg.stall <= 0 || c.cfg.remote != nil || c.cfg.nranks > 1 || c.away() != 0 {
		return nil
	}
	var s *stallSnap
	c.mu.Lock()
	for tp := range c.tps {
		if n := tp.pending.Load(); n > 0 && tp.actions.Load() == 0 && !tp.failed.Load() {
			if s == nil {
				s = &stallSnap{parks: parks}
			}
			s.tps = append(s.tps, tp)
			s.left = append(s.left, n)
		}
	}
	c.mu.Unlock()
	return s
}

// checkStall fails the taskpools of s that have not moved since s was taken. A taskpool
// whose pending count moved while every worker stayed parked was changed from outside the
// workers (the goroutine in Context.Add releasing its hold late): checkStall returns a new
// snapshot of those, to be checked after another stallTimeout, and nil when there are none
// (a parked worker must not keep the taskpools alive).
func (c *Context) checkStall(s *stallSnap) *stallSnap {
	if c.parks.Load() != s.parks || c.nidle.Load() != int32(len(c.workers)) || c.away() != 0 {
		return nil
	}
	var again *stallSnap
	for i, tp := range s.tps {
		if tp.actions.Load() != 0 || tp.failed.Load() {
			continue
		}
		switch n := tp.pending.Load(); {
		case n == s.left[i]:
			// The report goes to Wait's caller, as the error; the log only records the
			// event. Logging the report as well printed it twice, the second time with
			// its lines escaped into one slog value.
			c.log.Error("rt: taskpool stalled; Wait returns the report", "taskpool", tp.name, "tasks_left", n)
			tp.fail(tp.stallError(n))
		case n > 0:
			if again == nil {
				again = &stallSnap{parks: s.parks}
			}
			again.tps = append(again.tps, tp)
			again.left = append(again.left, n)
		}
	}
	return again
}

// stallError describes a stalled taskpool: the tasks left, and up to maxStalledNamed tasks
// that wait in its dependency tables with the inputs they miss.
func (tp *Taskpool) stallError(left int64) error {
	var named []string
	waiting := 0
	tp.eachClass(func(cs *classState) {
		cs.eachWaiting(func(t *Task) {
			waiting++
			if len(named) < maxStalledNamed {
				named = append(named, cs.describeWaiting(t))
			}
		})
	})
	var b strings.Builder
	fmt.Fprintf(&b, "taskpool %s: %d tasks remain, none ready, running or away", tp.name, left)
	if waiting > 0 {
		fmt.Fprintf(&b, "; %d wait for missing inputs", waiting)
		if waiting > len(named) {
			fmt.Fprintf(&b, " (first %d)", len(named))
		}
		b.WriteString(":\n\t" + strings.Join(named, "\n\t"))
	}
	if rest := left - int64(waiting); rest > 0 {
		// Tasks of a cycle receive nothing, so no table holds them (stall_blocked.go).
		blocked := tp.describeBlocked(maxStalledNamed - len(named))
		if waiting > 0 {
			b.WriteString("\n\tand")
		} else {
			b.WriteString(";")
		}
		fmt.Fprintf(&b, " %d tasks received no input", rest)
		if waiting == 0 {
			b.WriteString(" (if they are on a branch that no body takes, the body that chooses must skip them with tp.SkipTasks)")
		}
		if len(blocked) > 0 {
			b.WriteString(", among them:\n\t" + strings.Join(blocked, "\n\t"))
		}
	}
	if unguarded, n := tp.unguarded(); n > 0 {
		fmt.Fprintf(&b, "\n%d tasks have a data flow none of whose input guards holds; each waits for an activation "+
			"that would evaluate them again (a body that chooses a branch calls tp.SkipTasks for the tasks it leaves out)", n)
		if n > len(unguarded) {
			fmt.Fprintf(&b, " (first %d)", len(unguarded))
		}
		b.WriteString(":\n\t" + strings.Join(unguarded, "\n\t"))
	}
	if d := tp.dropped.Load(); d != nil {
		fmt.Fprintf(&b, "\nan output went nowhere: %s flow %s -> %s %s: %s %s",
			d.src, flowName(d.srcClass, d.flow), flowName(d.peer, d.peerFlow), taskName(d.peer, &d.l),
			taskName(d.peer, &d.l), betweenSteps(d.peer.Name, d.param))
	}
	return fmt.Errorf("%w: %s", ErrStalled, b.String())
}

// droppedOutput is an output dependency whose target lies outside its class's space but
// within the bounds of its parameters.
type droppedOutput struct {
	src      string
	srcClass *TaskClass
	flow     int
	peer     *TaskClass
	peerFlow int
	l        Locals
	param    string // the parameter between whose steps the target lies
}

// noteDropped keeps the first output of src dropped because its target, the instance of
// peer in l, lies between the steps of one of its parameters' ranges.
func (tp *Taskpool) noteDropped(src *Task, flow int, peer *TaskClass, peerFlow int, l *Locals) {
	if peer.OffStep == nil || tp.dropped.Load() != nil {
		return
	}
	if p, ok := offStep(tp, peer, l); ok {
		d := &droppedOutput{src: src.String(), srcClass: src.Class(), flow: flow, peer: peer, peerFlow: peerFlow, l: *l, param: p}
		tp.dropped.CompareAndSwap(nil, d)
	}
}

// maxUnguardedWalk bounds the instances of a class that the stall report walks.
const maxUnguardedWalk = 1 << 20

// unguarded walks the local instances of the classes that can receive arrivals (at most
// maxUnguardedWalk each) and names up to maxStalledNamed of those with a data flow whose input
// guards all fail, which wait for an activation (TaskClass.startsReady); it returns their
// number too. Only for a stalled taskpool.
func (tp *Taskpool) unguarded() (named []string, n int) {
	for i := range tp.cs {
		cs := &tp.cs[i]
		tc := cs.tc
		if tc.Space == nil || tc.Inputs == nil || !tc.hasGoal() {
			continue
		}
		func() {
			defer func() { recover() }() // guards are user code; the report goes on without them
			var l Locals
			walked := 0
			tc.Space(tp, &l, func(l *Locals) bool {
				if walked++; walked > maxUnguardedWalk {
					return false
				}
				if !tp.isLocal(tc, l) {
					return true
				}
				for j := range tc.Inputs {
					if ch := &tc.Inputs[j]; ch.Select(tp, l).kind == inputNone {
						if n++; len(named) < maxStalledNamed {
							named = append(named, fmt.Sprintf("%s: flow %s: no input guard holds (%s)",
								taskName(tc, l), tc.Flows[ch.Flow].Name, ch.Pos))
						}
						break
					}
				}
				return true
			})
		}()
	}
	return named, n
}

// eachWaiting calls f for every task record in cs's dependency table. Only for a stalled
// taskpool: nothing arrives meanwhile.
func (cs *classState) eachWaiting(f func(*Task)) {
	if d := cs.dense.Load(); d != nil {
		for i := range d.slots {
			if t := d.slots[i].Load(); t != nil && t != &readyRecord {
				f(t)
			}
		}
	}
	for i := range cs.deps.shards {
		sh := &cs.deps.shards[i]
		sh.mu.Lock()
		for _, s := range sh.tab.slots {
			if s.t != nil {
				f(s.t)
			}
		}
		sh.mu.Unlock()
	}
}

// describeWaiting names a waiting task, what arrived of its goal, and its inputs' sources:
// "T(2): 1 of 2 inputs arrived; inputs X <- T(1)".
func (cs *classState) describeWaiting(t *Task) (out string) {
	tc, tp := cs.tc, cs.tp
	defer func() {
		if r := recover(); r != nil { // Goal is generated code with user expressions
			out = fmt.Sprintf("%s: (describing it panicked: %v)", t, r)
		}
	}()
	goal := tc.goal(tp, &t.l)
	var b strings.Builder
	b.WriteString(t.String())
	if tc.Readiness == Mask {
		var missing []string
		for i := range tc.Flows {
			if bit := uint32(1) << uint(i); goal&bit != 0 && atomic.LoadUint32(&t.pending)&bit == 0 {
				missing = append(missing, tc.Flows[i].Name)
			}
		}
		fmt.Fprintf(&b, ": inputs %s missing", strings.Join(missing, ", "))
	} else {
		fmt.Fprintf(&b, ": %d of %d inputs arrived", goal-atomic.LoadUint32(&t.pending), goal)
	}
	if srcs := cs.sources(t); srcs != "" {
		b.WriteString("; inputs " + srcs)
	}
	return b.String()
}

// sources lists the input dependencies of t whose flow holds no data yet, from the class's
// generated Predecessors: "X <- T(1), Y <- C(1, 2)".
func (cs *classState) sources(t *Task) (out string) {
	tc := cs.tc
	if !tc.hasPredecessors() {
		return ""
	}
	defer func() {
		if r := recover(); r != nil {
			out = fmt.Sprintf("(predecessors panicked: %v\n%s)", r, debug.Stack())
		}
	}()
	v := &sourceList{tc: tc, held: atomic.LoadUint32(&t.held), globals: cs.tp.globals}
	l := t.l
	cs.tp.visitPredecessors(tc, &l, v)
	return strings.Join(v.deps, ", ")
}

type sourceList struct {
	tc      *TaskClass
	held    uint32
	globals any // Taskpool.Globals, where collectionName looks collections up
	deps    []string
}

func (s *sourceList) flow(i int) (string, bool) {
	if i < 0 || i >= len(s.tc.Flows) || s.held&(1<<uint(i)) != 0 {
		return "", false
	}
	return s.tc.Flows[i].Name, true
}

func (s *sourceList) Task(flow, _ int, peer *TaskClass, _ int, l *Locals) {
	if name, ok := s.flow(flow); ok && len(s.deps) < maxStalledNamed {
		s.deps = append(s.deps, name+" <- "+taskName(peer, l))
	}
}

func (s *sourceList) Data(flow, _ int, c Collection, ix Index) {
	if name, ok := s.flow(flow); ok && len(s.deps) < maxStalledNamed {
		s.deps = append(s.deps, fmt.Sprintf("%s <- %s%v", name, collectionName(s.globals, c), ix))
	}
}

// collectionName returns the name under which globals, the value a taskpool was created
// with, holds collection c, or "" when it holds it nowhere. A generated taskpool type holds
// each global in a field of the global's JDF name, so the report can name a memory input as
// the .jdf does ("T <- descT(2, 1)") without a registry of names that every generated file
// would have to fill. Only pointer collections are found: comparing other values could
// panic (a slice or a map is not comparable), and rt's own collections are pointers.
func collectionName(globals any, c Collection) string {
	cv := reflect.ValueOf(c)
	gv := reflect.ValueOf(globals)
	if cv.Kind() != reflect.Pointer || cv.IsNil() || gv.Kind() != reflect.Pointer || gv.IsNil() {
		return ""
	}
	gv = gv.Elem()
	if gv.Kind() != reflect.Struct {
		return ""
	}
	for i := range gv.NumField() {
		f, sf := gv.Field(i), gv.Type().Field(i)
		if sf.Anonymous {
			continue
		}
		if f.Kind() == reflect.Interface && !f.IsNil() {
			f = f.Elem()
		}
		if f.Kind() == reflect.Pointer && f.Type() == cv.Type() && f.Pointer() == cv.Pointer() {
			return sf.Name
		}
	}
	return ""
}
