package rt

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// The progress bar.
//
// The total task count of a taskpool is known once it is enumerated, so the bar needs only the
// done count. Workers count completions locally and publish them to the taskpool's counter in
// batches (doneBatch), which is too coarse for a run of a few hundred long tasks. While a bar
// is drawn (Context.tracking), each worker also stores its unpublished count in an atomic that
// only it writes (Worker.shown); the bar adds these to the taskpools' counters. A worker
// clears its shown count before it publishes the batch, so a read between the two undercounts
// for a moment and never overcounts; the bar never moves backwards.
//
// An episode is the set of taskpools seen running since the bar was last empty; it starts
// when the first of them was added. The bar samples the counters every progressEvery. It
// appears once an episode has run for progressDelay (short runs print nothing), redraws at
// most every progressEvery on a terminal and every progressEveryLog elsewhere, and ends the
// episode with a final line once all its taskpools have finished: 100 % when they succeeded.
// Taskpool.Wait has the bar sample before it returns, so that line comes before whatever the
// program prints next.

const (
	progressEvery    = 100 * time.Millisecond // at most 10 redraws a second on a terminal
	progressEveryLog = time.Second            // one line a second on a file or a pipe
	progressDelay    = 300 * time.Millisecond
	progressWidth    = 30
	rateTau          = 2 * time.Second // time constant of the smoothed rate
)

// progressBar is the state of the bar's goroutine; only that goroutine touches it.
type progressBar struct {
	c     *Context
	w     io.Writer
	tty   bool          // redraw in place with \r; otherwise one line per draw
	delay time.Duration // episode age before the first draw

	every time.Duration // least time between two draws

	seen  map[*Taskpool]struct{}
	start time.Time // when the episode's first taskpool was added
	last  time.Time // when the bar was last drawn
	shown int64     // highest done count drawn in this episode
	lastN int64     // done count and time of the previous sample, for the rate
	lastT time.Time
	rate  float64 // smoothed tasks per second; 0 until a task is done
	drawn bool
	width int // length of the previous in-place line, to blank its tail
}

// progress runs the bar on w until Close.
func (c *Context) progress(w io.Writer) {
	defer close(c.progressDone)
	b := &progressBar{c: c, w: w, tty: isTerminal(w), delay: progressDelay, every: progressEvery,
		seen: map[*Taskpool]struct{}{}}
	if !b.tty {
		b.every = progressEveryLog
	}
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for {
		select {
		case <-c.progressStop:
			b.sample(time.Now())
			return
		case done := <-c.progressKick:
			b.sample(time.Now())
			close(done)
		case now := <-tick.C:
			b.sample(now)
		}
	}
}

// flushProgress has the bar sample now, so that the final line of a finished run is out
// before Wait returns and the program prints what follows. It gives up after a second, in
// case the bar's writer blocks.
func (c *Context) flushProgress() {
	if c.progressKick == nil {
		return
	}
	done := make(chan struct{})
	timeout := time.NewTimer(time.Second)
	defer timeout.Stop()
	select {
	case c.progressKick <- done:
	case <-c.progressDone:
		return
	case <-timeout.C:
		return
	}
	select {
	case <-done:
	case <-timeout.C:
	}
}

