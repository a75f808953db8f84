package rt

import (
	"fmt"
	"reflect"
	"sync/atomic"
)

// MaxDevices is the number of copy slots of a Data: slot 0 is the host, slots 1.. are devices
// numbered by rt/gpu.
const MaxDevices = 16

// Coherency is the state of one copy of a datum (docs/architecture.md decision 5).
type Coherency uint32

const (
	// Invalid: the copy's contents are stale and must be refreshed before use.
	Invalid Coherency = iota
	// Shared: the copy is up to date and other copies may be too.
	Shared
	// Owned: the copy is the newest; others may be stale and it must be written back.
	Owned
	// Exclusive: the copy is the only valid one.
	Exclusive
)

func (s Coherency) String() string {
	switch s {
	case Invalid:
		return "invalid"
	case Shared:
		return "shared"
	case Owned:
		return "owned"
	case Exclusive:
		return "exclusive"
	}
	return "Coherency(?)"
}

// Data is one logical datum (a tile, a vector block, an arena buffer) with a copy per device.
// Slot 0 holds the host copy. A Data is safe for concurrent use; the zero Data has no copies.
type Data struct {
	key    uint64
	copies [MaxDevices]atomic.Pointer[Copy]
}

// NewData returns a datum whose host copy holds value (a []float64 for tiles).
func NewData(key uint64, value any) *Data {
	d := &Data{key: key}
	c := &Copy{Value: value, data: d}
	c.state.Store(uint32(Exclusive))
	d.copies[0].Store(c)
	return d
}

// Host returns the host copy (slot 0), or nil.
func (d *Data) Host() *Copy { return d.copies[0].Load() }

// Copy is one copy of a datum on one device. Value is the host value ([]float64 by default,
// any Go type through arenas) or, for device copies, whatever rt/gpu stores there. Versions,
// and state are atomics, so a copy can be inspected from any goroutine.
type Copy struct {
	Value any

	data    *Data
	device  int
	version atomic.Uint64
	state   atomic.Uint32

	arena *Arena       // owner of a NEW buffer, nil otherwise
	refs  atomic.Int32 // flows holding an arena copy
	// fresh says that the copy was handed out for a NEW input (Task.BindNew), at
	// version born: until a task writes it, its content is undefined.
	fresh bool
	born  uint64
}

// bumpVersion records a write and returns the new version.
func (c *Copy) bumpVersion() uint64 { return c.version.Add(1) }

// Float64s returns the value as []float64, or nil when c is nil or holds another type.
func (c *Copy) Float64s() []float64 {
	if c == nil {
		return nil
	}
	v, _ := c.Value.([]float64)
	return v
}

// retain adds a reference to an arena copy (a no-op for other copies).
func (c *Copy) retain() {
	if c != nil && c.arena != nil {
		c.refs.Add(1)
	}
}

// release drops a reference taken by retain or held by a flow; the last one returns an arena
// copy to its arena.
func (c *Copy) release() {
	if c != nil && c.arena != nil {
		if n := c.refs.Add(-1); n == 0 {
			c.arena.put(c)
		} else if n < 0 {
			panic("rt: arena copy released more often than retained")
		}
	}
}

// writeBack copies the value of src into dst (a collection element) and bumps dst's version.
func writeBack(dst, src *Copy) error {
	switch d := dst.Value.(type) {
	case []float64:
		s, ok := src.Value.([]float64)
		if !ok {
			return fmt.Errorf("%w: %T into %T", ErrWriteBack, src.Value, dst.Value)
		}
		copy(d, s)
	default:
		dv, sv := reflect.ValueOf(dst.Value), reflect.ValueOf(src.Value)
		switch {
		case dv.Kind() == reflect.Slice && sv.Type() == dv.Type():
			reflect.Copy(dv, sv)
		case dv.Kind() == reflect.Pointer && sv.Type() == dv.Type() && !dv.IsNil() && !sv.IsNil():
			dv.Elem().Set(sv.Elem())
		default:
			return fmt.Errorf("%w: %T into %T", ErrWriteBack, src.Value, dst.Value)
		}
	}
	dst.bumpVersion()
	return nil
}
