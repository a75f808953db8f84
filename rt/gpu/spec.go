package gpu

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/jdf2go/jdf2go/rt/gpu/driver"
)

// EnvDevices is the environment variable that chooses the devices of a
// program when Open is given no specification.
const EnvDevices = "JDF2GO_GPUS"

// EnvBatching turns batch collection off for every device when set to off,
// 0, false or no (any case); rt's CPU rings follow it too.
const EnvBatching = "JDF2GO_BATCHING"

// maxDevices bounds the count of a specification.
const maxDevices = 64

// batchingFromEnv reports whether EnvBatching leaves batch collection on.
func batchingFromEnv() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(EnvBatching))) {
	case "off", "0", "false", "no":
		return false
	}
	return true
}

// Open opens the devices that spec names, for rt, linked with each other
// (a device copies data from the others' memory where the backends allow
// it); pass them to rt.New with rt.Devices(RTDevices(devs)...) and close
// them after the rt Context. opts configure every device (streams, events,
// memory limit, logger); each device's index is its position.
//
// spec is one of
//
//	none          no device
//	auto          every CUDA device when the CUDA backend is linked and
//	              finds one, none otherwise (one log line says why)
//	NAME          every device of the backend family NAME ("cuda"; "sim"
//	              is one simulated device)
//	NAME:N        the first N devices of NAME, 1 <= N <= 64 ("sim:4")
//
// Case and surrounding blanks are ignored. An empty spec means
// $JDF2GO_GPUS, and auto when that is empty too: a program passes its -gpus
// flag as is. A malformed spec fails with ErrBadSpec, a family that is not
// linked into the program (import rt/gpu/sim or rt/gpu/cuda; see
// driver.Register) with ErrNoBackend, and a named family that finds no
// device, or cannot be used at all, with ErrNoDevice wrapping the reason.
func Open(spec string, opts ...Option) ([]*RTDevice, error) {
	if spec == "" {
		spec = os.Getenv(EnvDevices)
	}
	if spec == "" {
		spec = "auto"
	}
	s, err := parseSpec(spec)
	if err != nil {
		return nil, err
	}
	devs, err := openEach(s, opts, newRTDevice, (*RTDevice).Close)
	if err != nil {
		return nil, err
	}
	inner := make([]*Device, len(devs))
	for i, d := range devs {
		inner[i] = d.d
	}
	if err := link(inner...); err != nil {
		return nil, errors.Join(err, closeAll(devs, (*RTDevice).Close))
	}
	return devs, nil
}

// deviceSpec is a parsed device specification.
type deviceSpec struct {
	// name is "" (no device), "auto" or a backend family.
	name string
	// count is the number of devices; 0 means every device of the family.
	count int
}

func (s deviceSpec) String() string {
	switch {
	case s.name == "":
		return "none"
	case s.count > 0:
		return s.name + ":" + strconv.Itoa(s.count)
	}
	return s.name
}

// parseSpec parses a specification (see Open).
func parseSpec(s string) (deviceSpec, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	bad := func() (deviceSpec, error) {
		return deviceSpec{}, fmt.Errorf("%w: %q: want none, auto, NAME or NAME:N with 1 <= N <= %d", ErrBadSpec, s, maxDevices)
	}
	switch v {
	case "", "none":
		return deviceSpec{}, nil
	case "auto":
		return deviceSpec{name: v}, nil
	}
	name, count, hasCount := strings.Cut(v, ":")
	if !validName(name) || name == "auto" || name == "none" {
		return bad()
	}
	if !hasCount {
		return deviceSpec{name: name}, nil
	}
	n, err := strconv.Atoi(count)
	if err != nil || n < 1 || n > maxDevices {
		return bad()
	}
	return deviceSpec{name: name, count: n}, nil
}

// validName accepts the names driver.Register documents: lower-case
// letters, digits, '-' and '_', starting with a letter.
func validName(s string) bool {
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z':
		case i > 0 && (r >= '0' && r <= '9' || r == '-' || r == '_'):
		default:
			return false
		}
	}
	return s != ""
}

// openBackends opens the backends that spec asks for.
func openBackends(spec deviceSpec) ([]driver.Backend, error) {
	name, n := spec.name, spec.count
	switch name {
	case "":
		return nil, nil
	case "auto":
		f, ok := driver.Lookup("cuda")
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
	f, ok := driver.Lookup(name)
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
	out := make([]driver.Backend, 0, n)
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

func closeAll[T any](xs []T, closeT func(T) error) error {
	var errs []error
	for _, x := range xs {
		errs = append(errs, closeT(x))
	}
	return errors.Join(errs...)
}

// openEach opens the backends of spec and wraps backend i with
// wrap(backend, opts..., withIndex(i)); on a failure it closes what it
// opened and the backends not wrapped yet.
func openEach[T any](spec deviceSpec, opts []Option, wrap func(driver.Backend, ...Option) (T, error), closeT func(T) error) ([]T, error) {
	bes, err := openBackends(spec)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(bes))
	for i, be := range bes {
		v, err := wrap(be, append(opts[:len(opts):len(opts)], withIndex(i))...)
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
