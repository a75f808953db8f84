package sim

import (
	"errors"
	"fmt"
	"time"
)

// CopyKind is the direction of a copy, for fault injection.
type CopyKind uint8

// Copy directions.
const (
	HtoD CopyKind = iota
	DtoH
	DtoD
	Peer // from another simulated device's memory
)

func (k CopyKind) String() string {
	switch k {
	case HtoD:
		return "h2d"
	case DtoH:
		return "d2h"
	case Peer:
		return "peer"
	}
	return "d2d"
}

// Faults injects failures into a simulated device. Every field is optional;
// the functions may be called from any stream goroutine, so they must be
// safe for concurrent use.
type Faults struct {
	// Copy fails the enqueue of a copy on stream when it returns an error.
	Copy func(stream string, kind CopyKind) error
	// Record fails an event record.
	Record func(stream string, slot int) error
	// Query fails an event query (a device error, not "not ready").
	Query func(stream string, slot int) error
	// Exec fails an operation while it runs (label: "h2d", "d2h", "d2d",
	// "peer", "dgemm", "kernel:NAME", ...); the next event recorded after it
	// reports the error.
	Exec func(stream, label string) error
	// Delay slows an operation down (free-running mode).
	Delay func(stream, label string) time.Duration
}

// ErrLost is the error of a device that Lose made fail.
var ErrLost = errors.New("sim: device lost")

// Lose makes the device fail from now on, as a GPU that falls off the bus
// does: every copy, operation, event record and event query returns an error
// wrapping ErrLost and cause. It replaces any fault injection installed
// before.
func (d *Device) Lose(cause error) {
	err := fmt.Errorf("%w: %s: %w", ErrLost, d.name, cause)
	d.SetFaults(&Faults{
		Copy:   func(string, CopyKind) error { return err },
		Record: func(string, int) error { return err },
		Query:  func(string, int) error { return err },
		Exec:   func(string, string) error { return err },
	})
}
