package remote

import (
	"encoding/json"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/jdf2go/jdf2go/rt/ce"
	"github.com/jdf2go/jdf2go/rt/profile"
)

// tracing is a Node's part of its rank's Perfetto trace: a "comm" group with one send track
// per worker slot (written by that worker), and receive and Get tracks written by the comm
// goroutine. Each message carries a flow id, so that the merged traces draw an arrow from
// the send span to the receive span.
type tracing struct {
	tr                        *profile.Tracer
	send, fwd, recv, get, wbk profile.Name
	recvTrack, getTrack       *profile.Track
	seq                       atomic.Uint64
}

func newTracing(tr *profile.Tracer) *tracing {
	if tr == nil {
		return nil
	}
	return &tracing{tr: tr, send: tr.Name("activate"), fwd: tr.Name("forward"), recv: tr.Name("receive"),
		get: tr.Name("get"), wbk: tr.Name("write-back")}
}

// flowID returns a job-wide unique id for a message sent by rank.
func (t *tracing) flowID(rank int) uint64 {
	if t == nil {
		return 0
	}
	return uint64(rank+1)<<40 | t.seq.Add(1)
}

// sendTrack returns slot s's track, created by its owner on first use.
func (t *tracing) sendTrack(s *slot, worker int) *profile.Track {
	if t == nil {
		return nil
	}
	if s.track == nil {
		s.track = t.tr.NewTrack("comm", fmt.Sprintf("send (worker %d)", worker))
	}
	return s.track
}

// commTracks returns the receive and Get tracks, for the comm goroutine only (c's role).
func (t *tracing) commTracks(c *ce.Caller) (*profile.Track, *profile.Track) {
	if t == nil || c.Role() != ce.RoleComm {
		return nil, nil
	}
	if t.recvTrack == nil {
		t.recvTrack = t.tr.NewTrack("comm", "receive")
		t.getTrack = t.tr.NewTrack("comm", "get")
	}
	return t.recvTrack, t.getTrack
}

func (t *tracing) now() int64 {
	if t == nil {
		return 0
	}
	return t.tr.Now()
}

// MergeTraces writes to out one Perfetto trace made of the per-rank traces in (rank i's is
// in[i], as TracePath names them): rank i's processes are renamed "rank i: …", and times
// are shifted so that all ranks share one clock (the wall clock at which each rank's trace
// started). The flow arrows between ranks then connect.
func MergeTraces(out string, in ...string) error {
	type trace struct {
		Epoch  int64            `json:"jdf2goEpochNs"`
		Events []map[string]any `json:"traceEvents"`
	}
	ts := make([]trace, len(in))
	first := int64(0)
	for i, p := range in {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &ts[i]); err != nil {
			return fmt.Errorf("remote: trace %s: %w", p, err)
		}
		if i == 0 || ts[i].Epoch < first {
			first = ts[i].Epoch
		}
	}
	var all []map[string]any
	for r, t := range ts {
		shift := float64(t.Epoch-first) / 1e3 // µs
		for _, e := range t.Events {
			if pid, ok := e["pid"].(float64); ok {
				e["pid"] = float64(r*1000) + pid
			}
			if ts, ok := e["ts"].(float64); ok {
				e["ts"] = ts + shift
			}
			if e["ph"] == "M" && e["name"] == "process_name" {
				if args, ok := e["args"].(map[string]any); ok {
					args["name"] = fmt.Sprintf("rank %d: %v", r, args["name"])
				}
			}
			all = append(all, e)
		}
	}
	b, err := json.Marshal(map[string]any{"displayTimeUnit": "ns", "jdf2goEpochNs": first, "traceEvents": all})
	if err != nil {
		return err
	}
	return os.WriteFile(out, b, 0o644)
}
