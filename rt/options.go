package rt

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Option configures a Context. Options override the JDF2GO_* environment variables, which
// override the defaults.
type Option func(*config) error

type config struct {
	workers   int
	sched     string
	trace     string
	profiling bool
	progress  io.Writer
	devices   []Device
	remote    Remote
	rank      int
	nranks    int
	keepNext  bool
	share     bool
	bind      string // "none", "thread" or "cpu" (bindWorkers)
	log       *slog.Logger
	stall     time.Duration // stallTimeout; 0: off
	batching  bool          // Batching

	dashboard  string // Dashboard address; "" is off
	dashPublic bool
}

func defaultConfig() config {
	return config{workers: runtime.GOMAXPROCS(0), sched: "lfq", nranks: 1, keepNext: true,
		share: true, bind: "none", log: slog.Default(), stall: defaultStallTimeout, batching: true}
}

// batchingFromEnv reports whether JDF2GO_BATCHING leaves batch collection on: it is off when
// the variable is off, 0, false or no (any case), on otherwise. rt/gpu reads the variable
// the same way for its GPU rings.
func batchingFromEnv() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv("JDF2GO_BATCHING"))) {
	case "off", "0", "false", "no":
		return false
	}
	return true
}

// fromEnv applies JDF2GO_WORKERS, JDF2GO_SCHED, JDF2GO_TRACE, JDF2GO_PROGRESS,
// JDF2GO_SHARE, JDF2GO_BIND, JDF2GO_BATCHING, JDF2GO_DASHBOARD and JDF2GO_DASHBOARD_PUBLIC.
func (c *config) fromEnv() error {
	c.batching = batchingFromEnv()
	if s := os.Getenv("JDF2GO_SHARE"); s != "" {
		on, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("%w: JDF2GO_SHARE=%q: want a boolean", ErrBadOption, s)
		}
		c.share = on
	}
	if s := os.Getenv("JDF2GO_BIND"); s != "" {
		if err := checkBind(s); err != nil {
			return fmt.Errorf("%w: JDF2GO_BIND=%q: %v", ErrBadOption, s, err)
		}
		c.bind = s
	}
	if s := os.Getenv("JDF2GO_WORKERS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return fmt.Errorf("%w: JDF2GO_WORKERS=%q: want a positive integer", ErrBadOption, s)
		}
		c.workers = n
	}
	if s := os.Getenv("JDF2GO_SCHED"); s != "" {
		c.sched = s
	}
	if s := os.Getenv("JDF2GO_TRACE"); s != "" {
		c.trace = s
	}
	if s := os.Getenv("JDF2GO_PROGRESS"); s != "" {
		on, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("%w: JDF2GO_PROGRESS=%q: want a boolean", ErrBadOption, s)
		}
		if on {
			c.progress = os.Stderr
		}
	} else if isTerminal(os.Stderr) {
		c.progress = os.Stderr
	}
	return c.dashFromEnv()
}

// Workers sets the number of workers (execution streams); the default is GOMAXPROCS.
func Workers(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("%w: Workers(%d): want at least 1", ErrBadOption, n)
		}
		c.workers = n
		return nil
	}
}

// Scheduler selects the scheduler by name: "lfq" (default), "ap" or "gd".
func Scheduler(name string) Option {
	return func(c *config) error { c.sched = name; return nil }
}

// Trace records a span per task execution and writes a Chrome/Perfetto JSON trace to path
// when the Context is closed.
func Trace(path string) Option {
	return func(c *config) error { c.trace = path; return nil }
}

// Profiling records spans in memory without writing a file, for Context.Tracer().Summary().
func Profiling() Option {
	return func(c *config) error { c.profiling = true; return nil }
}

// Progress draws a progress bar of the running taskpools on w (usually os.Stderr); nil
// turns the bar off. On a terminal the bar is redrawn in place at most 10 times a second,
// elsewhere one line a second. Without this option the bar follows JDF2GO_PROGRESS, and is
// drawn on stderr when that is unset and stderr is a terminal.
func Progress(w io.Writer) Option {
	return func(c *config) error { c.progress = w; return nil }
}

// Devices registers devices that run the non-CPU incarnations.
func Devices(devs ...Device) Option {
	return func(c *config) error { c.devices = append(c.devices, devs...); return nil }
}

// Rank runs the Context as rank rank of nranks (the default is 0 of 1), with r carrying the
// dependencies that cross ranks (rt/remote builds both from its Node: Node.RTOptions). With
// a nil r, a dependency that crosses ranks fails the taskpool.
func Rank(rank, nranks int, r Remote) Option {
	return func(c *config) error {
		if nranks < 1 || rank < 0 || rank >= nranks {
			return fmt.Errorf("%w: Rank(%d, %d)", ErrBadOption, rank, nranks)
		}
		c.rank, c.nranks, c.remote = rank, nranks, r
		return nil
	}
}

// keepNextTask turns the workers' private next_task slot on (default) or off. The ap
// scheduler never uses it, since it promises a strict global priority order.
func keepNextTask(on bool) Option {
	return func(c *config) error { c.keepNext = on; return nil }
}

// ShareWork turns on (default) or off the sharing of a class's tasks between CPU workers
// and devices by estimated finish time (choice.go). Off, a device incarnation goes to a
// device whenever one accepts it, in BODY order, as in PaRSEC: for runs where the devices
// are so much faster that a CPU worker should never take a task (the CPU time of each
// class is otherwise measured on one task of the class).
func ShareWork(on bool) Option {
	return func(c *config) error { c.share = on; return nil }
}

// Batching turns on (default, unless JDF2GO_BATCHING is off) or off the collection of
// rings for batch-capable CPU bodies: off, Task.CollectBatch collects nothing and every
// ring holds only its head.
func Batching(on bool) Option {
	return func(c *config) error { c.batching = on; return nil }
}

// Logger sets the logger for diagnostics (default slog.Default()).
func Logger(l *slog.Logger) Option {
	return func(c *config) error { c.log = l; return nil }
}

// bindWorkers sets how workers hold their OS threads: "none" (default: Go schedules them like
// any goroutine), "thread" (each worker locks its goroutine to one OS thread,
// runtime.LockOSThread) or "cpu" (each worker also binds its thread to one CPU, worker i to
// the i-th CPU the process may run on, round-robin; Linux only). Binding keeps a worker's
// caches warm when other threads compete for the cores, at the price of waiting for its own
// CPU when that one is busy.
func bindWorkers(mode string) Option {
	return func(c *config) error {
		if err := checkBind(mode); err != nil {
			return fmt.Errorf("%w: bindWorkers(%q): %v", ErrBadOption, mode, err)
		}
		c.bind = mode
		return nil
	}
}

// checkBind validates a bindWorkers mode.
func checkBind(mode string) error {
	switch mode {
	case "none", "thread":
		return nil
	case "cpu":
		if _, err := allowedCPUs(); err != nil {
			return err
		}
		return nil
	}
	return fmt.Errorf("want none, thread or cpu")
}
