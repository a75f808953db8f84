package remote

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/ce"
)

// Config describes a job for Run.
type Config struct {
	// Ranks is the number of in-process ranks (a ce.World in this process). 0 means one rank,
	// or, in a binary built with the mpi tag and started by mpirun, one rank per process.
	Ranks int
	// Workers is the number of workers of this process (0: GOMAXPROCS, or under MPI its
	// share among the ranks on this node); in-process ranks share them, the first ranks
	// taking the remainder.
	Workers int
	// Trace, when set, writes one Perfetto trace per rank (TracePath names them).
	Trace string
	// RT, CE, Remote and World are passed to every rank's rt.New, ce.New, remote.New and to
	// ce.NewWorld. Run adds its own ce.OnPeerLost and ce.OnFailure hooks after CE (they
	// tell the rank's Node), so hooks of those kinds in CE are not called.
	RT     []rt.Option
	CE     []ce.Option
	Remote []Option
	World  []ce.WorldOption
	// CloseTimeout bounds the collective Engine close (default 30 s).
	CloseTimeout time.Duration
}

// Job is one rank's part of a job, handed to the function that Run runs.
type Job struct {
	Rank, Size int
	Node       *Node
	// World is the in-process world (nil under MPI), for tests that Kill a rank.
	World *ce.World

	cfg     *Config
	workers int
	rt      *rt.Context
}

// Context returns the rank's rt.Context, creating it on the first call with the rank's
// share of the workers, Config.RT, extra (devices, scheduler …), the rank's trace file and
// the Node's options. Run closes it after the rank's function returns.
func (j *Job) Context(extra ...rt.Option) (*rt.Context, error) {
	if j.rt != nil {
		return j.rt, nil
	}
	opts := append([]rt.Option{rt.Workers(j.workers)}, j.cfg.RT...)
	opts = append(opts, extra...)
	if p := j.TracePath(); p != "" {
		opts = append(opts, rt.Trace(p))
	}
	c, err := rt.New(append(opts, j.Node.RTOptions()...)...)
	if err != nil {
		return nil, err
	}
	rt.Impl.AddDashboardProvider(c, j.Node.Engine()) // a no-op when the dashboard is off
	j.rt = c
	return c, nil
}

// TracePath is this rank's trace file ("" without Config.Trace).
func (j *Job) TracePath() string { return TracePath(j.cfg.Trace, j.Rank, j.Size) }

// Add adds tp to the job on this rank (Node.Add), on the rank's Context.
func (j *Job) Add(tp *rt.Taskpool) error {
	c, err := j.Context()
	if err != nil {
		return err
	}
	return j.Node.Add(c, tp)
}

// Backend names the transport: "in-process" or "MPI".
func (j *Job) Backend() string {
	if j.World != nil {
		return "in-process"
	}
	return "MPI"
}

// TracePath returns the trace file of rank (of size ranks) for path: path itself for one
// rank, otherwise path with ".rankN" before its extension (trace.json → trace.rank1.json),
// so that the files of one job sort together. Run then merges them into path (MergeTraces).
func TracePath(path string, rank, size int) string {
	if size <= 1 || path == "" {
		return path
	}
	ext := filepath.Ext(path)
	return fmt.Sprintf("%s.rank%d%s", strings.TrimSuffix(path, ext), rank, ext)
}