// sample reads the counters of the episode's taskpools and draws the bar, or its final line
// when every taskpool of the episode has finished.
func (b *progressBar) sample(now time.Time) {
	b.c.mu.Lock()
	for tp := range b.c.tps {
		if _, ok := b.seen[tp]; !ok {
			if len(b.seen) == 0 || tp.start.Before(b.start) {
				b.start, b.lastT = tp.start, tp.start
			}
			b.seen[tp] = struct{}{}
		}
	}
	b.c.mu.Unlock()
	if len(b.seen) == 0 {
		return
	}
	done, total, running := b.count()
	done = max(done, b.shown)
	b.shown = done
	if dt := now.Sub(b.lastT); dt > 0 && done > b.lastN {
		inst := float64(done-b.lastN) / dt.Seconds()
		if b.rate == 0 {
			b.rate = float64(done) / now.Sub(b.start).Seconds()
		} else {
			a := min(dt.Seconds()/rateTau.Seconds(), 1)
			b.rate += a * (inst - b.rate)
		}
		b.lastN, b.lastT = done, now
	}
	if running {
		if now.Sub(b.start) >= b.delay && now.Sub(b.last) >= b.every {
			b.last = now
			b.draw(progressLine(done, total, progressWidth) + b.tail(done, total, false, now))
		}
		return
	}
	if b.drawn {
		b.draw(progressLine(done, total, progressWidth) + b.tail(done, total, true, now))
		if b.tty {
			fmt.Fprintln(b.w)
		}
	}
	*b = progressBar{c: b.c, w: b.w, tty: b.tty, delay: b.delay, every: b.every,
		seen: map[*Taskpool]struct{}{}}
}

// count returns the done and total task counts of the episode, and whether a taskpool of it
// is still running.
func (b *progressBar) count() (done, total int64, running bool) {
	live := map[*Taskpool]bool{}
	for tp := range b.seen {
		n := tp.Total()
		total += n
		select {
		case <-tp.done:
			if tp.Err() == nil {
				done += n
			} else {
				done += min(max(n-tp.remaining(), 0), n)
			}
		default:
			running = true
			live[tp] = true
			done += min(max(n-tp.remaining(), 0), n)
		}
	}
	for _, w := range b.c.workers {
		if tp := w.shownTP.Load(); tp != nil && live[tp] {
			done += w.shown.Load()
		}
	}
	return min(done, total), total, running
}

// draw writes one bar line: in place on a terminal, as its own line elsewhere.
func (b *progressBar) draw(line string) {
	b.drawn = true
	if !b.tty {
		fmt.Fprintln(b.w, line)
		return
	}
	pad := max(b.width-len(line), 0)
	b.width = len(line)
	fmt.Fprint(b.w, "\r"+line+strings.Repeat(" ", pad))
}

// tail renders the rate and the ETA, or on the final line the rate and the elapsed time.
func (b *progressBar) tail(done, total int64, final bool, now time.Time) string {
	elapsed := now.Sub(b.start)
	if final {
		avg := 0.0
		if elapsed > 0 {
			avg = float64(done) / elapsed.Seconds()
		}
		return fmt.Sprintf("  %s tasks/s  in %s", siRate(avg), fmtDuration(elapsed))
	}
	if b.rate <= 0 {
		return "  - tasks/s  ETA -"
	}
	eta := time.Duration(float64(total-done) / b.rate * float64(time.Second))
	return fmt.Sprintf("  %s tasks/s  ETA %s", siRate(b.rate), fmtDuration(eta))
}

// progressLine renders "[=====     ]  50% 500/1000 tasks".
func progressLine(done, total int64, width int) string {
	if total <= 0 {
		return fmt.Sprintf("[%s]   -%% 0/0 tasks", strings.Repeat(" ", width))
	}
	done = min(max(done, 0), total)
	fill := int(int64(width) * done / total)
	return fmt.Sprintf("[%s%s] %3d%% %d/%d tasks", strings.Repeat("=", fill),
		strings.Repeat(" ", width-fill), 100*done/total, done, total)
}

// siRate renders a rate with three significant digits and an SI prefix: "950", "12.3k", "1.20G".
func siRate(r float64) string {
	for _, p := range []struct {
		div float64
		sfx string
	}{{1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if r >= p.div {
			return trimRate(r/p.div) + p.sfx
		}
	}
	return trimRate(r)
}

func trimRate(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// fmtDuration renders d as "4.2s", "3m05s" or "2h03m".
func fmtDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		s := int(d.Round(time.Second).Seconds())
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	default:
		m := int(d.Round(time.Minute).Minutes())
		return fmt.Sprintf("%dh%02dm", m/60, m%60)
	}
}

// isTerminal reports whether w is a terminal (os.File only).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && fdIsTerminal(f.Fd())
}
