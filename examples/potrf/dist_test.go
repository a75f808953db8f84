package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/examples/potrf/cholesky"
	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/ce"
	"github.com/jdf2go/jdf2go/rt/gpu"
	_ "github.com/jdf2go/jdf2go/rt/gpu/sim"
	"github.com/jdf2go/jdf2go/rt/remote"
)

// distFactor factors the n×n problem on cfg's ranks with grid g and returns the factor
// gathered on rank 0.
func distFactor(t *testing.T, cfg remote.Config, n, nb int, g rt.Grid, body func(j *remote.Job) error) ([]float64, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	impl, err := blas.Select("gonum")
	if err != nil {
		t.Fatal(err)
	}
	f := make([]float64, n*n)
	err = remote.Run(ctx, cfg, func(ctx context.Context, j *remote.Job) error {
		gg := g
		gg.Q = max(j.Size/gg.P, 1)
		p, err := cholesky.NewProblemGrid(n, nb, 7, gg, j.Rank, nil)
		if err != nil {
			return err
		}
		if body != nil {
			if err := body(j); err != nil {
				return err
			}
		}
		if err := cholesky.FactorOn(ctx, j.Add, p.A, impl, false); err != nil {
			return err
		}
		var dst []float64
		if j.Rank == 0 {
			dst = f
		}
		return j.Node.GatherDense(ctx, p.A, 0, dst, n)
	})
	return f, err
}

// TestDistPotrf: the factor on 1 to 4 in-process ranks, square, uneven and degenerate grids,
// supertiles, ranks without tiles and both broadcast trees, equals the 1-rank factor
// bit for bit (every tile sees the same kernel calls in the same order).
func TestDistPotrf(t *testing.T) {
	const n, nb = 150, 32 // 5x5 tiles, ragged
	want, err := distFactor(t, remote.Config{Ranks: 1, Workers: 1}, n, nb, rt.Grid{P: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ranks int
		g     rt.Grid
		tree  remote.Tree
	}{
		{2, rt.Grid{P: 2}, remote.Star}, {2, rt.Grid{P: 1}, remote.Binomial},
		{3, rt.Grid{P: 1}, remote.Star}, {3, rt.Grid{P: 3}, remote.Binomial},
		{3, rt.Grid{P: 2}, remote.Star}, // 2x1 grid: rank 2 owns no tile
		{4, rt.Grid{P: 2}, remote.Star}, {4, rt.Grid{P: 2, KP: 2, KQ: 2}, remote.Binomial},
	} {
		name := fmt.Sprintf("%d ranks, grid %+v, %v", c.ranks, c.g, c.tree)
		// Eager(0): every tile goes by Get; a second run sends them inside messages.
		for _, eager := range []int{0, 64 << 10} {
			cfg := remote.Config{Ranks: c.ranks, Workers: c.ranks,
				Remote: []remote.Option{remote.Broadcast(c.tree), remote.Eager(eager)}, CE: []ce.Option{ce.Debug(true)}}
			got, err := distFactor(t, cfg, n, nb, c.g, nil)
			if err != nil {
				t.Fatalf("%s, eager %d: %v", name, eager, err)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%s, eager %d: element %d = %g, 1 rank gives %g", name, eager, i, got[i], want[i])
				}
			}
		}
	}
}

