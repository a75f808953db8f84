// Package gpu is jdf2go's device-agnostic GPU manager: it runs the GPU
// bodies of a JDF program on accelerators shared by all CPU workers, with
// PaRSEC's submit and batching protocol (docs/gpu.md, which this package
// implements and tests scenario by scenario). Backends implement the
// interfaces of rt/gpu/driver, as database drivers implement
// database/sql/driver: rt/gpu/sim (CPU simulation, for CI) and rt/gpu/cuda
// (CUDA through purego).
//
// # Devices
//
// A Device wraps a backend device (driver.Backend) and owns its streams:
// stage-in, stage-out and compute streams (4 by default), each with a
// priority FIFO and 4 event slots. Open is the one way to open devices: its
// specification (none | sim:N | cuda[:N] | auto; empty means $JDF2GO_GPUS,
// then auto) names backend families, which register themselves from their
// init functions (driver.Register), so a program links one with a blank
// import:
//
//	import _ "github.com/jdf2go/jdf2go/rt/gpu/sim"
//
//	devs, err := gpu.Open(*gpusFlag)
//	ctx, err := rt.New(rt.Devices(gpu.RTDevices(devs)...))
//	... run taskpools ...
//	ctx.Close()
//	for _, d := range devs { d.Close() }
//
// RTDevice adapts a Device to rt.Device: rt hands it tasks whose chosen
// incarnation carries a *gpu.Incarnation in its Device field.
//
// # The manager
//
// Workers hand wrappers (Task) to Device.Submit. The worker whose
// submission moves the device's outstanding counter from 0 to 1 becomes the
// manager: it flushes its next_task slot, then drives the streams until its
// own release brings the counter back to 0; the others queue their wrapper
// and return at once (manager.go restates the protocol). The interfaces the
// host runtime provides are Worker (FlushNextTask), Completer (Complete,
// Cleanout), Scheduler (Reschedule) and Profiler; rt.Worker and *rt.Task
// satisfy Worker and EC directly.
//
// # GPU bodies
//
// A body is a SubmitHook, generated from BODY [type=GPU] or [type=CUDA]:
//
//	func(dev *gpu.Device, task *gpu.Task, stream *gpu.Stream) gpu.Result
//
// It enqueues device work for every member of the ring headed by task
// (for t := range task.Ring()) on stream, through the device-neutral body
// API: Stream.Memcpy, the BLAS subset (Dgemm, Dtrsm, Dtrmm, Dsyrk, Dpotrf,
// Dtrtri, DgemmStridedBatched, DgemmBatched; column-major, as cuBLAS, with
// rt/blas's flags: blas.Lower, blas.Trans, ...) and named
// kernels (RegisterKernel, Stream.Launch), on flows seen as Buffers
// (Task.Buffer). It returns Done, Again (committed progress: the same ring
// comes back after its event), Next (try later), Async (the logical tasks
// were handed to another owner), Error or Disable (terminal).
//
// A batch-capable body (Incarnation.Batch) collects compatible wrappers
// waiting on its stream into its ring with Stream.CollectBatch and a Match
// callback answering Accept, Reject or Stop; BatchPolicy is the callback
// that generated code installs for batch = true (other class, incarnation
// or device: Reject; batch_max reached: Stop; then the user's batch_match,
// or Accept). Stream.RequeueFollowers disbands a ring by hand.
//
// # Data
//
// A wrapper's flows (Flow) refer to Data: a host copy with a version. The
// device keeps one copy per Data, stages it in only when stale, writes
// written flows back at stage-out (or keeps them for a consumer on the same
// device), accounts device memory and evicts clean copies in LRU order,
// writing dirty ones back first when memory is short. Devices opened
// together are linked: a stale copy is then copied from a linked
// device's current copy when there is one (a peer copy), and the release of
// that copy's reader goes through the source device's counter (directly under
// its idle lock, or as a counted D2D_COMPLETE command to its manager,
// docs/gpu.md, "The manager"; peer.go).
//
// A task whose class declares no flows, one inserted at run time by rt/dynamic,
// lists its data per task (Incarnation.Data, DataFlow); its written flows
// always go back to the host, and an Access of 0 is device scratch
// (taskdata.go).
//
// # Choosing devices
//
// RTDevice implements rt.Estimator: rt compares the device's Load plus its
// time per task (the interval between completions while busy, Device.Cost)
// across devices and against the CPU time of the task's class, so that CPU
// workers and devices share a class's tasks (rt's choice.go).
//
// # Testing
//
// The simulated device runs in manual mode (a test advances each stream
// operation by operation and runs the manager in lockstep) for the deterministic scenarios of docs/gpu.md, "Tests", and in
// free-running mode (a goroutine per stream) for stress tests and
// benchmarks (bench/internal/gpubench).
package gpu
