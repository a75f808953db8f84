// Package ce is jdf2go's communication engine: one wrapper between the runtime and a
// transport (in-process ranks, MPI), which decides per caller whether to call the transport
// directly or to hand the operation to its communication goroutine, and which owns every buffer
// it is given. docs/ce.md states its contract: the API and its policies, and the invariants,
// one test each.
//
// # Layers and owners
//
//   - A Transport (World's ranks, rt/ce/mpi) moves bytes. It never blocks, never calls back
//     into Go, and reports completions and arrivals when polled.
//   - The Engine owns exactly one Transport and one goroutine, the comm goroutine, started by
//     Start and ended by Close. Only the comm goroutine polls the transport, starts and closes
//     it (with MPI, on one locked OS thread, so MPI_Init_thread, FUNNELED calls and
//     MPI_Finalize share a thread). The Engine owns the shift queue, the tag table, the message
//     pool, the registrations, the transfer windows and the shutdown.
//   - A Caller is one goroutine's handle (a worker, a device manager, a test). Attach creates
//     it; it needs no closing. Handlers and done callbacks receive the comm goroutine's own
//     Caller.
//
// Who closes what: whoever created the Engine calls Close (collectively: every rank of a job,
// CloseAll for the ranks of one World). Close closes the Transport, on the comm goroutine. The
// creator of a World owns nothing to close: its only goroutine (for injected delays) stops when
// its last rank's transport closes.
//
// # Paths (docs/ce.md, "Callers and paths"), fixed per Caller for its whole life
//
//	caller                            transport level                        path
//	comm goroutine (handlers, done)   any                                    direct
//	RoleDeviceManager                 any                                    always shifted
//	RoleWorker                        Multiple, CommThreadMultiple Auto/On   direct
//	RoleWorker                        Serialized, Funneled, Single, or Off   shifted
//	RoleOther (tests, user code)      any                                    shifted
//
// A shifted operation is appended to the shift queue (a mutex and a slice; the comm goroutine
// is woken only if it announced it is parked) and the caller returns at once: a device manager
// never waits on the network. A direct operation posts to the transport from the caller's
// goroutine. Either way the completion is found by the comm goroutine, which runs the done
// callback. The path is decided at Attach (or at Start, for Callers attached earlier) because
// a Caller that mixed paths could overtake its own queued messages. Messages from one Caller to
// one (destination, tag) arrive in order.
//
// # Buffers (docs/ce.md, "Messages and buffers")
//
// Message buffers belong to the Engine. NewMsg (waits while the byte budget is spent; ctx
// bounds the wait) and TryNewMsg (fails with ErrNoBuffers; device managers use only this) hand
// one to a caller, who writes Msg.Bytes. SendAM takes it: from then on the caller has no right
// to it, on either path, whatever SendAM returns. The Engine releases it exactly once: on local
// completion, on any error, or at Close. Discard gives back a message that will not be sent.
// With Debug(true) released buffers are poisoned, a write after SendAM is found by a checksum
// (ErrMsgModified), and a write after release is found when the buffer is handed out again;
// double releases are always reported (ErrReleased). Buffers are C memory where the transport
// needs it (MPI), Go memory otherwise.
//
// A handler's payload belongs to the transport and is valid only during the call; copy what
// you keep (debug mode poisons it afterwards). A Get/Put note is copied at submit.
//
// # Registrations and one-sided transfers (docs/ce.md, "Registrations and one-sided transfers")
//
// Register returns a ref-counted MemReg whose Key is an opaque RemoteKey (rank, slot,
// generation, length; never an address) to send to peers. The owner's Release drops one
// reference, every transfer in flight holds another, and the transport registration ends once,
// on the comm goroutine, after the last one (and after the last callback that waited on it).
// Get and Put are one-sided in the API and emulated over two-sided transports with a handshake
// (see transfer.go); the initiator's done runs when its side completes, the peer's handler for
// the notify tag when the peer's side completes. Offsets are checked before any traffic
// (ErrOutOfRange); a stale or forged key is refused by the owner (ErrBadKey through a NACK)
// without touching memory. At most MaxInflight transfers run at once on each side; the others
// wait in a priority heap.
//
// # Tags (docs/ce.md, "Tags")
//
// Tags 0..7 are the Engine's, TagActivate, TagRemoteGet and TagTermination are reserved for the
// runtime's remote-dependency protocol, tags from FirstUserTag to MaxTags-1 are free. Tags are
// registered symmetrically (same tag, same maximum length, on every rank), before or after
// Start. A message for a tag the receiver does not know is dropped, counted and reported on
// Errors with its source.
//
// # Shutdown and errors (docs/ce.md, "Shutdown and errors")
//
// Close refuses new operations (ErrClosed), drains the shift queue, waits for everything in
// flight, exchanges goodbyes so that no message is lost, runs a non-blocking barrier and closes
// the transport, all by ctx's deadline; past it, whatever is still pending fails with
// ErrShutdownTimeout. Close is idempotent. Per-taskpool in-flight counters (InFlight,
// OnTaskpoolIdle) tell counted termination when a taskpool's outgoing traffic has drained.
// Every runtime misuse is a sentinel error, never a panic. A handler or done callback that
// panics is recovered: the Engine fails with ErrHandlerPanic (Err, OnFailure) and its comm
// goroutine keeps releasing buffers, completing operations and serving Close.
//
// # Backends
//
// NewWorld gives n in-process ranks (the default build, and what tests use): it blocks when
// idle, emulates thread levels, checks the OS thread of every call in StrictMode, injects
// delays and reordering, and Kill fails everything involving a rank with ErrPeerLost within one
// loop iteration. rt/ce/mpi (build tag mpi) is the MPI transport, which cannot see a rank die
// (Caps.SilentLoss): there the comm goroutine sends heartbeats and declares a silent peer lost
// (Heartbeat, heartbeat.go; docs/ce.md, "Lost peers").
package ce
