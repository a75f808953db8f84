package cuda

import (
	"strings"
	"sync"
	"unsafe"
)

type nvrtcAPI struct {
	version, createProgram, destroyProgram, compileProgram uintptr
	getPTXSize, getPTX, getCUBINSize, getCUBIN             uintptr
	getProgramLogSize, getProgramLog, getErrorString       uintptr
}

var nvrtcSymbols = sync.OnceValues(func() (*nvrtcAPI, error) {
	n := &nvrtcAPI{}
	err := libNvrtc.resolve([]symbol{
		sym(&n.version, "nvrtcVersion"),
		sym(&n.createProgram, "nvrtcCreateProgram"),
		sym(&n.destroyProgram, "nvrtcDestroyProgram"),
		sym(&n.compileProgram, "nvrtcCompileProgram"),
		sym(&n.getPTXSize, "nvrtcGetPTXSize"),
		sym(&n.getPTX, "nvrtcGetPTX"),
		sym(&n.getCUBINSize, "nvrtcGetCUBINSize"),
		sym(&n.getCUBIN, "nvrtcGetCUBIN"),
		sym(&n.getProgramLogSize, "nvrtcGetProgramLogSize"),
		sym(&n.getProgramLog, "nvrtcGetProgramLog"),
		sym(&n.getErrorString, "nvrtcGetErrorString"),
	})
	if err != nil {
		return nil, err
	}
	return n, nil
})

// NVRTCVersion is the version of the loaded NVRTC (13, 0 for CUDA 13.0).
func NVRTCVersion() (major, minor int, err error) {
	n, err := nvrtcSymbols()
	if err != nil {
		return 0, 0, err
	}
	f := newFrame()
	defer f.release()
	if err := nvrtcError("nvrtcVersion", status(f.call(n.version, f.out(0), f.out(1))), ""); err != nil {
		return 0, 0, err
	}
	return int(int32(f.outs[0])), int(int32(f.outs[1])), nil
}

// Program is an NVRTC program: CUDA C++ source compiled at run time into
// PTX or CUBIN. A Program is used by one goroutine at a time.
type Program struct {
	p   uintptr
	api *nvrtcAPI
}

// NewProgram loads NVRTC (on first use) and creates a program from source;
// name is the file name used in compiler messages.
func NewProgram(src, name string) (*Program, error) {
	n, err := nvrtcSymbols()
	if err != nil {
		return nil, err
	}
	csrc, cname := cBytes(src), cBytes(name)
	f := newFrame()
	defer f.release()
	r := f.call(n.createProgram, f.out(0), f.pin(unsafe.Pointer(&csrc[0])), f.pin(unsafe.Pointer(&cname[0])), 0, 0, 0)
	if err := nvrtcError("nvrtcCreateProgram", status(r), ""); err != nil {
		return nil, err
	}
	return &Program{p: uintptr(f.outs[0]), api: n}, nil
}

// Destroy releases the program.
func (p *Program) Destroy() error {
	if p.p == 0 {
		return nil
	}
	f := newFrame()
	defer f.release()
	f.outs[0] = uint64(p.p)
	r := f.call(p.api.destroyProgram, uintptr(unsafe.Pointer(&f.outs[0])))
	p.p = 0
	return nvrtcError("nvrtcDestroyProgram", status(r), "")
}

// Compile compiles the program with NVRTC options, e.g.
// "--gpu-architecture=sm_90" (CUBIN and PTX) or "--gpu-architecture=compute_90"
// (PTX only). A compilation error carries the compiler log in its Desc.
func (p *Program) Compile(opts ...string) error {
	// The option strings go into one buffer followed by the array of
	// pointers into it; both are pinned for the call.
	size := 0
	for _, o := range opts {
		size += len(o) + 1
	}
	buf := make([]byte, max(size, 1))
	ptrs := make([]uintptr, max(len(opts), 1))
	f := newFrame()
	defer f.release()
	base := f.pin(unsafe.Pointer(&buf[0]))
	off := 0
	for i, o := range opts {
		copy(buf[off:], o)
		ptrs[i] = base + uintptr(off)
		off += len(o) + 1
	}
	r := f.call(p.api.compileProgram, p.p, uintptr(len(opts)), f.pin(unsafe.Pointer(&ptrs[0])))
	if st := status(r); st != 0 {
		log, _ := p.Log()
		return nvrtcError("nvrtcCompileProgram", st, strings.TrimSpace(log))
	}
	return nil
}

// output fetches one of the program's results (log, PTX or CUBIN) with its
// size query and its copy function.
func (p *Program) output(sizeFn, getFn uintptr, sizeName, getName string) ([]byte, error) {
	f := newFrame()
	defer f.release()
	if err := nvrtcError(sizeName, status(f.call(sizeFn, p.p, f.out(0))), ""); err != nil {
		return nil, err
	}
	size := int(f.outs[0])
	if size == 0 {
		return nil, nil
	}
	out := make([]byte, size)
	if err := nvrtcError(getName, status(f.call(getFn, p.p, f.pin(unsafe.Pointer(&out[0])))), ""); err != nil {
		return nil, err
	}
	return out, nil
}

// Log is the compiler's log of the last Compile.
func (p *Program) Log() (string, error) {
	b, err := p.output(p.api.getProgramLogSize, p.api.getProgramLog, "nvrtcGetProgramLogSize", "nvrtcGetProgramLog")
	return strings.TrimRight(string(b), "\x00"), err
}

// PTX is the compiled PTX, NUL-terminated as ModuleLoadData wants it.
func (p *Program) PTX() ([]byte, error) {
	return p.output(p.api.getPTXSize, p.api.getPTX, "nvrtcGetPTXSize", "nvrtcGetPTX")
}

// CUBIN is the compiled machine code; it exists only when the program was
// compiled for a real architecture (sm_XX, not compute_XX).
func (p *Program) CUBIN() ([]byte, error) {
	return p.output(p.api.getCUBINSize, p.api.getCUBIN, "nvrtcGetCUBINSize", "nvrtcGetCUBIN")
}

// NVRTCErrorString is NVRTC's own text for an nvrtcResult, for checking
// this package's name table against the library.
func NVRTCErrorString(code int) (string, error) {
	n, err := nvrtcSymbols()
	if err != nil {
		return "", err
	}
	return cString(ccall(n.getErrorString, uintptr(code))), nil
}

// Compile compiles CUDA C++ source with NVRTC and returns the image to
// load: the CUBIN when the options name a real architecture, the PTX
// otherwise.
func Compile(src, name string, opts ...string) ([]byte, error) {
	p, err := NewProgram(src, name)
	if err != nil {
		return nil, err
	}
	defer p.Destroy()
	if err := p.Compile(opts...); err != nil {
		return nil, err
	}
	cubin, err := p.CUBIN()
	if err == nil && len(cubin) > 0 {
		return cubin, nil
	}
	return p.PTX()
}
