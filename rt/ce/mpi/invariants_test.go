//go:build mpi

package mpi_test

import (
	"testing"

	"github.com/jdf2go/jdf2go/rt/ce"
	"github.com/jdf2go/jdf2go/rt/ce/cetest"
)

// TestInvariant29_SharedSuiteUnderMPI is invariant 29 of docs/ce.md, "Invariants": under mpirun
// (np 2 and 4) invariants 1-6, 10-12, 14-15 and 19-22 hold, and in FUNNELED mode
// MPI_Is_thread_main is true at every transport call. The invariants are the cetest functions the
// in-process tests run too. 19 and 20 close the Engine, so they come last.
func TestInvariant29_SharedSuiteUnderMPI(t *testing.T) {
	suite := []struct {
		name string
		fn   func(*testing.T, *cetest.Env)
	}{
		{"Invariant1_DeviceManagerShifts", cetest.Invariant1},
		{"Invariant2_FunneledShiftsEveryone", cetest.Invariant2},
		{"Invariant3_MultipleWorkersDirect", cetest.Invariant3},
		{"Invariant4_PathFixedForLife", cetest.Invariant4},
		{"Invariant5_FIFOPerCallerDestinationTag", cetest.Invariant5},
		{"Invariant6_ReleasedExactlyOnce", cetest.Invariant6},
		{"Invariant10_UnknownTagAndTagRange", cetest.Invariant10},
		{"Invariant11_TooLargeAtSender", cetest.Invariant11},
		{"Invariant12_TagInUseAndLateRegistration", cetest.Invariant12},
		{"Invariant14_GetExactBytes", cetest.Invariant14},
		{"Invariant15_RegistrationOutlivesRelease", cetest.Invariant15},
		{"Invariant21_CallbacksNeverConcurrent", cetest.Invariant21},
		{"Invariant22_ReplyingHandlersNoDeadlock", cetest.Invariant22},
		{"Invariant19_CloseWithPendingOps", cetest.Invariant19},
		{"Invariant20_CloseIdempotent", cetest.Invariant20},
	}
	t.Logf("rank %d of %d, MPI thread level %v", engine.Rank(), engine.Size(), level)
	for _, tc := range suite {
		t.Run(tc.name, func(t *testing.T) {
			before := transport.ThreadMainViolations()
			tc.fn(t, env)
			if level == ce.LevelFunneled {
				if d := transport.ThreadMainViolations() - before; d != 0 {
					t.Errorf("rank %d: %d MPI calls off the main thread under FUNNELED", engine.Rank(), d)
				}
			}
		})
	}
}
