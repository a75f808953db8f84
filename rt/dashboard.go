package rt

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/jdf2go/jdf2go/dashboard"
)

// The live dashboard (Dashboard). When it is off the Context holds no dash, workers no
// lane, and nothing below runs: the hot paths test one nil pointer. When it is on, every CPU
// body is bracketed by two clock reads and two uncontended per-worker lock operations
// (lane.begin, lane.end), and so is every submission to a device; every completed task adds one to its class's counter, and a
// sampling goroutine publishes a snapshot every dashEvery.

// ErrDashboardPublic: Dashboard (or JDF2GO_DASHBOARD) names an address that is not a
// loopback address, without JDF2GO_DASHBOARD_PUBLIC=1.
var ErrDashboardPublic = dashboard.ErrPublic

// DashboardProvider adds a component's state (a GPU device, a communication engine) to the
// dashboard's snapshots; see Impl.AddDashboardProvider.
type DashboardProvider = dashboard.Provider

const (
	dashEvery   = 250 * time.Millisecond
	dashWindow  = 30.0                          // seconds of worker lanes on the page
	laneMerge   = int64(500 * time.Microsecond) // bodies of a class closer than this share a segment
	laneMin     = int64(2 * time.Millisecond)   // a shorter segment absorbs the next close body, whatever its class
	laneMaxSegs = 256                           // segments a worker keeps between two samples
	dashMaxErrs = 64                            // errors kept between two samples
	dashErrLen  = 4096                          // bytes of an error message kept
)

// Dashboard serves a live web page of the run on addr ("localhost:8080"; ":0" picks a
// free port, see Context.DashboardURL) until the Context is closed. An empty host means
// localhost; a host that is not a loopback address needs JDF2GO_DASHBOARD_PUBLIC=1,
// otherwise New fails with ErrDashboardPublic. With several ranks, rank r serves on addr's
// port plus r. An empty addr leaves the dashboard off. JDF2GO_DASHBOARD=addr does the same.
func Dashboard(addr string) Option {
	return func(c *config) error { c.dashboard = addr; return nil }
}

// dashboardPublic allows Dashboard to serve on a non-loopback address (anyone who can
// reach it can watch the run; New logs a warning). JDF2GO_DASHBOARD_PUBLIC=1 does the same.
func dashboardPublic() Option {
	return func(c *config) error { c.dashPublic = true; return nil }
}

// dashFromEnv applies JDF2GO_DASHBOARD and JDF2GO_DASHBOARD_PUBLIC.
func (c *config) dashFromEnv() error {
	if s := os.Getenv("JDF2GO_DASHBOARD"); s != "" {
		c.dashboard = s
	}
	if s := os.Getenv("JDF2GO_DASHBOARD_PUBLIC"); s != "" {
		on, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("%w: JDF2GO_DASHBOARD_PUBLIC=%q: want a boolean", ErrBadOption, s)
		}
		c.dashPublic = on
	}
	return nil
}

// DashboardURL returns the address of the dashboard page, or "" when it is off.
func (c *Context) DashboardURL() string {
	if c.dash == nil {
		return ""
	}
	return c.dash.srv.URL()
}

// dash is the sampling side of the dashboard: it owns the server and the sampling goroutine.
type dash struct {
	c     *Context
	srv   *dashboard.Server
	start time.Time
	peers []string
	stop  chan struct{}
	done  chan struct{}

	mu        sync.Mutex
	providers []dashboard.Provider
	pools     []*Taskpool             // added while the dashboard is on, not yet folded
	folded    map[[2]string]*foldedCS // finished taskpools' counts by (taskpool, class) name
	order     [][2]string             // classes in order of appearance
	errs      []dashboard.Error

	// Sampling goroutine only.
	lanes    []*lane
	devLabel map[Device]string // lane label of submissions to each device (read-only)
	lastNow  int64
	lastDone int64
	drained  []laneSeg
}

type foldedCS struct{ done, total int64 }

