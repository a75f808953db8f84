// Package cuda is rt/gpu's CUDA backend and, under it, a low-level binding
// to NVIDIA's CUDA driver API, cuBLAS, cuSOLVER and NVRTC, loaded at run time
// through purego: no cgo, no CUDA headers and no toolkit at build time, so a
// CGO_ENABLED=0 binary built anywhere runs on a GPU machine.
//
// # The backend
//
// Importing the package registers the "cuda" device family
// (driver.Register), which gpu.Open then opens by name (gpu.Open("cuda"),
// JDF2GO_GPUS=cuda, or auto; Count is 0 without a driver). Backend
// (OpenDevice) implements driver.Backend for one device; a program gets one
// Backend, hence one manager, per device:
//
//   - Threads: the device is ThreadBound; the manager locks its goroutine
//     to its OS thread for a management episode and SetCurrent makes the
//     primary context current there. Calls that can come from outside an
//     episode (stream and backend creation and closing, gpu.Device.Close's
//     write-backs) bind the calling thread themselves.
//   - Streams (DeviceStream): non-blocking, with timing-free events; a
//     failed query is an error, never "not ready". Each stream creates its
//     cuBLAS handle and its cuSOLVER handle and workspace on first use.
//     The BLAS flags are rt/blas's (blas.Lower, blas.Trans, ...); the
//     stream maps them to cuBLAS's values (Op, Fill, SideMode, DiagType),
//     the types of the low-level Blas and Solver wrappers.
//     Dpotrf copies its status word behind the factorization, and a matrix
//     that is not positive definite fails the next query with
//     driver.ErrNotPositiveDefinite. DgemmBatched stages its pointer arrays in
//     pinned and device rings (or uses the strided-batched call when the
//     matrices lie at a constant distance).
//   - Host memory: copies from or to memory of a PinnedPool (IsPinned) go
//     straight to the copy engines; Go memory is never handed to an
//     asynchronous copy but staged through the stream's pinned ring
//     (JDF2GO_CUDA_STAGING_MB, 64 by default). The copy out of the ring into a
//     Go destination happens when the manager's query finds the copy's event
//     complete, before the manager acts on it. PinnedPool.Float64s is an
//     rt.Alloc: rt.NewTiledMatrixAlloc and rt.NewVectorAlloc with it put a
//     program's tiles in pinned memory from the start; PinTiles moves the
//     tiles of an existing matrix there, and PinnedArena gives NEW buffers.
//   - Device memory: a pool sized from the free memory at open
//     (JDF2GO_CUDA_MEMFRAC, 0.9 by default), cut from 1 GiB chunks in size
//     classes; Alloc fails with driver.ErrOutOfMemory when it is full. The
//     manager keeps data copies in 90% of it.
//   - Several devices: gpu.Open links the devices it opens:
//     Backend.EnablePeer asks cuDeviceCanAccessPeer and
//     enables access with cuCtxEnablePeerAccess for each pair that has it, and
//     the manager then stages a datum in from another device's current copy
//     with DeviceStream.CopyPeer (cuMemcpyPeerAsync on the stage-in stream)
//     instead of from the host.
//   - Kernels: gpu.RegisterKernel's CUDA source is compiled with NVRTC for
//     the device's architecture (sm_90 for compute capability 9.0), once per process and
//     architecture, and loaded once per device. Launch arguments map to
//     kernel parameters: driver.Buffer and driver.Ptr to pointers, int and int32 to
//     int, int64 to long long, uint32 and uint64 to their unsigned types,
//     float64 to double and float32 to float.
//
// The binding's wrappers are small and typed, one per C entry point, with
// the handles as Go integer types (Device, Context, Stream, Event,
// DevicePtr, Module, Function). SetCallObserver shows every C call to a
// test (the thread-binding tests use it).
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
