package gpu

import (
	"fmt"

	"github.com/jdf2go/jdf2go/rt/gpu/driver"
)

// KernelSpec is a named kernel in its device-neutral form (driver.KernelSpec).
type KernelSpec = driver.KernelSpec

// HostKernel is a kernel's CPU implementation (driver.HostKernel).
type HostKernel = driver.HostKernel

// HostMemory resolves device buffers of a simulated device into the host
// memory that backs them (driver.HostMemory).
type HostMemory = driver.HostMemory

// RegisterKernel adds spec to the process-wide kernel table, from which
// Stream.Launch resolves kernels by name. It fails with ErrDuplicateKernel
// for a name already registered, and with ErrBadArgument for an empty name
// or a spec with neither CUDA source nor Host function.
func RegisterKernel(spec KernelSpec) error { return driver.RegisterKernel(spec) }

// Float64s resolves a Float64 buffer through mem.
func Float64s(mem HostMemory, b Buffer) ([]float64, error) {
	if b.Elem != Float64 {
		return nil, fmt.Errorf("%w: %v is not a float64 buffer", ErrBadArgument, b)
	}
	raw, err := mem.Bytes(b)
	if err != nil {
		return nil, err
	}
	return driver.BytesAsFloat64s(raw)
}
