package cuda

import (
	"errors"
	"strings"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
)

// These tests need no GPU and no CUDA library: they run everywhere and
// prove the error mapping, the skip decision and the call mechanism.

func TestErrorNamesAndMatching(t *testing.T) {
	cases := []struct {
		err      error
		sentinel error
		text     string
	}{
		{driverError("cuMemAlloc_v2", 2), ErrOutOfMemory, "cuda: cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY"},
		{driverError("cuEventQuery", 400), ErrInvalidHandle, "cuda: cuEventQuery: CUDA_ERROR_INVALID_HANDLE"},
		{driverError("cuInit", 100), ErrNoDevice, "cuda: cuInit: CUDA_ERROR_NO_DEVICE"},
		{cublasError("cublasDgemm_v2", 13), nil, "cublas: cublasDgemm_v2: CUBLAS_STATUS_EXECUTION_FAILED"},
		{cublasError("cublasCreate_v2", 99), nil, "cublas: cublasCreate_v2: cublasStatus_t(99)"},
		{cusolverError("cusolverDnDpotrf", 7), nil, "cusolver: cusolverDnDpotrf: CUSOLVER_STATUS_INTERNAL_ERROR"},
		{nvrtcError("nvrtcCompileProgram", 6, "k.cu(1): error: x"), nil,
			"nvrtc: nvrtcCompileProgram: NVRTC_ERROR_COMPILATION (k.cu(1): error: x)"},
	}
	for _, c := range cases {
		if c.err == nil {
			t.Fatalf("no error for %q", c.text)
		}
		// With the driver loaded, cuGetErrorName gives the same names and
		// adds a description after them.
		if got := c.err.Error(); !strings.HasPrefix(got, c.text) {
			t.Errorf("error text %q, want prefix %q", got, c.text)
		}
		if c.sentinel != nil && !errors.Is(c.err, c.sentinel) {
			t.Errorf("%v does not match %v", c.err, c.sentinel)
		}
		if errors.Is(c.err, ErrNotReady) {
			t.Errorf("%v matches ErrNotReady", c.err)
		}
	}
	for _, ok := range []error{driverError("f", 0), cublasError("f", 0), cusolverError("f", 0), nvrtcError("f", 0, "")} {
		if ok != nil {
			t.Errorf("success mapped to %v", ok)
		}
	}
	// The same code in another library is another error.
	if errors.Is(cublasError("f", 1), &Error{Lib: LibDriver, Code: 1}) {
		t.Error("a cuBLAS status matched a driver result")
	}
	if got := driverError("f", 77777).Error(); !strings.Contains(got, "77777") {
		t.Errorf("unknown CUresult printed as %q", got)
	}
}

func TestQueryResultMapping(t *testing.T) {
	if done, err := queryResult("cuEventQuery", cudaSuccess); !done || err != nil {
		t.Errorf("success: done=%v err=%v", done, err)
	}
	if done, err := queryResult("cuEventQuery", cudaNotReady); done || err != nil {
		t.Errorf("not ready: done=%v err=%v", done, err)
	}
	for _, code := range []uint32{1, 400, 700, 999} {
		done, err := queryResult("cuEventQuery", code)
		if done || err == nil {
			t.Errorf("code %d: done=%v err=%v, want an error", code, done, err)
		}
		var e *Error
		if !errors.As(err, &e) || e.Code != int(code) || e.Func != "cuEventQuery" {
			t.Errorf("code %d: %#v", code, err)
		}
	}
}

func TestMissingLibraryIsUnavailable(t *testing.T) {
	lib := newLibrary("test library", []string{"libjdf2go-does-not-exist.so.1"})
	var fn uintptr
	err := lib.resolve([]symbol{sym(&fn, "nothing")})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "libjdf2go-does-not-exist.so.1") {
		t.Errorf("err = %v, want ErrUnavailable naming the library", err)
	}
	// A library that loads but lacks an entry point is unavailable too.
	libc := newLibrary("C library", []string{"libc.so.6"})
	err = libc.resolve([]symbol{sym(&fn, "cuNoSuchFunction_v9")})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "cuNoSuchFunction_v9") {
		t.Errorf("err = %v, want ErrUnavailable naming the symbol", err)
	}
}

// TestNoGPUPath runs only where CUDA is absent (here and in CI): every
// entry point then reports ErrUnavailable instead of crashing, and the GPU
// tests skip with that message.
func TestNoGPUPath(t *testing.T) {
	err := Init()
	if err == nil {
		t.Skip("CUDA is available here: the GPU tests cover it")
	}
	reason, skip := gpuSkipReason(err)
	if !skip {
		t.Fatalf("Init failed with %v, which is not ErrUnavailable", err)
	}
	if !strings.Contains(reason, ErrUnavailable.Error()) {
		t.Errorf("skip reason %q does not carry the ErrUnavailable message", reason)
	}
	t.Logf("skip reason: %s", reason)
	calls := map[string]func() error{
		"DeviceCount":  func() error { _, err := DeviceCount(); return err },
		"MemAlloc":     func() error { _, err := MemAlloc(8); return err },
		"MemHostAlloc": func() error { _, err := MemHostAlloc(8, 0); return err },
		"NewStream":    func() error { _, err := NewStream(); return err },
		"NewEvent":     func() error { _, err := NewEvent(); return err },
		"Event.Query":  func() error { _, err := Event(1).Query(); return err },
		"CopyToDevice": func() error { return CopyToDevice(1, []float64{1}) },
		"Launch":       func() error { return Function(1).Launch(Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, 0, nil) },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: err = %v, want ErrUnavailable", name, err)
		}
	}
	if _, err := NewBlas(); err != nil && !errors.Is(err, ErrUnavailable) {
		t.Errorf("NewBlas: err = %v, want ErrUnavailable", err)
	}
	if _, err := NewSolver(0); err != nil && !errors.Is(err, ErrUnavailable) {
		t.Errorf("NewSolver: err = %v, want ErrUnavailable", err)
	}
	if _, err := Compile("", "empty.cu"); err != nil && !errors.Is(err, ErrUnavailable) {
		t.Errorf("Compile: err = %v, want ErrUnavailable", err)
	}
}

