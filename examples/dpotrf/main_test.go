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
