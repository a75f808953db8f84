package main

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jdf2go/jdf2go/examples/potrf/cholesky"
	"github.com/jdf2go/jdf2go/rt/blas"
)

// TestDpotrf runs the command on small matrices, ragged tiles included, on 1 and 2 workers
// and every available backend: the residual check passes and the output reports it.
func TestDpotrf(t *testing.T) {
	backends := []string{"gonum"}
	if _, err := blas.OpenBLAS(); err == nil {
		backends = append(backends, "openblas")
	}
	for _, b := range backends {
		for _, w := range []int{1, 2} {
			for _, c := range []struct{ n, nb int }{{1, 1}, {200, 48}, {257, 32}} {
				var out bytes.Buffer
				args := []string{"-n", strconv.Itoa(c.n), "-nb", strconv.Itoa(c.nb), "-workers", strconv.Itoa(w),
					"-blas", b, "-runs", "2", "-window", "16"}
				if err := run(args, &out); err != nil {
					t.Fatalf("%s %d workers %+v: %v\n%s", b, w, c, err, out.String())
				}
				for _, want := range []string{"GFLOP/s (median of 2", "‖A − L·Lᵀ‖/‖A‖ = ", strconv.Itoa(w) + " workers"} {
					if !strings.Contains(out.String(), want) {
						t.Errorf("%s %d workers %+v: output lacks %q:\n%s", b, w, c, want, out.String())
					}
				}
			}
		}
	}
}

// TestDpotrfBadFlags: bad settings are errors, not runs.
func TestDpotrfBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-runs", "0"}, {"-n", "0"}, {"-window", "0"}, {"-blas", "nope"}, {"-gpus", "nope"}, {"extra"}} {
		var out bytes.Buffer
		if err := run(append([]string{"-n", "64", "-nb", "16"}, args...), &out); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

// TestDpotrfGPU runs the command on a simulated device, ragged tiles included, twice from
// the same input (the device must not reuse the tiles of the first factorisation): the
// residual check passes and the device ran tasks, every one with -share=false.
func TestDpotrfGPU(t *testing.T) {
	ran := regexp.MustCompile(`device tasks over 2 runs: gpu0 (\d+) tasks`)
	for _, share := range []string{"-share=true", "-share=false"} {
		for _, c := range []struct{ n, nb int }{{200, 48}, {257, 32}} {
			var out bytes.Buffer
			args := []string{"-n", strconv.Itoa(c.n), "-nb", strconv.Itoa(c.nb), "-workers", "2", "-blas", "gonum",
				"-runs", "2", "-gpus", "sim:1", share}
			if err := run(args, &out); err != nil {
				t.Fatalf("%s %+v: %v\n%s", share, c, err, out.String())
			}
			m := ran.FindStringSubmatch(out.String())
			if m == nil || !strings.Contains(out.String(), "‖A − L·Lᵀ‖/‖A‖ = ") {
				t.Fatalf("%s %+v: output lacks the device's tasks or the residual:\n%s", share, c, out.String())
			}
			n, _ := strconv.Atoi(m[1])
			mt := (c.n + c.nb - 1) / c.nb
			if total := 2 * int(cholesky.Tasks(mt)); n == 0 || share == "-share=false" && n != total {
				t.Errorf("%s %+v: the device ran %d of %d tasks", share, c, n, total)
			}
		}
	}
}

// TestDpotrfRanks runs the command across 2 and 3 in-process ranks (1×N and, for 2, 2×1
// grids) on a ragged problem, twice from the same input: the factor, gathered on rank 0, must
// pass the residual bound (run fails otherwise), and the output reports the ranks.
func TestDpotrfRanks(t *testing.T) {
	res := regexp.MustCompile(`‖A − L·Lᵀ‖/‖A‖ = (\S+)`)
	for _, c := range []struct{ ranks, p int }{{2, 1}, {2, 2}, {3, 1}} {
		var out bytes.Buffer
		args := []string{"-n", "700", "-nb", "96", "-ranks", strconv.Itoa(c.ranks), "-P", strconv.Itoa(c.p),
			"-workers", strconv.Itoa(c.ranks), "-blas", "gonum", "-runs", "2", "-window", "32", "-gpus", "none"}
		if err := run(args, &out); err != nil {
			t.Fatalf("%+v: %v\n%s", c, err, out.String())
		}
		m := res.FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("%+v: output lacks the residual:\n%s", c, out.String())
		}
		r, err := strconv.ParseFloat(m[1], 64)
		if err != nil || !(r < maxResidual) {
			t.Errorf("%+v: residual %q, want below %g", c, m[1], maxResidual)
		}
		want := strconv.Itoa(c.ranks) + " ranks (in-process), grid " + strconv.Itoa(c.p) + "x" + strconv.Itoa(c.ranks/c.p)
		if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "GFLOP/s (median of 2") {
			t.Errorf("%+v: output lacks %q or the rate:\n%s", c, want, out.String())
		}
	}
}

// TestDpotrfRanksBadFlags: GPUs across ranks and grids that do not fit are errors.
func TestDpotrfRanksBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-ranks", "2", "-gpus", "sim:1"}, {"-ranks", "2", "-gpus", "auto"},
		{"-ranks", "2", "-P", "3"}, {"-ranks", "2", "-P", "0"}, {"-ranks", "-1"}} {
		var out bytes.Buffer
		err := run(append([]string{"-n", "64", "-nb", "16", "-blas", "gonum"}, args...), &out)
		if err == nil {
			t.Errorf("%v: no error", args)
		} else if len(args) > 2 && args[2] == "-gpus" && !strings.Contains(err.Error(), "CPU bodies only") {
			t.Errorf("%v: %v, want the GPU refusal", args, err)
		}
	}
}
