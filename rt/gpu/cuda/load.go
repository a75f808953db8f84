package cuda

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/ebitengine/purego"
)

// ErrUnavailable is wrapped by every error that means CUDA cannot be used
// in this process: a library or an entry point is missing, or the driver
// finds no usable device.
var ErrUnavailable = errors.New("cuda: CUDA is not available")

// LibraryPathEnv names extra folders (colon-separated) to search for the
// CUDA libraries after the loader's own search.
const LibraryPathEnv = "JDF2GO_CUDA_LIBRARY_PATH"

// library is one shared object, opened on first use.
type library struct {
	what  string   // for messages: "CUDA driver", "cuBLAS", …
	names []string // sonames, preferred first
	// deps are sonames (glob patterns) loaded first from the folder where
	// the library is found, so that a library found outside the loader's
	// path still resolves its own dependencies.
	deps []string

	open func() (opened, error)
}

// opened is a loaded library: its handle and the file it came from.
type opened struct {
	handle uintptr
	path   string
}

func newLibrary(what string, names []string, deps ...string) *library {
	l := &library{what: what, names: names, deps: deps}
	l.open = sync.OnceValues(l.dlopen)
	return l
}

var (
	libDriver   = newLibrary("CUDA driver", []string{"libcuda.so.1"})
	libCublas   = newLibrary("cuBLAS", []string{"libcublas.so.13", "libcublas.so.12"}, "libcublasLt.so.*")
	libCusolver = newLibrary("cuSOLVER", []string{"libcusolver.so.12", "libcusolver.so.13", "libcusolver.so.11"},
		"libcublasLt.so.*", "libcublas.so.*", "libnvJitLink.so.*", "libcusparse.so.*")
	libNvrtc = newLibrary("NVRTC", []string{"libnvrtc.so.13", "libnvrtc.so.12"}, "libnvrtc-builtins.so.*")
)

// searchDirs are the folders tried after the loader's own search.
func searchDirs() []string {
	var dirs []string
	if v := os.Getenv(LibraryPathEnv); v != "" {
		dirs = append(dirs, filepath.SplitList(v)...)
	}
	for _, env := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if v := os.Getenv(env); v != "" {
			dirs = append(dirs, filepath.Join(v, "lib64"), filepath.Join(v, "lib"))
		}
	}
	return append(dirs,
		"/usr/local/cuda/lib64",
		"/usr/local/cuda/targets/x86_64-linux/lib",
		"/usr/local/nvidia/lib64",
		"/usr/lib/x86_64-linux-gnu",
		"/usr/lib64",
	)
}

const dlflags = purego.RTLD_NOW | purego.RTLD_GLOBAL

func (l *library) dlopen() (opened, error) {
	var tried []string
	for _, name := range l.names {
		h, err := purego.Dlopen(name, dlflags)
		if err == nil {
			return opened{h, name}, nil
		}
		tried = append(tried, err.Error())
	}
	for _, dir := range searchDirs() {
		for _, name := range l.names {
			path := filepath.Join(dir, name)
			if _, err := os.Stat(path); err != nil {
				continue
			}
			for _, dep := range l.deps {
				matches, _ := filepath.Glob(filepath.Join(dir, dep))
				for _, m := range matches {
					// Best effort: a dependency that fails here makes the
					// library's own dlopen below report the real cause.
					_, _ = purego.Dlopen(m, dlflags)
				}
			}
			h, err := purego.Dlopen(path, dlflags)
			if err == nil {
				return opened{h, path}, nil
			}
			tried = append(tried, err.Error())
		}
	}
	return opened{}, fmt.Errorf("%w: %s library not found (%s)", ErrUnavailable, l.what, strings.Join(tried, "; "))
}

// symbol is one entry point to resolve: the first of names that the library
// exports is stored in *fn.
type symbol struct {
	fn    *uintptr
	names []string
}

func sym(fn *uintptr, names ...string) symbol { return symbol{fn, names} }

// resolve opens l and fills every symbol of syms.
func (l *library) resolve(syms []symbol) error {
	lib, err := l.open()
	if err != nil {
		return err
	}
	for _, s := range syms {
		var lastErr error
		for _, name := range s.names {
			if *s.fn, lastErr = purego.Dlsym(lib.handle, name); lastErr == nil {
				symbolNames.Store(*s.fn, name)
				break
			}
		}
		if lastErr != nil {
			return fmt.Errorf("%w: %s: %s: %v", ErrUnavailable, lib.path, strings.Join(s.names, " or "), lastErr)
		}
	}
	return nil
}

// LibraryPath is the file loaded for the driver, cuBLAS, cuSOLVER or NVRTC
// ("driver", "cublas", "cusolver", "nvrtc"), loading it if needed, or ""
// when it cannot be loaded. For logs and benchmark reports.
func LibraryPath(which string) string {
	var l *library
	switch which {
	case "driver":
		l = libDriver
	case "cublas":
		l = libCublas
	case "cusolver":
		l = libCusolver
	case "nvrtc":
		l = libNvrtc
	default:
		return ""
	}
	lib, err := l.open()
	if err != nil {
		return ""
	}
	return lib.path
}
