package cuda

import (
	"errors"
	"fmt"
)

// Lib names the library an Error comes from.
type Lib uint8

// Lib values.
const (
	LibDriver Lib = iota + 1
	LibCublas
	LibCusolver
	LibNvrtc
)

func (l Lib) String() string {
	switch l {
	case LibDriver:
		return "cuda"
	case LibCublas:
		return "cublas"
	case LibCusolver:
		return "cusolver"
	case LibNvrtc:
		return "nvrtc"
	}
	return fmt.Sprintf("Lib(%d)", uint8(l))
}

// Error is a failed call into a CUDA library.
type Error struct {
	Lib  Lib
	Func string // the C entry point, e.g. "cuMemAlloc_v2"
	Code int    // CUresult, cublasStatus_t, cusolverStatus_t or nvrtcResult
	Name string // e.g. "CUDA_ERROR_OUT_OF_MEMORY"
	Desc string // the driver's description, or NVRTC's compile log
}

func (e *Error) Error() string {
	s := e.Lib.String() + ": "
	if e.Func != "" {
		s += e.Func + ": "
	}
	s += e.Name
	if e.Desc != "" && e.Desc != e.Name {
		s += " (" + e.Desc + ")"
	}
	return s
}

// Is matches another *Error with the same library and code, so that
// errors.Is(err, cuda.ErrOutOfMemory) works whatever call failed.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Lib == e.Lib && t.Code == e.Code
}

// Sentinels for the results callers act on.
var (
	ErrInvalidValue  = &Error{Lib: LibDriver, Code: 1, Name: "CUDA_ERROR_INVALID_VALUE"}
	ErrOutOfMemory   = &Error{Lib: LibDriver, Code: 2, Name: "CUDA_ERROR_OUT_OF_MEMORY"}
	ErrNoDevice      = &Error{Lib: LibDriver, Code: 100, Name: "CUDA_ERROR_NO_DEVICE"}
	ErrInvalidHandle = &Error{Lib: LibDriver, Code: 400, Name: "CUDA_ERROR_INVALID_HANDLE"}
	ErrNotReady      = &Error{Lib: LibDriver, Code: 600, Name: "CUDA_ERROR_NOT_READY"}
	// ErrPeerAccessAlreadyEnabled: EnablePeerAccess for a pair enabled before.
	ErrPeerAccessAlreadyEnabled = &Error{Lib: LibDriver, Code: 704, Name: "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED"}
)

// ErrBadArgument is returned, wrapped, for arguments this package rejects
// before calling C (negative sizes, ranges outside a buffer, too many
// kernel arguments).
var ErrBadArgument = errors.New("cuda: bad argument")

func badArgf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadArgument, fmt.Sprintf(format, args...))
}

const (
	cudaSuccess  = 0
	cudaNotReady = 600
)

// driverNames is the fallback for CUresult names when the driver cannot be
// asked (cuGetErrorName is authoritative once libcuda is loaded).
var driverNames = map[int]string{
	0: "CUDA_SUCCESS", 1: "CUDA_ERROR_INVALID_VALUE", 2: "CUDA_ERROR_OUT_OF_MEMORY",
	3: "CUDA_ERROR_NOT_INITIALIZED", 4: "CUDA_ERROR_DEINITIALIZED", 5: "CUDA_ERROR_PROFILER_DISABLED",
	34: "CUDA_ERROR_STUB_LIBRARY", 46: "CUDA_ERROR_DEVICE_UNAVAILABLE",
	100: "CUDA_ERROR_NO_DEVICE", 101: "CUDA_ERROR_INVALID_DEVICE", 102: "CUDA_ERROR_DEVICE_NOT_LICENSED",
	200: "CUDA_ERROR_INVALID_IMAGE", 201: "CUDA_ERROR_INVALID_CONTEXT", 205: "CUDA_ERROR_MAP_FAILED",
	209: "CUDA_ERROR_NO_BINARY_FOR_GPU", 214: "CUDA_ERROR_ECC_UNCORRECTABLE", 217: "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
	218: "CUDA_ERROR_INVALID_PTX",
	219: "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT", 221: "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
	222: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
	300: "CUDA_ERROR_INVALID_SOURCE", 301: "CUDA_ERROR_FILE_NOT_FOUND",
	302: "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND", 303: "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED",
	304: "CUDA_ERROR_OPERATING_SYSTEM",
	400: "CUDA_ERROR_INVALID_HANDLE", 401: "CUDA_ERROR_ILLEGAL_STATE", 500: "CUDA_ERROR_NOT_FOUND",
	600: "CUDA_ERROR_NOT_READY",
	700: "CUDA_ERROR_ILLEGAL_ADDRESS", 701: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", 702: "CUDA_ERROR_LAUNCH_TIMEOUT",
	704: "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", 705: "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED",
	708: "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE", 709: "CUDA_ERROR_CONTEXT_IS_DESTROYED", 710: "CUDA_ERROR_ASSERT",
	714: "CUDA_ERROR_HARDWARE_STACK_ERROR", 715: "CUDA_ERROR_ILLEGAL_INSTRUCTION",
	716: "CUDA_ERROR_MISALIGNED_ADDRESS", 717: "CUDA_ERROR_INVALID_ADDRESS_SPACE", 718: "CUDA_ERROR_INVALID_PC",
	719: "CUDA_ERROR_LAUNCH_FAILED", 720: "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
	800: "CUDA_ERROR_NOT_PERMITTED", 801: "CUDA_ERROR_NOT_SUPPORTED", 802: "CUDA_ERROR_SYSTEM_NOT_READY",
	803: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", 804: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
	999: "CUDA_ERROR_UNKNOWN",
}

