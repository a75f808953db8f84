package dynamic_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/dynamic"
	"github.com/jdf2go/jdf2go/rt/gpu"
	_ "github.com/jdf2go/jdf2go/rt/gpu/sim"
)

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// openGPUGraph returns a graph on a 2-worker context with the devices of spec, which the
// test's cleanup closes after the context, and the options ropts; it skips when skip says
// the spec cannot open here.
func openGPUGraph(t *testing.T, spec string, skip func(error) bool, dopts []gpu.Option, ropts ...rt.Option) (*dynamic.Graph, *gpu.RTDevice) {
	t.Helper()
	devs, err := gpu.Open(spec, append([]gpu.Option{gpu.WithLogger(quietLog)}, dopts...)...)
	if err != nil {
		if skip != nil && skip(err) {
			t.Skip("skipped: " + err.Error())
		}
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, d := range devs {
			if err := d.Close(); err != nil {
				t.Error(err)
			}
		}
	})
	c, err := rt.New(append([]rt.Option{rt.Workers(2), rt.Devices(gpu.RTDevices(devs)...)}, ropts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	g, err := dynamic.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return g, devs[0]
}

func waitGraph(t *testing.T, g *dynamic.Graph) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return g.Wait(ctx)
}

// gemmProgram is a tiled C += A*B with, between the products, CPU tasks that scale tiles of
// A (so device copies of A go stale) and tasks that copy diagonal tiles of C to D (Write
// only). With gpus, the products have only a GPU body and the copies both bodies; without,
// every task runs its CPU body.
type gemmProgram struct {
	nt, nb  int
	a, b, c [][]float64 // tiles, row-major by tile: x[i*nt+j]
	d       [][]float64
}

func newGemmProgram(nt, nb int, seed uint64) *gemmProgram {
	r := rand.New(rand.NewPCG(seed, 1))
	tiles := func() [][]float64 {
		ts := make([][]float64, nt*nt)
		for i := range ts {
			ts[i] = make([]float64, nb*nb)
			for k := range ts[i] {
				ts[i][k] = r.Float64() - 0.5
			}
		}
		return ts
	}
	p := &gemmProgram{nt: nt, nb: nb, a: tiles(), b: tiles(), c: tiles()}
	for range nt {
		p.d = append(p.d, make([]float64, nb*nb))
	}
	return p
}

// run inserts the program into g and waits. It returns how many tasks ran a GPU body.
func (p *gemmProgram) run(t *testing.T, g *dynamic.Graph, gpus bool, opts ...dynamic.GPUOption) int64 {
	t.Helper()
	reg := func(name string, ts [][]float64) []*dynamic.Data[[]float64] {
		out := make([]*dynamic.Data[[]float64], len(ts))
		for i, x := range ts {
			d, err := dynamic.Register(g, fmt.Sprintf("%s%d", name, i), x)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = d
		}
		return out
	}
	A, B, C, D := reg("A", p.a), reg("B", p.b), reg("C", p.c), reg("D", p.d)
	nb := p.nb
	var onGPU atomic.Int64
	gemm := dynamic.GPU(func(task *dynamic.GPUTask, s *gpu.Stream) gpu.Result {
		for m := range task.Ring() {
			onGPU.Add(1)
			if err := s.Dgemm(blas.NoTrans, blas.NoTrans, nb, nb, nb, 1, m.Buffer(1), nb, m.Buffer(2), nb, 1, m.Buffer(0), nb); err != nil {
				return task.Fail(err)
			}
		}
		return gpu.Done
	}, opts...)
	copyGPU := dynamic.GPU(func(task *dynamic.GPUTask, s *gpu.Stream) gpu.Result {
		onGPU.Add(1)
		if err := s.Memcpy(task.Buffer(0), task.Buffer(1)); err != nil {
			return task.Fail(err)
		}
		return gpu.Done
	})
	insert := func(name string, run func(*dynamic.Task) error, args ...dynamic.Arg) {
		t.Helper()
		if err := g.Insert(name, run, args...); err != nil {
			t.Fatal(err)
		}
	}
	nt := p.nt
	for k := range nt {
		for i := range nt {
			for j := range nt {
				c, a, b := C[i*nt+j], A[i*nt+k], B[k*nt+j]
				cpu := func(*dynamic.Task) error {
					return blas.Dgemm(blas.NoTrans, blas.NoTrans, nb, nb, nb, 1, a.Value(), nb, b.Value(), nb, 1, c.Value(), nb)
				}
				if gpus {
					insert("GEMM", nil, dynamic.ReadWrite(c), dynamic.Read(a), dynamic.Read(b), gemm)
				} else {
					insert("GEMM", cpu, dynamic.ReadWrite(c), dynamic.Read(a), dynamic.Read(b))
				}
			}
		}
		for i := range nt {
			a := A[i*nt+(k+1)%nt]
			insert("SCALE", func(*dynamic.Task) error {
				for x := range a.Value() {
					a.Value()[x] *= 0.5
				}
				return nil
			}, dynamic.ReadWrite(a))
			d, c := D[i], C[i*nt+i]
			cpu := func(*dynamic.Task) error { copy(d.Value(), c.Value()); return nil }
			if gpus {
				insert("COPY", cpu, dynamic.Write(d), dynamic.Read(c), copyGPU)
			} else {
				insert("COPY", cpu, dynamic.Write(d), dynamic.Read(c))
			}
		}
	}
	if err := waitGraph(t, g); err != nil {
		t.Fatal(err)
	}
	return onGPU.Load()
}

