package cuda

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"
)

// driverAPI holds the driver entry points. The _v2 names are the current
// ABI of the functions that have one; the plain names are kept as a
// fallback only where older drivers lack the _v2.
type driverAPI struct {
	cuInit, cuDriverGetVersion                                         uintptr
	cuGetErrorName, cuGetErrorString                                   uintptr
	cuDeviceGetCount, cuDeviceGet, cuDeviceGetName                     uintptr
	cuDeviceGetAttribute, cuDeviceTotalMem                             uintptr
	cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRelease                uintptr
	cuCtxSetCurrent, cuCtxGetCurrent, cuCtxSynchronize                 uintptr
	cuMemGetInfo, cuMemAlloc, cuMemFree, cuMemHostAlloc, cuMemFreeHost uintptr
	cuMemcpyHtoD, cuMemcpyDtoH, cuMemcpyDtoD                           uintptr
	cuMemcpyHtoDAsync, cuMemcpyDtoHAsync, cuMemcpyDtoDAsync            uintptr
	cuMemsetD8, cuMemsetD8Async                                        uintptr
	cuStreamCreate, cuStreamDestroy, cuStreamSynchronize               uintptr
	cuStreamQuery, cuStreamWaitEvent                                   uintptr
	cuEventCreate, cuEventDestroy, cuEventRecord, cuEventQuery         uintptr
	cuEventSynchronize, cuEventElapsedTime                             uintptr
	cuModuleLoadData, cuModuleUnload, cuModuleGetFunction              uintptr
	cuLaunchKernel                                                     uintptr
	cuDeviceCanAccessPeer, cuCtxEnablePeerAccess, cuMemcpyPeerAsync    uintptr
}

