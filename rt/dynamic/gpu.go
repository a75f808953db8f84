package dynamic

// GPU bodies of inserted tasks.
//
// Actors: inserters, which give a task a GPU body (a *GPUBody among Insert's arguments);
// workers, which make the task's class's device incarnation run and hand the task to a
// device (rt's choice between devices and CPU workers, as for PTG); the device's manager
// (rt/gpu), which stages the task's data in, runs the body as its submit hook, keeps written
// data on the device (dirty) and completes the task through rt, which runs the class's
// Successors function (release) as for a CPU body.
//
// Invariant: after Wait, every datum's host copy is its newest version; a task never reads
// a stale copy, on any device or on the host. coherence.go says how: a written datum stays
// on its device until a CPU task, a task on another device, an eviction or Wait needs it on
// the host.
//
// Classes: tasks of one name with one *GPUBody and a CPU body or not share an rt class,
// whose incarnations are the body's device incarnation, then the CPU body when there is one.
// The device incarnation (a *gpu.Incarnation) is therefore one per class and body, which is
// what rt/gpu's batch policy compares: a ring holds only tasks of one name and one GPUBody.
// A name used with several bodies is several rt classes of that name. The incarnation lists
// the task's data per task (gpu.Incarnation.Data), in the order of the task's uses: Read as
// gpu.Read (staged in when stale, never written back), Write as gpu.Write (not staged in),
// ReadWrite and Commute as gpu.ReadWrite, Scratch as device scratch of the datum's size
// (rt/gpu's taskdata.go); written data are KeepOnDevice.
//
// Versions: rt/gpu trusts a device copy whose version is not below the host copy's. A PTG
// task's completion bumps the host version of its written flows; an inserted task's class
// declares no flows, so release bumps the version of every datum the task wrote, on a CPU
// or a device, whenever the context has devices. A GPU write thus leaves the device copy at
// the host copy's version (the device marked its copy one above the host's at the end of the
// task) but dirty: the version says which value is newest, the copy's state (rt.Owned in
// its mirror) that the host's bytes are not it yet. A CPU write makes every device copy
// stale.
//
// Commute: a task's commute tokens are taken by the CPU hook (task.go), which can wait for
// them (Async); a device incarnation cannot. So a task with Commute accesses runs its CPU
// body (the device incarnation's Evaluate refuses it), and one without a CPU body is
// refused at insertion with ErrMode.
//
// Rejected designs: a GPU body per task with no class identity (no batch could form, and a
// closure made per insertion would be a class per insertion); writing every written datum
// back to the host when its task ends, because a dynamic graph cannot see the tasks not yet
// inserted and a CPU body or the program may read the host copy next (correct, but a tiled
// Cholesky then copies several times its final tiles back, and the stage-out stream sets
// the pace; it remains only as the fallback of coherence.go for devices without a mirror
// slot of their own).

import (
	"fmt"
	"iter"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/gpu"
)

// GPUFunc is a GPU body. It enqueues on s the device work of t and, in a batch, of every
// task of t's ring (t.Ring()), on the tasks' device buffers (BufferOf, GPUTask.Buffer),
// and returns gpu.Done, gpu.Again (work for every member is enqueued and the same ring
// comes back after it), gpu.Next (try later), gpu.Async (every member was handed on with
// RunOnCPU), or gpu.Error and gpu.Disable (the task fails; t.Fail records why). It runs on
// the device's manager, one body at a time per device: it must not block.
type GPUFunc func(t *GPUTask, s *gpu.Stream) gpu.Result

// GPUBody is a GPU body with its device and batching choices, an argument of Insert. Make it
// once and pass it to every insertion of tasks that run it: tasks of one name and one
// GPUBody form one class, and only they batch together.
type GPUBody struct {
	fn    GPUFunc
	kind  rt.DeviceKind
	batch bool
	max   int
	user  func(cand, head *gpu.Task) gpu.Action
}

func (*GPUBody) arg() {}

// GPUOption configures a GPUBody.
type GPUOption func(*GPUBody)

// GPU returns the GPU body fn as an argument of Insert. A task with a GPU body and a CPU
// body runs on either, as rt decides for a .jdf class with both (an idle device takes it;
// otherwise the earliest expected finish); with a GPU body only, it needs a device, and
// fails with rt.ErrNoIncarnation on a context without one.
func GPU(fn GPUFunc, opts ...GPUOption) *GPUBody {
	b := &GPUBody{fn: fn, kind: rt.GPU}
	for _, o := range opts {
		o(b)
	}
	return b
}

