package driver

import (
	"fmt"
	"strconv"
)

// DeviceInfo describes a backend device.
type DeviceInfo struct {
	// Name is for humans and traces ("sim0", "NVIDIA H200").
	Name string
	// Type is the backend family, matched against the Type of a body's
	// incarnation (gpu.Incarnation).
	Type DeviceType
	// Batching reports whether the device type supports batch collection
	// (docs/gpu.md, "Batching" step 3).
	Batching bool
	// ThreadBound says that backend calls must come from the OS thread on
	// which SetCurrent ran (a CUDA context is current per thread): the
	// manager then locks its goroutine to its thread for the episode. A
	// locked goroutine pays two thread switches per yield, so backends that
	// do not need it leave it false.
	ThreadBound bool
}

// DeviceType is a backend family.
type DeviceType uint8

// Device types. TypeAny in an incarnation matches every device type.
const (
	TypeAny DeviceType = iota
	TypeSim
	TypeCUDA
)

func (t DeviceType) String() string {
	switch t {
	case TypeAny:
		return "gpu"
	case TypeSim:
		return "sim"
	case TypeCUDA:
		return "cuda"
	}
	return "DeviceType(" + strconv.Itoa(int(t)) + ")"
}

// Ptr is a device address. Zero is never a valid allocation.
type Ptr uintptr

// Elem is the element type of a Buffer.
type Elem uint8

// Element types.
const (
	Bytes Elem = iota
	Float64
	Float32
	Int64
	Int32
)

// Size is the width of one element in bytes.
func (e Elem) Size() int {
	switch e {
	case Float64, Int64:
		return 8
	case Float32, Int32:
		return 4
	}
	return 1
}

func (e Elem) String() string {
	switch e {
	case Bytes:
		return "byte"
	case Float64:
		return "float64"
	case Float32:
		return "float32"
	case Int64:
		return "int64"
	case Int32:
		return "int32"
	}
	return "Elem(" + strconv.Itoa(int(e)) + ")"
}

// Buffer is device memory as a body sees a flow: an address, a length in
// elements and an element type. The zero Buffer is the NULL flow. Kernel
// launches hand Buffers to backends as arguments.
type Buffer struct {
	Ptr  Ptr
	Len  int
	Elem Elem
}

// Bytes is the buffer's size in bytes.
func (b Buffer) Bytes() int64 { return int64(b.Len) * int64(b.Elem.Size()) }

// Slice returns elements [from, to) of b. It panics like a Go slice
// expression when the bounds are out of range.
func (b Buffer) Slice(from, to int) Buffer {
	if from < 0 || to < from || to > b.Len {
		panic(fmt.Sprintf("gpu: Buffer.Slice[%d:%d] out of range with length %d", from, to, b.Len))
	}
	return Buffer{Ptr: b.Ptr + Ptr(from*b.Elem.Size()), Len: to - from, Elem: b.Elem}
}

func (b Buffer) String() string {
	return fmt.Sprintf("%s[%d]@%#x", b.Elem, b.Len, uintptr(b.Ptr))
}

// Dim3 is a kernel launch geometry.
type Dim3 struct{ X, Y, Z int }

// Kernel is a resolved named kernel; its content is backend-specific.
type Kernel interface {
	Name() string
}
