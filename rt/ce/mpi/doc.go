// Package mpi is the MPI transport of rt/ce: a thin cgo binding of about twenty MPI calls
// (Open MPI 4.1 through `pkg-config ompi-c`) and a ce.Transport over it. It builds only with
// the build tag mpi; without the tag the package is this file alone, so `go test ./...` works
// on machines without MPI.
//
// Build and run (Debian: apt-get install libopenmpi-dev openmpi-bin pkg-config):
//
//	go build -tags mpi ./...
//	go test -tags mpi -exec "mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2" ./rt/ce/mpi/
//
// Use --bind-to none: Open MPI binds each rank to one core when np ≤ 2, which gives Go
// GOMAXPROCS=1 while the comm goroutine owns an OS thread (Start warns when it sees that).
//
// Usage:
//
//	t := mpi.New(mpi.ThreadLevel(ce.LevelFunneled))
//	e := ce.New(t)
//	err := e.Start(ctx) // the comm goroutine locks its OS thread and calls MPI_Init_thread
//	...
//	err = e.Close(ctx)  // ... and MPI_Finalize, on the same thread
//
// Design (docs/ce.md, "Backends"): request and status arrays and message buffers live in C
// memory, so MPI may keep their addresses; Go keeps per-slot state and dispatches after
// MPI_Testsome. Active messages use one duplicated communicator (no "allow overtaking"), data
// transfers a second and barriers a third. One ring of persistent receives (MPI_Recv_init, any
// source, any tag, MaxAM bytes each) serves every tag: completions are handed out in posting
// order, which keeps each sender's messages in send order, a tag registered while the Engine runs
// needs no new receive, a message for a tag this rank never registered still arrives (and the
// Engine reports it), and MPI_Testsome scans a short array. Under MPI_THREAD_MULTIPLE direct callers post their own
// requests and hand the request handle to the comm goroutine through a small mutex-guarded
// list; only the comm goroutine touches the arrays. Errors come back as values
// (MPI_ERRORS_RETURN).
//
// A dead rank is invisible to MPI without its fault-tolerance extension (ULFM, which Open MPI
// 4.1 as packaged does not provide): sends to it may complete or hang, nothing fails. The
// transport reports Caps.SilentLoss, so the Engine watches its peers with heartbeats, and when
// one falls silent it calls AbandonPeer: every request outstanding with that rank completes
// at once with ce.ErrPeerLost (receives cancelled first) and is kept aside, never tested
// again. Default mpirun ends the whole job when a rank dies; mpirun --enable-recovery lets the
// survivors run on and see ce.ErrPeerLost (docs/ce.md, "Lost peers").
package mpi
