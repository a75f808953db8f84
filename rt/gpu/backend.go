package gpu

import "github.com/jdf2go/jdf2go/rt/gpu/driver"

// The plain types that bodies and backends share are rt/gpu/driver's; they
// are re-exported here so that bodies need only this package.
type (
	// Ptr is a device address (driver.Ptr).
	Ptr = driver.Ptr
	// Elem is the element type of a Buffer (driver.Elem).
	Elem = driver.Elem
	// Buffer is device memory as a body sees a flow: an address, a length in
	// elements and an element type (driver.Buffer). The zero Buffer is the
	// NULL flow.
	Buffer = driver.Buffer
	// Dim3 is a kernel launch geometry (driver.Dim3).
	Dim3 = driver.Dim3
	// DeviceInfo describes a device (driver.DeviceInfo).
	DeviceInfo = driver.DeviceInfo
	// DeviceType is a backend family (driver.DeviceType).
	DeviceType = driver.DeviceType
)

// Element types.
const (
	Bytes   = driver.Bytes
	Float64 = driver.Float64
	Float32 = driver.Float32
	Int64   = driver.Int64
	Int32   = driver.Int32
)

// Device types. TypeAny in an incarnation matches every device type.
const (
	TypeAny  = driver.TypeAny
	TypeSim  = driver.TypeSim
	TypeCUDA = driver.TypeCUDA
)
