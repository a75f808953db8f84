package cuda

import (
	"bytes"
	"math"
	"unsafe"
)

// Module is a CUmodule: loaded device code.
type Module uintptr

// Function is a CUfunction: a kernel of a loaded module.
type Function uintptr

// ModuleLoadData loads a CUBIN or PTX image (as NVRTC produces them) into
// the current context. PTX is text and C wants it NUL-terminated: a
// terminator is added when missing.
func ModuleLoadData(image []byte) (Module, error) {
	if len(image) == 0 {
		return 0, badArgf("ModuleLoadData: empty image")
	}
	if !bytes.HasPrefix(image, []byte("\x7fELF")) && image[len(image)-1] != 0 {
		image = append(image[:len(image):len(image)], 0)
	}
	d, err := libcuda()
	if err != nil {
		return 0, err
	}
	f := newFrame()
	defer f.release()
	r := f.call(d.cuModuleLoadData, f.out(0), f.pin(unsafe.Pointer(&image[0])))
	if err := driverError("cuModuleLoadData", status(r)); err != nil {
		return 0, err
	}
	return Module(f.outs[0]), nil
}

// Unload unloads the module; its functions must not be launched afterwards.
func (m Module) Unload() error {
	d, err := libcuda()
	if err != nil {
		return err
	}
	return driverError("cuModuleUnload", status(ccall(d.cuModuleUnload, uintptr(m))))
}

// Function looks up a kernel by its (extern "C", unmangled) name.
func (m Module) Function(name string) (Function, error) {
	d, err := libcuda()
	if err != nil {
		return 0, err
	}
	cname := cBytes(name)
	f := newFrame()
	defer f.release()
	r := f.call(d.cuModuleGetFunction, f.out(0), uintptr(m), f.pin(unsafe.Pointer(&cname[0])))
	if err := driverError("cuModuleGetFunction", status(r)); err != nil {
		return 0, err
	}
	return Function(f.outs[0]), nil
}

// Dim3 is a grid or block shape.
type Dim3 struct{ X, Y, Z uint32 }

// MaxKernelArgs is how many arguments a KernelArgs holds.
const MaxKernelArgs = 32

// KernelArgs is the argument list of a launch, built with the typed
// appenders in the kernel's parameter order. Each argument takes one 8-byte
// slot (the driver reads only the parameter's own size from it). A
// KernelArgs is reused across launches (Reset) so that launching allocates
// nothing; it must not be changed while Launch runs.
type KernelArgs struct {
	vals     [MaxKernelArgs]uint64
	ptrs     [MaxKernelArgs]uintptr
	n        int
	overflow bool
}

// Reset empties the list.
func (a *KernelArgs) Reset() *KernelArgs {
	a.n, a.overflow = 0, false
	return a
}

// Len is the number of arguments.
func (a *KernelArgs) Len() int { return a.n }

func (a *KernelArgs) push(v uint64) *KernelArgs {
	if a.n == MaxKernelArgs {
		a.overflow = true
		return a
	}
	a.vals[a.n] = v
	a.n++
	return a
}

// Ptr appends a device pointer (a T* parameter).
func (a *KernelArgs) Ptr(p DevicePtr) *KernelArgs { return a.push(uint64(p)) }

// Int32 appends an int parameter.
func (a *KernelArgs) Int32(v int32) *KernelArgs { return a.push(uint64(uint32(v))) }

// Uint32 appends an unsigned int parameter.
func (a *KernelArgs) Uint32(v uint32) *KernelArgs { return a.push(uint64(v)) }

// Int64 appends a long long parameter.
func (a *KernelArgs) Int64(v int64) *KernelArgs { return a.push(uint64(v)) }

// Uint64 appends an unsigned long long parameter.
func (a *KernelArgs) Uint64(v uint64) *KernelArgs { return a.push(v) }

// Float32 appends a float parameter.
func (a *KernelArgs) Float32(v float32) *KernelArgs { return a.push(uint64(math.Float32bits(v))) }

// Float64 appends a double parameter.
func (a *KernelArgs) Float64(v float64) *KernelArgs { return a.push(math.Float64bits(v)) }

// Launch enqueues fn on s with the given grid, block, dynamic shared
// memory and arguments (nil for a kernel without parameters). The driver
// copies the arguments before Launch returns.
func (fn Function) Launch(grid, block Dim3, sharedMem int, s Stream, args *KernelArgs) error {
	if args != nil && args.overflow {
		return badArgf("Launch: more than %d kernel arguments", MaxKernelArgs)
	}
	if sharedMem < 0 || sharedMem > math.MaxUint32 {
		return badArgf("Launch: shared memory size %d", sharedMem)
	}
	d, err := libcuda()
	if err != nil {
		return err
	}
	f := newFrame()
	defer f.release()
	var params uintptr
	if args != nil && args.n > 0 {
		// kernelParams is an array of pointers to the values; both arrays
		// live in args, which the frame keeps on the heap and alive.
		for i := 0; i < args.n; i++ {
			args.ptrs[i] = uintptr(unsafe.Pointer(&args.vals[i]))
		}
		params = f.pin(unsafe.Pointer(&args.ptrs[0]))
		f.pin(unsafe.Pointer(args))
	}
	r := f.call(d.cuLaunchKernel, uintptr(fn),
		uintptr(grid.X), uintptr(grid.Y), uintptr(grid.Z),
		uintptr(block.X), uintptr(block.Y), uintptr(block.Z),
		uintptr(sharedMem), uintptr(s), params, 0)
	return driverError("cuLaunchKernel", status(r))
}
