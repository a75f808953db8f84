package dynamic_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/dynamic"
	"github.com/jdf2go/jdf2go/rt/gpu"
)

// axpyGPU is a GPU body that adds x to y (y += x * one, with one = [1]): its data are y
// (ReadWrite), x and one (Read), in that order.
func axpyGPU(n int) *dynamic.GPUBody {
	return dynamic.GPU(func(task *dynamic.GPUTask, s *gpu.Stream) gpu.Result {
		if err := s.Dgemm(blas.NoTrans, blas.NoTrans, n, 1, 1, 1, task.Buffer(1), n, task.Buffer(2), 1, 1, task.Buffer(0), n); err != nil {
			return task.Fail(err)
		}
		return gpu.Done
	})
}

// copyGPU is a GPU body that copies its second datum into its first.
var copyGPU = dynamic.GPU(func(task *dynamic.GPUTask, s *gpu.Stream) gpu.Result {
	if err := s.Memcpy(task.Buffer(0), task.Buffer(1)); err != nil {
		return task.Fail(err)
	}
	return gpu.Done
})

func multipleOf(t *testing.T, what string, got []float64, k float64) {
	t.Helper()
	for i, v := range got {
		if want := k * float64(i+1); v != want {
			t.Fatalf("%s[%d] = %v, want %v", what, i, v, want)
		}
	}
}

