package cholesky

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/dynamic"
	"github.com/jdf2go/jdf2go/rt/gpu"
)

// backends are the BLAS backends available here.
func backends() []*blas.Impl {
	impls := []*blas.Impl{blas.Gonum()}
	if ob, err := blas.OpenBLAS(); err == nil {
		impls = append(impls, ob)
	}
	return impls
}

// TestDynamicMatchesPTG: on 1 and 2 workers, ragged tiles included, the dynamic graph runs
// every task of the factorisation once, its factor passes the residual check, and it equals
// potrf.jdf's factor bit for bit (same kernels, same order of updates on every tile).
func TestDynamicMatchesPTG(t *testing.T) {
	for _, impl := range backends() {
		for _, c := range []struct{ n, nb int }{{1, 1}, {64, 64}, {200, 48}, {257, 32}} {
			for _, w := range []int{1, 2} {
				name := fmt.Sprintf("%s n=%d nb=%d workers=%d", impl.Name(), c.n, c.nb, w)
				ctx, err := rt.New(rt.Workers(w))
				if err != nil {
					t.Fatal(err)
				}
				p, err := NewProblem(c.n, c.nb, 3)
				if err != nil {
					t.Fatal(err)
				}
				if err := Factor(context.Background(), ctx, p.A, impl); err != nil {
					t.Fatalf("%s: PTG: %v", name, err)
				}
				want := make([]float64, c.n*c.n)
				p.A.GatherToDense(want, c.n)
				p.Reset()
				g, err := dynamic.New(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if err := RunFactor(context.Background(), g, p.A, impl, false); err != nil {
					t.Fatalf("%s: dynamic: %v", name, err)
				}
				if got, want := g.Taskpool().Total(), Tasks(p.A.MT); got != want {
					t.Errorf("%s: %d tasks, want %d", name, got, want)
				}
				res, err := p.Residual(impl)
				if err != nil || !(res < 1e-12) {
					t.Errorf("%s: residual %g (%v)", name, res, err)
				}
				got := make([]float64, c.n*c.n)
				p.A.GatherToDense(got, c.n)
				for j := range c.n {
					for i := j; i < c.n; i++ {
						if got[i+j*c.n] != want[i+j*c.n] {
							t.Fatalf("%s: L(%d, %d) = %v, potrf.jdf gives %v", name, i, j, got[i+j*c.n], want[i+j*c.n])
						}
					}
				}
				if err := ctx.Close(); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// TestDynamicGraphIsPTGs: the dependencies the dynamic graph infers from the tiles' accesses
// are exactly the task-to-task edges of potrf.jdf, for 1 to 6 tile rows.
func TestDynamicGraphIsPTGs(t *testing.T) {
	label := regexp.MustCompile(`(?m)^  t(\d+) \[label="([^"]+)"\];$`)
	edge := regexp.MustCompile(`(?m)^  t(\d+) -> t(\d+)`)
	edges := func(dot string) []string {
		names := map[string]string{}
		for _, m := range label.FindAllStringSubmatch(dot, -1) {
			names[m[1]] = m[2]
		}
		var out []string
		for _, m := range edge.FindAllStringSubmatch(dot, -1) {
			out = append(out, names[m[1]]+" -> "+names[m[2]])
		}
		slices.Sort(out)
		return out
	}
	for mt := 1; mt <= 6; mt++ {
		p, err := NewProblem(mt*4, 4, 1)
		if err != nil {
			t.Fatal(err)
		}
		tp, err := NewPotrf(p.A, blas.Gonum())
		if err != nil {
			t.Fatal(err)
		}
		var ptg bytes.Buffer
		if err := tp.WriteDOT(&ptg); err != nil {
			t.Fatal(err)
		}
		// The one worker runs a task of another graph until every task is inserted, so that
		// each dependency is inferred from tasks that have not run yet, whatever the timing.
		ctx, err := rt.New(rt.Workers(1))
		if err != nil {
			t.Fatal(err)
		}
		gate, err := dynamic.New(ctx)
		if err != nil {
			t.Fatal(err)
		}
		started, open := make(chan struct{}), make(chan struct{})
		if err := gate.Insert("GATE", func(*dynamic.Task) error { close(started); <-open; return nil }); err != nil {
			t.Fatal(err)
		}
		<-started
		g, err := dynamic.New(ctx, dynamic.KeepGraph())
		if err != nil {
			t.Fatal(err)
		}
		err = InsertFactor(g, p.A, blas.Gonum(), false)
		close(open)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := gate.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		var dyn bytes.Buffer
		if err := g.WriteDOT(&dyn); err != nil {
			t.Fatal(err)
		}
		ctx.Close()
		// The dynamic graph names tasks by insertion number: rename them after the
		// right-looking order InsertFactor follows.
		var order []string
		for k := range mt {
			order = append(order, fmt.Sprintf("POTRF(%d)", k))
			for m := k + 1; m < mt; m++ {
				order = append(order, fmt.Sprintf("TRSM(%d, %d)", m, k))
			}
			for m := k + 1; m < mt; m++ {
				order = append(order, fmt.Sprintf("SYRK(%d, %d)", k, m))
				for n := k + 1; n < m; n++ {
					order = append(order, fmt.Sprintf("GEMM(%d, %d, %d)", m, n, k))
				}
			}
		}
		renamed := regexp.MustCompile(`label="[A-Z]+\((\d+)\)"`).ReplaceAllStringFunc(dyn.String(), func(s string) string {
			var seq int
			fmt.Sscanf(s[strings.IndexByte(s, '(')+1:], "%d", &seq)
			return fmt.Sprintf("label=%q", order[seq-1])
		})
		if got, want := edges(renamed), edges(ptg.String()); !slices.Equal(got, want) {
			t.Errorf("mt=%d: dynamic edges\n%s\nPTG edges\n%s", mt, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// TestDynamicPriorities: every task gets the priority of potrf.jdf's generated taskpool.
func TestDynamicPriorities(t *testing.T) {
	const mt = 7
	p, err := NewProblem(mt*2, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	tp, err := NewPotrf(p.A, blas.Gonum())
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, got int32, cls *rt.TaskClass, l rt.Locals) {
		if want := cls.Priority(tp.Taskpool, &l); got != want {
			t.Errorf("%s: priority %d, potrf.jdf gives %d", name, got, want)
		}
	}
	for k := range mt {
		check(fmt.Sprintf("POTRF(%d)", k), potrfPriority(mt, k), &potrfPOTRF, rt.Locals{k})
		for m := k + 1; m < mt; m++ {
			check(fmt.Sprintf("TRSM(%d, %d)", m, k), trsmPriority(mt, m, k), &potrfTRSM, rt.Locals{k, m})
			check(fmt.Sprintf("SYRK(%d, %d)", k, m), syrkPriority(mt, m), &potrfSYRK, rt.Locals{k, m})
			for n := k + 1; n < m; n++ {
				check(fmt.Sprintf("GEMM(%d, %d, %d)", m, n, k), gemmPriority(mt, n), &potrfGEMM, rt.Locals{k, m, n})
			}
		}
	}
}

// TestDynamicNotPositiveDefinite: a matrix that is not SPD fails the graph with the POTRF
// task and its tile named, and blas.ErrNotPositiveDefinite wrapped.
func TestDynamicNotPositiveDefinite(t *testing.T) {
	p, err := NewProblem(64, 16, 1)
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
	err = FactorDynamic(context.Background(), ctx, p.A, blas.Gonum())
	if !errors.Is(err, blas.ErrNotPositiveDefinite) || !strings.Contains(err.Error(), "POTRF(") ||
		!strings.Contains(err.Error(), "tile (2, 2)") {
		t.Errorf("error %v: want ErrNotPositiveDefinite from POTRF on tile (2, 2)", err)
	}
}

// TestDynamicGPU: with GPU bodies on simulated devices, ragged tiles included, the factor
// passes the residual check and equals the CPU bodies' factor to rounding, and the devices
// ran tasks: with the work shared (some of them, GEMMs batched when they wait together) and
// with the devices taking every task (all of them). With every task on one device, the only
// copies to the host are those of the final tiles, once each, at Wait: a tile written on the
// device stays there for the tasks that read it next.
func TestDynamicGPU(t *testing.T) {
	for _, c := range []struct{ n, nb int }{{200, 48}, {257, 32}} {
		p, err := NewProblem(c.n, c.nb, 5)
		if err != nil {
			t.Fatal(err)
		}
		if err := FactorDynamic(context.Background(), mustContext(t, rt.Workers(2)), p.A, blas.Gonum()); err != nil {
			t.Fatal(err)
		}
		want := make([]float64, c.n*c.n)
		p.A.GatherToDense(want, c.n)
		for _, run := range []struct {
			spec  string
			share bool
		}{{"sim:1", true}, {"sim:1", false}, {"sim:2", false}} {
			name := fmt.Sprintf("n=%d nb=%d %s share=%v", c.n, c.nb, run.spec, run.share)
			p.Reset()
			devs, err := gpu.Open(run.spec)
			if err != nil {
				t.Fatal(err)
			}
			ctx := mustContext(t, rt.Workers(2), rt.Devices(gpu.RTDevices(devs)...), rt.ShareWork(run.share))
			g, err := dynamic.New(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := RunFactor(context.Background(), g, p.A, blas.Gonum(), true); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var st gpu.Stats
			for _, d := range devs {
				s := d.Device().Stats()
				st.Executed += s.Executed
				st.StageOuts += s.StageOuts
				st.Recalled += s.Recalled
				st.WriteBacks += s.WriteBacks
				st.Batches += s.Batches
			}
			if err := ctx.Close(); err != nil {
				t.Fatal(err)
			}
			for _, d := range devs {
				if err := d.Close(); err != nil {
					t.Fatal(err)
				}
			}
			total := Tasks(p.A.MT)
			if st.Executed == 0 || !run.share && int64(st.Executed) != total {
				t.Errorf("%s: the devices ran %d of %d tasks", name, st.Executed, total)
			}
			final := uint64(p.A.MT * (p.A.MT + 1) / 2)
			if st.StageOuts != 0 {
				t.Errorf("%s: %d stage-outs; written tiles stay on the device", name, st.StageOuts)
			}
			if len(devs) == 1 && !run.share && (st.Recalled != final || st.WriteBacks != 0) {
				t.Errorf("%s: %d tiles recalled and %d evictions; want the %d final tiles, once each, and none",
					name, st.Recalled, st.WriteBacks, final)
			}
			res, err := p.Residual(blas.Gonum())
			if err != nil || !(res < 1e-12) {
				t.Errorf("%s: residual %g (%v)", name, res, err)
			}
			got := make([]float64, c.n*c.n)
			p.A.GatherToDense(got, c.n)
			var diff, scale float64
			for j := range c.n {
				for i := j; i < c.n; i++ {
					diff = max(diff, math.Abs(got[i+j*c.n]-want[i+j*c.n]))
					scale = max(scale, math.Abs(want[i+j*c.n]))
				}
			}
			if !(diff/scale < 1e-12) {
				t.Errorf("%s: factor differs from the CPU's by %.3g (relative)", name, diff/scale)
			}
			t.Logf("%s: the devices ran %d of %d tasks in %d calls and copied %d tiles back; factors differ by %.3g",
				name, st.Executed, total, st.Batches, st.Recalled, diff/scale)
		}
	}
}

// mustContext returns a Context with opts, closed when the test ends.
func mustContext(t *testing.T, opts ...rt.Option) *rt.Context {
	t.Helper()
	c, err := rt.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
