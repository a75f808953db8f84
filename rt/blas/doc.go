// Package blas is the CPU BLAS that task bodies call: a small, typed,
// column-major float64 subset (Dgemm, Dtrsm, Dtrmm, Dsyrk, Dtrtri, Dpotrf and
// a few LAPACK style helpers) with leading dimensions, as the tiled
// algorithms need it.
//
// It also has the LAPACK tile kernels of a tile QR, a tile LU and
// triangular inverses: Dgeqrt and Dtpqrt (QR of a tile and of a
// triangle-pentagon pair, DPLASMA's geqrt, tsqrt and ttqrt), Dgemqrt and
// Dtpmqrt (their applies: unmqr, tsmqr, ttmqr), Dgetrf (partial pivoting,
// 0-based pivots), DgetrfNoPiv, Dlaswp and Dlauum. The QR routines take a
// work slice (GeqrtWork, GemqrtWork give its length) so that a task body can
// pass per-worker scratch memory; an LU that meets a zero pivot returns an
// error wrapping [ErrSingular].
//
// Two backends implement it:
//
//   - gonum (pure Go, always present). Its kernels run on the calling
//     goroutine only: Dgemm is cut into pieces small enough that gonum never
//     spawns goroutines of its own, and Dpotrf, the QR kernels, Dgetrf and
//     Dlauum are blocked factorizations written here, on column-major data,
//     on top of those kernels.
//   - OpenBLAS, loaded at run time from libopenblas.so.0 through purego
//     (dlopen, no cgo). It is put in single-threaded mode when it is loaded,
//     so that a task's BLAS call runs on the task's worker only. The LAPACK
//     kernels call its LAPACK entry points (dgeqrt_, dtpmqrt_, dgetrf_, …);
//     a library built without them gets the Go code on OpenBLAS's BLAS.
//     DgetrfNoPiv, which LAPACK lacks, is that Go code on both backends.
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
// The kernels allocate nothing in steady state; the QR kernels when they
// are given their work slice.
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
