package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jdf2go/jdf2go/examples/potrf/cholesky"
	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
)

// TestPotrf factors small matrices, ragged tiles included, on every available backend.
func TestPotrf(t *testing.T) {
	backends := []string{"gonum"}
	if _, err := blas.OpenBLAS(); err == nil {
		backends = append(backends, "openblas")
	}
	for _, b := range backends {
		for _, c := range []struct{ n, nb int }{{1, 1}, {64, 64}, {200, 48}, {257, 32}} {
			var out bytes.Buffer
			trace := filepath.Join(t.TempDir(), "trace.json")
			args := []string{"-n", strconv.Itoa(c.n), "-nb", strconv.Itoa(c.nb), "-workers", "2", "-blas", b, "-trace", trace}
			if err := run(args, &out); err != nil {
				t.Fatalf("%s %+v: %v\n%s", b, c, err, out.String())
			}
			for _, want := range []string{"GFLOP/s", "‖A − L·Lᵀ‖/‖A‖", "trace: " + trace} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("%s %+v: output lacks %q:\n%s", b, c, want, out.String())
				}
			}
		}
	}
}

// TestNotPositiveDefinite: a matrix that is not SPD fails the taskpool with the failing
// POTRF task named.
func TestNotPositiveDefinite(t *testing.T) {
	p, err := cholesky.NewProblem(64, 16, 1)
	if err != nil {
		t.Fatal(err)
	}
	p.Dense[40+40*64] = -1e6 // a negative pivot in tile (2, 2)
	p.Reset()
	ctx, err := rt.New(rt.Workers(2))
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	err = cholesky.Factor(context.Background(), ctx, p.A, blas.Gonum())
	if !errors.Is(err, blas.ErrNotPositiveDefinite) || !strings.Contains(err.Error(), "POTRF(2)") {
		t.Errorf("error %v: want ErrNotPositiveDefinite from POTRF(2)", err)
	}
}
