//go:build !mpi

package remote

import (
	"context"

	"github.com/jdf2go/jdf2go/rt/ce"
)

// mpiTransport is the MPI transport when the binary is built with the mpi tag and runs
// under mpirun; this build has none.
func mpiTransport() (ce.Transport, bool) { return nil, false }

func runMPI(context.Context, Config, ce.Transport, func(context.Context, *Job) error) error {
	panic("remote: no MPI in this build")
}
