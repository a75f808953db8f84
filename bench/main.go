package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

func main() {
	if in := os.Getenv(genChildEnv); in != "" {
		os.Exit(genChild(in, os.Stderr))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	runs := fs.Int("runs", 3, "timed runs per measurement, after one warm-up")
	workers := fs.String("workers", "1,2", "comma-separated worker counts")
	suite := fs.String("suite", "", "run only suites whose name matches this regexp")
	quick := fs.Bool("quick", false, "small sizes (smoke test of the driver)")
	out := fs.String("json", "bench/results.json", "where to write the results (empty: nowhere)")
	html := fs.String("html", "bench/report.html", "where to write the HTML report with plots (empty: nowhere)")
	from := fs.String("from", "", "write the report from this results.json instead of running the suites")
	record := fs.String("record", "", "also write the results to DIR/<date>-<machine>-<suite>.json (bench/results keeps them)")
	machine := fs.String("machine", "", "the machine's name in the results and the -record file name (default: GPU and CPU count, e.g. h200-16cpu)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	memChild := fs.Int("dynamic-memory-child", 0, "internal: run the dynamic suite's memory workload of N tasks "+
		"(the suite starts the driver so, as a child process)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *memChild > 0 {
		return memoryChild(*memChild, stdout)
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	if *from != "" {
		if err := reportFrom(*from, *html); err != nil {
			log.Error("report", "err", err)
			return 1
		}
		return 0
	}
	cfg := &Config{Runs: *runs, Quick: *quick}
	for _, s := range strings.Split(*workers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fmt.Fprintf(stderr, "bench: bad -workers %q\n", *workers)
			return 2
		}
		cfg.Workers = append(cfg.Workers, n)
	}
	if cfg.Runs < 1 {
		fmt.Fprintln(stderr, "bench: -runs must be at least 1")
		return 2
	}
	match, err := regexp.Compile(*suite)
	if err != nil {
		fmt.Fprintf(stderr, "bench: bad -suite: %v\n", err)
		return 2
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "bench: -cpuprofile: %v\n", err)
			return 2
		}
		defer func() {
			pprof.StopCPUProfile()
			if err := f.Close(); err != nil {
				log.Error("writing the CPU profile", "err", err)
			}
		}()
	}
	var rows []Row
	var skipped []string
	status := 0
	for _, s := range suites {
		if !match.MatchString(s.Name) {
			continue
		}
		if ok, why := s.Applicable(); !ok {
			skipped = append(skipped, fmt.Sprintf("%s: skipped: %s", s.Name, why))
			continue
		}
		log.Info("running suite", "suite", s.Name)
		rs, err := s.Run(cfg)
		if err != nil {
			log.Error("suite failed", "suite", s.Name, "err", err)
			status = 1
		}
		rows = append(rows, rs...)
	}
	if err := fillRatios(rows); err != nil {
		log.Error("ratios", "err", err)
		status = 1
	}
	printTable(stdout, rows, skipped)
	res := results{Date: time.Now().UTC(), Commit: buildCommit(), Command: append([]string{"bench"}, args...),
		GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(), Go: runtime.Version(),
		Machine: machineInfo(), Rows: rows, Skipped: skipped}
	res.Machine.Name = *machine
	if res.Machine.Name == "" {
		res.Machine.Name = defaultMachineName(res.Machine)
	}
	if *out != "" {
		if err := writeJSON(*out, res); err != nil {
			log.Error("writing results", "err", err)
			status = 1
		}
	}
	if *record != "" {
		err := os.MkdirAll(*record, 0o755)
		var p string
		if err == nil {
			p, err = recordPath(*record, res.Date, res.Machine.Name, *suite)
		}
		if err == nil {
			err = writeJSON(p, res)
		}
		if err != nil {
			log.Error("recording results", "err", err)
			status = 1
		} else {
			fmt.Fprintf(stdout, "recorded: %s\n", p)
		}
	}
	if *html != "" {
		if err := WriteReport(*html, Report{Date: res.Date, Commit: res.Commit, Command: res.Command, Machine: res.Machine, Rows: rows, Skipped: skipped}); err != nil {
			log.Error("writing the report", "err", err)
			status = 1
		} else {
			fmt.Fprintf(stdout, "report: %s\n", *html)
		}
	}
	return status
}

func printTable(w io.Writer, rows []Row, skipped []string) {
	fmt.Fprintf(w, "jdf2go benchmarks: %s/%s, %d CPUs, %s (ratios: time of jdf2go / time of the baseline; < 1 is faster)\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "suite\tworkload\tworkers\tvariant\tmedian\tmin\tmax\tunit\trate/s\tratios\t\n")
	for i := range rows {
		r := &rows[i]
		var ratios []string
		for _, b := range r.Baselines {
			if v, ok := r.Ratios[b]; ok {
				ratios = append(ratios, fmt.Sprintf("%.2f× %s", v, b))
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%.1f\t%.1f\t%.1f\t%s\t%s\t%s\t\n", r.Suite, r.Workload, r.Workers,
			r.Variant, r.perItem(r.Median), r.perItem(r.Min), r.perItem(r.Max), r.Unit,
			r.rate(), strings.Join(ratios, ", "))
	}
	tw.Flush()
	for _, s := range skipped {
		fmt.Fprintln(w, s)
	}
}

// results is the content of results.json: the run's stamp (date, commit, command, machine)
// and its rows.
type results struct {
	Date    time.Time `json:"date"`
	Commit  string    `json:"commit"`  // vcs revision, "+dirty" when the tree had changes
	Command []string  `json:"command"` // the driver's arguments
	GOOS    string    `json:"goos"`
	GOARCH  string    `json:"goarch"`
	CPUs    int       `json:"cpus"`
	Go      string    `json:"go"`
	Machine Machine   `json:"machine"`
	Rows    []Row     `json:"rows"`
	Skipped []string  `json:"skipped,omitempty"`
}

func writeJSON(path string, res results) error {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// reportFrom writes the HTML report of an earlier run's results.json.
func reportFrom(jsonPath, htmlPath string) error {
	if htmlPath == "" {
		return fmt.Errorf("-from needs -html")
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		return err
	}
	var res results
	if err := json.Unmarshal(b, &res); err != nil {
		return fmt.Errorf("%s: %w", jsonPath, err)
	}
	if res.Machine.CPUs == 0 { // written before results.json described the machine
		res.Machine = Machine{CPU: "unknown", CPUs: res.CPUs, OS: res.GOOS + "/" + res.GOARCH, Go: res.Go, GPUs: "unknown"}
	}
	return WriteReport(htmlPath, Report{Date: res.Date, Commit: res.Commit, Command: res.Command, Machine: res.Machine,
		Rows: res.Rows, Skipped: res.Skipped})
}
