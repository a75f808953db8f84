package profile

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
	"time"
)

// Stat aggregates the spans that share a name (for rt: the executions of one task class).
type Stat struct {
	Name  string
	Count int64
	Total time.Duration
	Mean  time.Duration
	Max   time.Duration
}

// Summary aggregates every span (instants excluded) by name, sorted by decreasing total time
// then by name. Call it after the writers have stopped.
func (tr *Tracer) Summary() []Stat {
	if tr == nil {
		return nil
	}
	names, tracks := tr.snapshot()
	acc := make([]Stat, len(names))
	for _, t := range tracks {
		t.Events(func(e *Event) {
			if e.End <= e.Start || int(e.Name) >= len(acc) {
				return
			}
			d := time.Duration(e.End - e.Start)
			s := &acc[e.Name]
			s.Count++
			s.Total += d
			s.Max = max(s.Max, d)
		})
	}
	var out []Stat
	for i, s := range acc {
		if s.Count == 0 {
			continue
		}
		s.Name = names[i]
		s.Mean = s.Total / time.Duration(s.Count)
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Total != out[j].Total {
			return out[i].Total > out[j].Total
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// WriteSummary prints stats as an aligned table.
func WriteSummary(w io.Writer, stats []Stat) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "name\tcount\ttotal\tmean\tmax\t\n")
	for _, s := range stats {
		fmt.Fprintf(tw, "%s\t%d\t%v\t%v\t%v\t\n", s.Name, s.Count, s.Total, s.Mean, s.Max)
	}
	return tw.Flush()
}