func TestSkipDecision(t *testing.T) {
	if _, skip := gpuSkipReason(errors.Join(ErrUnavailable, errors.New("libcuda.so.1: not found"))); !skip {
		t.Error("ErrUnavailable does not skip")
	}
	if _, skip := gpuSkipReason(driverError("cuInit", 999)); skip {
		t.Error("a real driver failure skips instead of failing")
	}
}

func TestArgumentChecks(t *testing.T) {
	// A stand-in for pinned memory: Sub only does address arithmetic.
	buf := make([]byte, 100)
	h := HostMem{p: unsafe.Pointer(&buf[0]), n: len(buf)}
	for _, c := range [][2]int{{-1, 1}, {0, 101}, {50, 51}, {101, 0}} {
		if _, err := h.Sub(c[0], c[1]); !errors.Is(err, ErrBadArgument) {
			t.Errorf("Sub(%d, %d): err = %v", c[0], c[1], err)
		}
	}
	if s, err := h.Sub(40, 60); err != nil || s.Len() != 60 {
		t.Errorf("Sub(40, 60) = %v, %v", s.Len(), err)
	}
	var args KernelArgs
	for i := 0; i <= MaxKernelArgs; i++ {
		args.Int32(int32(i))
	}
	if err := Function(1).Launch(Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, 0, &args); !errors.Is(err, ErrBadArgument) {
		t.Errorf("Launch with %d arguments: err = %v", MaxKernelArgs+1, err)
	}
	if _, err := MemAlloc(0); !errors.Is(err, ErrBadArgument) {
		t.Errorf("MemAlloc(0): err = %v", err)
	}
	if err := (Blas{}).SetStream(0); !errors.Is(err, ErrBadArgument) {
		t.Errorf("zero Blas: err = %v", err)
	}
}

func TestKernelArgsPacking(t *testing.T) {
	var a KernelArgs
	a.Reset().Ptr(0xdead0000).Int32(-2).Float64(1.5).Float32(0.25).Uint64(1 << 40)
	want := []uint64{0xdead0000, 0xfffffffe, 0x3ff8000000000000, 0x3e800000, 1 << 40}
	if a.Len() != len(want) {
		t.Fatalf("Len = %d", a.Len())
	}
	for i, w := range want {
		if a.vals[i] != w {
			t.Errorf("slot %d = %#x, want %#x", i, a.vals[i], w)
		}
	}
	// The driver reads a 4-byte parameter from the start of its slot.
	if v := *(*int32)(unsafe.Pointer(&a.vals[1])); v != -2 {
		t.Errorf("int32 slot reads back %d", v)
	}
}

// The call mechanism is exercised on the C library: plain integer calls
// and calls with pinned Go memory and out-parameters, with no allocation.
func TestCallsDoNotAllocate(t *testing.T) {
	libc, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW)
	if err != nil {
		t.Skipf("no libc.so.6: %v", err)
	}
	labs, err := purego.Dlsym(libc, "labs")
	if err != nil {
		t.Fatal(err)
	}
	memcpy, err := purego.Dlsym(libc, "memcpy")
	if err != nil {
		t.Fatal(err)
	}
	if got := int64(ccall(labs, uintptr(0xFFFFFFFFFFFFFFF9))); got != 7 {
		t.Errorf("labs(-7) = %d", got)
	}
	// time(&t) stores its result through its first argument, the shape
	// outCall serves.
	timeFn, err := purego.Dlsym(libc, "time")
	if err != nil {
		t.Fatal(err)
	}
	if out, ret := outCall(timeFn); out == 0 || uint32(out) != ret {
		t.Errorf("time(&t): out-parameter %d, result %d", out, ret)
	}
	src := []uint64{0x1122334455667788}
	copyOut := func() uint64 {
		f := newFrame()
		defer f.release()
		f.call(memcpy, f.out(2), f.pin(unsafe.Pointer(&src[0])), 8)
		return f.outs[2]
	}
	if got := copyOut(); got != src[0] {
		t.Errorf("memcpy into an out-parameter gave %#x", got)
	}
	if n := testing.AllocsPerRun(200, func() { ccall(labs, 5) }); n != 0 {
		t.Errorf("ccall: %v allocations per call", n)
	}
	if n := testing.AllocsPerRun(200, func() { outCall(timeFn) }); n != 0 {
		t.Errorf("outCall: %v allocations per call", n)
	}
	if n := testing.AllocsPerRun(200, func() { copyOut() }); n != 0 {
		t.Errorf("frame call with a pin and an out-parameter: %v allocations per call", n)
	}
}