// CUDAOnly runs the body on CUDA devices only, not on simulated ones.
func CUDAOnly() GPUOption { return func(b *GPUBody) { b.kind = rt.CUDA } }

// Batch makes the body batch-capable: before it runs, tasks of its class waiting on its
// stream join the ring of the task it runs for, in the stream's priority order, while the
// ring holds fewer than max tasks (no bound for max <= 0) and match, when not nil, answers
// gpu.Accept for them (gpu.Reject skips a candidate, gpu.Stop ends the collection). match
// runs under the stream's lock: it must be short and must not block.
func Batch(max int, match func(cand, head *GPUTask) gpu.Action) GPUOption {
	return func(b *GPUBody) {
		b.batch, b.max = true, max
		if match != nil {
			b.user = func(cand, head *gpu.Task) gpu.Action { return match(wrap(cand), wrap(head)) }
		}
	}
}

// GPUTask is an inserted task as its GPU body sees it: the head of a ring, or a member. It
// must not be kept after the body returns.
type GPUTask struct {
	w *gpu.Task
	t *task
}

func wrap(w *gpu.Task) *GPUTask {
	return &GPUTask{w: w, t: rt.Impl.Payload(w.EC().(*rt.Task)).(*task)}
}

// Name returns the task's name: its class and insertion number, "GEMM(17)".
func (t *GPUTask) Name() string { return t.t.Name() }

// Seq returns the task's insertion number.
func (t *GPUTask) Seq() int64 { return t.t.seq }

// Buffer returns the device buffer of the task's i-th datum, in the order of the task's
// accesses (a datum named twice counts once, at its first place), or the zero Buffer when
// there is no such datum.
func (t *GPUTask) Buffer(i int) gpu.Buffer {
	if i < 0 || i >= len(t.t.uses) {
		return gpu.Buffer{}
	}
	return t.w.Buffer(i)
}

// BufferOf returns the device buffer of d in t, or the zero Buffer when t does not access d
// (which the BLAS calls of gpu.Stream refuse with gpu.ErrBadArgument).
func BufferOf[T any](t *GPUTask, d *Data[T]) gpu.Buffer {
	if d == nil {
		return gpu.Buffer{}
	}
	if i := t.t.find(&d.datum); i >= 0 {
		return t.w.Buffer(i)
	}
	return gpu.Buffer{}
}

// Ring iterates over the tasks of t's ring, t first: one task, or a batch (Batch).
func (t *GPUTask) Ring() iter.Seq[*GPUTask] {
	return func(yield func(*GPUTask) bool) {
		for w := range t.w.Ring() {
			if !yield(wrap(w)) {
				return
			}
		}
	}
}

// RingLen returns the number of tasks in t's ring.
func (t *GPUTask) RingLen() int { return t.w.RingLen() }

// Fail records err as the reason the task fails and returns gpu.Error, for `return
// t.Fail(err)`: the graph fails with an *rt.TaskError naming the task and wrapping err.
func (t *GPUTask) Fail(err error) gpu.Result { return t.w.Fail(err) }

// Wrapper returns the rt/gpu wrapper, for the parts of the submit protocol this type does
// not cover (gpu.Task.SetCompleteStage, gpu.Stream.RequeueFollowers).
func (t *GPUTask) Wrapper() *gpu.Task { return t.w }

// RunOnCPU hands the task to its CPU body: call it for every task of the ring, then return
// gpu.Async. A task without a CPU body is left alone, and the error (wrapping ErrNoBody)
// says so; return t.Fail(err) then.
func (t *GPUTask) RunOnCPU() error {
	cpu := t.t.cls.cpu
	if cpu < 0 {
		return fmt.Errorf("%w: %s has no CPU body to run on", ErrNoBody, t.Name())
	}
	t.w.EC().(*rt.Task).Reschedule(cpu)
	return nil
}

// submit is the submit hook of the body's device incarnations.
func (b *GPUBody) submit(_ *gpu.Device, w *gpu.Task, s *gpu.Stream) gpu.Result {
	if b.batch {
		p := gpu.BatchPolicy{Max: b.max, User: b.user}
		if _, err := s.CollectBatch(w, p.Match, nil); err != nil {
			return w.Fail(err)
		}
	}
	return b.fn(wrap(w), s)
}

