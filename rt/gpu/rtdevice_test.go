package gpu_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/gpu"
	_ "github.com/jdf2go/jdf2go/rt/gpu/sim"
)

// An rt program with a batched GPU incarnation, written the way jdf2go will
// generate it:
//
//	T(k, s)
//	  k = 0 .. K-1
//	  s = 0 .. S-1
//	  : V(k)
//	RW X <- (s == 0) ? V(k) : X T(k, s-1)
//	     -> (s < S-1) ? X T(k, s+1) : V(k)
//	BODY [type=GPU batch=true batch_max=8 evaluate=even]  X = 2*X + 1  END
//	BODY                                                   X = 2*X + 1  END
//
// Steps alternate between the devices and the CPU (the GPU body refuses odd
// steps), so every step moves the datum between host and device copies.
type affine struct {
	K, S int
	V    *rt.Vector
}

var affineT rt.TaskClass

func init() {
	err := gpu.RegisterKernel(gpu.KernelSpec{Name: "test.affine", Host: func(mem gpu.HostMemory, _, _ gpu.Dim3, args []any) error {
		x, err := gpu.Float64s(mem, args[0].(gpu.Buffer))
		if err != nil {
			return err
		}
		a, b := args[1].(float64), args[2].(float64)
		for i := range x {
			x[i] = a*x[i] + b
		}
		return nil
	}})
	if err != nil {
		panic(err)
	}
	gpuBody := &gpu.Incarnation{Name: "T/gpu", Batch: true, Submit: func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		if _, err := s.CollectBatch(task, gpu.BatchPolicy{Max: 8}.Match, nil); err != nil {
			return gpu.Error
		}
		for m := range task.Ring() {
			if err := s.Launch("test.affine", gpu.Dim3{X: 1}, gpu.Dim3{X: 1}, m.Buffer(0), 2.0, 1.0); err != nil {
				return gpu.Error
			}
		}
		return gpu.Done
	}}
	affineT = rt.TaskClass{
		Name: "T", ID: 0, Locals: []string{"k", "s"}, Params: []int{0, 1},
		Flows: []rt.Flow{{Name: "X", Access: rt.RW}},
		Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
			g := tp.Globals().(*affine)
			for k := range g.K {
				l[0] = k
				for s := range g.S {
					l[1] = s
					if !yield(l) {
						return
					}
				}
			}
		},
		Complete: affineComplete,
		Goal: func(tp *rt.Taskpool, l *rt.Locals) uint32 {
			if l[1] > 0 {
				return 1
			}
			return 0
		},
		Affinity: func(tp *rt.Taskpool, l *rt.Locals) (rt.Collection, rt.Index) {
			return tp.Globals().(*affine).V, rt.Ix(l[0])
		},
		Prepare: func(task *rt.Task) error {
			if task.Locals()[1] == 0 {
				task.SetFlow(0, task.Taskpool().Globals().(*affine).V.DataOf(rt.Ix(task.Locals()[0])).Host())
			}
			return nil
		},
		Successors: func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
			g := tp.Globals().(*affine)
			if flows&1 == 0 {
				return
			}
			if l[1] < g.S-1 {
				e.L[0], e.L[1] = l[0], l[1]+1
				if affineComplete(tp, &e.L) {
					e.Task(0, 0, &affineT, 0)
				}
				return
			}
			e.Data(0, 1, g.V, rt.Ix(l[0]))
		},
		Incarnations: []rt.Incarnation{
			// Evaluate keeps the odd steps off the devices; Select (device = k)
			// pins the even ones to a device, so none is shared with the CPU.
			{Kind: rt.GPU, Device: gpuBody, Evaluate: rt.EvaluateOf(func(t *rt.Task) bool { return t.Locals()[1]%2 == 0 }),
				Select: func(t *rt.Task) int { return t.Locals()[0] }},
			{Kind: rt.CPU, Hook: func(t *rt.Task) error {
				x := t.Flow(0).Float64s()
				for i := range x {
					x[i] = 2*x[i] + 1
				}
				return nil
			}},
		},
	}
}

func affineComplete(tp *rt.Taskpool, l *rt.Locals) bool {
	g := tp.Globals().(*affine)
	return l[0] >= 0 && l[0] < g.K && l[1] >= 0 && l[1] < g.S
}

