package main

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jdf2go/jdf2go/bench/internal/jdfgen"
	"github.com/jdf2go/jdf2go/codegen"
	"github.com/jdf2go/jdf2go/parser"
)

// The compile suite: what building the generated code costs the Go compiler, `go build` of
// the generated package (its dependencies already built) as a command, wall time and peak
// resident set, on programs that double in size: a priority of 5,000, 10,000 and 20,000
// conditionals chained in else position (-quick: 500, 1,000, 2,000), and chain-like classes
// (bench/internal/jdfgen) of 1.25, 2.5 and 5 MB (-quick: 25, 50 and 100 KB). Both go past
// the limits of check (parser.MaxExprDepth, parser.MaxClasses), which the suite lifts
// (parser.CheckOptions.Unbounded) to show how the cost grows. The note of the largest size
// of each workload gives the ratio per doubling of the time and of the peak resident set:
// 2 is linear, 4 quadratic.
func init() {
	register(Suite{Name: "compile", Applicable: haveGo, Run: runCompile})
}

// compileWorkload is one program shape, at each of its sizes.
type compileWorkload struct {
	name  string
	sizes []int
	src   func(size int) []byte
	label func(size int) string
	unit  string // per-item unit: the item is a conditional or an input byte
	per   func(size int, src []byte) float64
}

func compileWorkloads(quick bool) []compileWorkload {
	tern, mb := []int{5000, 10000, 20000}, []int{1_250_000, 2_500_000, 5_000_000}
	if quick {
		tern, mb = []int{500, 1000, 2000}, []int{25_000, 50_000, 100_000}
	}
	return []compileWorkload{
		{name: "ternaries", sizes: tern, src: jdfgen.Ternaries,
			label: func(n int) string { return fmt.Sprintf("%d ternaries", n) },
			unit:  "ns/ternary", per: func(n int, _ []byte) float64 { return float64(n) }},
		{name: "chains", sizes: mb, src: jdfgen.Chains,
			label: func(n int) string { return fmt.Sprintf("chains %.3g MB", float64(n)/1e6) },
			unit:  "ns/byte", per: func(_ int, src []byte) float64 { return float64(len(src)) }},
	}
}

func runCompile(cfg *Config) ([]Row, error) {
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return nil, fmt.Errorf("locating the module: %v", err)
	}
	dir, err := os.MkdirTemp("", "jdf2go-bench-compile")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := writeModule(dir, strings.TrimSpace(string(root))); err != nil {
		return nil, err
	}
	var rows []Row
	for _, wl := range compileWorkloads(cfg.Quick) {
		var prev *Row
		var prevPeak int64
		for _, size := range wl.sizes {
			src := wl.src(size)
			gen, err := generateUnbounded(wl.name+".jdf", src)
			if err != nil {
				return rows, fmt.Errorf("%s: %w", wl.label(size), err)
			}
			s, peak, err := measureBuild(cfg, dir, gen)
			if err != nil {
				return rows, fmt.Errorf("%s: %w", wl.label(size), err)
			}
			note := fmt.Sprintf("%.3g MB of Go (%.1f× the input)", float64(len(gen))/1e6, float64(len(gen))/float64(len(src)))
			if peak > 0 {
				note += fmt.Sprintf(", peak RSS %.0f MiB", float64(peak)/(1<<20))
			}
			if prev != nil {
				note += fmt.Sprintf("; per doubling: time ×%.2f", float64(s.Median)/float64(prev.Median))
				if peak > 0 && prevPeak > 0 {
					note += fmt.Sprintf(", RSS ×%.2f", float64(peak)/float64(prevPeak))
				}
				note += " (linear: ×2)"
			}
			slog.Info("compile", "workload", wl.label(size), "median", s.Median, "note", note)
			rows = append(rows, Row{Suite: "compile", Workload: wl.label(size), Workers: 1, Variant: "go build",
				Per: wl.per(size, src), Unit: wl.unit, Stats: s, Note: note})
			prev, prevPeak = &rows[len(rows)-1], peak
		}
	}
	return rows, nil
}

// writeModule writes a module in dir that requires this one (at root) through a replace
// directive, so that the generated code builds against the working tree's rt.
func writeModule(dir, root string) error {
	gomod := "module compilebench\n\ngo 1.25.0\n\nrequire github.com/jdf2go/jdf2go v0.0.0\n\nreplace github.com/jdf2go/jdf2go => " + root + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		return err
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644)
}

// generateUnbounded checks src without the limits of check and generates its Go code.
func generateUnbounded(file string, src []byte) ([]byte, error) {
	prog, diags := parser.ParseAndCheckWith(file, src, parser.CheckOptions{Unbounded: true})
	if diags.HasErrors() {
		return nil, diags.Err()
	}
	var out bytes.Buffer
	if err := codegen.Write(&out, prog, codegen.Options{Package: "gen"}); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// measureBuild builds the package of gen in dir/gen once per run, and returns the spread of
// the build times and the median peak resident set of the go command and of the compiler it
// waits for (the kernel's figure for a child includes its waited-for children).
func measureBuild(cfg *Config, dir string, gen []byte) (Stats, int64, error) {
	pkg := filepath.Join(dir, "gen")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		return Stats{}, 0, err
	}
	var peaks []int64
	run := 0
	s, err := cfg.Measure(func() (time.Duration, error) {
		// Different bytes each run, or the build cache would answer.
		run++
		src := append(slices.Clip(gen), fmt.Sprintf("\n// Build %d of the compile suite.\n", run)...)
		if err := os.WriteFile(filepath.Join(pkg, "gen_jdf.go"), src, 0o644); err != nil {
			return 0, err
		}
		cmd, peak, _ := commandPeak(dir, "go", "build", "./gen")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			return 0, fmt.Errorf("go build: %v\n%s", err, firstLines(out.String(), 20))
		}
		d := time.Since(t0)
		peaks = append(peaks, peak())
		return d, nil
	})
	if err != nil {
		return Stats{}, 0, err
	}
	peaks = peaks[1:] // not the warm-up, which also built rt
	slices.Sort(peaks)
	return s, peaks[len(peaks)/2], nil
}

// firstLines returns the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
