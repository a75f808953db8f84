// Package cuda is the low-level binding to NVIDIA's CUDA driver API,
// cuBLAS, cuSOLVER and NVRTC, loaded at run time through purego: no cgo, no
// CUDA headers and no toolkit at build time, so a CGO_ENABLED=0 binary built
// anywhere runs on a GPU machine.
//
// It is the layer under rt/gpu's CUDA backend: small typed wrappers, one per
// C entry point, with the handles as Go integer types (Device, Context,
// Stream, Event, DevicePtr, Module, Function) and the policies left to the
// backend.
//
// # Loading
//
// Nothing is loaded until it is used. Init opens libcuda.so.1 (driver API,
// with the _v2 entry points where they exist) and calls cuInit. NewBlas
// opens libcublas.so.13 or .12, NewSolver libcusolver.so.12, .13 or .11,
// and NewProgram libnvrtc.so.13 or .12. Each library is looked up by its
// soname first (LD_LIBRARY_PATH, the loader cache), then in the folders
// named by JDF2GO_CUDA_LIBRARY_PATH (colon-separated), CUDA_HOME/lib64,
// CUDA_PATH/lib64 and the usual install folders. When a library, one of its
// entry points or a device is missing, the error wraps ErrUnavailable, so
// callers (and tests) can tell "no GPU here" from a real failure.
//
// # Errors
//
// Every CUresult, cublasStatus_t, cusolverStatus_t and nvrtcResult other than
// success becomes an *Error carrying the library, the C function, the code
// and its name (cuGetErrorName for the driver when it is loaded, a table
// otherwise) plus the driver's description or NVRTC's compile log.
// errors.Is matches an *Error against the sentinels (ErrOutOfMemory,
// ErrNotReady, ErrInvalidHandle, …) by library and code. Event and stream
// queries map success to done, CUDA_ERROR_NOT_READY to not done, and
// anything else to an error: a failure is never reported as "not ready".
//
// # Threads and contexts
//
// CUDA's current context belongs to the OS thread. A goroutine that makes
// CUDA calls locks itself to its thread (runtime.LockOSThread) and makes
// the device's primary context current there (Device.PrimaryCtxRetain,
// Context.SetCurrent) before its first call.
//
// # Memory passed to C
//
// Go memory handed to a call (out-parameters, scalars, strings, images,
// kernel arguments, the slices of the synchronous copies) is kept on the Go
// heap, which does not move, and alive until the call returns; no library
// keeps a pointer to Go memory after that. Asynchronous copies take HostMem,
// page-locked memory from cuMemHostAlloc, and never Go memory: the copy
// runs after the call returns, when Go could have moved or freed it. The
// hot calls (event record and query, asynchronous copies, cuBLAS and
// cuSOLVER calls, kernel launches) allocate nothing in steady state.
package cuda