func TestRTDeviceRunsBatchedGPUIncarnation(t *testing.T) {
	const K, S, nb = 24, 6, 16
	devs, err := gpu.Open("sim:2", gpu.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	c, err := rt.New(rt.Workers(2), rt.Devices(gpu.RTDevices(devs)...), rt.Profiling())
	if err != nil {
		t.Fatal(err)
	}
	v, err := rt.NewVector(K*nb, nb, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	for k := range K {
		for i, b := 0, v.Block(k); i < nb; i++ {
			b[i] = math.Sin(float64(k*nb + i))
		}
	}
	tp := rt.NewTaskpool("affine", &affine{K: K, S: S, V: v}, &affineT)
	if err := c.Add(tp); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tp.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for k := range K {
		for i, got := range v.Block(k) {
			want := math.Sin(float64(k*nb + i))
			for range S {
				want = 2*want + 1
			}
			if got != want {
				t.Fatalf("V(%d)[%d] = %v, want %v", k, i, got, want)
			}
		}
	}
	// Device copies are mirrored into the rt.Data slots (device index + 1);
	// the last step ran on the CPU, so the host copy is newer than any.
	mirrored := 0
	for k := range K {
		data := v.DataOf(rt.Ix(k))
		for slot := 1; slot <= 2; slot++ {
			if dc := rt.Impl.DeviceCopy(data, slot); dc != nil {
				mirrored++
				if _, ok := dc.Value.(gpu.Buffer); !ok || rt.Impl.Version(dc) >= rt.Impl.Version(data.Host()) || rt.Impl.State(dc) != rt.Shared {
					t.Fatalf("V(%d) slot %d: %T version %d state %v, host version %d", k, slot, dc.Value, rt.Impl.Version(dc), rt.Impl.State(dc), rt.Impl.Version(data.Host()))
				}
			}
		}
	}
	if mirrored == 0 {
		t.Fatal("no device copy mirrored into rt.Data")
	}
	var executed uint64
	for _, d := range devs {
		st := d.Device().Stats()
		executed += st.Executed
		if st.Outstanding != 0 || st.Live != 0 {
			t.Fatalf("%s: outstanding %d, live %d", d.Name(), st.Outstanding, st.Live)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if want := uint64(K * ((S + 1) / 2)); executed != want {
		t.Fatalf("devices executed %d tasks, want %d (the even steps)", executed, want)
	}
	// A closed device frees its copies, and their records leave the slots.
	for k := range K {
		for slot := 1; slot <= 2; slot++ {
			if dc := rt.Impl.DeviceCopy(v.DataOf(rt.Ix(k)), slot); dc != nil {
				t.Fatalf("V(%d) slot %d still holds a copy of a closed device", k, slot)
			}
		}
	}
	counts := map[string]int64{}
	for _, st := range c.Tracer().Summary() {
		counts[st.Name] += st.Count
	}
	// CPU steps are traced by their workers, GPU steps by the device's
	// exec tracks; every GPU step stages its datum in and out (the CPU wrote
	// it in between); managers record their episodes on their workers.
	if counts["T"] != K*S || counts["stage_in T"] != int64(executed) || counts["stage_out T"] != int64(executed) {
		t.Fatalf("spans T %d, stage_in T %d, stage_out T %d; want %d, %d, %d",
			counts["T"], counts["stage_in T"], counts["stage_out T"], K*S, executed, executed)
	}
	if counts["gpu own gpu0"]+counts["gpu own gpu1"] == 0 {
		t.Fatal("no management episode traced")
	}
}

// fill is a two-class rt program whose first class gets a fresh buffer:
//
//	P(k)  k = 0 .. K-1
//	RW X <- NEW  -> X Q(k)        BODY [type=GPU]  X[i] = k + i  END
//	Q(k)  k = 0 .. K-1
//	READ X <- X P(k)              BODY  check X into got[k]  END
//
// X comes from the arena with undefined content, so the device that runs P must
// not copy it in, although the flow is RW.
type fill struct {
	K   int
	got [][]float64
}

var fillP, fillQ rt.TaskClass

func init() {
	err := gpu.RegisterKernel(gpu.KernelSpec{Name: "test.ramp", Host: func(mem gpu.HostMemory, _, _ gpu.Dim3, args []any) error {
		x, err := gpu.Float64s(mem, args[0].(gpu.Buffer))
		if err != nil {
			return err
		}
		for i := range x {
			x[i] = args[1].(float64) + float64(i)
		}
		return nil
	}})
	if err != nil {
		panic(err)
	}
	space := func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
		for k := range tp.Globals().(*fill).K {
			l[0] = k
			if !yield(l) {
				return
			}
		}
	}
	complete := func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] >= 0 && l[0] < tp.Globals().(*fill).K }
	fillP = rt.TaskClass{
		Name: "P", ID: 0, Locals: []string{"k"}, Params: []int{0},
		Flows:    []rt.Flow{{Name: "X", Access: rt.RW}},
		Space:    space,
		Complete: complete,
		Goal:     func(*rt.Taskpool, *rt.Locals) uint32 { return 0 },
		Prepare:  func(task *rt.Task) error { return task.BindNew(0, "DEFAULT") },
		Successors: func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
			if flows&1 != 0 {
				e.L[0] = l[0]
				e.Task(0, 0, &fillQ, 0)
			}
		},
		Incarnations: []rt.Incarnation{
			{Kind: rt.GPU, Device: &gpu.Incarnation{Name: "P/gpu", Submit: func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
				k := task.EC().(*rt.Task).Locals()[0]
				if err := s.Launch("test.ramp", gpu.Dim3{X: 1}, gpu.Dim3{X: 1}, task.Buffer(0), float64(k)); err != nil {
					return gpu.Error
				}
				return gpu.Done
			}}},
		},
	}
	fillQ = rt.TaskClass{
		Name: "Q", ID: 1, Locals: []string{"k"}, Params: []int{0},
		Flows:    []rt.Flow{{Name: "X", Access: rt.Read}},
		Space:    space,
		Complete: complete,
		Goal:     func(*rt.Taskpool, *rt.Locals) uint32 { return 1 },
		Incarnations: []rt.Incarnation{
			{Kind: rt.CPU, Hook: func(t *rt.Task) error {
				g := t.Taskpool().Globals().(*fill)
				g.got[t.Locals()[0]] = append([]float64(nil), t.Flow(0).Float64s()...)
				return nil
			}},
		},
	}
}

