package driver

import (
	"fmt"
	"sync"
	"unsafe"
)

// KernelSpec is a named kernel in its device-neutral form: CUDA C source for
// the CUDA backend (compiled with NVRTC on first lookup) and a Go function for
// the simulated device. A program registers its kernels once, typically from
// an init function (gpu.RegisterKernel), and bodies launch them by name
// (gpu.Stream.Launch).
type KernelSpec struct {
	Name string
	// CUDA is the CUDA C source; Entry is its extern "C" __global__ function
	// (Name when empty).
	CUDA  string
	Entry string
	// Host runs the kernel on the CPU for the simulated device.
	Host HostKernel
}

// HostKernel is a kernel's CPU implementation. It runs on the stream's
// goroutine when the stream reaches the launch; mem turns Buffer arguments
// into host slices.
type HostKernel func(mem HostMemory, grid, block Dim3, args []any) error

// HostMemory resolves device buffers of a simulated device into the host
// memory that backs them.
type HostMemory interface {
	// Bytes returns the memory of b; it fails with ErrBadArgument when b is
	// not inside one allocation.
	Bytes(b Buffer) ([]byte, error)
}

// BytesAsFloat64s views raw as float64s without copying; raw must be 8-byte
// aligned and a multiple of 8 bytes long.
func BytesAsFloat64s(raw []byte) ([]float64, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	if len(raw)%8 != 0 || uintptr(unsafe.Pointer(&raw[0]))%8 != 0 {
		return nil, fmt.Errorf("%w: %d bytes are not an aligned float64 array", ErrBadArgument, len(raw))
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(&raw[0])), len(raw)/8), nil
}

// Float64sAsBytes views f as bytes without copying, for Data
// implementations backed by []float64.
func Float64sAsBytes(f []float64) []byte {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), len(f)*8)
}

var kernels struct {
	sync.RWMutex
	byName map[string]KernelSpec
}

// RegisterKernel adds spec to the process-wide kernel table. It fails with
// ErrDuplicateKernel for a name already registered, and with ErrBadArgument
// for an empty name or a spec with neither CUDA source nor Host function.
func RegisterKernel(spec KernelSpec) error {
	if spec.Name == "" || (spec.CUDA == "" && spec.Host == nil) {
		return fmt.Errorf("%w: kernel %q needs a name and CUDA source or a Host function", ErrBadArgument, spec.Name)
	}
	if spec.Entry == "" {
		spec.Entry = spec.Name
	}
	kernels.Lock()
	defer kernels.Unlock()
	if _, dup := kernels.byName[spec.Name]; dup {
		return fmt.Errorf("%w: %q", ErrDuplicateKernel, spec.Name)
	}
	if kernels.byName == nil {
		kernels.byName = make(map[string]KernelSpec)
	}
	kernels.byName[spec.Name] = spec
	return nil
}

// LookupKernel returns the registered spec of name; backends call it from
// Backend.Kernel.
func LookupKernel(name string) (KernelSpec, error) {
	kernels.RLock()
	defer kernels.RUnlock()
	spec, ok := kernels.byName[name]
	if !ok {
		return KernelSpec{}, fmt.Errorf("%w: %q", ErrUnknownKernel, name)
	}
	return spec, nil
}
