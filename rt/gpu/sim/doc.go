// Package sim is a simulated accelerator for rt/gpu: device memory is host
// memory, streams are in-order queues of Go closures, and the BLAS subset
// runs on the CPU with rt/blas's gonum backend. The same GPU bodies run on it as on CUDA, so
// programs with GPU incarnations are tested in CI.
//
// Modes. In free-running mode (the default) each stream has a goroutine that
// runs its operations in order as they are enqueued; Close stops them. In
// manual mode nothing runs until a test advances a named stream with Step
// (one operation) or Drain, on the test's goroutine, which makes manager
// scenarios deterministic.
//
// Events. Recording event slot i marks the current end of the stream's
// queue; a query reports it complete once every operation enqueued before
// the mark has run. An operation that fails (a Faults.Exec error, a Dpotrf on
// a matrix that is not positive definite, a panicking kernel) makes the query
// of the first event recorded after it fail, once.
//
// Fault injection (Faults): failing copies, records and queries, failing or
// slow operations.
//
// Importing the package registers the "sim" backend family (driver.Register), so that
// gpu.Open("sim:N") and JDF2GO_GPUS=sim:N work in a program that imports it (a blank import
// suffices).
package sim