// driverSymbols opens libcuda.so.1 and resolves the entry points, without
// initializing the driver.
var driverSymbols = sync.OnceValues(func() (*driverAPI, error) {
	d := &driverAPI{}
	err := libDriver.resolve([]symbol{
		sym(&d.cuInit, "cuInit"),
		sym(&d.cuDriverGetVersion, "cuDriverGetVersion"),
		sym(&d.cuGetErrorName, "cuGetErrorName"),
		sym(&d.cuGetErrorString, "cuGetErrorString"),
		sym(&d.cuDeviceGetCount, "cuDeviceGetCount"),
		sym(&d.cuDeviceGet, "cuDeviceGet"),
		sym(&d.cuDeviceGetName, "cuDeviceGetName"),
		sym(&d.cuDeviceGetAttribute, "cuDeviceGetAttribute"),
		sym(&d.cuDeviceTotalMem, "cuDeviceTotalMem_v2"),
		sym(&d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
		sym(&d.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"),
		sym(&d.cuCtxSetCurrent, "cuCtxSetCurrent"),
		sym(&d.cuCtxGetCurrent, "cuCtxGetCurrent"),
		sym(&d.cuCtxSynchronize, "cuCtxSynchronize"),
		sym(&d.cuMemGetInfo, "cuMemGetInfo_v2"),
		sym(&d.cuMemAlloc, "cuMemAlloc_v2"),
		sym(&d.cuMemFree, "cuMemFree_v2"),
		sym(&d.cuMemHostAlloc, "cuMemHostAlloc"),
		sym(&d.cuMemFreeHost, "cuMemFreeHost"),
		sym(&d.cuMemcpyHtoD, "cuMemcpyHtoD_v2"),
		sym(&d.cuMemcpyDtoH, "cuMemcpyDtoH_v2"),
		sym(&d.cuMemcpyDtoD, "cuMemcpyDtoD_v2"),
		sym(&d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
		sym(&d.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
		sym(&d.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
		sym(&d.cuMemsetD8, "cuMemsetD8_v2"),
		sym(&d.cuMemsetD8Async, "cuMemsetD8Async"),
		sym(&d.cuStreamCreate, "cuStreamCreate"),
		sym(&d.cuStreamDestroy, "cuStreamDestroy_v2", "cuStreamDestroy"),
		sym(&d.cuStreamSynchronize, "cuStreamSynchronize"),
		sym(&d.cuStreamQuery, "cuStreamQuery"),
		sym(&d.cuStreamWaitEvent, "cuStreamWaitEvent"),
		sym(&d.cuEventCreate, "cuEventCreate"),
		sym(&d.cuEventDestroy, "cuEventDestroy_v2", "cuEventDestroy"),
		sym(&d.cuEventRecord, "cuEventRecord"),
		sym(&d.cuEventQuery, "cuEventQuery"),
		sym(&d.cuEventSynchronize, "cuEventSynchronize"),
		sym(&d.cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
		sym(&d.cuModuleLoadData, "cuModuleLoadData"),
		sym(&d.cuModuleUnload, "cuModuleUnload"),
		sym(&d.cuModuleGetFunction, "cuModuleGetFunction"),
		sym(&d.cuLaunchKernel, "cuLaunchKernel"),
		sym(&d.cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer"),
		sym(&d.cuCtxEnablePeerAccess, "cuCtxEnablePeerAccess"),
		sym(&d.cuMemcpyPeerAsync, "cuMemcpyPeerAsync"),
	})
	if err != nil {
		return nil, err
	}
	return d, nil
})

// unavailableCodes are cuInit results that mean "no usable GPU here"
// rather than a failure: stub library, no device, device unavailable,
// driver/library mismatch.
var unavailableCodes = map[int]bool{34: true, 46: true, 100: true, 803: true, 804: true}

var driverInit = sync.OnceValues(func() (*driverAPI, error) {
	d, err := driverSymbols()
	if err != nil {
		return nil, err
	}
	if err := driverError("cuInit", status(ccall(d.cuInit, 0))); err != nil {
		var e *Error
		if errors.As(err, &e) && unavailableCodes[e.Code] {
			return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		return nil, err
	}
	return d, nil
})

// libcuda is the initialized driver API; every driver wrapper goes through
// it, so calling one before Init initializes the driver.
func libcuda() (*driverAPI, error) { return driverInit() }

// Init loads libcuda.so.1 and initializes the driver, once per process.
// Later calls return the first call's result. The error wraps
// ErrUnavailable when the library is missing or the driver finds no device.
func Init() error {
	_, err := libcuda()
	return err
}

// DriverVersion is the CUDA version the driver supports, as 1000·major +
// 10·minor (13000 for CUDA 13.0).
func DriverVersion() (int, error) {
	d, err := libcuda()
	if err != nil {
		return 0, err
	}
	v, st := outCall(d.cuDriverGetVersion)
	if err := driverError("cuDriverGetVersion", st); err != nil {
		return 0, err
	}
	return int(int32(v)), nil
}

// Device is a CUdevice, a device ordinal as the driver numbers it.
type Device int32

// DeviceCount is the number of CUDA devices.
func DeviceCount() (int, error) {
	d, err := libcuda()
	if err != nil {
		return 0, err
	}
	v, st := outCall(d.cuDeviceGetCount)
	if err := driverError("cuDeviceGetCount", st); err != nil {
		return 0, err
	}
	return int(int32(v)), nil
}

// GetDevice returns the device with the given ordinal.
func GetDevice(ordinal int) (Device, error) {
	d, err := libcuda()
	if err != nil {
		return 0, err
	}
	v, st := outCall(d.cuDeviceGet, uintptr(ordinal))
	if err := driverError("cuDeviceGet", st); err != nil {
		return 0, err
	}
	return Device(int32(v)), nil
}

// Name is the device's product name, e.g. "NVIDIA H200".
func (dev Device) Name() (string, error) {
	d, err := libcuda()
	if err != nil {
		return "", err
	}
	buf := make([]byte, 256)
	f := newFrame()
	defer f.release()
	r := f.call(d.cuDeviceGetName, f.pin(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(dev))
	if err := driverError("cuDeviceGetName", status(r)); err != nil {
		return "", err
	}
	for i, c := range buf {
		if c == 0 {
			return string(buf[:i]), nil
		}
	}
	return string(buf), nil
}

// DeviceAttribute is a CUdevice_attribute.
type DeviceAttribute int32

// The attributes a runtime cares about; any other CUdevice_attribute value
// can be passed as DeviceAttribute(n).
const (
	AttrMaxThreadsPerBlock           DeviceAttribute = 1
	AttrMaxSharedMemoryPerBlock      DeviceAttribute = 8
	AttrWarpSize                     DeviceAttribute = 10
	AttrClockRate                    DeviceAttribute = 13 // kHz
	AttrMultiprocessorCount          DeviceAttribute = 16
	AttrCanMapHostMemory             DeviceAttribute = 19
	AttrConcurrentKernels            DeviceAttribute = 31
	AttrPCIBusID                     DeviceAttribute = 33
	AttrPCIDeviceID                  DeviceAttribute = 34
	AttrMemoryClockRate              DeviceAttribute = 36 // kHz
	AttrGlobalMemoryBusWidth         DeviceAttribute = 37 // bits
	AttrL2CacheSize                  DeviceAttribute = 38 // bytes
	AttrMaxThreadsPerMultiprocessor  DeviceAttribute = 39
	AttrAsyncEngineCount             DeviceAttribute = 40
	AttrUnifiedAddressing            DeviceAttribute = 41
	AttrComputeCapabilityMajor       DeviceAttribute = 75
	AttrComputeCapabilityMinor       DeviceAttribute = 76
	AttrMaxSharedMemoryPerBlockOptin DeviceAttribute = 97
)

// Attribute returns one device attribute.
func (dev Device) Attribute(attr DeviceAttribute) (int, error) {
	d, err := libcuda()
	if err != nil {
		return 0, err
	}
	v, st := outCall(d.cuDeviceGetAttribute, uintptr(attr), uintptr(dev))
	if err := driverError("cuDeviceGetAttribute", st); err != nil {
		return 0, err
	}
	return int(int32(v)), nil
}

// ComputeCapability is the device's compute capability (9, 0 on a Hopper GPU).
func (dev Device) ComputeCapability() (major, minor int, err error) {
	if major, err = dev.Attribute(AttrComputeCapabilityMajor); err != nil {
		return 0, 0, err
	}
	minor, err = dev.Attribute(AttrComputeCapabilityMinor)
	return major, minor, err
}

// CanAccessPeer reports whether contexts on dev can map the memory of peer
// (cuDeviceCanAccessPeer): NVLink or PCIe peer-to-peer between the two.
func (dev Device) CanAccessPeer(peer Device) (bool, error) {
	d, err := libcuda()
	if err != nil {
		return false, err
	}
	v, st := outCall(d.cuDeviceCanAccessPeer, uintptr(dev), uintptr(peer))
	if err := driverError("cuDeviceCanAccessPeer", st); err != nil {
		return false, err
	}
	return int32(v) != 0, nil
}

// TotalMem is the device's memory size in bytes.
func (dev Device) TotalMem() (int64, error) {
	d, err := libcuda()
	if err != nil {
		return 0, err
	}
	v, st := outCall(d.cuDeviceTotalMem, uintptr(dev))
	if err := driverError("cuDeviceTotalMem_v2", st); err != nil {
		return 0, err
	}
	return int64(v), nil
}

// Context is a CUcontext.
type Context uintptr

// PrimaryCtxRetain retains the device's primary context (the one the CUDA
// runtime and the libraries share) and returns it. Each retain is matched
// by a PrimaryCtxRelease.
func (dev Device) PrimaryCtxRetain() (Context, error) {
	d, err := libcuda()
	if err != nil {
		return 0, err
	}
	v, st := outCall(d.cuDevicePrimaryCtxRetain, uintptr(dev))
	if err := driverError("cuDevicePrimaryCtxRetain", st); err != nil {
		return 0, err
	}
	return Context(v), nil
}

// PrimaryCtxRelease releases one retain of the device's primary context.
func (dev Device) PrimaryCtxRelease() error {
	d, err := libcuda()
	if err != nil {
		return err
	}
	return driverError("cuDevicePrimaryCtxRelease_v2", status(ccall(d.cuDevicePrimaryCtxRelease, uintptr(dev))))
}

// SetCurrent makes c the calling OS thread's current context; the calling
// goroutine must be locked to its thread (runtime.LockOSThread) for that to
// mean anything.
func (c Context) SetCurrent() error {
	d, err := libcuda()
	if err != nil {
		return err
	}
	return driverError("cuCtxSetCurrent", status(ccall(d.cuCtxSetCurrent, uintptr(c))))
}

// EnablePeerAccess lets the calling thread's current context access the
// memory of peer's context (cuCtxEnablePeerAccess); it fails with
// ErrPeerAccessAlreadyEnabled when it was enabled before.
func EnablePeerAccess(peer Context) error {
	d, err := libcuda()
	if err != nil {
		return err
	}
	return driverError("cuCtxEnablePeerAccess", status(ccall(d.cuCtxEnablePeerAccess, uintptr(peer), 0)))
}

// CurrentContext is the calling OS thread's current context (0 when none).
func CurrentContext() (Context, error) {
	d, err := libcuda()
	if err != nil {
		return 0, err
	}
	v, st := outCall(d.cuCtxGetCurrent)
	if err := driverError("cuCtxGetCurrent", st); err != nil {
		return 0, err
	}
	return Context(v), nil
}

// CtxSynchronize waits for all work of the current context.
func CtxSynchronize() error {
	d, err := libcuda()
	if err != nil {
		return err
	}
	return driverError("cuCtxSynchronize", status(ccall(d.cuCtxSynchronize)))
}

// MemGetInfo is the free and total memory of the current context's device,
// in bytes.
func MemGetInfo() (free, total int64, err error) {
	d, err := libcuda()
	if err != nil {
		return 0, 0, err
	}
	f := newFrame()
	defer f.release()
	if err := driverError("cuMemGetInfo_v2", status(f.call(d.cuMemGetInfo, f.out(0), f.out(1)))); err != nil {
		return 0, 0, err
	}
	return int64(f.outs[0]), int64(f.outs[1]), nil
}
