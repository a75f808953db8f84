package driver

import (
	"fmt"
	"sort"
	"sync"
)

// Driver opens the devices of one backend family.
type Driver interface {
	// Count returns the number of devices the family can open (it may probe
	// the hardware); an error says why the family cannot be used at all.
	Count() (int, error)
	// Open opens device i, 0 <= i.
	Open(i int) (Backend, error)
}

var drivers struct {
	sync.Mutex
	byName map[string]Driver
}

// Register makes a backend family openable under name, which a device
// specification then names (gpu.Open("sim:2")); names are lower case.
// Backend packages call it from their init function, so rt/gpu never
// imports them: a program links a backend with a blank import. A second
// Register of a name replaces the first.
func Register(name string, d Driver) {
	drivers.Lock()
	defer drivers.Unlock()
	if drivers.byName == nil {
		drivers.byName = make(map[string]Driver)
	}
	drivers.byName[name] = d
}

// Lookup returns the family registered under name.
func Lookup(name string) (Driver, bool) {
	drivers.Lock()
	defer drivers.Unlock()
	d, ok := drivers.byName[name]
	return d, ok
}

// Drivers lists the registered family names, sorted.
func Drivers() []string {
	drivers.Lock()
	defer drivers.Unlock()
	out := make([]string, 0, len(drivers.byName))
	for n := range drivers.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Instances is a Driver over backends that are already open, for tests and
// benchmarks that configure a backend beyond what a specification says
// (fault injection, latency): its Count is len(bes), and Open(i) hands out
// bes[i], which the device then owns. Register it under a name of its own
// and open it with that name.
func Instances(bes ...Backend) Driver { return instances(bes) }

type instances []Backend

func (s instances) Count() (int, error) { return len(s), nil }

func (s instances) Open(i int) (Backend, error) {
	if i < 0 || i >= len(s) {
		return nil, fmt.Errorf("%w: device %d of %d", ErrBadArgument, i, len(s))
	}
	return s[i], nil
}
