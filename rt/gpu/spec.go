package gpu

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// EnvDevices is the environment variable that chooses the devices of a
// program: none | sim:N | cuda | auto (see ParseSpec).
const EnvDevices = "JDF2GO_GPUS"

// EnvBatching turns batch collection off for every device when set to off,
// 0, false or no (any case); rt's CPU rings follow it too.
const EnvBatching = "JDF2GO_BATCHING"

// batchingFromEnv reports whether EnvBatching leaves batch collection on.
func batchingFromEnv() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(EnvBatching))) {
	case "off", "0", "false", "no":
		return false
	}
	return true
}

// Spec is a parsed device specification.
type Spec struct {
	// Backend is "" (no device), "sim", "cuda" or "auto".
	Backend string
	// Count is the number of simulated devices for "sim"; for "cuda" and
	// "auto" every device the backend finds is used (Count 0).
	Count int
}

func (s Spec) String() string {
	switch s.Backend {
	case "":
		return "none"
	case "sim":
		return "sim:" + strconv.Itoa(s.Count)
	}
	return s.Backend
}

// ParseSpec parses a JDF2GO_GPUS value. "" and "none" mean no device;
// "sim:N" means N simulated devices (N >= 1; "sim" alone is sim:1); "cuda"
// every CUDA device; "auto" every CUDA device when the CUDA backend is linked
// and finds one, otherwise none. Case and surrounding blanks are ignored.
func ParseSpec(s string) (Spec, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	switch {
	case v == "" || v == "none":
		return Spec{}, nil
	case v == "cuda" || v == "auto":
		return Spec{Backend: v}, nil
	case v == "sim":
		return Spec{Backend: "sim", Count: 1}, nil
	case strings.HasPrefix(v, "sim:"):
		n, err := strconv.Atoi(v[len("sim:"):])
		if err != nil || n < 1 || n > 64 {
			return Spec{}, fmt.Errorf("%w: %s=%q: want sim:N with 1 <= N <= 64", ErrBadSpec, EnvDevices, s)
		}
		return Spec{Backend: "sim", Count: n}, nil
	}
	return Spec{}, fmt.Errorf("%w: %s=%q: want none, sim:N, cuda or auto", ErrBadSpec, EnvDevices, s)
}

// SpecFromEnv parses $JDF2GO_GPUS.
func SpecFromEnv() (Spec, error) { return ParseSpec(os.Getenv(EnvDevices)) }

// ProgramSpec is the device choice of a program with a -gpus flag: the flag's
// value s when it is set, else $JDF2GO_GPUS, else auto (every CUDA GPU when
// the CUDA backend is linked and finds one, none otherwise).
func ProgramSpec(s string) (Spec, error) {
	if s == "" {
		s = os.Getenv(EnvDevices)
	}
	if s == "" {
		s = "auto"
	}
	return ParseSpec(s)
}

// BackendFactory opens the backends of one family. Count is the number of
// devices it can open (it may probe the driver); Open opens device i.
type BackendFactory struct {
	Count func() (int, error)
	Open  func(i int) (Backend, error)
}

var backends struct {
	sync.Mutex
	byName map[string]BackendFactory
}

// RegisterBackend makes a backend family available to Open under name
// ("sim", "cuda"). Backend packages call it from their init function, so
// rt/gpu never imports them: a program links a backend with a blank import.
func RegisterBackend(name string, f BackendFactory) {
	backends.Lock()
	defer backends.Unlock()
	if backends.byName == nil {
		backends.byName = make(map[string]BackendFactory)
	}
	backends.byName[name] = f
}

// Backends lists the registered backend families.
func Backends() []string {
	backends.Lock()
	defer backends.Unlock()
	out := make([]string, 0, len(backends.byName))
	for n := range backends.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func lookupBackend(name string) (BackendFactory, bool) {
	backends.Lock()
	defer backends.Unlock()
	f, ok := backends.byName[name]
	return f, ok
}

// OpenBackends opens the backends a Spec asks for. "sim" and "cuda" fail with
// ErrNoBackend when the family is not linked in, and "cuda" fails with
// ErrNoDevice, wrapping the reason, when CUDA cannot be used or finds no
// device. "auto" then yields none, and says so in one log line (slog.Default)
// when the CUDA family is linked.
func OpenBackends(spec Spec) ([]Backend, error) {
	name, n := spec.Backend, spec.Count
	switch name {
	case "":
		return nil, nil
	case "auto":
		f, ok := lookupBackend("cuda")
		if !ok {
			return nil, nil
		}
		c, err := f.Count()
		if err != nil || c == 0 {
			// auto means "CUDA when it works": a machine without CUDA runs
			// on the CPU only.
			reason := "the driver finds no device"
			if err != nil {
				reason = err.Error()
			}
			slog.Info("gpu: auto: no CUDA device, running without GPUs", "reason", reason)
			return nil, nil
		}
		name, n = "cuda", c
	}
	f, ok := lookupBackend(name)
	if !ok {
		return nil, fmt.Errorf("%w: %q (link it with a blank import of rt/gpu/%s)", ErrNoBackend, name, name)
	}
	if n == 0 {
		c, err := f.Count()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNoDevice, err)
		}
		if c == 0 {
			return nil, fmt.Errorf("%w: %s: the driver finds no device", ErrNoDevice, name)
		}
		n = c
	}
	out := make([]Backend, 0, n)
	for i := range n {
		be, err := f.Open(i)
		if err != nil {
			for _, b := range out {
				_ = b.Close()
			}
			return nil, fmt.Errorf("gpu: open %s device %d: %w", name, i, err)
		}
		out = append(out, be)
	}
	return out, nil
}

// OpenDevices opens the devices of spec and wraps each into a Device with
// opts (WithIndex is set per device), linked with each other (Link).
func OpenDevices(spec Spec, opts ...Option) ([]*Device, error) {
	devs, err := openEach(spec, opts, NewDevice, (*Device).Close)
	if err != nil {
		return nil, err
	}
	if err := Link(devs...); err != nil {
		return nil, errors.Join(err, closeAll(devs, (*Device).Close))
	}
	return devs, nil
}

func closeAll[T any](xs []T, closeT func(T) error) error {
	var errs []error
	for _, x := range xs {
		errs = append(errs, closeT(x))
	}
	return errors.Join(errs...)
}

// openEach opens the backends of spec and wraps backend i with
// wrap(backend, opts..., WithIndex(i)); on a failure it closes what it
// opened and the backends not wrapped yet.
func openEach[T any](spec Spec, opts []Option, wrap func(Backend, ...Option) (T, error), closeT func(T) error) ([]T, error) {
	bes, err := OpenBackends(spec)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(bes))
	for i, be := range bes {
		v, err := wrap(be, append(opts[:len(opts):len(opts)], WithIndex(i))...)
		if err != nil {
			for _, o := range out {
				_ = closeT(o)
			}
			for _, b := range bes[i:] {
				_ = b.Close()
			}
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
