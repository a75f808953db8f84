package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
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

// The gen suite: the work of jdf2go gen (parse, check, generate to a file) in a process of its
// own, on a program of chain-like classes (bench/internal/jdfgen) of 5 MB (-quick: 1 MB): time
// per byte of input, and in the note (and the log) the peak resident set of the process
// against the size of its input, median of the runs (goal: at most 50× the input on 5 MB, in a
// time linear in the input). Such a program is far past parser.MaxClasses, which jdf2go gen
// enforces: the process is this binary started with genChildEnv set (genChild), which lifts
// the limits of check.
func init() {
	register(Suite{Name: "gen", Applicable: func() (bool, string) { return true, "" }, Run: runGen})
}

// haveGo reports whether the go command is here to build with (the compile suite).
func haveGo() (bool, string) {
	if _, err := exec.LookPath("go"); err != nil {
		return false, "no go command to build with"
	}
	return true, ""
}

func runGen(cfg *Config) ([]Row, error) {
	size := 5_000_000
	if cfg.Quick {
		size = 1_000_000
	}
	dir, err := os.MkdirTemp("", "jdf2go-bench-gen")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	src := jdfgen.Chains(size)
	in := filepath.Join(dir, "chains.jdf")
	if err := os.WriteFile(in, src, 0o644); err != nil {
		return nil, err
	}
	var peaks []int64
	s, err := cfg.Measure(func() (time.Duration, error) {
		// A new output each run: an unchanged file would not be written.
		out := filepath.Join(dir, "chains_jdf.go")
		os.Remove(out)
		cmd, peak, _ := commandPeak(dir, self)
		cmd.Env = append(os.Environ(), genChildEnv+"="+in)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			return 0, fmt.Errorf("gen: %v\n%s", err, stderr.Bytes())
		}
		d := time.Since(t0)
		peaks = append(peaks, peak())
		return d, nil
	})
	if err != nil {
		return nil, err
	}
	peaks = peaks[1:] // not the warm-up
	slices.Sort(peaks)
	note := "peak RSS not measured here"
	if peak := peaks[len(peaks)/2]; peak > 0 {
		note = fmt.Sprintf("peak RSS %.0f MiB, %.1f× the input (goal at 5 MB: ≤ 50×)", float64(peak)/(1<<20), float64(peak)/float64(len(src)))
	}
	slog.Info("gen", "input bytes", len(src), "median", s.Median, "memory", note)
	return []Row{{Suite: "gen", Workload: fmt.Sprintf("chains %.0f MB", float64(len(src))/1e6), Workers: 1,
		Variant: "jdf2go", Per: float64(len(src)), Unit: "ns/byte", Stats: s, Note: note}}, nil
}

// genChildEnv, set in the environment of this binary (the driver, or the test binary of this
// package through TestMain), names the program that the process generates instead of running:
// the child of the gen suite.
const genChildEnv = "JDF2GO_BENCH_GEN_CHILD"

// genChild does what jdf2go gen does with in, without the limits of check: it writes the
// generated file beside in, as <name>_jdf.go, and returns the exit status.
func genChild(in string, stderr io.Writer) int {
	src, err := os.ReadFile(in)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	prog, diags := parser.ParseAndCheckWith(in, src, parser.CheckOptions{Unbounded: true})
	if diags.HasErrors() {
		fmt.Fprintln(stderr, diags.Err())
		return 1
	}
	f, err := os.Create(strings.TrimSuffix(in, ".jdf") + "_jdf.go")
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	w := bufio.NewWriter(f)
	err = codegen.Write(w, prog, codegen.Options{Package: "main"})
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

// buildJDF2Go builds the jdf2go command of this tree into dir and returns its path.
func buildJDF2Go(dir string) (string, error) {
	bin := filepath.Join(dir, "jdf2go")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/jdf2go/jdf2go/cmd/jdf2go").CombinedOutput(); err != nil {
		return "", fmt.Errorf("building jdf2go: %v\n%s", err, out)
	}
	return bin, nil
}