// lane records the busy intervals of one worker.
type lane struct {
	mu      sync.Mutex
	segs    []laneSeg // closed since the last sample
	spare   []laneSeg
	cur     laneSeg // the segment being extended (cs nil: none)
	run     string  // label of the body or submission running now; "" when none
	runFrom int64
}

// laneSeg is a busy interval: bodies of a class (label: the class's name) or submissions to a
// device, which include the episodes the worker spends managing it (label: "DEVICE submit").
type laneSeg struct {
	label    string
	from, to int64 // ns since the dashboard started
}

// startDashboard binds the dashboard's address; the Context is not started yet.
func startDashboard(c *Context) (*dash, error) {
	addr, err := dashboard.RankAddr(c.cfg.dashboard, c.cfg.rank)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadOption, err)
	}
	srv, err := dashboard.Listen(addr, dashboard.Options{Public: c.cfg.dashPublic, Log: c.log})
	if err != nil {
		return nil, err
	}
	d := &dash{c: c, srv: srv, start: time.Now(), stop: make(chan struct{}), done: make(chan struct{}),
		folded: map[[2]string]*foldedCS{}}
	if host, port, err := net.SplitHostPort(c.cfg.dashboard); err == nil && port != "0" && c.cfg.rank == 0 {
		if host == "" {
			host = "localhost"
		}
		for r := 1; r < c.cfg.nranks; r++ {
			if a, err := dashboard.RankAddr(net.JoinHostPort(host, port), r); err == nil {
				d.peers = append(d.peers, "http://"+a+"/")
			}
		}
	}
	d.devLabel = map[Device]string{}
	for _, dev := range c.cfg.devices {
		d.devLabel[dev] = dev.Name() + " submit"
		if p, ok := dev.(dashboard.Provider); ok {
			d.providers = append(d.providers, p)
		}
	}
	if p, ok := c.cfg.remote.(dashboard.Provider); ok {
		d.providers = append(d.providers, p)
	}
	c.log.Info("rt: dashboard", "url", srv.URL())
	return d, nil
}

// run is the sampling goroutine: a snapshot every dashEvery, and a last one at Close.
func (d *dash) run() {
	defer close(d.done)
	tick := time.NewTicker(dashEvery)
	defer tick.Stop()
	for {
		select {
		case <-d.stop:
			d.sample(true)
			return
		case <-tick.C:
			d.sample(false)
		}
	}
}

// close publishes the last snapshot and stops the server; the workers have stopped.
func (d *dash) close() error {
	close(d.stop)
	<-d.done
	return d.srv.Close()
}

func (d *dash) now() int64 { return int64(time.Since(d.start)) }

func seconds(ns int64) float64 { return float64(ns) / 1e9 }

// addPool starts following tp's classes; tp has been enumerated.
func (d *dash) addPool(tp *Taskpool) {
	d.mu.Lock()
	d.pools = append(d.pools, tp)
	for i := range tp.cs {
		k := [2]string{tp.name, tp.cs[i].tc.Name}
		if d.folded[k] == nil {
			d.folded[k] = &foldedCS{}
			d.order = append(d.order, k)
		}
	}
	d.mu.Unlock()
}

// reportError records a taskpool failure for the next snapshot.
func (d *dash) reportError(tp *Taskpool, err error) {
	msg := err.Error()
	if len(msg) > dashErrLen {
		msg = msg[:dashErrLen] + "…"
	}
	e := dashboard.Error{Time: seconds(d.now()), Taskpool: tp.name, Message: msg}
	d.mu.Lock()
	if len(d.errs) < dashMaxErrs {
		d.errs = append(d.errs, e)
	}
	d.mu.Unlock()
}

