// Command soak runs taskpools with random faults and cancellations for a while (`make soak`,
// ten minutes by default; not part of CI) and checks that every one ends as it should: with
// success, or with the error of the fault injected into it. It reports how many taskpools
// ran, how many failed as injected, how many ended otherwise (which must be 0: a wrong
// error, a hang past the deadline, success despite a fault that must fire), the goroutines
// left and the peak RSS.
//
//	go run ./bench/soak -d 10m
//
// Workloads: the tiled Cholesky factorisation of examples/potrf.jdf on CPU workers and on
// CPU workers with one simulated GPU, and the graph of examples/ep.jdf (independent CTL
// chains, through rt/rttest.Chains so that a fault can be put into its body).
//
// Faults: none; Cancel after a random delay (success is fine when the run ended first); a
// tile that is not positive definite (potrf: POTRF(k) fails); the simulated device lost after
// a random delay (potrf on sim:1); a body that returns an error, panics or calls
// runtime.Goexit at a random task (ep).
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/jdf2go/jdf2go/examples/potrf/cholesky"
	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/driver"
	"github.com/jdf2go/jdf2go/rt/gpu/sim"
	"github.com/jdf2go/jdf2go/rt/rttest"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

var (
	errInjected = errors.New("soak: injected fault")
	errCancel   = errors.New("soak: injected cancellation")
)

// outcome classifies one taskpool's end.
type outcome int

const (
	succeeded     outcome = iota // no fault, or a cancellation that came after the end
	failedAsMeant                // the injected fault's error
	endedOther                   // anything else: must never happen
)

// trial is one taskpool run: the workload, the fault and what ending it expects.
type trial struct {
	workload, fault string
	// check classifies Wait's error.
	check func(err error) outcome
	got   string // Wait's error, for the report of an ending that is not the expected one
}

