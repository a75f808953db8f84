package dynamic

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/remote"
)

// DefaultWindow is the number of inserted tasks not yet done past which Insert waits.
const DefaultWindow = 8192

// Option configures a Graph.
type Option func(*config) error

type config struct {
	name   string
	window int
	debug  bool
	keep   bool
	prio   int32
	noHelp bool
	node   *remote.Node
}

// Name names the graph's taskpool in errors, traces and the dashboard (default "dynamic").
func Name(s string) Option { return func(c *config) error { c.name = s; return nil } }

// Window bounds the tasks inserted from outside a body and not yet done: Insert waits while n
// are (until half of them are done), running ready tasks of the graph meanwhile (WindowHelp),
// so memory stays flat however many tasks a program inserts. Default DefaultWindow.
func Window(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("%w: window %d (want at least 1)", rt.ErrBadOption, n)
		}
		c.window = n
		return nil
	}
}

// WindowHelp sets whether an Insert that waits for the window runs ready tasks of the graph
// on the inserting goroutine meanwhile (default true). Turn it off when bodies must not run on
// that goroutine (one locked to an OS thread for a library's sake, or a body that waits for
// something the inserting goroutine does after Insert returns); Insert then only waits.
func WindowHelp(on bool) Option { return func(c *config) error { c.noHelp = !on; return nil } }

// Debug checks that no body changes a datum it declared read-only: each Read datum is
// checksummed before and after the body, and a change fails the graph with
// ErrReadOnlyWritten, naming the task and the datum. It costs a pass over the data per task.
func Debug(on bool) Option { return func(c *config) error { c.debug = on; return nil } }

// KeepGraph records every inserted task and dependency, for WriteDOT. It costs memory in
// proportion to the tasks inserted.
func KeepGraph() Option { return func(c *config) error { c.keep = true; return nil } }

// GraphPriority adds p to the priority of every task of the graph (the taskpool priority).
func GraphPriority(p int32) Option { return func(c *config) error { c.prio = p; return nil } }

// Graph is a task graph built while the program runs: tasks are inserted in program order
// with the data they access, and run on the workers of an rt.Context as soon as the tasks
// they depend on are done. A Graph is safe for concurrent use; tasks inserted by several
// goroutines are ordered as their Insert calls are.
type Graph struct {
	// Read by workers for every task, written only by New.
	ctx         *rt.Context
	tp          *rt.Taskpool
	debug       bool
	help        bool
	devices     bool      // the context has devices: writes bump the host copies' versions (gpu.go)
	coh         coherence // where the newest versions are (coherence.go)
	keep        *kept
	dist        *ranks // across ranks (remote.go); nil on one rank without a Node
	window, low int64
	belowLow    func() bool // the window is down to its low mark: when a helping inserter stops
	_           [64]byte

	// The insertion side, on lines that only inserters write.
	mu         sync.Mutex // insertion: the data's dependency state, the classes, seq
	seq        int64
	nextID     uint64
	classes    map[string]*class
	gpuClasses map[gpuKey]*class
	recent     [4]*class // the classes used last, most recent first (classOf)
	registered map[regKey]any
	closed     bool
	prod       *rt.Producer // batches the tasks ready at insertion from outside a body
	free       *task        // task records for insertions, linked through nextFree
	// inserted counts the tasks inserted from outside a body; written under mu, read
	// without it by the window's checks.
	inserted atomic.Int64
	// seen is a value retired had, read by an inserter: inserted-seen over-estimates the
	// tasks in the window (retired only grows), so an insertion compares with it and loads
	// retired, a line that every completion writes, only once that estimate reaches the
	// window.
	seen atomic.Int64
	_    [64]byte

	// The completion side, written by the workers as tasks complete.
	retired atomic.Int64         // tasks inserted from outside a body and done
	freed   atomic.Pointer[task] // records released by workers, linked through nextFree
	waiting atomic.Bool          // an inserter waits for the window
	wake    chan struct{}
	_       [64]byte

	// Scratch memory given back by the bodies that took some (Task.Scratch), most recent
	// last.
	smu   sync.Mutex
	spare [][]float64
}

// class is a task class of the graph: its tasks share a name, and the rt.TaskClass behind it.
// A class with a GPU body is one per name, body and presence of a CPU body (gpu.go).
type class struct {
	name string
	tc   *rt.TaskClass
	body *GPUBody
	cpu  int // index of the CPU incarnation in tc, -1 for none
}

