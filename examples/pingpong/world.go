//go:build !mpi

package main

import (
	"time"

	"github.com/jdf2go/jdf2go/rt/ce"
)

// worldBackend runs both ranks in this process.
type worldBackend struct{ w *ce.World }

func newBackend() (backend, error) { return worldBackend{ce.NewWorld(2)}, nil }

func (worldBackend) name() string { return "in-process world" }

func (b worldBackend) transports() []ce.Transport {
	return []ce.Transport{b.w.Transport(0), b.w.Transport(1)}
}

// raw: there is no lower layer to compare with in-process.
func (worldBackend) raw(*ce.Engine) func(int, int) (time.Duration, error) { return nil }

func (worldBackend) first(*ce.Engine) ce.Rank { return 0 }
