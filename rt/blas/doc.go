// Package blas is the CPU BLAS that task bodies call: a small, typed,
// column-major float64 subset (Dgemm, Dtrsm, Dsyrk, Dpotrf and a few LAPACK
// style helpers) with leading dimensions, as the tiled algorithms need it.
//
// Two backends implement it:
//
//   - gonum (pure Go, always present). Its kernels run on the calling
//     goroutine only: Dgemm is cut into pieces small enough that gonum never
//     spawns goroutines of its own, and Dpotrf is a blocked factorization
//     written here on top of those kernels.
//   - OpenBLAS, loaded at run time from libopenblas.so.0 through purego
//     (dlopen, no cgo). It is put in single-threaded mode when it is loaded,
//     so that a task's BLAS call runs on the task's worker only.
//
// The environment variable JDF2GO_BLAS picks the default backend: "auto"
// (the default: OpenBLAS when it loads, gonum otherwise), "gonum" or
// "openblas". The package-level functions use that default; [Gonum],
// [OpenBLAS] and [Select] give a specific backend.
//
// Every routine checks its arguments (dimensions, leading dimensions and
// that each slice is long enough for what the routine will touch) and
// returns an error wrapping [ErrBadArgument] instead of letting a backend
// read or write outside the slices. Dpotrf returns an error wrapping
// [ErrNotPositiveDefinite] that names the failing leading minor.
//
// # Calls into OpenBLAS
//
// OpenBLAS is called through its Fortran entry points (dgemm_, dpotrf_, …),
// which take every argument by address. Scalars live in a pooled,
// heap-allocated argument block, and matrices are the callers' slices. The
// calls go through a function marked //go:uintptrescapes, so every pointer
// handed to C is on the Go heap (which never moves) and stays alive until the
// call returns; nothing is retained by OpenBLAS after that. The call path
// allocates nothing in steady state.
//
// # Threads and baselines
//
// Task bodies want single-threaded kernels; benchmark baselines want
// OpenBLAS's own threaded routines. [Impl.SetThreads] switches OpenBLAS's
// global thread count (openblas_set_num_threads), so a baseline can run
// dpotrf_ or dgemm_ on N threads in the same process and then switch back to
// 1. It is process-wide: never change it while tasks are running BLAS.
// [MatCholesky] is gonum's own one-call baseline (mat.Cholesky, which spreads
// its Dgemm over GOMAXPROCS goroutines).
package blas