// TestRTDeviceSkipsStageInOfNewBuffers: an RW flow bound to a fresh arena buffer
// (an input `<- NEW`) is not copied to the device, and what the device writes
// reaches the CPU successor.
func TestRTDeviceSkipsStageInOfNewBuffers(t *testing.T) {
	const K, n = 40, 64
	devs, err := gpu.Open("sim:1", gpu.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	c, err := rt.New(rt.Workers(2), rt.Devices(gpu.RTDevices(devs)...))
	if err != nil {
		t.Fatal(err)
	}
	// Two taskpools share the arena: the second gets the buffers that the first
	// gave back, whose old content the device must not copy in either.
	arena := rt.NewSliceArena[float64](n)
	for run := range 2 {
		g := &fill{K: K, got: make([][]float64, K)}
		tp := rt.NewTaskpool("fill", g, &fillP, &fillQ)
		tp.SetArena("DEFAULT", arena)
		if err := c.Add(tp); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := tp.Wait(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		for k, x := range g.got {
			if len(x) != n {
				t.Fatalf("run %d: Q(%d) read %d elements, want %d", run, k, len(x), n)
			}
			for i, v := range x {
				if v != float64(k+i) {
					t.Fatalf("run %d: Q(%d) read X[%d] = %v, want %v", run, k, i, v, k+i)
				}
			}
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	st := devs[0].Device().Stats()
	if st.Executed != 2*K {
		t.Fatalf("the device ran %d tasks, want %d", st.Executed, 2*K)
	}
	if st.StageIns != 0 {
		t.Fatalf("%d stage-in copies of fresh buffers, want none", st.StageIns)
	}
	if err := devs[0].Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRTDevicePrefetch stages the blocks of a vector in one call: one management episode,
// one transfer per block, nothing left outstanding; a nil datum is refused by name.
func TestRTDevicePrefetch(t *testing.T) {
	devs, err := gpu.Open("sim:1", gpu.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	d := devs[0]
	v, err := rt.NewVector(40*8, 8, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]*rt.Data, v.NT)
	for k := range v.NT {
		data[k] = v.DataOf(rt.Ix(k))
	}
	if err := d.Prefetch(context.Background(), append(data, nil)...); !errors.Is(err, gpu.ErrBadArgument) {
		t.Fatalf("Prefetch with a nil datum: %v, want ErrBadArgument", err)
	}
	if err := d.Prefetch(context.Background(), data...); err != nil {
		t.Fatal(err)
	}
	st := d.Device().Stats()
	if st.Episodes != 1 || st.StageIns != int64(v.NT) || st.Outstanding != 0 || st.Live != 0 {
		t.Fatalf("after Prefetch: %d episodes, %d stage-ins, outstanding %d, %d live; want 1, %d, 0, 0",
			st.Episodes, st.StageIns, st.Outstanding, st.Live, v.NT)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}