// New returns an empty graph whose tasks run on c. Insert tasks, then call Wait.
func New(c *rt.Context, opts ...Option) (*Graph, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: nil rt.Context", rt.ErrBadOption)
	}
	cfg := config{name: "dynamic", window: DefaultWindow}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	g := &Graph{ctx: c, debug: cfg.debug, help: !cfg.noHelp, devices: len(c.Devices()) > 0, classes: map[string]*class{},
		window: int64(cfg.window), low: int64(cfg.window / 2), wake: make(chan struct{}, 1)}
	g.belowLow = func() bool { return g.live() <= g.low }
	if g.devices {
		g.coh.init(c)
	}
	if cfg.keep {
		g.keep = &kept{}
	}
	if cfg.node == nil && rt.Impl.Ranks(c) > 1 {
		return nil, fmt.Errorf("%w: the context runs %d ranks", ErrNoNode, rt.Impl.Ranks(c))
	}
	g.tp = rt.NewTaskpool(cfg.name, g)
	g.tp.SetPriority(cfg.prio)
	rt.Impl.AddActions(g.tp, 1) // held until Wait: the graph is open for insertion
	if cfg.node != nil {
		if err := g.addRanks(c, cfg.node); err != nil {
			return nil, err
		}
	} else if err := c.Add(g.tp); err != nil {
		return nil, err
	}
	g.prod = rt.Impl.NewProducer(g.tp)
	return g, nil
}

// Taskpool returns the rt.Taskpool that runs the graph's tasks.
func (g *Graph) Taskpool() *rt.Taskpool { return g.tp }

// classOf returns the class named name of tasks with GPU body body (or none) and a CPU body
// or not, registering it on first use. g.mu is held. The few classes used last are compared
// first (a name given as a constant compares by its pointer), before the maps and their hash
// of the name.
func (g *Graph) classOf(name string, body *GPUBody, cpu bool) (*class, error) {
	r := &g.recent
	for i, c := range r {
		if c != nil && c.name == name && c.body == body && (c.cpu >= 0) == cpu {
			if i > 0 {
				copy(r[1:i+1], r[:i])
				r[0] = c
			}
			return c, nil
		}
	}
	if body != nil {
		return g.gpuClassOf(name, body, cpu)
	}
	c := g.classes[name]
	if c == nil {
		c = &class{name: name, cpu: 0}
		c.tc = &rt.TaskClass{Name: name, Locals: []string{"seq"}, Params: []int{0},
			Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: g.hook}},
			Successors:   g.release}
		if err := rt.Impl.AddClass(g.tp, c.tc); err != nil {
			return nil, err
		}
		g.classes[name] = c
	}
	g.remember(c)
	return c, nil
}

// remember puts c first among the recent classes. g.mu is held.
func (g *Graph) remember(c *class) {
	r := &g.recent
	copy(r[1:], r[:len(r)-1])
	r[0] = c
}

// Insert adds a task named name (its class, as traces and the dashboard show it) whose body
// is run, with the data accesses and options in args. The task runs once every earlier task
// that accesses one of its data in a conflicting mode is done. run may be nil when args give
// a GPU body (GPU): the task then runs on a device only. Insert returns the graph's error
// once it has failed; while the window is full it waits, and runs ready tasks of the graph on
// the calling goroutine meanwhile (unless WindowHelp(false)).
func (g *Graph) Insert(name string, run func(*Task) error, args ...Arg) error {
	return g.insert(name, run, args, false)
}

