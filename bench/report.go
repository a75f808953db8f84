package main

// The HTML report: one self-contained file (the plots are PNGs embedded as data URIs) with the
// machine description, one table per suite, and plots drawn with gonum/plot from the rows:
//
//   - potrf: GFLOP/s against NB, one line per variant and worker count;
//   - rt: ns/task against workers, one plot per workload, one line per variant;
//   - gpu-sim (and any suite whose variants are named batch_max=N): tasks/s against the
//     batch size, one line per workload and manager loop;
//   - ce, ce-mpi (and any suite with workloads named "latency NB" and "bandwidth NB"):
//     latency and bandwidth against the message size, one line per path.
//
// Plots take their x values from the rows' names (NB=256, batch_max=32, 4096B), so a suite
// gets plotted by naming its rows that way.

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"math"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/gpu/cuda"
)

// Machine describes where the benchmarks ran.
type Machine struct {
	Name   string  `json:"name,omitempty"` // -machine, or the GPU and CPU count
	CPU    string  `json:"cpu"`
	CPUs   int     `json:"cpus"`
	MemGiB float64 `json:"mem_gib"`
	OS     string  `json:"os"`
	Kernel string  `json:"kernel,omitempty"`
	Go     string  `json:"go"`
	BLAS   string  `json:"blas"`
	GPUs   string  `json:"gpus"`
}

// machineInfo reads the description of this machine (Linux files where they exist).
func machineInfo() Machine {
	m := Machine{CPUs: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version(),
		CPU: "unknown", GPUs: "none"}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				if kb, err := strconv.ParseFloat(f[1], 64); err == nil {
					m.MemGiB = kb / (1 << 20)
				}
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if impl, err := blas.Select("auto"); err == nil {
		m.BLAS = strings.TrimSpace(impl.Name() + " " + impl.Config())
	}
	if n, _ := cuda.Count(); n > 0 {
		var names []string
		for i := range n {
			name, err := cuda.Device(i).Name()
			if err != nil {
				name = "?"
			}
			names = append(names, name)
		}
		m.GPUs = strings.Join(names, ", ")
	}
	return m
}

// Report is what the HTML page shows.
type Report struct {
	Date    time.Time
	Commit  string
	Command []string
	Machine Machine
	Rows    []Row
	Skipped []string
}

type reportTable struct {
	Suite string
	Rows  []reportRow
}

type reportRow struct {
	Workload, Variant, Unit, Ratios, Note string
	Workers                               int
	Median, Min, Max, Rate                string
}

type reportFigure struct {
	Title string
	PNG   template.URL // data:image/png;base64,...
}

