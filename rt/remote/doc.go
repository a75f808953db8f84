// Package remote runs a JDF program on several ranks: it implements rt.Remote over rt/ce. rt
// knows only the Remote interface, Impl.Deliver and Impl.AddActions; rt/ce knows
// only bytes, tags, buffers and Callers; neither imports this package.
//
// # Placement
//
// Every rank enumerates the same task space; a task runs on the rank that owns its
// affinity element (TaskClass.Affinity, Collection.RankOf): rt.TiledMatrix deals tiles
// 2-D block-cyclically (rt.Grid: P×Q ranks, KP×KQ supertiles), rt.Vector blocks 1-D
// cyclically. Ranks beyond a grid own nothing and may have no task at all.
//
// # Activations
//
// When a task completes, rt calls Activate once per successor on another rank. The Node
// sends one message per (task, flow, destination rank) on ce.TagActivate: taskpool ID,
// class ID, flow, the task's parameters, the datum's type and size, and the datum itself
// (eager, up to Eager bytes, 64 KiB by default) or a ce.RemoteKey of the sender's memory
// (rendezvous). The receiver checks everything (taskpool, class, flow, parameters inside
// the space, type and size against the payload, the registration and Expect) and turns any
// mismatch into a named error (ErrMalformed with ErrUnknownClass, ErrUnknownFlow,
// ErrOutsideSpace, ErrNoSuccessor, ErrSizeMismatch, ErrTypeMismatch) that fails the
// taskpool. It then recomputes the task's successors itself (TaskClass.Successors, as
// PaRSEC does) and delivers one copy to all of those it runs: one transfer per datum and
// rank. A rendezvous receiver pulls the bytes with a Get into a buffer from an arena of its
// own; the sender keeps its registration and its copy, and holds the taskpool open with
// AddActions, until the Get's notification (ce.TagRemoteGet) arrives. With the Binomial
// tree the producer sends to the first level of a binomial tree over the destination ranks
// and each receiver forwards the activation and the data to its children once the data has
// arrived, so no rank sends a datum more than ⌈log2 R⌉ times.
//
// A datum that ends in a collection element stored on another rank (a write-back) travels
// the same way (WriteBack); the owner copies it into the element.
//
// # Task graphs built at run time
//
// A task graph of rt/dynamic joins a job with AddGraph instead of Add: its ranks know from
// their common insertion sequence which version of which datum each rank needs, so its data
// travel as activations of their own kind that name a DataKey (datum, version) instead of a
// task and flow, sent with SendData and handed to the graph's Receiver on arrival, through the
// same eager and Get paths, termination and failure reports as PTG data (graphdata.go).
//
// # Termination
//
// Counted, with no message of its own: a taskpool ends on a rank when its local tasks are
// done and its actions are zero. Sends hold an action until their local completion, offered
// rendezvous data until the peer's Get completes. Arrivals need nothing more: the local task
// they feed is counted. The one arrival that no local task waits for, a write-back, is
// counted in advance: Add walks the space once and holds the taskpool open for as many
// write-backs as other ranks will send. A rank with no local task therefore returns at once
// from Wait, or once its elements have arrived. What may still be asked of a finished rank
// (Gets it offered) is covered by the sender's own hold; the Engine's Close, which is
// collective (goodbyes and a barrier), keeps every rank's transport up until all ranks are
// done. So the collective step is the barrier in the Engine's Close, and no final "done"
// message is needed. termination.go holds this protocol and its code.
//
// # Errors
//
// A taskpool that fails on a rank for a reason found there (a task error, a malformed
// message) reports it on ce.TagTermination to every other rank, whose taskpool then fails
// with a RemoteError (ErrRemoteFailure) naming the rank, the task and the cause; no rank
// waits for a message that will not come. A lost peer (ce.OnPeerLost, wired by Run) fails
// every taskpool with ce.ErrPeerLost. An Engine that fails (ce.OnFailure, wired by Run: a
// handler panicked, as a JDF expression evaluated on arrival may) fails every taskpool with
// its error (ce.ErrHandlerPanic), reported to the peers like a task failure. A message for a taskpool not added yet is kept until
// Add; one for a taskpool that never comes is reported by Close (ErrUnknownTaskpool).
//
// # Callers
//
// A completion on a worker sends through that worker's RoleWorker Caller; a completion of a
// device incarnation runs in the device's manager and sends through a RoleDeviceManager
// Caller, so the CE always shifts it to its comm goroutine: a device manager never calls
// the transport. rt's pseudo-worker (other goroutines) uses RoleOther. Callers that may not
// wait for message buffers (device managers, the comm goroutine) hand a message to the
// Node's spare sender when the CE's buffer budget is spent, instead of failing.
//
// # Launching
//
// Run starts a job from one binary: n in-process ranks (a ce.World, each rank with its own
// Engine, Node and rt.Context, the workers split between them), or, in a binary built with
// the mpi tag and started by mpirun, one rank per process over rt/ce/mpi. The rank's
// function gets a Job: its Context, its Node (Add, Barrier, GatherDense, GatherVector) and
// its rank.
//
// # Tracing
//
// With Config.Trace each rank writes its own Perfetto trace (TracePath: trace.rankN.json)
// with a "comm" group: send spans per worker, receive, forward and Get spans of the comm
// goroutine, bound by flow arrows from each send to its receive; Run merges the files into
// Config.Trace (MergeTraces) on one clock.
package remote