// TestGPUChainStaysOnDevice: a chain of GPU tasks on one device that writes a datum makes no
// copy to the host while it runs: the host copy is still the old value once every task has
// run, and Wait brings the newest one back, once.
func TestGPUChainStaysOnDevice(t *testing.T) {
	g, dev := openGPUGraph(t, "sim:1", nil, nil)
	const n, chain = 8, 5
	xs, ys, ones := make([]float64, n), make([]float64, n), []float64{1}
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	x, _ := dynamic.Register(g, "x", xs)
	y, _ := dynamic.Register(g, "y", ys)
	one, _ := dynamic.Register(g, "one", ones)
	if err := g.Insert("COPY", nil, dynamic.Write(y), dynamic.Read(x), copyGPU); err != nil {
		t.Fatal(err)
	}
	axpy := axpyGPU(n)
	for range chain {
		if err := g.Insert("AXPY", nil, dynamic.ReadWrite(y), dynamic.Read(x), dynamic.Read(one), axpy); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for dev.Device().Stats().Executed < chain+1 {
		if time.Now().After(deadline) {
			t.Fatalf("the device ran %d of %d tasks in a minute", dev.Device().Stats().Executed, chain+1)
		}
		time.Sleep(time.Millisecond)
	}
	if st := dev.Device().Stats(); st.StageOuts != 0 || st.Recalled != 0 || st.WriteBacks != 0 {
		t.Fatalf("before Wait: %d stage-outs, %d recalled, %d write-backs; want none", st.StageOuts, st.Recalled, st.WriteBacks)
	}
	multipleOf(t, "host y before Wait", ys, 0)
	if err := waitGraph(t, g); err != nil {
		t.Fatal(err)
	}
	multipleOf(t, "y after Wait", ys, chain+1)
	if st := dev.Device().Stats(); st.StageOuts != 0 || st.Recalled != 1 {
		t.Fatalf("after Wait: %d stage-outs, %d recalled; want 0, 1 (y)", st.StageOuts, st.Recalled)
	}
}

// TestGPUWriteCPURead: a CPU task after GPU writes sees the GPU's value, a CPU write after
// them is seen by the next GPU task, and only the CPU readers and Wait bring y back.
func TestGPUWriteCPURead(t *testing.T) {
	g, dev := openGPUGraph(t, "sim:1", nil, nil)
	const n, chain = 8, 3
	xs, ys, ones := make([]float64, n), make([]float64, n), []float64{1}
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	x, _ := dynamic.Register(g, "x", xs)
	y, _ := dynamic.Register(g, "y", ys)
	one, _ := dynamic.Register(g, "one", ones)
	axpy := axpyGPU(n)
	gpuAdd := func() {
		t.Helper()
		if err := g.Insert("AXPY", nil, dynamic.ReadWrite(y), dynamic.Read(x), dynamic.Read(one), axpy); err != nil {
			t.Fatal(err)
		}
	}
	var saw [][]float64
	look := func() {
		t.Helper()
		if err := g.Insert("LOOK", func(*dynamic.Task) error {
			saw = append(saw, append([]float64(nil), y.Value()...))
			return nil
		}, dynamic.Read(y)); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Insert("COPY", nil, dynamic.Write(y), dynamic.Read(x), copyGPU); err != nil {
		t.Fatal(err)
	}
	for range chain {
		gpuAdd()
	}
	look() // (chain+1) x
	gpuAdd()
	look() // (chain+2) x
	if err := g.Insert("DOUBLE", func(*dynamic.Task) error {
		for i := range y.Value() {
			y.Value()[i] *= 2
		}
		return nil
	}, dynamic.ReadWrite(y)); err != nil {
		t.Fatal(err)
	}
	gpuAdd() // (2 (chain+2) + 1) x
	if err := waitGraph(t, g); err != nil {
		t.Fatal(err)
	}
	if len(saw) != 2 {
		t.Fatalf("%d LOOK tasks ran, want 2", len(saw))
	}
	multipleOf(t, "y at the first LOOK", saw[0], chain+1)
	multipleOf(t, "y at the second LOOK", saw[1], chain+2)
	multipleOf(t, "y after Wait", ys, 2*(chain+2)+1)
	// y comes back for each LOOK and at Wait; DOUBLE finds it on the host already. x, one
	// and y (after DOUBLE) are staged in.
	if st := dev.Device().Stats(); st.StageOuts != 0 || st.Recalled != 3 || st.StageIns != 3 {
		t.Fatalf("%d stage-outs, %d recalled, %d stage-ins; want 0, 3, 3", st.StageOuts, st.Recalled, st.StageIns)
	}
}

// TestGPUTwoDevices: tiles pass between two simulated devices and the CPU (GEMMs on either
// device, CPU tasks writing their inputs, copies on either side), and the result is the CPU
// run's.
func TestGPUTwoDevices(t *testing.T) {
	const nt, nb = 4, 16
	want := newGemmProgram(nt, nb, 11)
	_, cg := newGraph(t)
	want.run(t, cg, false)

	got := newGemmProgram(nt, nb, 11)
	devs, err := gpu.Open("sim:2", gpu.WithLogger(quietLog))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, d := range devs {
			if err := d.Close(); err != nil {
				t.Error(err)
			}
		}
	})
	c, err := rt.New(rt.Workers(2), rt.Devices(gpu.RTDevices(devs)...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	g, err := dynamic.New(c)
	if err != nil {
		t.Fatal(err)
	}
	got.run(t, g, true)
	sameTiles(t, "C", got.c, want.c)
	sameTiles(t, "D", got.d, want.d)
	var moved int64
	for _, d := range devs {
		st := d.Device().Stats()
		t.Logf("%s: %d tasks, %d stage-ins (%d from the other device), %d recalled, %d stage-outs",
			d.Name(), st.Executed, st.StageIns, st.PeerCopies, st.Recalled, st.StageOuts)
		if st.Executed == 0 {
			t.Errorf("%s ran no task", d.Name())
		}
		if st.StageOuts != 0 {
			t.Errorf("%s: %d stage-outs; written tiles stay on the device", d.Name(), st.StageOuts)
		}
		moved += int64(st.PeerCopies) + int64(st.Recalled)
	}
	if moved == 0 {
		t.Error("no tile left a device")
	}
}

// TestGPUEvictionWritesBack: a device whose memory holds a few tiles, written by GPU tasks
// and never read on the host before Wait, writes its dirty copies back before it evicts
// them, and every tile ends with its GPU value.
func TestGPUEvictionWritesBack(t *testing.T) {
	const tiles, n = 12, 64
	g, dev := openGPUGraph(t, "sim:1", nil, []gpu.Option{gpu.WithMemoryLimit(4 * n * 8)})
	src := make([]float64, n)
	for i := range src {
		src[i] = float64(i + 1)
	}
	s, _ := dynamic.Register(g, "src", src)
	ts := make([][]float64, tiles)
	for i := range ts {
		ts[i] = make([]float64, n)
		d, _ := dynamic.Register(g, "t", ts[i])
		if err := g.Insert("FILL", nil, dynamic.Write(d), dynamic.Read(s), copyGPU); err != nil {
			t.Fatal(err)
		}
	}
	if err := waitGraph(t, g); err != nil {
		t.Fatal(err)
	}
	for i, v := range ts {
		multipleOf(t, fmt.Sprintf("tile %d", i), v, 1)
	}
	st := dev.Device().Stats()
	if st.WriteBacks == 0 || st.StageOuts != 0 {
		t.Fatalf("%d evictions with write-back, %d stage-outs; want some, and none", st.WriteBacks, st.StageOuts)
	}
	t.Logf("%d write-back wrappers, %d evictions, %d recalled at Wait", st.WriteBacks, st.Evictions, st.Recalled)
}

// TestGPUFlush: Flush on one rank brings what GPU tasks wrote back to the host (through a
// CPU reader of each datum), in insertion order: a GPU task inserted after it writes again,
// and Wait brings that value back too.
func TestGPUFlush(t *testing.T) {
	g, dev := openGPUGraph(t, "sim:1", nil, nil)
	const n = 8
	xs, ys, ones := make([]float64, n), make([]float64, n), []float64{1}
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	x, _ := dynamic.Register(g, "x", xs)
	y, _ := dynamic.Register(g, "y", ys)
	one, _ := dynamic.Register(g, "one", ones)
	if err := g.Insert("COPY", nil, dynamic.Write(y), dynamic.Read(x), copyGPU); err != nil {
		t.Fatal(err)
	}
	if err := g.Flush(); err != nil {
		t.Fatal(err)
	}
	var saw []float64
	if err := g.Insert("LOOK", func(*dynamic.Task) error {
		saw = append([]float64(nil), y.Value()...)
		return nil
	}, dynamic.Read(y)); err != nil {
		t.Fatal(err)
	}
	if err := g.Insert("AXPY", nil, dynamic.ReadWrite(y), dynamic.Read(x), dynamic.Read(one), axpyGPU(n)); err != nil {
		t.Fatal(err)
	}
	if err := waitGraph(t, g); err != nil {
		t.Fatal(err)
	}
	multipleOf(t, "y after Flush", saw, 1)
	multipleOf(t, "y after Wait", ys, 2)
	// y comes back at the FLUSH task (LOOK finds it there) and at Wait.
	if st := dev.Device().Stats(); st.Recalled != 2 || st.StageOuts != 0 {
		t.Fatalf("%d recalled, %d stage-outs; want 2, 0", st.Recalled, st.StageOuts)
	}
}
