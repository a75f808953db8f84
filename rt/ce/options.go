package ce

import (
	"log/slog"
	"os"
	"time"
)

// Option configures an Engine (New).
type Option func(*config)

// Mode is a three-way switch for CommThreadMultiple.
type Mode int

// Modes.
const (
	Auto Mode = iota // decide from the transport's level
	On               // force on where allowed
	Off              // force off
)

type config struct {
	budget      int64
	maxInflight int
	multiple    Mode
	debug       bool
	idleSpin    time.Duration
	maxSleep    time.Duration
	logger      *slog.Logger
	onIdle      func(TaskpoolID)
	onFailure   func(error)
	onPeerLost  func(Rank)
	maxNote     int
	hbInterval  time.Duration // < 0: by transport (Caps.SilentLoss); 0: off
	hbTimeout   time.Duration
}

func defaultConfig() config {
	return config{
		budget:      64 << 20,
		maxInflight: 16,
		multiple:    Auto,
		debug:       os.Getenv("JDF2GO_CE_DEBUG") == "1",
		idleSpin:    -1, // by transport, see IdleSpin
		maxSleep:    time.Millisecond,
		logger:      slog.Default(),
		maxNote:     256,
		hbInterval:  -1,
		hbTimeout:   DefaultHeartbeatTimeout,
	}
}

// Budget sets the byte budget of CE-owned message buffers (default 64 MiB). Buffers owned by
// callers, queued and in the transport all count; NewMsg waits and TryNewMsg fails with
// ErrNoBuffers when it is spent.
func Budget(bytes int64) Option { return func(c *config) { c.budget = bytes } }

// MaxInflight bounds the get/put transfers this Engine has in the transport at once, as
// initiator and, separately, as owner serving a peer (default 16). The rest wait, ordered by
// priority.
func MaxInflight(n int) Option { return func(c *config) { c.maxInflight = max(n, 1) } }

// CommThreadMultiple decides whether workers call a LevelMultiple transport directly (Auto
// and On: yes; Off: every worker shifts to the comm goroutine). It changes nothing for other
// levels: only LevelMultiple allows direct workers.
func CommThreadMultiple(m Mode) Option { return func(c *config) { c.multiple = m } }

// Debug turns on buffer poisoning and checksums: released message buffers and handler
// payloads are overwritten with a pattern, and a message written after SendAM is reported.
// The environment variable JDF2GO_CE_DEBUG=1 turns it on too.
func Debug(on bool) Option { return func(c *config) { c.debug = on } }

// IdleSpin sets how long the comm loop keeps polling after its last piece of work before it
// parks (wakeable transports) or starts napping (MPI). Defaults: 50 µs on wakeable transports,
// whose producers wake the loop in microseconds; 1 ms on the others, because a napping thread
// wakes late (tens of µs when idle, milliseconds on a loaded machine) and two ranks whose spin
// window is shorter than the other's nap settle into paying one nap per message.
func IdleSpin(d time.Duration) Option { return func(c *config) { c.idleSpin = d } }

// IdleMaxSleep caps the back-off sleep of the comm loop on transports that cannot wake it
// (MPI): a message arriving on an idle engine waits at most about this long. Default 1 ms.
func IdleMaxSleep(d time.Duration) Option {
	return func(c *config) { c.maxSleep = max(d, time.Microsecond) }
}

// Logger sets where diagnostics go (default slog.Default()).
func Logger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// OnTaskpoolIdle registers a hook called on the comm goroutine whenever a taskpool's in-flight
// count drops to zero. It may fire again later if new operations start; re-check InFlight.
func OnTaskpoolIdle(f func(TaskpoolID)) Option { return func(c *config) { c.onIdle = f } }

// OnFailure registers a hook called once, on the comm goroutine, when the Engine fails: a
// handler or a done callback panicked (ErrHandlerPanic). The layer above fails what the
// Engine serves (rt/remote its taskpools); Engine.Err returns the same error.
func OnFailure(f func(error)) Option { return func(c *config) { c.onFailure = f } }

// OnPeerLost registers a hook called on the comm goroutine, once per rank, when the transport
// reports that rank lost (after its pending operations were failed with ErrPeerLost), so that
// a client with nothing in flight to that rank learns of the loss too. It must not block.
func OnPeerLost(f func(Rank)) Option { return func(c *config) { c.onPeerLost = f } }

// Heartbeat defaults (see Heartbeat).
const (
	DefaultHeartbeatInterval = 500 * time.Millisecond
	DefaultHeartbeatTimeout  = 5 * time.Second
)

// Heartbeat makes the Engine watch its peers: every interval its comm goroutine sends each
// live peer a small control message, and a peer from which nothing at all has arrived for
// longer than timeout is declared lost, exactly as if the transport had reported it
// (EventPeerLost: its pending operations fail with ErrPeerLost, OnPeerLost runs). The
// heartbeats come from the comm goroutine, never from workers, so a rank whose workers are
// all inside long task bodies still answers. A peer is no longer watched once it has said
// goodbye (Close).
//
// By default heartbeats run only on transports that cannot see a peer die themselves
// (Caps.SilentLoss: MPI), with DefaultHeartbeatInterval and DefaultHeartbeatTimeout. An
// interval of zero or less turns them off; a timeout below two intervals is raised to two
// intervals, so that one late heartbeat is not a loss. A lost peer is noticed between
// timeout and timeout plus one interval after the last thing that came from it; a comm
// goroutine that cannot run for longer than timeout (a stopped process) looks lost too.
func Heartbeat(interval, timeout time.Duration) Option {
	return func(c *config) {
		if interval <= 0 {
			c.hbInterval = 0
			return
		}
		c.hbInterval, c.hbTimeout = interval, max(timeout, 2*interval)
	}
}
