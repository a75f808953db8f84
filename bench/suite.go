package main

import (
	"fmt"
	"runtime"
	"slices"
	"time"
)

// Suite is one registered group of benchmarks.
type Suite struct {
	Name string
	// Applicable reports whether the suite can run here, and why not.
	Applicable func() (ok bool, why string)
	// Run measures the suite's workloads.
	Run func(cfg *Config) ([]Row, error)
}

var suites []Suite

// register adds a suite; called from init functions, one file per suite.
func register(s Suite) { suites = append(suites, s) }

// Config is what the driver passes to every suite.
type Config struct {
	Runs    int   // timed runs per measurement (after one warm-up)
	Workers []int // worker counts to measure
	Quick   bool  // smaller sizes, for a smoke run
}

// Stats summarises the timed runs of one measurement.
type Stats struct {
	Median, Min, Max time.Duration
}

// Measure runs f once to warm up, then cfg.Runs times, and returns the spread. f returns the
// time of its measured part, so that set-up can stay outside the timing.
func (cfg *Config) Measure(f func() (time.Duration, error)) (Stats, error) {
	if _, err := f(); err != nil {
		return Stats{}, err
	}
	ds := make([]time.Duration, 0, cfg.Runs)
	for i := 0; i < cfg.Runs; i++ {
		runtime.GC() // do not charge one run for the garbage of the previous one
		d, err := f()
		if err != nil {
			return Stats{}, err
		}
		ds = append(ds, d)
	}
	slices.Sort(ds)
	return Stats{Median: ds[len(ds)/2], Min: ds[0], Max: ds[len(ds)-1]}, nil
}

// Row is one line of the table.
type Row struct {
	Suite    string `json:"suite"`
	Workload string `json:"workload"`
	Workers  int    `json:"workers"`
	Variant  string `json:"variant"`
	// Per is the number of items (tasks) in one run, the divisor of the per-item figures.
	Per  float64 `json:"items"`
	Unit string  `json:"unit"` // per-item unit, e.g. "ns/task"
	Stats
	// MedianPer, MinPer and MaxPer are the stats divided by Per, in Unit; filled by the driver.
	MedianPer float64 `json:"median_per_item"`
	MinPer    float64 `json:"min_per_item"`
	MaxPer    float64 `json:"max_per_item"`
	// Baselines lists variants of the same workload and workers to compare against.
	Baselines []string `json:"-"`
	// Ratios maps a baseline variant to (this median / baseline median); filled by the driver.
	Ratios map[string]float64 `json:"ratios,omitempty"`
	Note   string             `json:"note,omitempty"`
}

// rate is the rate/s column: millions of items per second, or empty for a row whose item is
// a whole run (unit "ms"), where it would mean nothing.
func (r *Row) rate() string {
	if r.Unit == "ms" {
		return ""
	}
	return fmt.Sprintf("%.2fM", r.Per/r.Median.Seconds()/1e6)
}

// perItem returns d per item in nanoseconds.
func (r *Row) perItem(d time.Duration) float64 { return float64(d.Nanoseconds()) / r.Per }

// fillRatios computes each row's ratios against the baseline rows of the same suite,
// workload and workers.
func fillRatios(rows []Row) error {
	for i := range rows {
		r := &rows[i]
		r.MedianPer, r.MinPer, r.MaxPer = r.perItem(r.Median), r.perItem(r.Min), r.perItem(r.Max)
		for _, b := range r.Baselines {
			j := slices.IndexFunc(rows, func(x Row) bool {
				return x.Suite == r.Suite && x.Workload == r.Workload && x.Workers == r.Workers && x.Variant == b
			})
			if j < 0 {
				return fmt.Errorf("suite %s: row %s/%d/%s: no baseline %q", r.Suite, r.Workload, r.Workers, r.Variant, b)
			}
			if r.Ratios == nil {
				r.Ratios = map[string]float64{}
			}
			r.Ratios[b] = float64(r.Median) / float64(rows[j].Median)
		}
	}
	return nil
}
