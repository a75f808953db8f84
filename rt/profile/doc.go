// Package profile records what a jdf2go run spent its time on: spans on tracks, written as a
// Chrome/Perfetto trace-event JSON file and summarised per span name.
//
// # Actors
//
// A Tracer owns a set of Tracks. Each Track has exactly one writer at a time (an rt worker, a
// GPU manager's stream, the communication goroutine): recording on a Track takes no lock and,
// except when a chunk of events fills up, allocates nothing. Tracks are registered with
// NewTrack, which does lock; do it once per owner, not per event.
//
// Span names are interned once with Name, so the hot path stores a small integer and up to
// MaxArgs integer arguments (a task's parameters). The display name "GEMM(1, 2, 3)" is built
// only when the trace is written.
//
// # Reading
//
// WriteJSON and Summary read every track. They are safe while writers still record (each
// track publishes its events with an atomic count), but see only what was published when they
// started; rt records a task's span before the task is counted done, so after Taskpool.Wait
// every span of that taskpool is there.
//
// The output opens in https://ui.perfetto.dev and chrome://tracing: one process per track
// group ("workers", "gpu0", ...), one thread per track, one complete ("X") event per span.
package profile