// Run runs fn once per rank of the job cfg describes, each rank with its own Engine, Node
// and rt.Context, and returns when every rank is done: the ranks' errors joined in process,
// this rank's error under MPI. A rank whose fn fails for a reason its peers cannot know (not
// a taskpool failure, which is reported to them) is killed in an in-process world, so that
// its peers fail with ce.ErrPeerLost instead of waiting for it; under MPI the process exits
// and mpirun ends the job, or, under mpirun --enable-recovery, its peers' heartbeats find it
// gone and they fail with ce.ErrPeerLost after the heartbeat timeout (ce.Heartbeat).
func Run(ctx context.Context, cfg Config, fn func(ctx context.Context, j *Job) error) error {
	if cfg.CloseTimeout == 0 {
		cfg.CloseTimeout = 30 * time.Second
	}
	if cfg.Ranks <= 1 {
		if t, ok := mpiTransport(); ok {
			return runMPI(ctx, cfg, t, fn)
		}
	}
	n := max(cfg.Ranks, 1)
	world := ce.NewWorld(n, cfg.World...)
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	nodes := make([]atomic.Pointer[Node], n)
	engines := make([]*ce.Engine, n)
	for r := range engines {
		engines[r] = ce.New(world.Transport(ce.Rank(r)), nodeHooks(cfg.CE, &nodes[r])...)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := 0; r < n; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := workers / n
			if r < workers%n {
				w++
			}
			errs[r] = runRank(ctx, cfg, engines[r], &nodes[r], world, max(w, 1), fn)
			if errs[r] != nil {
				// The peers know of a failure that was reported, or that came from them;
				// for any other they could wait forever on this rank, which must then go.
				nd := nodes[r].Load()
				if !errors.Is(errs[r], ErrRemoteFailure) && !errors.Is(errs[r], ce.ErrPeerLost) &&
					(nd == nil || !nd.reported.Load()) {
					world.Kill(ce.Rank(r))
				}
				errs[r] = fmt.Errorf("rank %d: %w", r, errs[r])
			}
		}()
	}
	wg.Wait()
	cctx, cancel := context.WithTimeout(context.Background(), cfg.CloseTimeout)
	defer cancel()
	cerr := ce.CloseAll(cctx, engines...)
	for r, e := range engines {
		cerr = errors.Join(cerr, balanced(r, e))
	}
	err := errors.Join(errs...)
	if err == nil {
		err = cerr
	}
	if err == nil {
		err = mergeTraces(cfg.Trace, n)
	}
	return err
}

// nodeHooks returns opts with the Engine hooks that tell the rank's Node (once it exists)
// of a lost peer and of the Engine's own failure.
func nodeHooks(opts []ce.Option, node *atomic.Pointer[Node]) []ce.Option {
	return append(append([]ce.Option(nil), opts...),
		ce.OnPeerLost(func(lost ce.Rank) {
			if nd := node.Load(); nd != nil {
				nd.PeerLost(lost)
			}
		}),
		ce.OnFailure(func(err error) {
			if nd := node.Load(); nd != nil {
				nd.EngineFailed(err)
			}
		}))
}

// mergeTraces merges the ranks' traces into path itself, when there are several.
func mergeTraces(path string, size int) error {
	if path == "" || size < 2 {
		return nil
	}
	in := make([]string, size)
	for r := range in {
		in[r] = TracePath(path, r, size)
	}
	return MergeTraces(path, in...)
}

// balanced checks, after Close, that rank r's Engine got every message buffer back.
func balanced(r int, e *ce.Engine) error {
	if s := e.Stats(); s.MsgAllocs != s.MsgReleases {
		return fmt.Errorf("remote: rank %d: %d message buffers handed out, %d released", r, s.MsgAllocs, s.MsgReleases)
	}
	return nil
}

// runRank runs one rank: Engine start, Node, rt.Context, fn, and the closes in reverse.
func runRank(ctx context.Context, cfg Config, e *ce.Engine, slot *atomic.Pointer[Node], world *ce.World,
	workers int, fn func(context.Context, *Job) error) (err error) {
	if err := e.Start(ctx); err != nil {
		return err
	}
	nd, err := New(e, cfg.Remote...)
	if err != nil {
		return err
	}
	slot.Store(nd)
	defer func() { err = errors.Join(err, nd.Close()) }()
	// Every rank's tags are registered before any rank sends (see New).
	if err := nd.other.Barrier(ctx); err != nil {
		return err
	}
	j := &Job{Rank: nd.Rank(), Size: nd.Size(), Node: nd, World: world, cfg: &cfg, workers: workers}
	defer func() {
		if j.rt != nil {
			err = errors.Join(err, j.rt.Close())
		}
	}()
	return fn(ctx, j)
}
