package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jdf2go/jdf2go/rt/ce"
	"github.com/jdf2go/jdf2go/rt/ce/cetest"
)

// The communication suites (docs/runtime.md, "Benchmarks").
//
// ce: two in-process ranks (ce.NewWorld). "am-rate": 200 k one-way 8-byte AMs from rank 0 to
// rank 1 (goal ≥ 1 M AMs/s), sent by a worker (direct path) and by a device manager (shifted
// path), against a buffered Go channel carrying the same 8 bytes between two goroutines.
// "pingpong": 8-byte round trips (the figure is half a round trip) on the direct,
// shifted-inline and shifted paths (cetest.PingPong), against a ping-pong over two Go channels.
//
// ce-mpi: examples/pingpong built with -tags mpi and run under mpirun with 2 ranks, MPI
// provided MPI_THREAD_MULTIPLE: 8-byte latency and 4 MiB bandwidth (Puts), half round trips,
// on the raw binding (the baseline) and on the Engine's paths. Goals: direct ≤ 1.2× raw and
// shifted ≤ 2× raw + 1 µs for latency, ≥ 90 % of raw bandwidth (ratio ≤ 1.11) on every path.
// The bandwidth rows count kB, so their rate/s column reads as GB/s.
func init() {
	register(Suite{Name: "ce", Applicable: func() (bool, string) { return true, "" }, Run: runCE})
	register(Suite{Name: "ce-mpi", Applicable: mpiApplicable, Run: runCEMPI})
}

const (
	cePingTag = ce.FirstUserTag
	ceMaxAM   = 16 << 10 // the largest active message of the latency rows
)

func runCE(cfg *Config) ([]Row, error) {
	k, trips := 200_000, 20_000
	if cfg.Quick {
		k, trips = 20_000, 2_000
	}
	var rows []Row
	row := func(workload, variant string, per float64, unit string, s Stats, base ...string) {
		rows = append(rows, Row{Suite: "ce", Workload: workload, Workers: 2, Variant: variant,
			Per: per, Unit: unit, Stats: s, Baselines: base})
	}
	for _, role := range []ce.Role{ce.RoleWorker, ce.RoleDeviceManager} {
		s, err := cfg.Measure(func() (time.Duration, error) { return amRate(role, k) })
		if err != nil {
			return rows, fmt.Errorf("am-rate: %w", err)
		}
		row("am-rate 8B", map[ce.Role]string{ce.RoleWorker: "direct", ce.RoleDeviceManager: "shifted"}[role],
			float64(k), "ns/AM", s, "chan")
	}
	s, _ := cfg.Measure(func() (time.Duration, error) { return chanRate(k), nil })
	row("am-rate 8B", "chan", float64(k), "ns/AM", s)

	w := ce.NewWorld(2)
	es := w.Engines(ce.Logger(cetest.Quiet))
	pps := make([]*cetest.PingPong, 2)
	for i, e := range es {
		var err error
		if pps[i], err = cetest.NewPingPong(e, cePingTag, ceMaxAM); err != nil {
			return rows, err
		}
		if err := e.Start(context.Background()); err != nil {
			return rows, err
		}
	}
	defer ce.CloseAll(context.Background(), es...)
	for _, path := range []cetest.Path{cetest.Direct, cetest.ShiftedInline, cetest.Shifted} {
		s, err := measurePingPong(cfg, pps, path, 8, trips, false)
		if err != nil {
			return rows, fmt.Errorf("pingpong %v: %w", path, err)
		}
		row("pingpong 8B", path.String(), float64(2*trips), "ns/half-rt", s, "chan")
	}
	s, _ = cfg.Measure(func() (time.Duration, error) { return chanPingPong(trips), nil })
	row("pingpong 8B", "chan", float64(2*trips), "ns/half-rt", s)
	// Latency (AMs) and bandwidth (Puts) against the message size, for the report's plots.
	latTrips, bwTrips := trips/10, 20
	if cfg.Quick {
		bwTrips = 4
	}
	for _, size := range []int{8, 256, 4096, ceMaxAM} {
		for _, path := range []cetest.Path{cetest.Direct, cetest.Shifted} {
			s, err := measurePingPong(cfg, pps, path, size, latTrips, false)
			if err != nil {
				return rows, fmt.Errorf("latency %dB %v: %w", size, path, err)
			}
			row(fmt.Sprintf("latency %dB", size), path.String(), float64(2*latTrips), "ns/half-rt", s)
		}
	}
	for _, size := range []int{4 << 10, 64 << 10, 1 << 20, 4 << 20} {
		for _, path := range []cetest.Path{cetest.Direct, cetest.Shifted} {
			s, err := measurePingPong(cfg, pps, path, size, bwTrips, true)
			if err != nil {
				return rows, fmt.Errorf("bandwidth %dB %v: %w", size, path, err)
			}
			// Per kB, so that the rate/s column (millions of items per second) reads GB/s.
			row(fmt.Sprintf("bandwidth %dB", size), path.String(), float64(2*bwTrips)*float64(size)/1e3, "ns/kB", s)
		}
	}
	return rows, nil
}

