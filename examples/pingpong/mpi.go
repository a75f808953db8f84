//go:build mpi

package main

import (
	"time"

	"github.com/jdf2go/jdf2go/rt/ce"
	"github.com/jdf2go/jdf2go/rt/ce/mpi"
)

// mpiBackend is this process's rank. MPI_THREAD_MULTIPLE lets the raw reference run beside
// the Engine.
type mpiBackend struct{ t *mpi.Transport }

func newBackend() (backend, error) {
	return mpiBackend{mpi.New(mpi.ThreadLevel(ce.LevelMultiple))}, nil
}

func (mpiBackend) name() string { return "Open MPI (one rank per process)" }

func (b mpiBackend) transports() []ce.Transport { return []ce.Transport{b.t} }

func (b mpiBackend) raw(e *ce.Engine) func(int, int) (time.Duration, error) {
	return func(size, iters int) (time.Duration, error) {
		if e.Rank() > 1 {
			return 0, nil
		}
		return b.t.RawPingPong(e.Rank()^1, size, iters)
	}
}

func (mpiBackend) first(e *ce.Engine) ce.Rank { return e.Rank() }