// WriteReport renders r as one self-contained HTML file at path.
func WriteReport(path string, r Report) error {
	figs, err := reportFigures(r.Rows)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	data := struct {
		Report
		Tables  []reportTable
		Figures []reportFigure
	}{r, reportTables(r.Rows), figs}
	if err := reportPage.Execute(&b, data); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// reportTables groups the rows by suite, in the order the suites ran.
func reportTables(rows []Row) []reportTable {
	var out []reportTable
	for _, r := range rows {
		if len(out) == 0 || out[len(out)-1].Suite != r.Suite {
			out = append(out, reportTable{Suite: r.Suite})
		}
		var ratios []string
		for _, b := range slices.Sorted(mapsKeys(r.Ratios)) {
			ratios = append(ratios, fmt.Sprintf("%.2f× %s", r.Ratios[b], b))
		}
		t := &out[len(out)-1]
		t.Rows = append(t.Rows, reportRow{Workload: r.Workload, Variant: r.Variant, Unit: r.Unit,
			Ratios: strings.Join(ratios, ", "), Note: r.Note, Workers: r.Workers,
			Median: fmt.Sprintf("%.1f", r.MedianPer), Min: fmt.Sprintf("%.1f", r.MinPer),
			Max: fmt.Sprintf("%.1f", r.MaxPer), Rate: r.rate()})
	}
	return out
}

func mapsKeys(m map[string]float64) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

var (
	nbRe    = regexp.MustCompile(`^(.*) NB=(\d+)$`)
	batchRe = regexp.MustCompile(`^batch_max=(\d+)(.*)$`)
	sizeRe  = regexp.MustCompile(`^(latency|bandwidth) (\d+)B$`)
)

// series is one line of a plot: named points, kept in insertion order of their names.
type series struct {
	names []string
	pts   map[string]plotter.XYs
}

func (s *series) add(name string, x, y float64) {
	if s.pts == nil {
		s.pts = map[string]plotter.XYs{}
	}
	if _, ok := s.pts[name]; !ok {
		s.names = append(s.names, name)
	}
	s.pts[name] = append(s.pts[name], plotter.XY{X: x, Y: y})
}

// reportFigures draws every plot the rows allow.
func reportFigures(rows []Row) ([]reportFigure, error) {
	var figs []reportFigure
	draw := func(title, x, y string, logX, logY bool, s *series) error {
		if s == nil || len(s.names) == 0 {
			return nil
		}
		png, err := linePlot(title, x, y, logX, logY, s)
		if err != nil {
			return fmt.Errorf("plot %q: %w", title, err)
		}
		figs = append(figs, reportFigure{Title: title,
			PNG: template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(png))})
		return nil
	}
	// potrf: GFLOP/s against NB, one plot per matrix (the workload without its NB).
	var order []string
	perKey := map[string]*series{}
	get := func(key string) *series {
		if perKey[key] == nil {
			perKey[key] = &series{}
			order = append(order, key)
		}
		return perKey[key]
	}
	for _, r := range rows {
		if m := nbRe.FindStringSubmatch(r.Workload); m != nil && r.Suite == "potrf" && r.Median > 0 {
			nb, _ := strconv.Atoi(m[2])
			gflops := r.Per * 1e3 / r.Median.Seconds() / 1e9
			get("potrf: "+m[1]).add(fmt.Sprintf("%s, %d workers", r.Variant, r.Workers), float64(nb), gflops)
		}
	}
	for _, k := range order {
		if err := draw(k, "NB (tile size)", "GFLOP/s", false, false, perKey[k]); err != nil {
			return nil, err
		}
	}
	// rt: ns/task against workers, one plot per workload.
	order, perKey = nil, map[string]*series{}
	for _, r := range rows {
		if r.Suite == "rt" {
			get("rt: "+r.Workload).add(r.Variant, float64(r.Workers), r.MedianPer)
		}
	}
	for _, k := range order {
		if err := draw(k, "workers", "ns/task (log scale)", false, true, perKey[k]); err != nil {
			return nil, err
		}
	}
	// Batched GPU suites: tasks/s against the batch size.
	order, perKey = nil, map[string]*series{}
	for _, r := range rows {
		batch, rest := 0.0, ""
		if strings.HasPrefix(r.Variant, "singleton") {
			batch, rest = 1, strings.TrimPrefix(r.Variant, "singleton")
		} else if m := batchRe.FindStringSubmatch(r.Variant); m != nil {
			b, _ := strconv.Atoi(m[1])
			batch, rest = float64(b), m[2]
		}
		if batch > 0 && r.Median > 0 {
			name := r.Workload
			if rest = strings.TrimSpace(rest); rest != "" {
				name += " " + rest
			}
			get(r.Suite+": tasks/s against batch size").add(name, batch, r.Per/r.Median.Seconds())
		}
	}
	for _, k := range order {
		if err := draw(k, "batch_max (tasks per ring)", "tasks/s", true, false, perKey[k]); err != nil {
			return nil, err
		}
	}
	// Communication: latency and bandwidth against the message size.
	order, perKey = nil, map[string]*series{}
	for _, r := range rows {
		m := sizeRe.FindStringSubmatch(r.Workload)
		if m == nil || r.Median <= 0 {
			continue
		}
		size, _ := strconv.ParseFloat(m[2], 64)
		if m[1] == "latency" {
			get(r.Suite+": latency").add(r.Variant, size, r.MedianPer/1e3)
		} else {
			// Per counts kB for bandwidth rows (ce, ce-mpi), so this is GB/s.
			get(r.Suite+": bandwidth").add(r.Variant, size, r.Per*1e3/r.Median.Seconds()/1e9)
		}
	}
	for _, k := range order {
		y := "µs per half round trip"
		if strings.HasSuffix(k, "bandwidth") {
			y = "GB/s"
		}
		if err := draw(k, "message size (bytes)", y, true, false, perKey[k]); err != nil {
			return nil, err
		}
	}
	return figs, nil
}

