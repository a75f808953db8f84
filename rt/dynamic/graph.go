package dynamic

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/jdf2go/jdf2go/rt"
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
}

// Name names the graph's taskpool in errors, traces and the dashboard (default "dynamic").
func Name(s string) Option { return func(c *config) error { c.name = s; return nil } }

// Window bounds the tasks inserted from outside a body and not yet done: Insert waits while n
// are (until half of them are done), so memory stays flat however many tasks a program
// inserts. Default DefaultWindow.
func Window(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("%w: window %d (want at least 1)", rt.ErrBadOption, n)
		}
		c.window = n
		return nil
	}
}

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
	ctx   *rt.Context
	tp    *rt.Taskpool
	debug bool
	keep  *kept

	mu         sync.Mutex // insertion: the data's dependency state, the classes, seq
	seq        int64
	nextID     uint64
	classes    map[string]*class
	lastClass  *class
	registered map[regKey]any
	closed     bool

	window, low int64
	live        atomic.Int64 // tasks inserted from outside a body and not yet done
	waiting     atomic.Bool
	wake        chan struct{}
}

// class is a task class of the graph: its tasks share a name, and the rt.TaskClass behind it.
type class struct {
	name string
	tc   *rt.TaskClass
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
	g := &Graph{ctx: c, debug: cfg.debug, classes: map[string]*class{},
		window: int64(cfg.window), low: int64(cfg.window / 2), wake: make(chan struct{}, 1)}
	if cfg.keep {
		g.keep = &kept{}
	}
	g.tp = rt.NewTaskpool(cfg.name, g)
	g.tp.SetPriority(cfg.prio)
	rt.Impl.AddActions(g.tp, 1) // held until Wait: the graph is open for insertion
	if err := c.Add(g.tp); err != nil {
		return nil, err
	}
	return g, nil
}

// Taskpool returns the rt.Taskpool that runs the graph's tasks.
func (g *Graph) Taskpool() *rt.Taskpool { return g.tp }

// classOf returns the class named name, registering it on first use. g.mu is held.
func (g *Graph) classOf(name string) (*class, error) {
	if c := g.lastClass; c != nil && c.name == name {
		return c, nil
	}
	c := g.classes[name]
	if c == nil {
		c = &class{name: name}
		c.tc = &rt.TaskClass{Name: name, Locals: []string{"seq"}, Params: []int{0},
			Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: g.hook}},
			Successors:   g.release}
		if err := rt.Impl.AddClass(g.tp, c.tc); err != nil {
			return nil, err
		}
		g.classes[name] = c
	}
	g.lastClass = c
	return c, nil
}

// Insert adds a task named name (its class, as traces and the dashboard show it) whose body
// is run, with the data accesses and options in args. The task runs once every earlier task
// that accesses one of its data in a conflicting mode is done. Insert returns the graph's
// error once it has failed, and waits while the window is full.
func (g *Graph) Insert(name string, run func(*Task) error, args ...Arg) error {
	return g.insert(name, run, args, false)
}

func (g *Graph) insert(name string, run func(*Task) error, args []Arg, nested bool) error {
	if run == nil {
		return fmt.Errorf("%w: %s", ErrNoBody, name)
	}
	if err := g.tp.Err(); err != nil {
		return err
	}
	if !nested && g.live.Load() >= g.window {
		if err := g.waitWindow(); err != nil {
			return err
		}
	}
	t := taskPool.Get().(*task)
	t.g, t.run, t.prio, t.nested, t.commutes, t.held = g, run, 0, nested, 0, 0
	t.uses = t.uses[:0]
	t.deps.Store(1)

	g.mu.Lock()
	if g.closed && !nested {
		g.mu.Unlock()
		taskPool.Put(t)
		return ErrGraphDone
	}
	cls, err := g.classOf(name)
	if err == nil {
		t.cls = cls
		err = t.parse(args)
	}
	if err != nil {
		g.mu.Unlock()
		taskPool.Put(t)
		return fmt.Errorf("dynamic: inserting %s: %w", name, err)
	}
	g.seq++
	t.seq = g.seq
	rt.Impl.AddTasks(g.tp, cls.tc, 1)
	if !nested {
		g.live.Add(1)
	}
	t.link()
	if g.keep != nil {
		g.keep.add(t)
	}
	g.mu.Unlock()

	if t.deps.Add(-1) == 0 {
		var l rt.Locals
		l[0] = int(t.seq)
		return rt.Impl.Schedule(g.tp, cls.tc, &l, t.prio, t)
	}
	return nil
}

// retire counts t done for the window and wakes a waiting inserter at the low mark.
func (g *Graph) retire(t *task) {
	if t.nested {
		return
	}
	if g.live.Add(-1) <= g.low && g.waiting.Load() && g.waiting.CompareAndSwap(true, false) {
		select {
		case g.wake <- struct{}{}:
		default:
		}
	}
}

// waitWindow waits until the tasks in the window are down to the low mark, or the graph
// fails. The inserter announces itself before it checks the count, and a release checks for
// it after it counted: one of them sees the other.
func (g *Graph) waitWindow() error {
	for g.live.Load() > g.low {
		g.waiting.Store(true)
		if g.live.Load() <= g.low {
			g.waiting.Store(false)
			break
		}
		select {
		case <-g.wake:
		case <-g.tp.Done():
			return g.tp.Err()
		}
	}
	return nil
}

// Wait closes the graph to insertions from outside its bodies and waits until every task
// is done, including those that running bodies insert, the graph fails, or ctx ends (which
// cancels the graph). It returns nil, the first task's error (an *rt.TaskError naming the
// task) or the cancellation. Wait may be called again; it returns the same result.
func (g *Graph) Wait(ctx context.Context) error {
	g.mu.Lock()
	if !g.closed {
		g.closed = true
		rt.Impl.AddActions(g.tp, -1)
	}
	g.mu.Unlock()
	return g.tp.Wait(ctx)
}