// measurePingPong measures n round trips of size bytes on path between the two ranks of pps
// (AMs, or Puts when put); the time is rank 0's.
func measurePingPong(cfg *Config, pps []*cetest.PingPong, path cetest.Path, size, n int, put bool) (Stats, error) {
	return cfg.Measure(func() (time.Duration, error) {
		var el [2]time.Duration
		var errs [2]error
		done := make(chan int)
		for i := range 2 {
			go func() {
				el[i], errs[i] = pps[i].Run(context.Background(), path, size, n, put)
				done <- i
			}()
		}
		<-done
		<-done
		if errs[0] != nil {
			return 0, errs[0]
		}
		return el[0], errs[1]
	})
}

// amRate times k one-way AMs between two fresh in-process ranks.
func amRate(role ce.Role, k int) (time.Duration, error) {
	var got atomic.Int64
	w := ce.NewWorld(2)
	es := w.Engines(ce.Logger(cetest.Quiet), ce.Budget(1<<20))
	for _, e := range es {
		e.RegisterTag(cePingTag, 8, func(*ce.Caller, ce.Rank, []byte) { got.Add(1) })
		if err := e.Start(context.Background()); err != nil {
			return 0, err
		}
	}
	defer ce.CloseAll(context.Background(), es...)
	c, err := es[0].Attach(role, "sender")
	if err != nil {
		return 0, err
	}
	payload := []byte("12345678")
	t0 := time.Now()
	for range k {
		m, err := c.TryNewMsg(8)
		for err == ce.ErrNoBuffers {
			runtime.Gosched()
			m, err = c.TryNewMsg(8)
		}
		if err != nil {
			return 0, err
		}
		copy(m.Bytes(), payload)
		if err := c.SendAM(1, cePingTag, m, nil); err != nil {
			return 0, err
		}
	}
	for got.Load() < int64(k) {
		runtime.Gosched()
	}
	return time.Since(t0), nil
}

// chanRate is the baseline: the same 8 bytes through a buffered channel to another goroutine.
func chanRate(k int) time.Duration {
	ch := make(chan [8]byte, 1024)
	done := make(chan struct{})
	go func() {
		for range k {
			<-ch
		}
		close(done)
	}()
	t0 := time.Now()
	for range k {
		ch <- [8]byte{1, 2, 3, 4, 5, 6, 7, 8}
	}
	<-done
	return time.Since(t0)
}

// chanPingPong is the ping-pong baseline: two goroutines and two unbuffered channels.
func chanPingPong(trips int) time.Duration {
	ping, pong := make(chan [8]byte), make(chan [8]byte)
	go func() {
		for range trips {
			pong <- <-ping
		}
	}()
	t0 := time.Now()
	for range trips {
		ping <- [8]byte{}
		<-pong
	}
	return time.Since(t0)
}

func mpiApplicable() (bool, string) {
	if _, err := exec.LookPath("mpirun"); err != nil {
		return false, "no mpirun on PATH (apt-get install libopenmpi-dev openmpi-bin)"
	}
	if err := exec.Command("pkg-config", "--exists", "ompi-c").Run(); err != nil {
		return false, "no Open MPI development files (pkg-config ompi-c)"
	}
	return true, ""
}

// runCEMPI builds examples/pingpong with the mpi tag and runs it under mpirun.
func runCEMPI(cfg *Config) ([]Row, error) {
	dir, err := os.MkdirTemp("", "jdf2go-bench-ce")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "pingpong")
	// The package path, not ./examples/pingpong: the driver also runs from bench/ (go test).
	build := exec.Command("go", "build", "-tags", "mpi", "-o", bin, "github.com/jdf2go/jdf2go/examples/pingpong")
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building examples/pingpong with -tags mpi: %v\n%s", err, out)
	}
	latIters, bwIters := "2000", "50"
	if cfg.Quick {
		latIters, bwIters = "200", "5"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-np", "2",
		bin, "-json", "-runs", strconv.Itoa(cfg.Runs), "-lat-iters", latIters, "-bw-iters", bwIters)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("mpirun pingpong: %v\n%s", err, stderr.String())
	}
	var res struct {
		Results []struct {
			Workload string  `json:"workload"`
			Path     string  `json:"path"`
			Bytes    int     `json:"bytes"`
			Median   float64 `json:"median_us"`
			Min      float64 `json:"min_us"`
			Max      float64 `json:"max_us"`
		} `json:"results"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return nil, fmt.Errorf("reading pingpong's JSON: %v\n%s", err, stdout.String())
	}
	us := func(v float64) time.Duration { return time.Duration(v * 1e3) }
	var rows []Row
	for _, r := range res.Results {
		row := Row{Suite: "ce-mpi", Workload: fmt.Sprintf("%s %dB", r.Workload, r.Bytes), Workers: 2, Variant: r.Path,
			Per: 1, Unit: "ns/half-rt", Stats: Stats{Median: us(r.Median), Min: us(r.Min), Max: us(r.Max)}}
		if r.Workload == "bandwidth" {
			// Per kB, so that the rate/s column (millions of items per second) reads GB/s.
			row.Per, row.Unit = float64(r.Bytes)/1e3, "ns/kB"
		}
		if r.Path != "raw" {
			row.Baselines = []string{"raw"}
		}
		rows = append(rows, row)
	}
	return rows, nil
}