// linePlot draws the series as lines with points and returns the PNG.
func linePlot(title, xLabel, yLabel string, logX, logY bool, s *series) ([]byte, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Add(plotter.NewGrid())
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	var args []any
	for _, n := range s.names {
		pts := s.pts[n]
		slices.SortFunc(pts, func(a, b plotter.XY) int { return cmpFloat(a.X, b.X) })
		args = append(args, n, pts)
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return nil, err
	}
	p.Legend.Top = true
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Y.Min = math.Max(p.Y.Min/2, 1e-9)
	} else {
		p.Y.Min = 0
	}
	if logX {
		p.X.Min = math.Max(p.X.Min, 0.5)
	}
	wt, err := p.WriterTo(6*vg.Inch, 4*vg.Inch, "png")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := wt.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

var reportPage = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>jdf2go benchmarks, {{.Date.Format "2006-01-02 15:04 MST"}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 75em; color: #222; }
h1, h2 { font-weight: 600; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.25em 0.6em; text-align: right; }
th { background: #f4f4f4; }
td.l, th.l { text-align: left; }
dl { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; }
dt { font-weight: 600; }
figure { display: inline-block; margin: 0.5em; }
img { max-width: 100%; }
</style>
</head>
<body>
<h1>jdf2go benchmarks</h1>
<p>{{.Date.Format "2006-01-02 15:04 MST"}}{{with .Commit}}, commit {{.}}{{end}}{{with .Command}}: <code>{{range $i, $a := .}}{{if $i}} {{end}}{{$a}}{{end}}</code>{{end}}. Each figure is the median of the timed runs (min and max beside it).
Ratios are the time of jdf2go divided by the time of the baseline, measured in the same run: below 1, jdf2go is faster.</p>
<h2>Machine</h2>
<dl>
{{with .Machine.Name}}<dt>Name</dt><dd>{{.}}</dd>
{{end}}<dt>CPU</dt><dd>{{.Machine.CPU}}, {{.Machine.CPUs}} logical CPUs</dd>
<dt>Memory</dt><dd>{{printf "%.1f" .Machine.MemGiB}} GiB</dd>
<dt>System</dt><dd>{{.Machine.OS}}{{with .Machine.Kernel}}, kernel {{.}}{{end}}</dd>
<dt>Go</dt><dd>{{.Machine.Go}}</dd>
<dt>BLAS</dt><dd>{{.Machine.BLAS}}</dd>
<dt>GPUs</dt><dd>{{.Machine.GPUs}}</dd>
</dl>
<h2>Plots</h2>
{{range .Figures}}<figure><img src="{{.PNG}}" alt="{{.Title}}"></figure>
{{else}}<p>No suite produced rows that can be plotted.</p>
{{end}}
<h2>Tables</h2>
{{range .Tables}}<h3>{{.Suite}}</h3>
<table>
<tr><th class="l">workload</th><th>workers</th><th class="l">variant</th><th>median</th><th>min</th><th>max</th><th class="l">unit</th><th>rate/s</th><th class="l">ratios</th><th class="l">note</th></tr>
{{range .Rows}}<tr><td class="l">{{.Workload}}</td><td>{{.Workers}}</td><td class="l">{{.Variant}}</td><td>{{.Median}}</td><td>{{.Min}}</td><td>{{.Max}}</td><td class="l">{{.Unit}}</td><td>{{.Rate}}</td><td class="l">{{.Ratios}}</td><td class="l">{{.Note}}</td></tr>
{{end}}</table>
{{end}}
{{with .Skipped}}<h2>Skipped</h2>
<ul>{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
</body>
</html>
`))
