// Package gputest provides tiled dense linear algebra task graphs with GPU
// incarnations, written by hand the way jdf2go generates task classes (as
// rt/rttest does for CPU shapes): a tiled GEMM and a tiled Cholesky
// factorization whose bodies call the device-neutral body API of rt/gpu, so
// the same graphs run on the simulated device, on CUDA, and on the CPU (a
// CPU incarnation comes second). The GPU backends' tests and the benchmark
// driver run them; it imports no backend, so any backend's tests may use it.
//
// Written flows of GPU tasks are written back to the host by a custom
// stage-out (the JDF stage_out property) according to the graph's
// WriteBack mode: only the final value of each tile (WriteFinal), or none
// (WriteNone: results stay on the device, as when the data lives there; a
// device's Close writes them back). Intermediate values never cross the
// bus.
package gputest