func (g *Graph) insert(name string, run func(*Task) error, args []Arg, nested bool) error {
	if run == nil && !hasGPU(args) {
		return fmt.Errorf("%w: %s", ErrNoBody, name)
	}
	if err := g.tp.Err(); err != nil {
		return err
	}
	if nested && g.dist != nil {
		return fmt.Errorf("%w: %s", ErrNestedAcrossRanks, name)
	}
	if !nested && g.inserted.Load()-g.seen.Load() >= g.window {
		r := g.retired.Load()
		g.seen.Store(r) // concurrent inserters may store an older value: an over-estimate again
		if g.inserted.Load()-r >= g.window {
			if err := g.waitWindow(); err != nil {
				return err
			}
		}
	}
	g.mu.Lock()
	if g.closed && !nested {
		g.mu.Unlock()
		return ErrGraphDone
	}
	t := g.newTask()
	t.g, t.run, t.prio, t.nested, t.commutes, t.held, t.body = g, run, 0, nested, 0, 0, nil
	t.on, t.aff, t.x, t.running, t.scr = 0, nil, nil, false, nil
	t.uses = t.uses[:0]
	t.deps.Store(1)
	err := t.parse(args)
	var cls *class
	if err == nil {
		cls, err = g.classOf(name, t.body, run != nil)
		t.cls = cls
	}
	if err == nil && t.body != nil {
		if g.dist != nil {
			err = ErrGPUAcrossRanks
		} else {
			err = t.checkGPU()
		}
	}
	if err != nil {
		t.run = nil
		t.nextFree, g.free = g.free, t
		g.mu.Unlock()
		return fmt.Errorf("dynamic: inserting %s: %w", name, err)
	}
	g.seq++
	t.seq = g.seq
	t.loc[0] = int(t.seq)
	var moved []*task
	if g.dist != nil {
		// Every rank records the accesses; only the task's rank runs it (remote.go).
		here := false
		if moved, here, err = g.dist.place(t); err != nil || !here {
			if err != nil {
				g.seq--
			}
			t.run = nil
			t.nextFree, g.free = g.free, t
			g.mu.Unlock()
			g.dist.start(moved)
			if err != nil {
				return fmt.Errorf("dynamic: inserting %s: %w", name, err)
			}
			return nil
		}
	}
	rt.Impl.AddTasks(g.tp, cls.tc, 1)
	if !nested {
		g.inserted.Store(g.inserted.Load() + 1)
	}
	t.link()
	if g.keep != nil {
		g.keep.add(t)
	}
	if countRecords {
		liveRecords.Add(1)
	}
	ready := t.deps.Add(-1) == 0
	if ready && !nested {
		// Under g.mu, which serialises the producer's callers.
		err = g.prod.Ready(cls.tc, &t.loc, t.prio, t)
	}
	g.mu.Unlock()
	g.dist.start(moved)

	if ready && nested {
		// A body's insertion goes to the scheduler at once: the producer's batch would wait
		// for this worker to run dry.
		err = rt.Impl.Schedule(g.tp, cls.tc, &t.loc, t.prio, t)
	}
	return err
}

// retire counts t done for the window and wakes a waiting inserter at the low mark.
func (g *Graph) retire(t *task) {
	if t.nested {
		return
	}
	n := g.retired.Add(1)
	if g.waiting.Load() && g.inserted.Load()-n <= g.low && g.waiting.CompareAndSwap(true, false) {
		select {
		case g.wake <- struct{}{}:
		default:
		}
	}
}

// live returns the tasks inserted from outside a body and not yet done.
func (g *Graph) live() int64 { return g.inserted.Load() - g.retired.Load() }

// Polling bounds of a waiting inserter that found no task to run: it looks again after
// helpPoll, doubling up to helpPollMax, unless the low mark wakes it first.
const (
	helpPoll    = 50 * time.Microsecond
	helpPollMax = 2 * time.Millisecond
)

// waitWindow waits until the tasks in the window are down to the low mark, or the graph
// fails, running ready tasks of the graph meanwhile (WindowHelp). The inserter announces
// itself before it checks the count, and a release checks for it after it counted: one of
// them sees the other. It also looks again after a poll interval, so that a second waiting
// inserter, which the one wake-up token does not reach, and tasks that became ready while it
// slept are not missed.
//
// A helping inserter runs only tasks that cannot wait for this window: a body that inserts
// does so with Task.Insert, which never waits for it (a body that called Graph.Insert would
// help in turn, one level deeper, rather than block).
func (g *Graph) waitWindow() error {
	g.mu.Lock()
	g.prod.Flush() // the batch's tasks may be the very ones to run
	g.mu.Unlock()
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	poll := helpPoll
	for g.live() > g.low {
		if err := g.tp.Err(); err != nil {
			return err
		}
		if g.help && rt.Impl.Help(g.tp, g.belowLow) > 0 {
			poll = helpPoll
			continue
		}
		g.waiting.Store(true)
		if g.live() <= g.low {
			g.waiting.Store(false)
			break
		}
		if timer == nil {
			timer = time.NewTimer(poll)
		} else {
			timer.Reset(poll)
		}
		select {
		case <-g.wake:
		case <-timer.C:
			poll = min(2*poll, helpPollMax)
		case <-g.tp.Done():
			return g.tp.Err()
		}
	}
	return g.tp.Err()
}

// Wait closes the graph to insertions from outside its bodies (across ranks, after the
// transfers that return every datum to its owner: Flush) and waits until every task is done, including those that running bodies insert, the graph fails, or ctx ends (which
// cancels the graph). It returns nil, the first task's error (an *rt.TaskError naming the
// task) or the cancellation. Wait may be called again; it returns the same result.
func (g *Graph) Wait(ctx context.Context) error {
	g.mu.Lock()
	open := !g.closed
	var moved []*task
	if open {
		moved = g.dist.flush()
		g.closed = true
	}
	g.mu.Unlock()
	if open {
		g.dist.start(moved)
		rt.Impl.AddActions(g.tp, -1)
	}
	err := g.tp.Wait(ctx)
	if err == nil && g.coh.keep {
		err = g.recallAll(ctx)
	}
	return err
}