func sameTiles(t *testing.T, what string, got, want [][]float64) {
	t.Helper()
	for i := range want {
		for k := range want[i] {
			if d := math.Abs(got[i][k] - want[i][k]); d > 1e-12*(1+math.Abs(want[i][k])) {
				t.Fatalf("%s tile %d element %d = %v, want %v", what, i, k, got[i][k], want[i][k])
			}
		}
	}
}

// TestGPUBodiesMatchCPU: a tiled product on the simulated device, with CPU tasks changing
// inputs between products and tasks that may run either body, ends with the data of the run
// on CPU bodies only.
func TestGPUBodiesMatchCPU(t *testing.T) {
	const nt, nb = 3, 8
	want := newGemmProgram(nt, nb, 7)
	_, cg := newGraph(t)
	if n := want.run(t, cg, false); n != 0 {
		t.Fatalf("%d tasks ran a GPU body without a device", n)
	}

	got := newGemmProgram(nt, nb, 7)
	g, dev := openGPUGraph(t, "sim:1", nil, nil)
	n := got.run(t, g, true)
	if n < nt*nt*nt {
		t.Fatalf("%d tasks ran a GPU body, want at least the %d products", n, nt*nt*nt)
	}
	sameTiles(t, "A", got.a, want.a)
	sameTiles(t, "C", got.c, want.c)
	sameTiles(t, "D", got.d, want.d)
	if st := dev.Device().Stats(); st.Executed != uint64(n) {
		t.Fatalf("the device completed %d tasks, the bodies counted %d", st.Executed, n)
	}
}

