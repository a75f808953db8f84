package cetest

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jdf2go/jdf2go/rt/ce"
)

// Path names how a ping-pong sends (docs/ce.md, "Measuring the engine").
type Path int

const (
	// Direct: after the first message every send comes from a handler, through the comm
	// goroutine's own Caller, which calls the transport directly.
	Direct Path = iota
	// DirectWorker: a worker Caller sends and spins until the handler signals the answer;
	// direct only where the transport allows workers in (LevelMultiple).
	DirectWorker
	// Shifted: a device-manager Caller sends through the shift queue and spins until the
	// handler signals the answer, on both ranks. Each rank then needs two busy threads (the
	// comm goroutine and the manager), so it means something only with spare cores.
	Shifted
	// ShiftedInline: the handler itself sends through a device-manager Caller, so every
	// message still goes through the shift queue and the comm loop, but no second thread has
	// to run: the cost of the shift mechanism alone, measurable on a small machine.
	ShiftedInline
)

func (p Path) String() string {
	return [...]string{"direct", "direct-worker", "shifted", "shifted-inline"}[p]
}

// PingPong measures round trips between ranks 0 and 1 of an Engine, AMs or Puts, on one of
// the paths. Every rank creates one and calls Run with the same arguments (ranks above 1 only
// join the barriers). It is what the rt/ce benchmarks and examples/pingpong time.
type PingPong struct {
	e      *ce.Engine
	sync   *ce.Caller
	base   ce.Tag
	maxAM  int
	cur    atomic.Pointer[pingRun]
	keys   chan ce.RemoteKey
	player bool
	peer   ce.Rank
}

type pingRun struct {
	failed sync.Once
	err    atomic.Pointer[error]
	path   Path
	via    *ce.Caller    // ShiftedInline: the device-manager Caller the handler sends through
	signal chan struct{} // DirectWorker, Shifted: the handler's wake-up for a parked sender
	n      int64
	count  atomic.Int64
	done   chan struct{}
	size   int
	local  *ce.MemReg // Put runs
	remote ce.RemoteKey
}