// gpuKey names a class with a GPU body.
type gpuKey struct {
	name string
	body *GPUBody
	cpu  bool
}

// gpuClassOf returns the class of tasks named name with GPU body body and a CPU body or
// not, registering it on first use. g.mu is held.
func (g *Graph) gpuClassOf(name string, body *GPUBody, cpu bool) (*class, error) {
	k := gpuKey{name, body, cpu}
	c := g.gpuClasses[k]
	if c == nil {
		inc := &gpu.Incarnation{Name: name + "/GPU", Type: gpu.TypeAny, Submit: body.submit, Batch: body.batch, Data: deviceData}
		if g.coh.keep {
			inc.Before = g.deviceBefore
		}
		if body.kind == rt.CUDA {
			inc.Type = gpu.TypeCUDA
		}
		incs := []rt.Incarnation{{Kind: body.kind, Device: inc}}
		c = &class{name: name, body: body, cpu: -1}
		if cpu {
			incs[0].Evaluate = noCommute
			incs = append(incs, rt.Incarnation{Kind: rt.CPU, Hook: g.hook})
			c.cpu = 1
		}
		c.tc = &rt.TaskClass{Name: name, Locals: []string{"seq"}, Params: []int{0},
			Incarnations: incs, Successors: g.release}
		if err := rt.Impl.AddClass(g.tp, c.tc); err != nil {
			return nil, err
		}
		if g.gpuClasses == nil {
			g.gpuClasses = map[gpuKey]*class{}
		}
		g.gpuClasses[k] = c
	}
	g.remember(c)
	return c, nil
}

// hasGPU reports whether args give a GPU body.
func hasGPU(args []Arg) bool {
	for _, a := range args {
		if _, ok := a.(*GPUBody); ok {
			return true
		}
	}
	return false
}

// checkGPU refuses, at insertion, a task with a GPU body that no device could run: a datum
// whose value a device cannot hold, or a Commute access without a CPU body to take its
// token. g.mu is held.
func (t *task) checkGPU() error {
	for _, u := range t.uses {
		if u.mode == CommuteMode && t.cls.cpu < 0 {
			return fmt.Errorf("%w: Commute access to %s needs a CPU body (a GPU body cannot wait for the datum's turn)", ErrMode, u.d.name)
		}
		c := u.d.d.Host()
		if c == nil {
			return fmt.Errorf("%w: %s has no host copy on this rank", ErrMode, u.d.name)
		}
		if u.mode.writes() {
			t.g.coh.noteWrite(u.d)
		}
		switch c.Value.(type) {
		case []float64, []float32, []int64, []int32, []byte:
		default:
			return fmt.Errorf("%w: %s holds %T; a GPU body accesses []float64, []float32, []int64, []int32 or []byte",
				ErrMode, u.d.name, c.Value)
		}
	}
	return nil
}

// noCommute is the Evaluate of a device incarnation followed by a CPU body: a task with
// Commute accesses takes the CPU body, which holds the tokens.
func noCommute(rtask *rt.Task) error {
	if rt.Impl.Payload(rtask).(*task).commutes != 0 {
		return rt.Next
	}
	return nil
}

// deviceData is gpu.Incarnation.Data for inserted tasks: their uses, in order.
func deviceData(ec gpu.EC, buf []gpu.DataFlow) []gpu.DataFlow {
	t := rt.Impl.Payload(ec.(*rt.Task)).(*task)
	for _, u := range t.uses {
		var a gpu.Access
		switch u.mode {
		case ReadMode:
			a = gpu.Read
		case WriteMode:
			a = gpu.Write
		case ReadWriteMode, CommuteMode:
			a = gpu.ReadWrite
		}
		buf = append(buf, gpu.DataFlow{Copy: u.d.d.Host(), Access: a, KeepOnDevice: t.g.coh.keep})
	}
	return buf
}

// bumpVersions records t's writes in the versions of the host copies, so that device copies
// of older versions are stale (see the top of the file).
func (t *task) bumpVersions() {
	for _, u := range t.uses {
		if u.mode.writes() {
			if c := u.d.d.Host(); c != nil {
				rt.Impl.BumpVersion(c)
			}
		}
	}
}
