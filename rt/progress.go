package rt

import (
	"fmt"
	"io"
	"strings"
	"time"
)

const progressEvery = 200 * time.Millisecond

// progress draws one line on w for the running taskpools until Close. The total task count is
// known from enumeration; done counts lag by at most a worker batch per worker.
func (c *Context) progress(w io.Writer) {
	defer close(c.progressDone)
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	drawn := false
	for {
		select {
		case <-c.progressStop:
			if drawn {
				fmt.Fprintln(w)
			}
			return
		case <-tick.C:
		}
		var total, left int64
		c.mu.Lock()
		for tp := range c.tps {
			total += tp.total
			left += tp.Remaining()
		}
		c.mu.Unlock()
		if total == 0 {
			continue
		}
		fmt.Fprint(w, progressLine(total-left, total, 40))
		drawn = true
	}
}

// progressLine renders "\r[=====     ]  50% 500/1000 tasks".
func progressLine(done, total int64, width int) string {
	done = min(max(done, 0), total)
	fill := int(int64(width) * done / total)
	return fmt.Sprintf("\r[%s%s] %3d%% %d/%d tasks", strings.Repeat("=", fill),
		strings.Repeat(" ", width-fill), 100*done/total, done, total)
}
