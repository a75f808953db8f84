package main

import (
	"bytes"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestBatchGemm runs the command on the CPU alone and on one and two simulated devices,
// with the blocks resident on the devices or in host memory; every product is checked.
// On one device, where a worker keeps submitting while the other manages, the batched
// body launches rings of several tasks.
func TestBatchGemm(t *testing.T) {
	perLaunch := regexp.MustCompile(`gpu0 \d+ \([0-9.]+%, ([0-9.]+) per launch, manager busy ([0-9.]+) µs per task\)`)
	for _, args := range [][]string{
		{"-gpus", "none"},
		{"-gpus", "sim:1"},
		{"-gpus", "sim:1", "-resident=false"},
		{"-gpus", "sim:2"},
		{"-gpus", "sim:2", "-nb", "8", "-batch", "4"},
		{"-gpus", "sim:1", "-runs", "3"},
		{"-gpus", "none", "-runs", "2"},
	} {
		var out bytes.Buffer
		all := append([]string{"-tasks", "3000", "-workers", "2", "-blas", "gonum"}, args...)
		if err := run(all, &out); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out.String())
		}
		for _, want := range []string{"tasks/s", "tasks: CPU ", "largest relative error"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%v: output lacks %q:\n%s", args, want, out.String())
			}
		}
		if runs := slices.Index(args, "-runs"); runs >= 0 {
			n, _ := strconv.Atoi(args[runs+1])
			if got := strings.Count(out.String(), "\n  run "); got != n || !strings.Contains(out.String(), "  median: ") {
				t.Errorf("%v: %d run lines, want %d and the median:\n%s", args, got, n, out.String())
			}
		}
		if args[1] == "none" {
			continue
		}
		m := perLaunch.FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("%v: no device line:\n%s", args, out.String())
		}
		if mean, _ := strconv.ParseFloat(m[1], 64); len(args) == 2 && args[1] == "sim:1" && mean < 2 {
			t.Errorf("%v: %.1f tasks per launch on one device, want batches:\n%s", args, mean, out.String())
		}
		if busy, _ := strconv.ParseFloat(m[2], 64); busy <= 0 {
			t.Errorf("%v: the manager was busy %v µs per task:\n%s", args, busy, out.String())
		}
	}
}

func TestBadArguments(t *testing.T) {
	for _, args := range [][]string{{"-tasks", "0"}, {"-batch", "0"}, {"-gpus", "sim:x"}, {"-runs", "0"}} {
		if err := run(args, &bytes.Buffer{}); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
