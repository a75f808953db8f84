package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"html"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// reportRows are rows of every shape the report plots, with known figures.
func reportRows() []Row {
	var rows []Row
	add := func(r Row) {
		r.MedianPer = float64(r.Median.Nanoseconds()) / r.Per
		r.MinPer, r.MaxPer = r.MedianPer, r.MedianPer
		r.Min, r.Max = r.Median, r.Median
		rows = append(rows, r)
	}
	for _, nb := range []int{128, 256} {
		for _, v := range []string{"jdf2go", "lapack"} {
			// 1e9 flops (Per counts kflop) in 0.1 s: 10 GFLOP/s.
			add(Row{Suite: "potrf", Workload: "openblas N=2048 NB=" + itoa(nb), Workers: 2, Variant: v,
				Per: 1e6, Unit: "ns/kflop", Stats: Stats{Median: 100 * time.Millisecond}})
		}
	}
	for _, w := range []int{1, 2} {
		for _, v := range []string{"jdf2go", "goroutines"} {
			add(Row{Suite: "rt", Workload: "chain", Workers: w, Variant: v, Per: 1e6, Unit: "ns/task",
				Stats:  Stats{Median: time.Duration(w) * 100 * time.Millisecond},
				Ratios: map[string]float64{"goroutines": 0.25}})
		}
	}
	for _, v := range []string{"singleton", "batch_max=8", "singleton drain=1", "batch_max=8 drain=1"} {
		add(Row{Suite: "gpu-sim", Workload: "manager", Workers: 2, Variant: v, Per: 1000, Unit: "ns/task",
			Stats: Stats{Median: time.Millisecond}})
	}
	for _, size := range []int{8, 4096} {
		add(Row{Suite: "ce", Workload: "latency " + itoa(size) + "B", Workers: 2, Variant: "direct", Per: 100,
			Unit: "ns/half-rt", Stats: Stats{Median: 100 * time.Microsecond}})
		// 1 MB (Per counts kB) in 1 ms: 1 GB/s.
		add(Row{Suite: "ce", Workload: "bandwidth " + itoa(size) + "B", Workers: 2, Variant: "direct", Per: 1000,
			Unit: "ns/kB", Stats: Stats{Median: time.Millisecond}})
	}
	return rows
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestReport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.html")
	m := Machine{CPU: "Test CPU 3000", CPUs: 2, MemGiB: 24, OS: "linux/amd64", Go: "go1.x", BLAS: "gonum", GPUs: "none"}
	err := WriteReport(path, Report{Date: time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC), Machine: m,
		Rows: reportRows(), Skipped: []string{"cuda: skipped: no CUDA device"}})
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	for _, want := range []string{"Test CPU 3000, 2 logical CPUs", "24.0 GiB", "<h3>potrf</h3>", "<h3>rt</h3>",
		"<h3>gpu-sim</h3>", "<h3>ce</h3>", "0.25× goroutines", "cuda: skipped: no CUDA device",
		"potrf: openblas N=2048", "rt: chain", "gpu-sim: tasks/s against batch size", "ce: latency", "ce: bandwidth"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(s, "src=\"#ZgotmplZ\"") || strings.Contains(s, "http") {
		t.Error("report is not self-contained (or an image was escaped away)")
	}
	imgs := regexp.MustCompile(`src="data:image/png;base64,([^"]+)"`).FindAllStringSubmatch(s, -1)
	if len(imgs) != 5 {
		t.Fatalf("%d embedded plots, want 5 (potrf, rt chain, gpu-sim, ce latency, ce bandwidth)", len(imgs))
	}
	for _, img := range imgs {
		b, err := base64.StdEncoding.DecodeString(html.UnescapeString(img[1]))
		if err != nil {
			t.Fatal(err)
		}
		if cfg, err := png.DecodeConfig(bytes.NewReader(b)); err != nil || cfg.Width < 300 {
			t.Fatalf("embedded plot: %v, %+v", err, cfg)
		}
	}
}

// The plotted values come from the rows: GFLOP/s for potrf, GB/s for bandwidth.
func TestReportValues(t *testing.T) {
	var got = map[string]float64{}
	rows := reportRows()
	for _, r := range rows {
		switch {
		case r.Suite == "potrf":
			got["gflops"] = r.Per * 1e3 / r.Median.Seconds() / 1e9
		case strings.HasPrefix(r.Workload, "bandwidth"):
			got["gbs"] = r.Per * 1e3 / r.Median.Seconds() / 1e9
		}
	}
	if got["gflops"] != 10 || got["gbs"] != 1 {
		t.Fatalf("figures %v, want 10 GFLOP/s and 1 GB/s", got)
	}
	figs, err := reportFigures(rows)
	if err != nil || len(figs) != 5 {
		t.Fatalf("%d figures, %v", len(figs), err)
	}
}

func TestReportFromJSON(t *testing.T) {
	dir := t.TempDir()
	res := results{Date: time.Now().UTC(), CPUs: 2, GOOS: "linux", GOARCH: "amd64", Go: "go1.x", Rows: reportRows()}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	in, out := filepath.Join(dir, "results.json"), filepath.Join(dir, "report.html")
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	if code := run([]string{"-from", in, "-html", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	page, err := os.ReadFile(out)
	if err != nil || strings.Count(string(page), "data:image/png;base64,") != 5 {
		t.Fatalf("report from JSON: %v, %d plots", err, strings.Count(string(page), "data:image/png;base64,"))
	}
}