// TestDistPotrfCommand runs the command on 2 in-process ranks.
func TestDistPotrfCommand(t *testing.T) {
	var out bytes.Buffer
	args := []string{"-ranks", "2", "-P", "2", "-n", "128", "-nb", "32", "-blas", "gonum", "-trace", "", "-gpus", "none"}
	if err := run(args, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, w := range []string{"2 ranks (in-process), grid 2x1", "‖A − L·Lᵀ‖/‖A‖", "by Get"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}
	if err := run([]string{"-ranks", "2", "-P", "3", "-n", "64", "-nb", "32", "-trace", ""}, &out); err == nil {
		t.Error("-P 3 on 2 ranks was accepted")
	}
}

// TestDistPotrfKill: killing rank 1 in the middle of the factorisation (once it has
// received its first tile) fails it on every other rank with ce.ErrPeerLost within a second.
func TestDistPotrfKill(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	impl, _ := blas.Select("gonum")
	var killedAt atomic.Int64
	failedAt := make([]atomic.Int64, 4)
	err := remote.Run(ctx, remote.Config{Ranks: 4, Workers: 4}, func(ctx context.Context, j *remote.Job) error {
		p, err := cholesky.NewProblemGrid(512, 32, 7, rt.Grid{P: 2, Q: 2}, j.Rank, nil)
		if err != nil {
			return err
		}
		if j.Rank == 1 {
			go func() {
				for j.Node.Stats().Received == 0 {
					time.Sleep(100 * time.Microsecond)
				}
				killedAt.Store(time.Now().UnixNano())
				j.World.Kill(1)
			}()
		}
		err = cholesky.FactorOn(ctx, j.Add, p.A, impl, false)
		failedAt[j.Rank].Store(time.Now().UnixNano())
		return err
	})
	if !errors.Is(err, ce.ErrPeerLost) {
		t.Fatalf("err = %v, want ErrPeerLost", err)
	}
	for r := range failedAt {
		if r == 1 {
			continue
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("rank %d: ", r)) {
			t.Errorf("rank %d did not fail: %v", r, err)
		}
		if d := time.Duration(failedAt[r].Load() - killedAt.Load()); d > time.Second {
			t.Errorf("rank %d failed %v after the kill", r, d)
		}
	}
}

// TestDistPotrfGPU: on 2 ranks with a simulated GPU each, the device managers release remote
// successors through device-manager Callers, which never call the transport themselves:
// every one of their operations is shifted to the comm goroutine, while workers (the
// in-process transport allows every thread) go direct.
func TestDistPotrfGPU(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	impl, _ := blas.Select("gonum")
	stats := make([]map[ce.Role]ce.CallerStats, 2)
	err := remote.Run(ctx, remote.Config{Ranks: 2, Workers: 2, World: []ce.WorldOption{ce.StrictMode()}},
		func(ctx context.Context, j *remote.Job) error {
			devs, err := gpu.Open("sim:1")
			if err != nil {
				return err
			}
			defer func() {
				for _, d := range devs {
					_ = d.Close()
				}
			}()
			if _, err := j.Context(rt.Devices(gpu.RTDevices(devs)...), rt.ShareWork(false)); err != nil {
				return err
			}
			p, err := cholesky.NewProblemGrid(192, 32, 7, rt.Grid{P: 2, Q: 1}, j.Rank, nil)
			if err != nil {
				return err
			}
			// The inverses of the diagonal tiles travel to the other rank too.
			if err := cholesky.FactorOn(ctx, j.Add, p.A, impl, true); err != nil {
				return err
			}
			stats[j.Rank] = j.Node.CallerStats()
			if s := j.World.Strict(ce.Rank(j.Rank)); s != nil && s.Report().Violations != 0 {
				return fmt.Errorf("strict checker: %+v", s.Report())
			}
			var f []float64
			if j.Rank == 0 {
				f = make([]float64, 192*192)
			}
			if err := j.Node.GatherDense(ctx, p.A, 0, f, 192); err != nil {
				return err
			}
			if j.Rank == 0 {
				res, err := impl.PotrfResidual(blas.Lower, 192, p.Dense, 192, f, 192)
				if err != nil || !(res < 1e-12) {
					return fmt.Errorf("residual %g (%v)", res, err)
				}
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	for r, s := range stats {
		dm := s[ce.RoleDeviceManager]
		t.Logf("rank %d: %v", r, s)
		if dm.Direct != 0 {
			t.Errorf("rank %d: device managers made %d direct transport calls", r, dm.Direct)
		}
		if dm.Shifted == 0 {
			t.Errorf("rank %d: device managers sent nothing (the test does not test)", r)
		}
	}
}