type stats struct {
	runs, ok, injected, other int
	byFault                   map[string]int
	others                    []string
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	dur := fs.Duration("d", 10*time.Minute, "how long to run")
	seed := fs.Uint64("seed", uint64(time.Now().UnixNano()), "random seed")
	workers := fs.Int("workers", 2, "workers per Context")
	only := fs.String("workloads", "ep,potrf,potrf-sim1", "workloads to run, comma separated")
	memProfile := fs.String("memprofile", "", "write a heap profile here at the end")
	faultList := fs.String("faults", "", "faults to inject, comma separated (default: every fault that applies)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "soak: %v, seed %d, %d workers\n", *dur, *seed, *workers)
	rng := rand.New(rand.NewPCG(*seed, 1))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	baseG := runtime.NumGoroutine()
	// One long-lived Context for the CPU workloads: faults must leave it usable (a Goexit
	// replaces a worker, a failure forgets its taskpool).
	cpu, err := rt.New(rt.Workers(*workers), rt.Logger(quiet))
	if err != nil {
		return err
	}
	st := stats{byFault: map[string]int{}}
	start := time.Now()
	lastReport := start
	if *faultList != "" {
		allowed = strings.Split(*faultList, ",")
	}
	loads := strings.Split(*only, ",")
	for _, l := range loads {
		if l != "ep" && l != "potrf" && l != "potrf-sim1" {
			return fmt.Errorf("unknown workload %q (ep, potrf, potrf-sim1)", l)
		}
	}
	for time.Since(start) < *dur {
		var o outcome
		var tr trial
		var err error
		switch loads[rng.IntN(len(loads))] {
		case "ep":
			tr, o, err = soakEP(cpu, rng)
		case "potrf":
			tr, o, err = soakPotrf(cpu, nil, rng)
		default:
			tr, o, err = soakPotrfSim(*workers, quiet, rng)
		}
		if err != nil {
			return err
		}
		st.runs++
		st.byFault[tr.workload+"/"+tr.fault]++
		switch o {
		case succeeded:
			st.ok++
		case failedAsMeant:
			st.injected++
		default:
			st.other++
			st.others = append(st.others, fmt.Sprintf("%s/%s: %s", tr.workload, tr.fault, tr.got))
		}
		if time.Since(lastReport) >= 30*time.Second {
			lastReport = time.Now()
			fmt.Fprintf(stdout, "%6.0fs: %d taskpools, %d succeeded, %d failed as injected, %d ended otherwise, peak RSS %s\n",
				time.Since(start).Seconds(), st.runs, st.ok, st.injected, st.other, peakRSS())
		}
	}
	if *memProfile != "" {
		if err := writeHeap(*memProfile); err != nil {
			return err
		}
	}
	if err := cpu.Close(); err != nil {
		return err
	}
	time.Sleep(100 * time.Millisecond) // timers of late cancellations
	left := runtime.NumGoroutine() - baseG
	fmt.Fprintf(stdout, "soak: %v\n", time.Since(start).Round(time.Second))
	fmt.Fprintf(stdout, "  taskpools run          %d\n", st.runs)
	fmt.Fprintf(stdout, "  succeeded              %d\n", st.ok)
	fmt.Fprintf(stdout, "  failed as injected     %d\n", st.injected)
	fmt.Fprintf(stdout, "  ended otherwise        %d\n", st.other)
	fmt.Fprintf(stdout, "  goroutines left        %d\n", left)
	fmt.Fprintf(stdout, "  peak RSS               %s\n", peakRSS())
	fmt.Fprintf(stdout, "  runs per workload/fault:")
	for _, k := range slices.Sorted(maps.Keys(st.byFault)) {
		fmt.Fprintf(stdout, " %s %d,", k, st.byFault[k])
	}
	fmt.Fprintln(stdout)
	for _, s := range st.others {
		fmt.Fprintln(stdout, "  other:", s)
	}
	if st.other > 0 || left > 0 {
		return fmt.Errorf("%d taskpools ended otherwise, %d goroutines left", st.other, left)
	}
	return nil
}

// allowed restricts the faults injected (-faults); nil: all.
var allowed []string

// pick returns a random fault among faults that -faults allows ("none" if it allows none).
func pick(rng *rand.Rand, faults ...string) string {
	if allowed != nil {
		faults = slices.DeleteFunc(slices.Clone(faults), func(f string) bool { return !slices.Contains(allowed, f) })
	}
	if len(faults) == 0 {
		return "none"
	}
	return faults[rng.IntN(len(faults))]
}

// wait joins tp with a deadline far above any run's time: reaching it is a hang.
func wait(tp *rt.Taskpool) (error, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := tp.Wait(ctx)
	return err, ctx.Err() != nil
}

// classify applies tr's check, and makes a hang "ended otherwise".
func classify(tr *trial, err error, hung bool) outcome {
	tr.got, _, _ = strings.Cut(fmt.Sprint(err), "\n")
	if hung {
		tr.got = "hung: " + tr.got
		return endedOther
	}
	return tr.check(err)
}

// expect returns a check wanting errors.Is(err, want) and every string of names in its text.
func expect(want error, names ...string) func(error) outcome {
	return func(err error) outcome {
		if !errors.Is(err, want) || !errors.Is(err, rt.ErrTaskpoolFailed) && want != errCancel {
			return endedOther
		}
		for _, n := range names {
			if !strings.Contains(err.Error(), n) {
				return endedOther
			}
		}
		return failedAsMeant
	}
}

// cancelled accepts the cancellation or, when it came late, success.
func cancelled(err error) outcome {
	if err == nil {
		return succeeded
	}
	return expect(errCancel)(err)
}

func clean(err error) outcome {
	if err == nil {
		return succeeded
	}
	return endedOther
}

// soakEP runs ep's graph with a random fault.
func soakEP(c *rt.Context, rng *rand.Rand) (trial, outcome, error) {
	nt, depth := 1+rng.IntN(64), 1+rng.IntN(512)
	fc, fd := rng.IntN(nt), rng.IntN(depth)
	task := fmt.Sprintf("T(%d, %d)", fc, fd)
	tr := trial{workload: "ep", fault: pick(rng, "none", "cancel", "error", "panic", "goexit")}
	var body rttest.Body
	at := func(t *rt.Task) bool { return t.Locals()[0] == fc && t.Locals()[1] == fd }
	switch tr.fault {
	case "none":
		tr.check = clean
	case "cancel":
		tr.check = cancelled
	case "error":
		body = func(t *rt.Task) error {
			if at(t) {
				return errInjected
			}
			return nil
		}
		tr.check = expect(errInjected, task)
	case "panic":
		body = func(t *rt.Task) error {
			if at(t) {
				panic("soak: injected panic")
			}
			return nil
		}
		tr.check = expect(rt.ErrTaskpoolFailed, task, "soak: injected panic")
	case "goexit":
		body = func(t *rt.Task) error {
			if at(t) {
				runtime.Goexit()
			}
			return nil
		}
		tr.check = expect(rt.ErrGoexit, task)
	}
	tp := rttest.Chains(nt, depth, body)
	if err := c.Add(tp); err != nil {
		return tr, 0, err
	}
	if tr.fault == "cancel" {
		time.AfterFunc(time.Duration(rng.IntN(2000))*time.Microsecond, func() { tp.Cancel(errCancel) })
	}
	err, hung := wait(tp)
	return tr, classify(&tr, err, hung), nil
}

// soakPotrf factors a random SPD matrix on c (with the devices of devs, for the fault
// choice) with a random fault.
func soakPotrf(c *rt.Context, dev *sim.Device, rng *rand.Rand) (trial, outcome, error) {
	nb := 32
	mt := 2 + rng.IntN(8)
	p, err := cholesky.NewProblem(mt*nb, nb, rng.Uint64())
	if err != nil {
		return trial{}, 0, err
	}
	faults := []string{"none", "cancel", "not-spd"}
	if dev != nil {
		faults = append(faults, "device-lost")
	}
	tr := trial{workload: "potrf", fault: pick(rng, faults...)}
	if dev != nil {
		tr.workload = "potrf-sim1"
	}
	switch tr.fault {
	case "none":
		tr.check = clean
	case "cancel":
		tr.check = cancelled
	case "not-spd":
		k := rng.IntN(mt)
		tile := p.A.DataOf(rt.Index{N: 2, I: [rt.MaxIndex]int{k, k}}).Host().Value.([]float64)
		tile[0] = -1e9
		tr.check = func(err error) outcome {
			if !errors.Is(err, blas.ErrNotPositiveDefinite) && !errors.Is(err, gpu.ErrNotPositiveDefinite) {
				return endedOther
			}
			return expect(rt.ErrTaskpoolFailed, fmt.Sprintf("POTRF(%d)", k))(err)
		}
	case "device-lost":
		tr.check = func(err error) outcome {
			if err == nil {
				return succeeded // the run ended before the device was lost
			}
			return expect(sim.ErrLost)(err)
		}
	}
	tp, err := cholesky.NewPotrf(p.A, blas.Gonum())
	if err != nil {
		return tr, 0, err
	}
	if err := c.Add(tp.Taskpool); err != nil {
		return tr, 0, err
	}
	delay := time.Duration(rng.IntN(5000)) * time.Microsecond
	switch tr.fault {
	case "cancel":
		time.AfterFunc(delay, func() { tp.Cancel(errCancel) })
	case "device-lost":
		time.AfterFunc(delay, func() { dev.Lose(errInjected) })
	}
	err, hung := wait(tp.Taskpool)
	return tr, classify(&tr, err, hung), nil
}

// soakPotrfSim runs soakPotrf on a fresh Context with one fresh simulated device (a lost
// device stays lost).
func soakPotrfSim(workers int, quiet *slog.Logger, rng *rand.Rand) (trial, outcome, error) {
	dev := sim.New()
	// Each trial's device is its own: a lost device stays lost.
	driver.Register("soak-sim", driver.Instances(dev))
	rdevs, err := gpu.Open("soak-sim", gpu.WithLogger(quiet))
	if err != nil {
		return trial{}, 0, err
	}
	rdev := rdevs[0]
	c, err := rt.New(rt.Workers(workers), rt.Devices(rdev), rt.Logger(quiet))
	if err != nil {
		return trial{}, 0, err
	}
	tr, o, err := soakPotrf(c, dev, rng)
	if cerr := c.Close(); cerr != nil && err == nil {
		err = cerr
	}
	if cerr := rdev.Close(); cerr != nil && !errors.Is(cerr, sim.ErrLost) && err == nil {
		err = fmt.Errorf("closing the device after %s/%s: %w", tr.workload, tr.fault, cerr)
	}
	return tr, o, err
}

// peakRSS reads the process's peak resident set (VmHWM) from /proc, or says it cannot.
func peakRSS() string {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return "n/a"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "n/a"
}

// writeHeap writes a heap profile after a collection.
func writeHeap(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
