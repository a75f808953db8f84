//go:build mpi

package remote

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jdf2go/jdf2go/rt/ce"
	"github.com/jdf2go/jdf2go/rt/ce/mpi"
)

// mpiTransport returns the MPI transport when this process was started by mpirun (Open
// MPI's or a PMI launcher's environment is set).
func mpiTransport() (ce.Transport, bool) {
	for _, v := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"} {
		if os.Getenv(v) != "" {
			level := ce.LevelMultiple
			if s := os.Getenv("JDF2GO_CE_MPI_LEVEL"); s != "" {
				if l, err := ce.ParseLevel(s); err == nil {
					level = l
				}
			}
			// Messages carry an eager tile of up to 64 KiB plus the activation header.
			return mpi.New(mpi.ThreadLevel(level), mpi.MaxAM(80<<10)), true
		}
	}
	return nil, false
}

// runMPI runs this process's rank of an MPI job.
func runMPI(ctx context.Context, cfg Config, t ce.Transport, fn func(context.Context, *Job) error) error {
	var node atomic.Pointer[Node]
	e := ce.New(t, nodeHooks(cfg.CE, &node)...)
	workers := cfg.Workers
	if workers <= 0 {
		// The cores are shared by the ranks that mpirun placed on this node.
		local := 1
		for _, v := range []string{"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"} {
			if n, err := strconv.Atoi(os.Getenv(v)); err == nil && n > 0 {
				local = n
				break
			}
		}
		workers = max(runtime.GOMAXPROCS(0)/local, 1)
	}
	err := runRank(ctx, cfg, e, &node, nil, workers, fn)
	if err != nil {
		err = fmt.Errorf("rank %d: %w", e.Rank(), err)
	}
	timeout := cfg.CloseTimeout
	if err != nil {
		// Peers may wait for this rank: close briefly and exit; mpirun ends the job, or,
		// with --enable-recovery, the peers' heartbeats find this rank gone.
		timeout = time.Second
	}
	cctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cerr := e.Close(cctx)
	if cerr == nil {
		cerr = balanced(int(e.Rank()), e)
	}
	if err == nil && cerr == nil && e.Rank() == 0 {
		// Close is collective: every rank has written its trace. The files are where rank 0
		// can read them when the ranks share a file system.
		if merr := mergeTraces(cfg.Trace, e.Size()); merr != nil {
			fmt.Fprintln(os.Stderr, "remote: traces not merged:", merr)
		}
	}
	return errors.Join(err, cerr)
}