// sample builds and publishes one snapshot.
func (d *dash) sample(final bool) {
	now := d.now()
	s := &dashboard.Snapshot{Time: seconds(now), Source: "live", Rank: d.c.cfg.rank, Ranks: d.c.cfg.nranks,
		Peers: d.peers, Finished: final, Window: dashWindow, Workers: len(d.c.workers)}
	d.mu.Lock()
	counts := make(map[[2]string]foldedCS, len(d.order))
	for k, f := range d.folded {
		counts[k] = *f
	}
	live := d.pools[:0]
	for _, tp := range d.pools {
		finished := tp.isDone()
		tp.eachClass(func(cs *classState) {
			k := [2]string{tp.name, cs.tc.Name}
			if d.folded[k] == nil { // a class added at run time (dynamic.go)
				d.folded[k] = &foldedCS{}
				d.order = append(d.order, k)
			}
			n, total := cs.done.Load(), cs.total+cs.inserted.Load()
			if finished {
				d.folded[k].done += n
				d.folded[k].total += total
			}
			c := counts[k]
			c.done += n
			c.total += total
			counts[k] = c
		})
		if !finished {
			live = append(live, tp)
		}
	}
	clear(d.pools[len(live):])
	d.pools = live
	for _, k := range d.order {
		c := counts[k]
		s.Classes = append(s.Classes, dashboard.Class{Taskpool: k[0], Name: k[1], Done: c.done, Total: c.total})
		s.Done += c.done
	}
	s.Errors, d.errs = d.errs, nil
	providers := d.providers
	d.mu.Unlock()

	if dt := seconds(now - d.lastNow); dt > 0 {
		s.Rate = float64(s.Done-d.lastDone) / dt
	}
	s.Busy = make([]float64, len(d.lanes))
	for w, l := range d.lanes {
		d.drained = l.drain(d.drained[:0])
		busy := int64(0)
		for _, g := range d.drained {
			s.Lanes = append(s.Lanes, dashboard.Segment{Worker: w, Class: g.label,
				Start: seconds(g.from), End: seconds(g.to)})
			busy += g.to - max(g.from, d.lastNow)
		}
		if label, from := l.running(); label != "" {
			s.Running = append(s.Running, dashboard.Segment{Worker: w, Class: label,
				Start: seconds(from), End: s.Time})
			busy += now - max(from, d.lastNow)
		}
		if span := now - d.lastNow; span > 0 {
			s.Busy[w] = min(max(float64(busy)/float64(span), 0), 1)
		}
	}
	clear(d.drained)
	d.lastNow, d.lastDone = now, s.Done
	for _, p := range providers {
		p.Fill(s)
	}
	if err := d.srv.Publish(s); err != nil {
		d.c.log.Warn("rt: dashboard", "err", err)
	}
}

// begin marks the start of a body (or a device submission) labelled label on the lane's
// worker.
func (l *lane) begin(label string, now int64) {
	l.mu.Lock()
	l.run, l.runFrom = label, now
	l.mu.Unlock()
}

// end closes the body begun last, extending the current segment when it is of the same
// class and close enough.
func (l *lane) end(now int64) {
	l.mu.Lock()
	label, from := l.run, l.runFrom
	l.run = ""
	switch {
	case l.cur.label == "":
		l.cur = laneSeg{label, from, now}
	case from-l.cur.to <= laneMerge && (l.cur.label == label || l.cur.to-l.cur.from < laneMin),
		len(l.segs) >= laneMaxSegs:
		// Short bodies in a row make one segment of at least laneMin, labelled with the
		// first one's class, so that a busy worker sends at most one segment per laneMin;
		// past laneMaxSegs until the next sample, the current segment absorbs every body.
		l.cur.to = now
	default:
		l.segs = append(l.segs, l.cur)
		l.cur = laneSeg{label, from, now}
	}
	l.mu.Unlock()
}

// drain appends the segments closed since the last call, the current one included, to out.
func (l *lane) drain(out []laneSeg) []laneSeg {
	l.mu.Lock()
	segs := l.segs
	l.segs, l.spare = l.spare[:0], segs
	cur := l.cur
	l.cur = laneSeg{}
	l.mu.Unlock()
	out = append(out, segs...)
	clear(segs)
	if cur.label != "" {
		out = append(out, cur)
	}
	return out
}

// running returns the label of the body running now and when it began ("" when none).
func (l *lane) running() (string, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.run, l.runFrom
}