// TestGPUStaging: Read data are staged in once and never written back, Write data come back
// to the host when a CPU task reads them or at Wait, and not at the end of their task, a
// CPU write makes the device copy stale, and Scratch is device memory that reaches neither
// the host nor the datum's device copy.
func TestGPUStaging(t *testing.T) {
	g, dev := openGPUGraph(t, "sim:1", nil, nil)
	const n = 16
	xs, ys, ss := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range xs {
		xs[i] = float64(i)
	}
	x, _ := dynamic.Register(g, "x", xs)
	y, _ := dynamic.Register(g, "y", ys)
	scr, _ := dynamic.Register(g, "s", ss)
	var saw [][]float64 // y after each copy, read by CPU tasks
	// y = x through the scratch: s = x, y = s.
	viaScratch := dynamic.GPU(func(task *dynamic.GPUTask, s *gpu.Stream) gpu.Result {
		sb := dynamic.BufferOf(task, scr)
		if err := s.Memcpy(sb, dynamic.BufferOf(task, x)); err != nil {
			return task.Fail(err)
		}
		if err := s.Memcpy(dynamic.BufferOf(task, y), sb); err != nil {
			return task.Fail(err)
		}
		return gpu.Done
	})
	step := func(what string, args ...dynamic.Arg) {
		t.Helper()
		if err := g.Insert(what, nil, args...); err != nil {
			t.Fatal(err)
		}
		if err := g.Insert("LOOK", func(*dynamic.Task) error {
			saw = append(saw, append([]float64(nil), y.Value()...))
			return nil
		}, dynamic.Read(y)); err != nil {
			t.Fatal(err)
		}
	}
	// PEEK reads s itself on the device, before and after the scratch uses: its device copy
	// must not hold what the scratch uses wrote.
	peek := make([][]float64, 2)
	peekBody := dynamic.GPU(func(task *dynamic.GPUTask, s *gpu.Stream) gpu.Result {
		if err := s.Memcpy(task.Buffer(0), task.Buffer(1)); err != nil {
			return task.Fail(err)
		}
		return gpu.Done
	})
	for i := range peek {
		peek[i] = make([]float64, n)
	}
	p0, _ := dynamic.Register(g, "p0", peek[0])
	p1, _ := dynamic.Register(g, "p1", peek[1])
	if err := g.Insert("PEEK", nil, dynamic.Write(p0), dynamic.Read(scr), peekBody); err != nil {
		t.Fatal(err)
	}
	copyArgs := []dynamic.Arg{dynamic.Read(x), dynamic.Scratch(scr), dynamic.Write(y), viaScratch}
	step("COPY", copyArgs...)
	step("COPY", copyArgs...) // x is current on the device: no second stage-in
	if err := g.Insert("BUMP", func(*dynamic.Task) error {
		for i := range xs {
			xs[i] += 100
		}
		return nil
	}, dynamic.ReadWrite(x)); err != nil {
		t.Fatal(err)
	}
	step("COPY", copyArgs...) // x is stale on the device
	// Reading y orders it after the last scratch use (Scratch orders nothing).
	if err := g.Insert("PEEK", nil, dynamic.Write(p1), dynamic.Read(scr), dynamic.Read(y), peekBody); err != nil {
		t.Fatal(err)
	}
	if err := waitGraph(t, g); err != nil {
		t.Fatal(err)
	}
	for k, p := range peek {
		for i, v := range p {
			if v != 0 {
				t.Fatalf("PEEK %d read s[%d] = %v on the device: the scratch shared the datum's device copy", k, i, v)
			}
		}
	}
	for k, v := range saw {
		for i := range v {
			want := float64(i)
			if k == 2 {
				want += 100
			}
			if v[i] != want {
				t.Fatalf("after copy %d, y[%d] = %v, want %v", k, i, v[i], want)
			}
		}
	}
	for i, v := range ss {
		if v != 0 {
			t.Fatalf("scratch host copy s[%d] = %v: scratch was written back", i, v)
		}
	}
	st := dev.Device().Stats()
	if st.Executed != 5 || st.StageIns != 3 || st.StageOuts != 0 || st.Recalled != 5 {
		t.Fatalf("device: %d tasks, %d stage-ins, %d stage-outs, %d recalled; want 5, 3 (s once, x twice), 0, 5 (y for each LOOK, p0 and p1 at Wait)",
			st.Executed, st.StageIns, st.StageOuts, st.Recalled)
	}
}

