// Package cetest holds the rt/ce invariant tests that must hold on every transport (docs/ce.md,
// "Invariants", the ones marked for MPI in invariant 29), written once, SPMD style: every rank
// runs the same function with its own Engine. RunWorld runs them on an in-process world, one
// goroutine per rank; the MPI tests (rt/ce/mpi, build tag mpi) run them once per process under
// mpirun.
package cetest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt/ce"
)

// Timeout bounds every wait of the suite, so a failure on one rank never hangs the others.
const Timeout = 30 * time.Second

// Env is one rank's view of a test.
type Env struct {
	E *ce.Engine
	// Strict is the checker around the transport, or nil when calls are not checked.
	Strict *ce.Strict
	// ThreadMainViolations counts transport calls made off the thread that initialised the
	// transport, as the transport itself sees them (MPI_Is_thread_main); nil when unknown.
	ThreadMainViolations func() int64
	// InProcess says all ranks share this process (tests may then compare across ranks).
	InProcess bool

	syncer  *ce.Caller
	keys    chan ce.RemoteKey
	errSeen int // Engine problems already accounted for by a check
}

// tagKeys carries remote keys between ranks for the whole suite.
const tagKeys = ce.FirstUserTag

// NewEnv wraps a started Engine.
func NewEnv(e *ce.Engine, strict *ce.Strict) (*Env, error) {
	c, err := e.Attach(ce.RoleOther, "cetest-sync")
	if err != nil {
		return nil, err
	}
	env := &Env{E: e, Strict: strict, syncer: c, keys: make(chan ce.RemoteKey, 64)}
	err = e.RegisterTag(tagKeys, ce.RemoteKeySize, func(_ *ce.Caller, _ ce.Rank, p []byte) {
		k, err := ce.ParseRemoteKey(p)
		if err == nil {
			env.keys <- k
		}
	})
	if err != nil {
		return nil, err
	}
	return env, nil
}

// ExchangeKey sends k to the previous rank and returns the key the next rank sent.
func (env *Env) ExchangeKey(t testing.TB, k ce.RemoteKey) ce.RemoteKey {
	t.Helper()
	b, _ := k.AppendBinary(nil)
	Send(t, env.syncer, env.Prev(), tagKeys, b, nil)
	select {
	case k := <-env.keys:
		return k
	case <-time.After(Timeout):
		Fatalf(t, "rank %d: no remote key from rank %d", env.Rank(), env.Next())
	}
	return ce.RemoteKey{}
}

// Rank and Size are the Engine's.
func (env *Env) Rank() ce.Rank { return env.E.Rank() }
func (env *Env) Size() int     { return env.E.Size() }

// Next and Prev are the ring neighbours.
func (env *Env) Next() ce.Rank { return ce.Rank((int(env.Rank()) + 1) % env.Size()) }
func (env *Env) Prev() ce.Rank { return ce.Rank((int(env.Rank()) + env.Size() - 1) % env.Size()) }

// Sync is a barrier over all ranks (through the Engine).
func (env *Env) Sync(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	if err := env.syncer.Barrier(ctx); err != nil {
		Fatalf(t, "rank %d: sync: %v", env.Rank(), err)
	}
}

// Fatalf fails the test and ends the calling goroutine; unlike t.Fatalf it may be called from
// the goroutine of an in-process rank.
func Fatalf(t testing.TB, format string, args ...any) {
	t.Helper()
	t.Errorf(format, args...)
	runtime.Goexit()
}

