// Package rt is jdf2go's multicore runtime: it runs the task graphs that jdf2go generates from
// JDF (Parameterized Task Graph) programs, on every core, without building the graph.
//
// # Actors
//
//   - Context (New): owns the workers, the scheduler, the registered devices and the
//     profiler. Close is its single join point.
//   - Worker: one goroutine per execution stream. Each has a private next_task slot, a free
//     list of tasks and a reusable Edges visitor.
//   - Scheduler: lfq (default; per-worker priority queues with work stealing), ap (one global
//     queue, strictly highest priority first, so the next_task slots are off), gd (one global
//     FIFO). Selected by name.
//   - Taskpool (NewTaskpool, normally through a generated constructor): one run of a JDF
//     program: its TaskClasses, its globals, its arenas and its termination count.
//   - TaskClass: the static descriptor that codegen emits per JDF task class (below).
//   - Task: one instance of a class; a small value with a fixed-size Locals array, recycled.
//   - Data and Copy: a logical datum and its copies per device (slot 0 = host), with
//     versions and coherency states. Collections (TiledMatrix, Vector, or any
//     Collection) hold Data, with storage from an Alloc when one is given
//     (NewTiledMatrixAlloc, NewVectorAlloc: page-locked memory for devices, or a
//     rt/hugepage Pool, whose huge pages make CPU tile kernels faster); Arenas hand out
//     reusable Copies for NEW.
//   - Device: implemented by rt/gpu; runs GPU incarnations (see Device).
//
// # Running a program
//
//	ctx, err := rt.New(rt.Workers(4), rt.Scheduler("lfq"), rt.Trace("run.json"))
//	if err != nil { ... }
//	defer ctx.Close()
//	tp := NewChain(nb, data)            // generated; wraps rt.NewTaskpool
//	if err := ctx.Add(tp); err != nil { ... }
//	err = tp.Wait(context.Background())
//
// Add enumerates every class's execution space once (counting local tasks and measuring the
// parameter ranges), then queues one startup walk per class; Wait returns when the counted
// number of tasks has completed, when a task failed, or when its context ends (which cancels
// the taskpool). Several taskpools can run in one Context at once; a failure affects only its
// own taskpool.
//
// # Life of a task
//
//  1. Creation. A task is created either by its class's startup walk (goal zero: every input
//     comes from memory or none is expected; a data flow none of whose guards holds makes it
//     wait for an arrival, which evaluates the guards again) or by the first arrival of an
//     input from a predecessor. A task whose goal is met by a single arrival (a chain link, a broadcast
//     target) is created ready and never enters the dependency table; otherwise it waits in
//     its class's dependency table (a lock-free slot per key when the parameters' box is
//     small enough, else a sharded hash table), keyed by a mixed-radix key over its
//     parameters, while arrivals attach their data copies to its flows and count down its
//     goal.
//  2. Ready. The worker that completes the last input keeps the best ready successor in its
//     next_task slot and pushes the others to the scheduler. A release of more than 128
//     successors (a broadcast) hands the rest, in runs, to other workers. Priority is the
//     taskpool's priority plus the class's Priority expression, evaluated when the task is
//     created (startup tasks included); high_priority classes go first among equals.
//  3. Execution. The worker runs Prepare once (memory inputs: collection, NEW, NULL), then
//     tries the incarnations in order. Evaluate may refuse one (Next) or fail the task. A
//     CPU Hook returns:
//     nil: done; Next: try the next incarnation; Again: back to the scheduler, same
//     incarnation; Async: the body completes the task later with Task.Complete; any other
//     error, or a panic, fails the taskpool with a *TaskError naming the task,
//     "GEMM(1, 2, 3)", and the cause (with the stack for a panic); a body that calls
//     runtime.Goexit fails it with ErrGoexit and its worker is replaced. A taskpool that can
//     no longer progress (tasks left, none ready, running or owned by a device or an Async
//     body) fails with ErrStalled after half a second (stall.go). A device incarnation is
//     handed to the Device expected to finish the task first (Load plus the task's time:
//     TimeEstimate, or the device's Estimator), or to the one Select picks; a kind with no
//     device is skipped like Next. When a CPU incarnation follows it and no Select pins the
//     device, the worker runs the task itself instead whenever its own estimated time
//     (TimeEstimate with a nil device, or the class's measured mean CPU time) is no later
//     than the best device's finish: CPU workers and devices share the work (choice.go).
//     A batch-capable CPU incarnation (Incarnation.Batch) runs a ring: its Hook calls
//     Task.CollectBatch, which moves ready tasks of the same class and taskpool from the
//     worker's queue into the task's ring, asking a match callback (Accept, Reject, Stop;
//     BatchPolicy builds one from batch_max and batch_match); the body runs once for the
//     whole ring (Task.Ring), and every member is then completed as in step 4 (batch.go).
//     A CPU body's temporaries come from its worker's scratch memory (Task.Scratch), reused
//     by the worker's next body, so that no body allocates a work array per task (scratch.go).
//  4. Completion. The versions of copies on written flows (RW, WRITE) are bumped, Successors
//     releases every output dependency (to tasks, or write-back to collection elements when
//     the copy is not already that element), the task's references to arena copies are
//     dropped, and the task is counted done and recycled.
//
// A task is never lost or run twice: a record is published once (under its shard's lock, or
// by a compare-and-swap in a dense table), and only the arrival that meets the goal makes it
// ready. Termination is counted per worker
// in batches, so no counter is shared per task.
//
// # The TaskClass contract (what codegen fills)
//
// Every function field receives the taskpool (tp.Globals() holds the generated struct of JDF
// globals) and a *Locals, whose slot i is the i-th definition of the class. None of these
// functions may allocate or keep a pointer it receives: they run once or more per task. A
// pointer passed to an interface method or captured by a closure escapes, so generated code
// writes a peer's locals into Edges.L (one Edges per worker, reused) rather than into a Locals
// of its own. Package-level descriptors whose functions refer to the descriptor itself (a
// class that is its own successor) must be assigned in init(), or Go reports an
// initialization cycle. rttest.Chains is exactly what the generator produces for:
//
//	T(c, k)
//	  c = 0 .. M-1
//	  k = 0 .. N-1
//	CTL X <- (k > 0) ? X T(c, k-1)
//	      -> (k < N-1) ? X T(c, k+1)
//	BODY {} END
//
// namely:
//
//	var chainT rt.TaskClass
//
//	func init() {
//		chainT = rt.TaskClass{
//			Name: "T", ID: 0, Locals: []string{"c", "k"}, Params: []int{0, 1},
//			Flows: []rt.Flow{{Name: "X", Access: rt.CTL}},
//			Space: func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
//				g := tp.Globals().(*globals)
//				for c := 0; c <= g.M-1; c++ {
//					l[0] = c
//					for k := 0; k <= g.N-1; k++ {
//						l[1] = k
//						if !yield(l) {
//							return
//						}
//					}
//				}
//			},
//			Complete: chainComplete, // bounds check; fills derived locals (none here)
//			Goal: func(tp *rt.Taskpool, l *rt.Locals) uint32 {
//				if l[1] > 0 {
//					return 1 // one CTL arrival from T(c, k-1)
//				}
//				return 0 // ready at startup
//			},
//			Successors: func(tp *rt.Taskpool, l *rt.Locals, flows rt.FlowMask, e *rt.Edges) {
//				if flows&1 != 0 && l[1] < tp.Globals().(*globals).N-1 {
//					e.L[0], e.L[1] = l[0], l[1]+1
//					if chainComplete(tp, &e.L) {
//						e.Task(0, 0, &chainT, 0) // flow X, dep 0 -> flow X of T(c, k+1)
//					}
//				}
//			},
//			Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: hook}},
//		}
//	}
//
// The roles, one field each (TaskClass documents every field): Space (startup and counting),
// Complete (derived locals, bounds), Goal (Counter: number of arrivals, a CTL gather counting
// each gathered instance whose guard holds; Mask: bit per flow), Startup (optional
// predicate), Key (optional make_key_fn), Priority, Affinity, Prepare (input chains of memory
// inputs: Task.BindElement for a collection element, Task.BindNew for a NEW arena copy,
// Task.SetFlow(i, nil) for NULL; ErrNoInput when no guard holds), Successors and Predecessors
// (through Edges.Task and Edges.Data), Incarnations and TimeEstimate. Flow values: a hook
// reads FlowValue[T](t, i) (the zero T for NULL, an error for a value of another type; the
// raw copy is t.Flow(i), a []float64 by default: t.Flow(i).Float64s()) and the locals with
// t.Locals()[i]. These accessors live in rt rather than in each generated file so that every
// program shares one checked implementation. Generated files reference APIv3.
//
// # Checking a program
//
// Source.Verify(tp) enumerates the instance graph for the actual globals with the classes'
// functions (Space, Complete, Goal, Successors, Predecessors), without running anything, and
// returns a *GraphError (matching ErrVerify) that lists every problem: an instance enumerated
// twice or outside the space that Complete checks; a dependency on an instance outside its
// space; a data flow with no true input guard; an output without the input that names it back
// on the other side, and the reverse (outputs to a class with a Goal but no Predecessors are
// left to the goal check); a readiness goal that disagrees with the outputs that reach the
// instance; a cycle, as the chain of instances around it. Source.WriteDOT(w, tp) writes the
// same graph in Graphviz DOT (CTL edges dashed). The zero Source checks without positions.
//
// A Source adds positions: each Problem points at Classes[class], Flows[class][flow] or
// Deps[class][flow][dep], and Source.Err is wrapped and starts the message. A generated
// program holds one (<p>Source, with the .jdf positions and Err<Name>Graph), and its Verify
// and WriteDOT methods are one call each:
//
//	var chainSource = rt.Source{Err: ErrChainGraph, Classes: []string{"chain.jdf:8:1"}, ...}
//	func (tp *Chain) Verify() error { return chainSource.Verify(tp.Taskpool) }
//
// Successors skip what they cannot report with Edges.Task: a single target outside its
// space, which they report with Edges.Instance (Task inside the space, dropped outside), and
// the walk of a class's input chains skips a data flow whose chain ends without a true guard.
// Both cost a nil check at run time; during Verify the walk's EdgeVisitor hears them through
// DropVisitor. Impl.VisitSuccessors gives the raw edges to any EdgeVisitor.
// VerifyCollection checks a collection given to a generated constructor (ErrBadCollection).
//
// # Devices (for rt/gpu)
//
// Worker, Device, Saturator, Estimator, PriorityLoader and Remote, and Impl, the one value
// through which they reach rt's objects beyond the program's API (implementer.go), are for
// the packages that extend the runtime; a program that runs generated taskpools needs none
// of them.
//
// A Device registered with Devices receives the tasks of incarnations of the kinds it
// Accepts through Submit(w, t, inc), called on worker w. Once Submit returns nil the device
// owns t and ends it exactly once with Worker.Complete (on a worker: successors go to that
// worker's next_task slot) or Task.Complete (any goroutine), Worker.Reschedule or
// Task.Reschedule (back to the CPU scheduler, from a given incarnation index), or Task.Fail.
// A worker that becomes a long-lived device manager calls Worker.FlushNextTask on entry and
// after each completion, so that no ready task stays hidden in its private slot. Device copies
// live in Data slots 1..MaxDevices-1 (Impl.Attach, Impl.DeviceCopy, Impl.Version,
// Impl.SetState); writes bump versions. Devices add their own profiling tracks with
// Context.Tracer().NewTrack and record spans on them (package rt/profile).
//
// # Configuration
//
// Options (New): Workers(n), Scheduler("lfq"|"ap"|"gd"), Trace(path), Profiling(),
// Progress(w), Devices(devs...), Rank(rank, nranks, remote), ShareWork(bool),
// Batching(bool), Logger(l), Dashboard(addr): one bare name each, no With prefix. Environment
// variables, overridden by options: JDF2GO_WORKERS (number of workers, default GOMAXPROCS),
// JDF2GO_SCHED (scheduler name, default lfq), JDF2GO_TRACE (trace file path),
// JDF2GO_PROGRESS (a boolean: progress bar on stderr; unset, the bar is drawn when stderr is
// a terminal), JDF2GO_SHARE (a boolean, default
// true: CPU workers share device classes' tasks), JDF2GO_BIND (none, thread or cpu: how
// workers hold their OS threads), JDF2GO_BATCHING (off, 0, false or no: CPU and GPU rings
// hold only their head), JDF2GO_DASHBOARD (address of the live dashboard) and
// JDF2GO_DASHBOARD_PUBLIC (a boolean). A bad value makes New fail with ErrBadOption or
// ErrUnknownScheduler.
//
// # Profiling
//
// With Trace or Profiling every worker records one span per task execution ("GEMM(1, 2, 3)";
// one per ring for a batched CPU body, named after its head) and per startup walk on its own
// track, without locks; nothing is recorded or allocated when both are off. Close writes the
// Chrome/Perfetto JSON (one track per worker, plus the tracks devices register).
// Context.Tracer().Summary() gives count, total, mean and max time per class. When Go's
// execution tracer is running (go test -trace, runtime/trace), each task is also a
// runtime/trace region named by its class. Progress draws a progress bar with the rate and an
// estimated time left, since the task count is known from enumeration; it ends each run with a
// final line.
//
// Dashboard(addr) (or JDF2GO_DASHBOARD) serves a live web page of the run until Close
// (package dashboard): tasks per second, each class's done/total, each worker's busy
// intervals by class and its device submissions, the devices and the Remote that implement
// DashboardProvider (rt/gpu's RTDevice, rt/ce's Engine) and every taskpool failure. It binds
// to loopback addresses only unless JDF2GO_DASHBOARD_PUBLIC=1 is set
// (ErrDashboardPublic otherwise); rank r serves on the port plus r. DashboardURL gives the
// address. When it is off, no goroutine runs and the workers record nothing.
//
// # Ranks (for rt/remote)
//
// With Rank(rank, nranks, remote) each rank enumerates the whole space (so keys agree) but counts
// and runs only the instances whose Affinity is local. A dependency to an instance on another
// rank, or a write-back to a remote collection element, goes to the Remote given to
// Rank (rt/remote implements it over rt/ce; without one the taskpool fails). The
// receiving rank calls Impl.Deliver; Impl.AddActions holds termination open while
// communications are in flight; Impl.TaskpoolID names a taskpool identically on every rank
// that adds its taskpools in the same order; Impl.Retain and Impl.Release keep a sent copy
// alive.
package rt
