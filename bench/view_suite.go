package main

import (
	"bufio"
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jdf2go/jdf2go/rt/profile"
)

// The view suite: `jdf2go view --summary` (which reads a trace as the page's replay does, then
// prints its totals instead of serving), built from this tree and run as a command, on traces
// of about 10, 40 and 160 MB (-quick: 2 and 8 MB) written by rt/profile for 8 workers and a
// device. Time per byte of trace; in the note (and the log) the command's peak resident set
// (through GNU time where installed, see commandPeak) and its ratio to the trace's size,
// median of the runs. Goal: a peak that does not grow with the trace.
func init() {
	register(Suite{Name: "view", Applicable: haveGo, Run: runView})
}

func runView(cfg *Config) ([]Row, error) {
	sizes := []int{10e6, 40e6, 160e6}
	if cfg.Quick {
		sizes = []int{2e6, 8e6}
	}
	dir, err := os.MkdirTemp("", "jdf2go-bench-view")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin, err := buildJDF2Go(dir)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, size := range sizes {
		path := filepath.Join(dir, fmt.Sprintf("trace-%d.json", size))
		n, err := writeViewTrace(path, size)
		if err != nil {
			return rows, err
		}
		var peaks []int64
		exact := false
		s, err := cfg.Measure(func() (time.Duration, error) {
			cmd, peak, ex := commandPeak(dir, bin, "view", "--summary", path)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			t0 := time.Now()
			if err := cmd.Run(); err != nil {
				return 0, fmt.Errorf("jdf2go view --summary: %v\n%s", err, stderr.Bytes())
			}
			d := time.Since(t0)
			if !strings.Contains(stdout.String(), "GEMM") {
				return 0, fmt.Errorf("jdf2go view --summary counted no GEMM task:\n%s", stdout.Bytes())
			}
			peaks, exact = append(peaks, peak()), ex
			return d, nil
		})
		if err != nil {
			return rows, err
		}
		os.Remove(path)
		peaks = peaks[1:] // not the warm-up
		slices.Sort(peaks)
		note := "peak RSS not measured here"
		if peak := peaks[len(peaks)/2]; peak > 0 {
			note = fmt.Sprintf("peak RSS %.0f MiB, %.2f× the trace", float64(peak)/(1<<20), float64(peak)/float64(n))
			if !exact {
				note += " (no GNU time here: at least the driver's own peak)"
			}
		}
		slog.Info("view", "trace bytes", n, "median", s.Median, "memory", note)
		rows = append(rows, Row{Suite: "view", Workload: fmt.Sprintf("trace %.0f MB", float64(n)/1e6), Workers: 1,
			Variant: "jdf2go", Per: float64(n), Unit: "ns/byte", Stats: s, Note: note})
	}
	return rows, nil
}

// writeViewTrace writes to path a trace of about size bytes: potrf's classes on 8 workers,
// spans of 50 µs back to back, and one span in 9 on a device (its tasks and stage-ins). It
// returns the file's size. rt/profile writes it, a slice of the run at a time, so that the
// driver's memory (which a child's peak resident set includes, see commandPeak) stays that
// of one slice: each slice's events are spliced into one traceEvents array, its tracks'
// metadata repeated (the same processes and threads in every slice).
func writeViewTrace(path string, size int) (int64, error) {
	const workers, perSpan, slice = 8, 50_000, 90_000 // ns, events
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	// About 85 bytes per event: {"ph":"X","pid":0,"tid":3,"ts":…,"dur":…,"name":"GEMM(…)"},
	events := size / 85
	open, tail := []byte(`"traceEvents":[`), []byte("]}")
	for first := 0; first < events; first += slice {
		tr := profile.New()
		classes := []profile.Name{tr.Name("POTRF"), tr.Name("TRSM"), tr.Name("SYRK"), tr.Name("GEMM")}
		var tracks []*profile.Track
		for w := range workers {
			tracks = append(tracks, tr.NewTrack("workers", fmt.Sprintf("worker %d", w)))
		}
		dev := tr.NewTrack("gpu0", "stream 0")
		stageIn := tr.Name("stage_in GEMM")
		for i := first; i < min(first+slice, events); i++ {
			at, lane := int64(i/(workers+1)), i%(workers+1)
			start := at * perSpan
			switch {
			case lane < workers:
				tracks[lane].Span(classes[i%len(classes)], start, start+perSpan*9/10, at%97, int64(lane), int64(i%13))
			case at%2 == 0:
				dev.Span(classes[3], start, start+perSpan/2, at%97, 0, 1)
			default:
				dev.Span(stageIn, start, start+perSpan/4)
			}
		}
		var b bytes.Buffer
		if err := tr.WriteJSON(&b); err != nil {
			return 0, err
		}
		text := b.Bytes()
		i, j := bytes.Index(text, open), bytes.LastIndex(text, tail)
		if i < 0 || j < i {
			return 0, fmt.Errorf("rt/profile wrote no traceEvents array:\n%.200s", text)
		}
		if first == 0 {
			w.Write(text[:j])
		} else {
			w.WriteString(",\n")
			w.Write(text[i+len(open) : j])
		}
	}
	w.WriteString("]}\n")
	if err := w.Flush(); err != nil {
		return 0, err
	}
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), f.Close()
}
