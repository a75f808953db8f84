// Package dynamic runs task graphs that a Go program builds while it runs: it inserts tasks
// in program order, each with a Go function and the data it accesses, and the package infers
// the dependencies from the data, as PaRSEC's DTD and StarPU's task insertion do. The tasks
// run on the workers of an rt.Context, beside the taskpools of .jdf programs, with the same
// schedulers, next_task slot, tracing, progress bar and dashboard.
//
// Use a .jdf program when the graph is known from a few sizes before the run (a tiled
// factorisation): it costs nothing per task to describe. Use a dynamic graph when the graph
// depends on data read or computed at run time (a sparse structure, a recursion, an adaptive
// refinement).
//
// # A graph
//
//	c, _ := rt.New()
//	defer c.Close()
//	g, _ := dynamic.New(c)
//	x, _ := dynamic.Register(g, "x", make([]float64, n))
//	y, _ := dynamic.Register(g, "y", make([]float64, n))
//	g.Insert("FILL", func(*dynamic.Task) error { fill(x.Value()); return nil }, dynamic.Write(x))
//	g.Insert("AXPY", func(*dynamic.Task) error { axpy(x.Value(), y.Value()); return nil },
//		dynamic.Read(x), dynamic.ReadWrite(y))
//	err := g.Wait(ctx)
//
// A body is a closure: it captures what it needs, values included. Its name ("FILL") is its
// class: traces, the progress bar and the dashboard show tasks by class, and errors name a
// task by class and insertion number, "AXPY(2)".
//
// # Data
//
// A datum is a tile of an rt.TiledMatrix (NewMatrix, then Matrix.Tile), a block of an
// rt.Vector (NewVector, then Vector.Block), or a Go value registered with Register: a
// non-empty slice, or a non-nil pointer, map, channel or function. Registering one slice or
// pointer twice gives one Data. Data.Value returns the value, typed.
//
// # Access modes and the order of tasks
//
// Read, Write, ReadWrite, Commute and Scratch declare how a task uses a datum. The result
// equals running the tasks one after the other in insertion order: a task that writes a
// datum waits for the earlier tasks that read or write it, a reader waits for the last
// writer, and readers of one version run in parallel. Tasks of consecutive Commute accesses
// to a datum (accumulations) run in any order, one at a time. Scratch orders nothing. A
// writer after slow readers waits for them; the package does not rename data.
//
// # Window
//
// At most Window tasks (DefaultWindow) inserted from outside a body are not done: Insert waits
// once there are that many, until half of them are, so that memory stays flat however many
// tasks a program inserts (the task records and the data's lists of readers are recycled).
// While it waits, the inserting goroutine runs ready tasks of the graph itself, as a worker
// would: it takes them from the scheduler's queues (never from a worker's next_task slot),
// runs their bodies and releases their successors, so that a program makes progress even when
// every worker is held by a long body. It runs only tasks of its own graph with CPU bodies, and
// a body it runs that inserts does so with Task.Insert, which never waits for the window: it
// cannot block on the window it is helping to drain. WindowHelp(false) makes Insert only wait,
// for bodies that must not run on the inserting goroutine.
//
// Tasks that are ready when they are inserted go to the workers in batches while every worker
// is busy; an idle worker takes a batch as soon as it runs out of work, and a parked worker is
// woken for the first task when no worker is awake to take it, so a batch never delays a task
// that a worker could start.
//
// # Scratch memory
//
// Task.Scratch(n) gives a CPU body n float64s of temporaries, its own until it returns and
// then reused by later bodies; bodies running at once get distinct memory.
//
// # Tasks that insert tasks
//
// A body may insert into its own graph with Task.Insert; such insertions never wait for the
// window. Wait returns once no task is running, ready or waiting and no running body can
// insert any more: a graph whose task count depends on its input ends by itself (see
// examples/quicksort).
//
// # Errors
//
// A body that returns an error or panics fails the graph: Wait returns an *rt.TaskError
// naming the task, and later inserts return the same error. Wait honours its context (its end
// cancels the graph). A nil datum, a datum of another graph, a write to a datum marked
// ReadOnly and an insertion after Wait are named errors (ErrNilData, ErrForeignData, ErrMode,
// ErrGraphDone). With Debug(true) every Read datum is checksummed before and after the body,
// and a body that changed one fails the graph with ErrReadOnlyWritten naming the task and the
// datum.
//
// # Observability
//
// rt.Trace, rt.Progress and rt.Dashboard work as for .jdf programs, with one class per task
// name. With KeepGraph, WriteDOT writes the graph inserted so far.
//
// # GPU bodies
//
// A task may carry a GPU body, a *GPUBody made once with GPU and passed to Insert; it runs
// through rt/gpu's manager with the submit protocol of a .jdf GPU body (gpu.Done, Again,
// Next, Async, Error, Disable) on a context with devices (rt.Devices, gpu.Open):
//
//	gemm := dynamic.GPU(func(t *dynamic.GPUTask, s *gpu.Stream) gpu.Result {
//		for m := range t.Ring() {
//			if err := s.Dgemm(blas.NoTrans, blas.NoTrans, nb, nb, nb, -1,
//				m.Buffer(1), nb, m.Buffer(2), nb, 1, m.Buffer(0), nb); err != nil {
//				return t.Fail(err)
//			}
//		}
//		return gpu.Done
//	}, dynamic.Batch(16, nil))
//	g.Insert("GEMM", cpuGemm, dynamic.ReadWrite(cij), dynamic.Read(aik), dynamic.Read(bkj), gemm)
//
// A task with a CPU body too runs on either, as rt decides for a .jdf class with both; with
// a nil CPU body it needs a device. BufferOf gives a datum's device buffer, GPUTask.Buffer
// the i-th datum of a task. Read data are staged in when stale and never written back; Write
// data are not staged in; ReadWrite and Commute data are staged in when stale; Scratch data
// are device memory of the datum's size, apart from its device copy. What a GPU task writes
// stays on its device until something needs it on the host: a task that runs on a CPU waits
// until its data are back, a GPU task on another device gets them from the owner, a device
// short of memory writes a dirty copy back before it frees it, and Wait brings every datum a
// GPU task wrote back (Flush, on one rank, inserts a CPU reader of each). So the program reads
// data only after Wait: until then a datum's host copy may be stale. A CPU write makes device
// copies stale.
// Batch lets tasks of one name and one GPUBody run as one ring (Accept, Reject, Stop from
// its match). A task with a Commute access runs its CPU body; a GPU-only one is refused
// with ErrMode, as is a GPU body on data a device cannot hold.
//
// # Across ranks
//
// With Distributed(node) every rank of a remote.Run job runs the same insertion code, and each
// task runs on one rank: On(rank), else the owner of its Affinity datum, else the owner of the
// first datum it writes (then the first it accesses, then rank 0). Tiles and blocks are owned
// by their collection's RankOf, registered values by rank 0. Every rank records every task's
// accesses, so each knows where the newest version of every datum lives; a task that reads a
// version its rank lacks gets it through rt/remote's transfers (eager or by Get, one per
// version and rank). Wait (or Flush, earlier) returns every datum's newest version to its
// owner. A failure on one rank, or a lost peer, ends every rank's Wait with a named error
// (remote.ErrRemoteFailure, ce.ErrPeerLost). Across ranks Commute orders like ReadWrite and
// bodies cannot insert tasks (ErrNestedAcrossRanks). remote.go holds the protocol.
//
// # Not yet
//
// GPU bodies run on graphs of one rank: on a graph across ranks Insert refuses them with
// ErrGPUAcrossRanks.
package dynamic
