package cuda

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ebitengine/purego"
)

// How a call reaches C.
//
// purego.SyscallN takes its arguments as a variadic ...uintptr; written
// inline, that array is allocated on every call. A frame is a pooled heap
// block that holds the argument vector instead, plus room for
// out-parameters and references to the Go memory the call reads or writes.
//
// Go memory given to C must not move and must stay alive during the call.
// The Go heap does not move, but a goroutine stack can, and an address saved
// as a uintptr does not keep anything alive. So every Go pointer that a call
// passes goes through frame.pin: storing it in the (heap) frame makes the
// compiler put the pointee on the heap, and keeps it reachable until
// release. Out-parameters live in the frame itself.

// maxArgs covers the longest C signature bound here
// (cublasDgemmStridedBatched takes 18 arguments).
const maxArgs = 18

type frame struct {
	argv [maxArgs]uintptr
	outs [4]uint64
	pins [4]unsafe.Pointer
	npin int
}

var framePool = sync.Pool{New: func() any { return new(frame) }}

func newFrame() *frame { return framePool.Get().(*frame) }

// out returns the address of out-parameter slot i.
func (f *frame) out(i int) uintptr {
	f.outs[i] = 0
	return uintptr(unsafe.Pointer(&f.outs[i]))
}

// pin keeps the Go memory at p on the heap and alive until release, and
// returns its address for C.
func (f *frame) pin(p unsafe.Pointer) uintptr {
	f.pins[f.npin] = p
	f.npin++
	return uintptr(p)
}

// call calls the C function fn with args and returns its raw result.
func (f *frame) call(fn uintptr, args ...uintptr) uintptr {
	observe(fn)
	n := copy(f.argv[:], args)
	r, _, _ := purego.SyscallN(fn, f.argv[:n]...)
	return r
}

// release drops the pins and returns the frame to the pool; the frame must
// not be used afterwards.
func (f *frame) release() {
	clear(f.pins[:f.npin])
	f.npin = 0
	framePool.Put(f)
}

// ccall calls a C function whose arguments are plain integers (handles,
// sizes, device pointers): no Go memory is involved.
func ccall(fn uintptr, args ...uintptr) uintptr {
	f := newFrame()
	r := f.call(fn, args...)
	f.release()
	return r
}

// outCall calls fn with the address of an out-parameter followed by args
// (the shape of every "create" or "get" entry point) and returns what C
// stored there, with the call's status.
func outCall(fn uintptr, args ...uintptr) (out uint64, st uint32) {
	observe(fn)
	f := newFrame()
	f.argv[0] = f.out(0)
	n := copy(f.argv[1:], args)
	r, _, _ := purego.SyscallN(fn, f.argv[:n+1]...)
	out = f.outs[0]
	f.release()
	return out, status(r)
}

// status is the 32-bit enum result of a C call; the upper half of the
// return register is not defined for it.
func status(r uintptr) uint32 { return uint32(r) }

// cPointer turns an address that C returned (C memory, never Go memory)
// into a pointer. Converting through memory keeps vet's unsafeptr check,
// which is about Go pointers hidden in integers, quiet.
func cPointer(addr uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&addr)) }

// cString copies the NUL-terminated string at p, which is C memory (a
// library's static message table), into a Go string.
func cString(p uintptr) string {
	if p == 0 {
		return ""
	}
	ptr := cPointer(p)
	n := 0
	for *(*byte)(unsafe.Add(ptr, n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(ptr), n))
}

// cBytes is s as a NUL-terminated byte string for C.
func cBytes(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}

// The call observer is a debugging hook: when set, it sees the name of
// every C entry point before the call, on the calling goroutine. Tests use it
// to check which OS thread each CUDA call of a management episode runs on.
var callObserver atomic.Pointer[func(name string)]

// symbolNames maps resolved entry points back to their names, for the
// observer.
var symbolNames sync.Map // uintptr -> string

// SetCallObserver installs fn as the call observer (nil removes it) and
// returns the previous one. fn runs before every call into the CUDA
// libraries, on the calling goroutine, and must not call into them itself.
// It costs one atomic load per call when unset.
func SetCallObserver(fn func(name string)) (previous func(name string)) {
	var p *func(string)
	if fn != nil {
		p = &fn
	}
	if old := callObserver.Swap(p); old != nil {
		return *old
	}
	return nil
}

func observe(fn uintptr) {
	if o := callObserver.Load(); o != nil {
		name, _ := symbolNames.Load(fn)
		s, _ := name.(string)
		(*o)(s)
	}
}