// NewPingPong registers tags base, base+1 and base+2 (AMs of up to maxAM bytes, Put
// notifications, key exchange) on e, before or after Start.
func NewPingPong(e *ce.Engine, base ce.Tag, maxAM int) (*PingPong, error) {
	p := &PingPong{e: e, base: base, maxAM: maxAM, keys: make(chan ce.RemoteKey, 1)}
	for i, h := range []ce.Handler{p.arrived, p.arrived, p.key} {
		n := map[int]int{0: maxAM, 1: 0, 2: ce.RemoteKeySize}[i]
		if err := e.RegisterTag(base+ce.Tag(i), n, h); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (p *PingPong) key(_ *ce.Caller, _ ce.Rank, b []byte) {
	if k, err := ce.ParseRemoteKey(b); err == nil {
		p.keys <- k
	}
}

// arrived runs on the comm goroutine for every ping, pong or Put notification.
func (p *PingPong) arrived(c *ce.Caller, _ ce.Rank, _ []byte) {
	r := p.cur.Load()
	if r == nil {
		return
	}
	k := r.count.Add(1)
	if r.path != Direct && r.path != ShiftedInline {
		select { // the waiting goroutine sends the next one
		case r.signal <- struct{}{}:
		default:
		}
		return
	}
	if c.Rank() == 0 && k == r.n {
		r.failed.Do(func() { close(r.done) }) // done, unless a failure closed it first
		return
	}
	if r.via != nil {
		c = r.via
	}
	if err := p.send(c, r); err != nil {
		r.fail(err)
	}
}

// fail ends a run whose handler could not send.
func (r *pingRun) fail(err error) {
	r.failed.Do(func() {
		r.err.Store(&err)
		if r.path == Direct || r.path == ShiftedInline {
			close(r.done)
		}
	})
}

func (r *pingRun) failure() error {
	if p := r.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (p *PingPong) send(c *ce.Caller, r *pingRun) error {
	if r.local != nil {
		return c.Put(ce.Transfer{Local: r.local, Remote: r.remote, Len: r.size, Notify: p.base + 1}, nil)
	}
	m, err := c.TryNewMsg(r.size)
	for err == ce.ErrNoBuffers {
		runtime.Gosched()
		m, err = c.TryNewMsg(r.size)
	}
	if err != nil {
		return err
	}
	return c.SendAM(p.peer, p.base, m, nil)
}

// Run plays n round trips of size bytes (Puts into the peer's registered buffer when put,
// AMs otherwise) and returns the time rank 0 measured between the first send and the last
// answer. It must follow Start; all ranks call it together.
func (p *PingPong) Run(ctx context.Context, path Path, size, n int, put bool) (time.Duration, error) {
	e := p.e
	if err := p.attach(); err != nil {
		return 0, err
	}
	if !put && size > p.maxAM {
		return 0, fmt.Errorf("%w: %d-byte AMs, registered maximum %d", ce.ErrTooLarge, size, p.maxAM)
	}
	role := map[Path]ce.Role{Direct: ce.RoleWorker, DirectWorker: ce.RoleWorker, Shifted: ce.RoleDeviceManager,
		ShiftedInline: ce.RoleDeviceManager}[path]
	r := &pingRun{path: path, n: int64(n), done: make(chan struct{}), size: size, signal: make(chan struct{}, 1)}
	var c *ce.Caller
	if p.player {
		var err error
		if c, err = e.Attach(role, "pingpong"); err != nil {
			return 0, err
		}
		if path == ShiftedInline {
			r.via = c
		}
		if put {
			// Real data: untouched pages all map the kernel's zero page, which single-copy
			// transports (Open MPI's CMA) read several times slower than a used buffer.
			buf := make([]byte, size)
			for i := range buf {
				buf[i] = byte(i)
			}
			if r.local, err = c.Register(ce.HostMem(buf)); err != nil {
				return 0, err
			}
			defer r.local.Release()
			b, _ := r.local.Key().AppendBinary(nil)
			m, err := c.TryNewMsg(len(b))
			if err != nil {
				return 0, err
			}
			copy(m.Bytes(), b)
			if err := c.SendAM(p.peer, p.base+2, m, nil); err != nil {
				return 0, err
			}
			select {
			case r.remote = <-p.keys:
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}
	}
	p.cur.Store(r)
	defer p.cur.Store(nil)
	if err := p.sync.Barrier(ctx); err != nil {
		return 0, err
	}
	start := time.Now()
	var err error
	if p.player {
		err = p.play(ctx, c, r)
	}
	el := time.Since(start)
	if berr := p.sync.Barrier(ctx); err == nil {
		err = berr
	}
	return el, err
}

func (p *PingPong) attach() error {
	if p.sync != nil {
		return nil
	}
	var err error
	p.sync, err = p.e.Attach(ce.RoleOther, "pingpong-sync")
	p.player, p.peer = p.e.Rank() < 2 && p.e.Size() >= 2, p.e.Rank()^1
	return err
}

// Sync is a barrier over all ranks, for measurements made beside PingPong (the raw binding).
func (p *PingPong) Sync(ctx context.Context) error {
	if err := p.attach(); err != nil {
		return err
	}
	return p.sync.Barrier(ctx)
}

// busySpins is how many times a parked-path sender checks for its answer before yielding:
// none on a machine too small for one busy thread per rank beside the comm goroutines.
var busySpins = func() int {
	if runtime.NumCPU() < 8 {
		return 0
	}
	return 20000
}()

func (p *PingPong) play(ctx context.Context, c *ce.Caller, r *pingRun) error {
	first := p.e.Rank() == 0
	if r.path == Direct || r.path == ShiftedInline {
		if !first {
			return nil // the handlers do everything
		}
		if err := p.send(c, r); err != nil {
			return err
		}
		select {
		case <-r.done:
			return r.failure()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for i := range r.n {
		if first {
			if err := p.send(c, r); err != nil {
				return err
			}
		}
		// Spin, yield a little, then park. The busy spin is what a device manager polling
		// its streams does, and it is only done with spare cores: with more busy threads
		// than cores (the comm goroutine polls too) it would steal the CPU the answer needs.
		for spin := 0; r.count.Load() <= i; spin++ {
			if spin < busySpins {
				continue
			}
			if spin < busySpins+100 {
				runtime.Gosched()
				continue
			}
			select {
			case <-r.signal:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err := r.failure(); err != nil {
			return err
		}
		if !first {
			if err := p.send(c, r); err != nil {
				return err
			}
		}
	}
	return nil
}
