package cuda

import (
	"unsafe"
)

// DevicePtr is a CUdeviceptr, an address in device memory.
type DevicePtr uint64

// Add is the address bytes further on.
func (p DevicePtr) Add(bytes int) DevicePtr { return p + DevicePtr(bytes) }

// MemAlloc allocates bytes of device memory in the current context.
func MemAlloc(bytes int) (DevicePtr, error) {
	if bytes <= 0 {
		return 0, badArgf("MemAlloc(%d): size must be positive", bytes)
	}
	d, err := libcuda()
	if err != nil {
		return 0, err
	}
	v, st := outCall(d.cuMemAlloc, uintptr(bytes))
	if err := driverError("cuMemAlloc_v2", st); err != nil {
		return 0, err
	}
	return DevicePtr(v), nil
}

// MemFree frees device memory from MemAlloc.
func MemFree(p DevicePtr) error {
	d, err := libcuda()
	if err != nil {
		return err
	}
	return driverError("cuMemFree_v2", status(ccall(d.cuMemFree, uintptr(p))))
}

// HostAllocFlags are cuMemHostAlloc flags.
type HostAllocFlags uint32

// HostAllocFlags values.
const (
	// HostAllocPortable makes the memory pinned for every context, not only
	// the current one (needed with several GPUs).
	HostAllocPortable HostAllocFlags = 1
	// HostAllocDeviceMap maps the memory into the device address space.
	HostAllocDeviceMap HostAllocFlags = 2
	// HostAllocWriteCombined is faster to copy to the device and very slow
	// to read from the CPU.
	HostAllocWriteCombined HostAllocFlags = 4
)

// HostMem is page-locked ("pinned") host memory from cuMemHostAlloc: the only
// host memory the asynchronous copies accept. It is C memory, invisible to
// the Go garbage collector, and lives until Free.
type HostMem struct {
	p unsafe.Pointer
	n int
}

// MemHostAlloc allocates bytes of page-locked host memory.
func MemHostAlloc(bytes int, flags HostAllocFlags) (HostMem, error) {
	if bytes <= 0 {
		return HostMem{}, badArgf("MemHostAlloc(%d): size must be positive", bytes)
	}
	d, err := libcuda()
	if err != nil {
		return HostMem{}, err
	}
	v, st := outCall(d.cuMemHostAlloc, uintptr(bytes), uintptr(flags))
	if err := driverError("cuMemHostAlloc", st); err != nil {
		return HostMem{}, err
	}
	return HostMem{p: cPointer(uintptr(v)), n: bytes}, nil
}

// Free releases the memory; h and every HostMem cut from it must not be
// used afterwards.
func (h HostMem) Free() error {
	d, err := libcuda()
	if err != nil {
		return err
	}
	return driverError("cuMemFreeHost", status(ccall(d.cuMemFreeHost, uintptr(h.p))))
}

// Len is the size in bytes.
func (h HostMem) Len() int { return h.n }

// Pointer is the start address.
func (h HostMem) Pointer() unsafe.Pointer { return h.p }

// Sub is the n bytes from offset off.
func (h HostMem) Sub(off, n int) (HostMem, error) {
	if off < 0 || n < 0 || off > h.n || n > h.n-off {
		return HostMem{}, badArgf("HostMem.Sub(%d, %d) of %d bytes", off, n, h.n)
	}
	return HostMem{p: unsafe.Add(h.p, off), n: n}, nil
}

// Bytes is the memory as a byte slice (valid until Free).
func (h HostMem) Bytes() []byte { return unsafe.Slice((*byte)(h.p), h.n) }

// Float64s is the memory as a float64 slice (valid until Free).
func (h HostMem) Float64s() []float64 { return unsafe.Slice((*float64)(h.p), h.n/8) }

// Int32s is the memory as an int32 slice (valid until Free).
func (h HostMem) Int32s() []int32 { return unsafe.Slice((*int32)(h.p), h.n/4) }

// MemcpyHtoD copies src to dst and returns when the copy is done. Like
// every synchronous copy and set here it runs on the legacy default stream,
// which does not wait for work on non-blocking streams: synchronize the
// streams that use the memory first.
func MemcpyHtoD(dst DevicePtr, src HostMem) error {
	d, err := libcuda()
	if err != nil {
		return err
	}
	return driverError("cuMemcpyHtoD_v2", status(ccall(d.cuMemcpyHtoD, uintptr(dst), uintptr(src.p), uintptr(src.n))))
}

// MemcpyDtoH copies dst.Len() bytes from src into dst and returns when the
// copy is done.
func MemcpyDtoH(dst HostMem, src DevicePtr) error {
	d, err := libcuda()
	if err != nil {
		return err
	}
	return driverError("cuMemcpyDtoH_v2", status(ccall(d.cuMemcpyDtoH, uintptr(dst.p), uintptr(src), uintptr(dst.n))))
}

// MemcpyDtoD copies bytes from src to dst on the device and returns when
// the copy is done (the driver's call may return earlier; this one waits
// for the legacy default stream it ran on).
func MemcpyDtoD(dst, src DevicePtr, bytes int) error {
	d, err := libcuda()
	if err != nil {
		return err
	}
	if err := driverError("cuMemcpyDtoD_v2", status(ccall(d.cuMemcpyDtoD, uintptr(dst), uintptr(src), uintptr(bytes)))); err != nil {
		return err
	}
	return Stream(0).Synchronize()
}