// cublasNames is cublasStatus_t (the values are not contiguous).
var cublasNames = map[int]string{
	0: "CUBLAS_STATUS_SUCCESS", 1: "CUBLAS_STATUS_NOT_INITIALIZED", 3: "CUBLAS_STATUS_ALLOC_FAILED",
	7: "CUBLAS_STATUS_INVALID_VALUE", 8: "CUBLAS_STATUS_ARCH_MISMATCH", 11: "CUBLAS_STATUS_MAPPING_ERROR",
	13: "CUBLAS_STATUS_EXECUTION_FAILED", 14: "CUBLAS_STATUS_INTERNAL_ERROR", 15: "CUBLAS_STATUS_NOT_SUPPORTED",
	16: "CUBLAS_STATUS_LICENSE_ERROR",
}

// cusolverNames is cusolverStatus_t.
var cusolverNames = map[int]string{
	0: "CUSOLVER_STATUS_SUCCESS", 1: "CUSOLVER_STATUS_NOT_INITIALIZED", 2: "CUSOLVER_STATUS_ALLOC_FAILED",
	3: "CUSOLVER_STATUS_INVALID_VALUE", 4: "CUSOLVER_STATUS_ARCH_MISMATCH", 5: "CUSOLVER_STATUS_MAPPING_ERROR",
	6: "CUSOLVER_STATUS_EXECUTION_FAILED", 7: "CUSOLVER_STATUS_INTERNAL_ERROR",
	8: "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED", 9: "CUSOLVER_STATUS_NOT_SUPPORTED",
	10: "CUSOLVER_STATUS_ZERO_PIVOT", 11: "CUSOLVER_STATUS_INVALID_LICENSE",
}

// nvrtcNames is nvrtcResult.
var nvrtcNames = map[int]string{
	0: "NVRTC_SUCCESS", 1: "NVRTC_ERROR_OUT_OF_MEMORY", 2: "NVRTC_ERROR_PROGRAM_CREATION_FAILURE",
	3: "NVRTC_ERROR_INVALID_INPUT", 4: "NVRTC_ERROR_INVALID_PROGRAM", 5: "NVRTC_ERROR_INVALID_OPTION",
	6: "NVRTC_ERROR_COMPILATION", 7: "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
	8: "NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION", 9: "NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
	10: "NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID", 11: "NVRTC_ERROR_INTERNAL_ERROR",
	12: "NVRTC_ERROR_TIME_FILE_WRITE_FAILED", 13: "NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED",
	14: "NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED", 15: "NVRTC_ERROR_PCH_CREATE", 16: "NVRTC_ERROR_CANCELLED",
	17: "NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED",
}

// tableName is the name of code in table, or the C type and the number
// for a code this package does not know.
func tableName(table map[int]string, ctype string, code int) string {
	if n, ok := table[code]; ok {
		return n
	}
	return fmt.Sprintf("%s(%d)", ctype, code)
}

// driverError is the error for CUresult r of fn, nil for CUDA_SUCCESS.
func driverError(fn string, r uint32) error {
	if r == cudaSuccess {
		return nil
	}
	code := int(int32(r))
	name, desc := driverErrorText(code)
	return &Error{Lib: LibDriver, Func: fn, Code: code, Name: name, Desc: desc}
}

// driverErrorText asks the driver for the name and description of code
// when libcuda is loaded (cuGetErrorName needs no cuInit), and falls back to
// the table.
func driverErrorText(code int) (name, desc string) {
	name, desc, ok := driverNameFromLibrary(code)
	if !ok {
		name = tableName(driverNames, "CUresult", code)
	}
	return name, desc
}

// driverNameFromLibrary asks libcuda for the name and description of code;
// ok is false when the library is not loaded or does not know the code.
func driverNameFromLibrary(code int) (name, desc string, ok bool) {
	d, err := driverSymbols()
	if err != nil {
		return "", "", false
	}
	f := newFrame()
	defer f.release()
	if status(f.call(d.cuGetErrorName, uintptr(code), f.out(0))) != cudaSuccess || f.outs[0] == 0 {
		return "", "", false
	}
	name = cString(uintptr(f.outs[0]))
	if status(f.call(d.cuGetErrorString, uintptr(code), f.out(1))) == cudaSuccess {
		desc = cString(uintptr(f.outs[1]))
	}
	return name, desc, true
}

func cublasError(fn string, r uint32) error {
	if r == 0 {
		return nil
	}
	code := int(int32(r))
	return &Error{Lib: LibCublas, Func: fn, Code: code, Name: tableName(cublasNames, "cublasStatus_t", code)}
}

func cusolverError(fn string, r uint32) error {
	if r == 0 {
		return nil
	}
	code := int(int32(r))
	return &Error{Lib: LibCusolver, Func: fn, Code: code, Name: tableName(cusolverNames, "cusolverStatus_t", code)}
}

func nvrtcError(fn string, r uint32, log string) error {
	if r == 0 {
		return nil
	}
	code := int(int32(r))
	return &Error{Lib: LibNvrtc, Func: fn, Code: code, Name: tableName(nvrtcNames, "nvrtcResult", code), Desc: log}
}

// queryResult maps the result of cuEventQuery or cuStreamQuery: success is
// done, CUDA_ERROR_NOT_READY is not done, and anything else is an error —
// never "not ready", so that a failed device is not polled forever.
func queryResult(fn string, r uint32) (done bool, err error) {
	switch r {
	case cudaSuccess:
		return true, nil
	case cudaNotReady:
		return false, nil
	}
	return false, driverError(fn, r)
}
