// Package driver is what a GPU backend implements for rt/gpu, as
// database/sql/driver is for database/sql: the device (Backend) and its
// in-order queues (Stream) with the device BLAS subset, the optional
// interfaces a backend may add (PeerBackend, ComputePreparer,
// TransferPreparer), and the registry through which a backend family
// makes itself openable by name (Register). Programs do not use it: they
// open devices with gpu.Open and write bodies against rt/gpu.
//
// The plain types that both sides see (Ptr, Buffer, Elem, Dim3, DeviceInfo,
// KernelSpec) live here so that backends need not import rt/gpu; rt/gpu
// re-exports them under the same names. The BLAS flags are rt/blas's
// (blas.Transpose, blas.Uplo, blas.Side, blas.Diag): a backend maps them to
// its library's values.
//
// The simulated device (rt/gpu/sim) and the CUDA binding (rt/gpu/cuda) are
// the two backends.
package driver