// TestGPUBatches: tasks of one batched body form rings bounded by Batch's max, holding only
// the tasks that the match accepts, and each task runs once.
func TestGPUBatches(t *testing.T) {
	const tasks, max = 24, 4
	g, dev := openGPUGraph(t, "sim:1", nil, []gpu.Option{gpu.WithComputeStreams(1), gpu.WithRetryLimit(0)})
	var mu sync.Mutex
	var rings [][]int64
	ran := make([]int, tasks+1)
	deadline := time.Now().Add(10 * time.Second)
	body := dynamic.GPU(func(task *dynamic.GPUTask, s *gpu.Stream) gpu.Result {
		if task.RingLen() < max && time.Now().Before(deadline) && !allSubmitted(dev, tasks) {
			return gpu.Next // wait for the others, so that full rings form
		}
		var ring []int64
		for m := range task.Ring() {
			ring = append(ring, m.Seq())
			b := m.Buffer(0)
			if err := s.Memcpy(b, m.Buffer(1)); err != nil {
				return task.Fail(err)
			}
		}
		mu.Lock()
		rings = append(rings, ring)
		for _, q := range ring {
			ran[q]++
		}
		mu.Unlock()
		return gpu.Done
	}, dynamic.Batch(max, func(cand, head *dynamic.GPUTask) gpu.Action {
		if cand.Seq()%2 != head.Seq()%2 {
			return gpu.Reject
		}
		return gpu.Accept
	}))
	src := make([]float64, 8)
	for i := range src {
		src[i] = 3
	}
	in, _ := dynamic.Register(g, "in", src)
	outs := make([][]float64, tasks)
	for i := range outs {
		outs[i] = make([]float64, 8)
		o, _ := dynamic.Register(g, fmt.Sprintf("out%d", i), outs[i])
		if err := g.Insert("B", nil, dynamic.Write(o), dynamic.Read(in), body); err != nil {
			t.Fatal(err)
		}
	}
	if err := waitGraph(t, g); err != nil {
		t.Fatal(err)
	}
	for q := 1; q <= tasks; q++ {
		if ran[q] != 1 {
			t.Fatalf("task B(%d) ran %d times, want once", q, ran[q])
		}
	}
	full := 0
	for _, r := range rings {
		if len(r) > max {
			t.Fatalf("ring %v holds more than %d tasks", r, max)
		}
		for _, q := range r {
			if q%2 != r[0]%2 {
				t.Fatalf("ring %v mixes tasks the match rejects", r)
			}
		}
		if len(r) == max {
			full++
		}
	}
	if full == 0 {
		t.Fatalf("no ring of %d formed: %v", max, rings)
	}
	for i, o := range outs {
		for _, v := range o {
			if v != 3 {
				t.Fatalf("out%d = %v, want 3s: a ring member's write did not reach the host", i, o)
			}
		}
	}
	if st := dev.Device().Stats(); st.Batched != tasks || st.Batches != int64(len(rings)) {
		t.Fatalf("device: %d wrappers in %d hook calls, want %d in %d", st.Batched, st.Batches, tasks, len(rings))
	}
}

// allSubmitted reports whether the device has accepted n wrappers in all (outstanding plus
// completed).
func allSubmitted(dev *gpu.RTDevice, n int) bool {
	st := dev.Device().Stats()
	return int(st.Outstanding)+int(st.Executed) >= n
}