// WaitFor polls cond until it holds or Timeout passes.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(Timeout)
	for !cond() {
		if time.Now().After(deadline) {
			Fatalf(t, "timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// Send sends payload on tag t to dst through c, waiting for buffer budget if needed.
func Send(t testing.TB, c *ce.Caller, dst ce.Rank, tag ce.Tag, payload []byte, done ce.Done) {
	t.Helper()
	m := NewMsg(t, c, len(payload))
	copy(m.Bytes(), payload)
	if err := c.SendAM(dst, tag, m, done); err != nil {
		Fatalf(t, "%s: SendAM to %d on tag %d: %v", c.Name(), dst, tag, err)
	}
}

// NewMsg gets a message of n bytes; device managers poll TryNewMsg as they must.
func NewMsg(t testing.TB, c *ce.Caller, n int) *ce.Msg {
	t.Helper()
	if c.Role() == ce.RoleDeviceManager {
		deadline := time.Now().Add(Timeout)
		for {
			m, err := c.TryNewMsg(n)
			if err == nil {
				return m
			}
			if err != ce.ErrNoBuffers || time.Now().After(deadline) {
				Fatalf(t, "%s: TryNewMsg(%d): %v", c.Name(), n, err)
			}
			runtime.Gosched()
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	m, err := c.NewMsg(ctx, n)
	if err != nil {
		Fatalf(t, "%s: NewMsg(%d): %v", c.Name(), n, err)
	}
	return m
}

// Attach attaches a Caller or fails the test.
func Attach(t testing.TB, e *ce.Engine, r ce.Role, name string) *ce.Caller {
	t.Helper()
	c, err := e.Attach(r, name)
	if err != nil {
		Fatalf(t, "attach %v: %v", r, err)
	}
	return c
}

// Register registers a tag or fails the test.
func Register(t testing.TB, e *ce.Engine, tag ce.Tag, maxLen int, h ce.Handler) {
	t.Helper()
	if err := e.RegisterTag(tag, maxLen, h); err != nil {
		Fatalf(t, "register tag %d: %v", tag, err)
	}
}

// World is the outcome of RunWorld.
type World struct {
	W       *ce.World
	Engines []*ce.Engine
}

// RunWorld runs fn on every rank of a fresh in-process world of n ranks (one goroutine each)
// and closes the engines afterwards.
func RunWorld(t *testing.T, n int, wopts []ce.WorldOption, eopts []ce.Option, fn func(t *testing.T, env *Env)) World {
	t.Helper()
	w := ce.NewWorld(n, wopts...)
	es := w.Engines(append([]ce.Option{ce.Logger(Quiet)}, eopts...)...)
	envs := make([]*Env, n)
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	for i, e := range es {
		if err := e.Start(ctx); err != nil {
			t.Fatalf("start rank %d: %v", i, err)
		}
		env, err := NewEnv(e, w.Strict(ce.Rank(i)))
		if err != nil {
			t.Fatal(err)
		}
		env.InProcess = true
		envs[i] = env
	}
	var wg sync.WaitGroup
	for _, env := range envs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(t, env)
		}()
	}
	wg.Wait()
	if err := ce.CloseAll(ctx, es...); err != nil {
		t.Errorf("close: %v", err)
	}
	for i, e := range es {
		CheckBalanced(t, e, fmt.Sprintf("rank %d after Close", i))
	}
	return World{W: w, Engines: es}
}

// CheckBalanced fails the test unless every message buffer e handed out was given back, and
// every transport registration was undone: the counts of a closed Engine (or of an idle one).
func CheckBalanced(t testing.TB, e *ce.Engine, when string) {
	t.Helper()
	s := e.Stats()
	if s.MsgAllocs != s.MsgReleases || s.MsgBytesInUse != 0 {
		t.Errorf("%s: %d message buffers allocated, %d released, %d bytes in use",
			when, s.MsgAllocs, s.MsgReleases, s.MsgBytesInUse)
	}
	if s.TransportRegisters != s.TransportUnregisters {
		t.Errorf("%s: %d transport registrations, %d undone", when, s.TransportRegisters, s.TransportUnregisters)
	}
}

// Shared reports whether this Env is the only Engine of the process (MPI), so that counting
// the process's ce goroutines says something about this Engine alone.
func (env *Env) Shared() bool { return !env.InProcess }

// OwnedGoroutines counts the goroutines rt/ce started that are still alive: comm loops and
// World delay goroutines.
func OwnedGoroutines() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "rt/ce.(*Engine).run(") || strings.Contains(g, "rt/ce.(*World).runDelays(") {
			n++
		}
	}
	return n
}

// Quiet is a logger for engines under test: the misuse the tests commit on purpose stays on
// Engine.Errors and out of the output.
var Quiet = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))

// Diff formats a (-want +got) mismatch.
func Diff(want, got any) string { return fmt.Sprintf("(-want +got)\n-%v\n+%v", want, got) }
