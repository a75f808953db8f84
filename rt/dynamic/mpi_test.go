//go:build mpi

package dynamic_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt/remote"
)

// TestMPIRanks runs under mpirun, one rank per process (make test-mpi):
//
//	go test -tags mpi -run TestMPI -exec "mpirun -np 3" ./rt/dynamic/
//
// Random programs with every task on a random rank (their 8-byte data travel eager), each
// rank checking the reads of the tasks it ran and rank 0 the final data against sequential
// execution; then the tiled C = 2·(A·B) of TestRanksTiledGEMM (its 288-byte tiles travel by
// Get, above the 64-byte eager threshold), each rank checking its tiles of C after the flush.
func TestMPIRanks(t *testing.T) {
	if os.Getenv("OMPI_COMM_WORLD_SIZE") == "" && os.Getenv("PMI_SIZE") == "" {
		t.Skip("not started by mpirun")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const programs, ntasks, mt, nb = 6, 200, 4, 6
	err := remote.Run(ctx, remote.Config{Workers: 2, Remote: []remote.Option{remote.Eager(64)}},
		func(ctx context.Context, j *remote.Job) error {
			// A wrong result is kept and reported at the end: a rank that returned early would
			// leave its peers waiting for its part of the next graph.
			var wrong []error
			for s := 0; s < programs; s++ {
				r := rand.New(rand.NewPCG(uint64(s), uint64(j.Size)))
				p := randomProgram(r, ntasks)
				places := make([]int, ntasks)
				for i := range places {
					places[i] = r.IntN(j.Size)
				}
				got := result{reads: make([][]int64, ntasks)}
				if err := p.onRanks(ctx, j, places, []int{1, 7, 1000}[s%3], &got); err != nil {
					return fmt.Errorf("program %d: %w", s, err)
				}
				want := p.sequential()
				for i := range want.reads {
					if places[i] == j.Rank && !slices.Equal(got.reads[i], want.reads[i]) {
						wrong = append(wrong, fmt.Errorf("program %d: task %d read %v, sequentially %v", s, i, got.reads[i], want.reads[i]))
						break
					}
				}
				if j.Rank == 0 && !slices.Equal(got.final, want.final) {
					wrong = append(wrong, fmt.Errorf("program %d: final data %v, sequentially %v", s, got.final, want.final))
				}
			}
			p, q := 1, j.Size
			if j.Size%2 == 0 {
				p, q = 2, j.Size/2
			}
			bad, err := gemmOnRanks(ctx, j, p, q, mt, nb, gemmRef(mt*nb))
			if err != nil {
				return err
			}
			if len(bad) > 0 {
				wrong = append(wrong, fmt.Errorf("%v", bad))
			}
			if s := j.Node.Stats(); j.Size > 1 && s.Eager+s.Gets == 0 && s.Received == 0 {
				wrong = append(wrong, fmt.Errorf("rank %d sent and received nothing", j.Rank))
			}
			return errors.Join(wrong...)
		})
	if err != nil {
		t.Fatal(err)
	}
}