// TestGPUAndCPUBodies: a task with both bodies runs on either and computes the same; a
// Commute task runs its CPU body; a GPU-only Commute task and a GPU body on data a device
// cannot hold are refused at insertion; a GPU-only task without a device fails by name.
func TestGPUAndCPUBodies(t *testing.T) {
	g, _ := openGPUGraph(t, "sim:1", nil, nil)
	const n = 64
	src := []float64{1, 2, 3, 4}
	in, _ := dynamic.Register(g, "in", src)
	var cpuRuns, gpuRuns atomic.Int64
	body := dynamic.GPU(func(task *dynamic.GPUTask, s *gpu.Stream) gpu.Result {
		gpuRuns.Add(1)
		if err := s.Memcpy(task.Buffer(0), task.Buffer(1)); err != nil {
			return task.Fail(err)
		}
		return gpu.Done
	})
	outs := make([][]float64, n)
	for i := range outs {
		outs[i] = make([]float64, len(src))
		o, _ := dynamic.Register(g, fmt.Sprintf("o%d", i), outs[i])
		if err := g.Insert("COPY", func(*dynamic.Task) error {
			cpuRuns.Add(1)
			copy(o.Value(), in.Value())
			return nil
		}, dynamic.Write(o), dynamic.Read(in), body); err != nil {
			t.Fatal(err)
		}
	}
	acc, _ := dynamic.Register(g, "acc", make([]float64, 1))
	var commuteOnGPU atomic.Int64
	sum := dynamic.GPU(func(task *dynamic.GPUTask, s *gpu.Stream) gpu.Result {
		commuteOnGPU.Add(1)
		return gpu.Done
	})
	for range 10 {
		if err := g.Insert("SUM", func(*dynamic.Task) error { acc.Value()[0]++; return nil },
			dynamic.Commute(acc), sum); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Insert("SUM", nil, dynamic.Commute(acc), sum); !errors.Is(err, dynamic.ErrMode) {
		t.Fatalf("a GPU-only Commute task: %v, want ErrMode", err)
	}
	m, _ := dynamic.Register(g, "m", map[int]int{})
	if err := g.Insert("MAP", nil, dynamic.Read(m), body); !errors.Is(err, dynamic.ErrMode) {
		t.Fatalf("a GPU body reading a map: %v, want ErrMode", err)
	}
	if err := waitGraph(t, g); err != nil {
		t.Fatal(err)
	}
	if c, d := cpuRuns.Load(), gpuRuns.Load(); c+d != n || d == 0 {
		t.Fatalf("%d CPU and %d GPU runs of %d tasks; want every task once and the device used", c, d, n)
	}
	for i, o := range outs {
		for k := range o {
			if o[k] != src[k] {
				t.Fatalf("o%d = %v, want %v", i, o, src)
			}
		}
	}
	if commuteOnGPU.Load() != 0 || acc.Value()[0] != 10 {
		t.Fatalf("commute tasks: %d on the device, acc = %v; want 0 and 10", commuteOnGPU.Load(), acc.Value()[0])
	}

	_, cg := newGraph(t)
	x, _ := dynamic.Register(cg, "x", make([]float64, 4))
	if err := cg.Insert("ONLYGPU", nil, dynamic.ReadWrite(x), body); err != nil {
		t.Fatal(err)
	}
	err := waitGraph(t, cg)
	var te *rt.TaskError
	if !errors.As(err, &te) || te.Task != "ONLYGPU(1)" || !errors.Is(err, rt.ErrNoIncarnation) {
		t.Fatalf("a GPU-only task without a device: %v, want a TaskError for ONLYGPU(1) wrapping rt.ErrNoIncarnation", err)
	}
}

// TestGPUResults: AGAIN continues the same task after its first half, NEXT retries it later,
// ASYNC with RunOnCPU hands it to its CPU body; each ends with the right data.
func TestGPUResults(t *testing.T) {
	// Without sharing, the task with both bodies goes to the device.
	g, _ := openGPUGraph(t, "sim:1", nil, nil, rt.ShareWork(false))
	const n = 8
	src := make([]float64, n)
	for i := range src {
		src[i] = float64(i + 1)
	}
	in, _ := dynamic.Register(g, "in", src)
	var mu sync.Mutex
	steps := map[string]int{}
	step := func(task *dynamic.GPUTask) int {
		mu.Lock()
		defer mu.Unlock()
		steps[task.Name()]++
		return steps[task.Name()]
	}
	again := dynamic.GPU(func(task *dynamic.GPUTask, s *gpu.Stream) gpu.Result {
		half := n / 2
		if step(task) == 1 {
			if err := s.Memcpy(task.Buffer(0).Slice(0, half), task.Buffer(1).Slice(0, half)); err != nil {
				return task.Fail(err)
			}
			return gpu.Again
		}
		if err := s.Memcpy(task.Buffer(0).Slice(half, n), task.Buffer(1).Slice(half, n)); err != nil {
			return task.Fail(err)
		}
		return gpu.Done
	})
	next := dynamic.GPU(func(task *dynamic.GPUTask, s *gpu.Stream) gpu.Result {
		if step(task) == 1 {
			return gpu.Next
		}
		if err := s.Memcpy(task.Buffer(0), task.Buffer(1)); err != nil {
			return task.Fail(err)
		}
		return gpu.Done
	})
	var cpuRan atomic.Int64
	async := dynamic.GPU(func(task *dynamic.GPUTask, s *gpu.Stream) gpu.Result {
		step(task)
		if err := task.RunOnCPU(); err != nil {
			return task.Fail(err)
		}
		return gpu.Async
	})
	outs := map[string][]float64{}
	for _, c := range []struct {
		name string
		body *dynamic.GPUBody
		cpu  bool
	}{{"AGAIN", again, false}, {"NEXT", next, false}, {"ASYNC", async, true}} {
		out := make([]float64, n)
		outs[c.name] = out
		o, _ := dynamic.Register(g, c.name, out)
		var run func(*dynamic.Task) error
		if c.cpu {
			run = func(*dynamic.Task) error { cpuRan.Add(1); copy(o.Value(), in.Value()); return nil }
		}
		if err := g.Insert(c.name, run, dynamic.Write(o), dynamic.Read(in), c.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := waitGraph(t, g); err != nil {
		t.Fatal(err)
	}
	for name, out := range outs {
		for i := range out {
			if out[i] != src[i] {
				t.Fatalf("%s wrote %v, want %v", name, out, src)
			}
		}
	}
	if steps["AGAIN(1)"] != 2 || steps["NEXT(2)"] != 2 || steps["ASYNC(3)"] != 1 || cpuRan.Load() != 1 {
		t.Fatalf("body calls %v and %d CPU runs; want AGAIN and NEXT twice, ASYNC once, then its CPU body", steps, cpuRan.Load())
	}
}

// TestGPUBodyErrors: a GPU body that fails or panics fails the graph with a TaskError naming
// the task, and later insertions return that error.
func TestGPUBodyErrors(t *testing.T) {
	boom := errors.New("boom")
	for _, c := range []struct {
		name string
		body dynamic.GPUFunc
		want string
	}{
		{"FAIL", func(task *dynamic.GPUTask, s *gpu.Stream) gpu.Result { return task.Fail(boom) }, "boom"},
		{"PANIC", func(task *dynamic.GPUTask, s *gpu.Stream) gpu.Result { panic("kaboom") }, "panic: kaboom"},
		{"ERROR", func(task *dynamic.GPUTask, s *gpu.Stream) gpu.Result { return gpu.Error }, "ERROR"},
		{"BADARG", func(task *dynamic.GPUTask, s *gpu.Stream) gpu.Result {
			// The body names a datum the task does not access: a zero Buffer.
			if err := s.Memcpy(task.Buffer(0), task.Buffer(5)); err != nil {
				return task.Fail(err)
			}
			return gpu.Done
		}, "Memcpy"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, _ := openGPUGraph(t, "sim:1", nil, nil)
			x, _ := dynamic.Register(g, "x", make([]float64, 4))
			if err := g.Insert("OK", func(*dynamic.Task) error { return nil }, dynamic.Write(x)); err != nil {
				t.Fatal(err)
			}
			if err := g.Insert(c.name, nil, dynamic.ReadWrite(x), dynamic.GPU(c.body)); err != nil {
				t.Fatal(err)
			}
			err := waitGraph(t, g)
			var te *rt.TaskError
			if !errors.As(err, &te) || te.Task != c.name+"(2)" || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Wait = %v, want a TaskError for %s(2) saying %q", err, c.name, c.want)
			}
			if c.name == "FAIL" && !errors.Is(err, boom) {
				t.Fatalf("Wait = %v, want it to wrap the body's error", err)
			}
			if err := g.Insert("LATE", func(*dynamic.Task) error { return nil }, dynamic.Read(x)); err == nil {
				t.Fatal("an insertion after the failure succeeded")
			}
		})
	}
}