// MemcpyHtoDAsync enqueues a copy of src to dst on s. src must stay
// allocated and unchanged until the copy completes.
func MemcpyHtoDAsync(dst DevicePtr, src HostMem, s Stream) error {
	d, err := libcuda()
	if err != nil {
		return err
	}
	return driverError("cuMemcpyHtoDAsync_v2",
		status(ccall(d.cuMemcpyHtoDAsync, uintptr(dst), uintptr(src.p), uintptr(src.n), uintptr(s))))
}

// MemcpyDtoHAsync enqueues a copy of dst.Len() bytes from src into dst on s.
func MemcpyDtoHAsync(dst HostMem, src DevicePtr, s Stream) error {
	d, err := libcuda()
	if err != nil {
		return err
	}
	return driverError("cuMemcpyDtoHAsync_v2",
		status(ccall(d.cuMemcpyDtoHAsync, uintptr(dst.p), uintptr(src), uintptr(dst.n), uintptr(s))))
}

// MemcpyDtoDAsync enqueues a device-to-device copy on s.
func MemcpyDtoDAsync(dst, src DevicePtr, bytes int, s Stream) error {
	d, err := libcuda()
	if err != nil {
		return err
	}
	return driverError("cuMemcpyDtoDAsync_v2",
		status(ccall(d.cuMemcpyDtoDAsync, uintptr(dst), uintptr(src), uintptr(bytes), uintptr(s))))
}

// MemcpyPeerAsync enqueues on s a copy of bytes from src in srcCtx's device
// to dst in dstCtx's device (cuMemcpyPeerAsync); with peer access enabled
// from dstCtx to srcCtx it goes over NVLink or PCIe directly.
func MemcpyPeerAsync(dst DevicePtr, dstCtx Context, src DevicePtr, srcCtx Context, bytes int, s Stream) error {
	d, err := libcuda()
	if err != nil {
		return err
	}
	return driverError("cuMemcpyPeerAsync",
		status(ccall(d.cuMemcpyPeerAsync, uintptr(dst), uintptr(dstCtx), uintptr(src), uintptr(srcCtx), uintptr(bytes), uintptr(s))))
}

// MemsetD8 sets n bytes at dst to v and returns when that is done.
func MemsetD8(dst DevicePtr, v byte, n int) error {
	d, err := libcuda()
	if err != nil {
		return err
	}
	if err := driverError("cuMemsetD8_v2", status(ccall(d.cuMemsetD8, uintptr(dst), uintptr(v), uintptr(n)))); err != nil {
		return err
	}
	return Stream(0).Synchronize()
}

// MemsetD8Async enqueues setting n bytes at dst to v on s.
func MemsetD8Async(dst DevicePtr, v byte, n int, s Stream) error {
	d, err := libcuda()
	if err != nil {
		return err
	}
	return driverError("cuMemsetD8Async", status(ccall(d.cuMemsetD8Async, uintptr(dst), uintptr(v), uintptr(n), uintptr(s))))
}

// Element is a type that CopyToDevice and CopyFromDevice move as raw bytes.
type Element interface {
	~int32 | ~int64 | ~uint32 | ~uint64 | ~float32 | ~float64 | ~byte
}

// CopyToDevice copies a Go slice to device memory and returns when the data
// is on the device: the synchronous copy is the only way Go memory reaches
// the device (the asynchronous ones take HostMem). From pageable memory the
// driver returns once it has staged the data, so this waits for the legacy
// default stream too: work on non-blocking streams does not.
func CopyToDevice[T Element](dst DevicePtr, src []T) error {
	if len(src) == 0 {
		return nil
	}
	return syncCopy(true, dst, unsafe.Pointer(&src[0]), len(src)*int(unsafe.Sizeof(src[0])))
}

// CopyFromDevice copies device memory into a Go slice (len(dst) elements)
// and returns when the copy is done. It does not wait for work on
// non-blocking streams: synchronize the stream that wrote src first.
func CopyFromDevice[T Element](dst []T, src DevicePtr) error {
	if len(dst) == 0 {
		return nil
	}
	return syncCopy(false, src, unsafe.Pointer(&dst[0]), len(dst)*int(unsafe.Sizeof(dst[0])))
}

// syncCopy copies bytes between Go memory at host and dev, in the
// direction toDevice says, pinning host for the call.
func syncCopy(toDevice bool, dev DevicePtr, host unsafe.Pointer, bytes int) error {
	d, err := libcuda()
	if err != nil {
		return err
	}
	f := newFrame()
	defer f.release()
	if !toDevice {
		return driverError("cuMemcpyDtoH_v2", status(f.call(d.cuMemcpyDtoH, f.pin(host), uintptr(dev), uintptr(bytes))))
	}
	if err := driverError("cuMemcpyHtoD_v2", status(f.call(d.cuMemcpyHtoD, uintptr(dev), f.pin(host), uintptr(bytes)))); err != nil {
		return err
	}
	return Stream(0).Synchronize()
}
