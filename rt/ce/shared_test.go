package ce_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt/ce"
	"github.com/jdf2go/jdf2go/rt/ce/cetest"
)

// The invariants that must hold on every transport live in cetest; these tests run them on the
// in-process world. rt/ce/mpi runs the same functions under mpirun (invariant 29).

func world(opts ...ce.WorldOption) []ce.WorldOption { return opts }
func engine(opts ...ce.Option) []ce.Option          { return opts }

func TestInvariant1_DeviceManagerShifts(t *testing.T) {
	cetest.RunWorld(t, 2, world(ce.StrictMode()), nil, cetest.Invariant1)
}

func TestInvariant2_FunneledShiftsEveryone(t *testing.T) {
	cetest.RunWorld(t, 2, world(ce.StrictMode(), ce.EmulateLevel(ce.LevelFunneled)), nil, cetest.Invariant2)
}

func TestInvariant3_MultipleWorkersDirect(t *testing.T) {
	cetest.RunWorld(t, 2, world(ce.StrictMode()), nil, cetest.Invariant3)
}

func TestInvariant4_PathFixedForLife(t *testing.T) {
	for _, lvl := range []ce.Level{ce.LevelMultiple, ce.LevelFunneled} {
		t.Run(lvl.String(), func(t *testing.T) {
			cetest.RunWorld(t, 3, world(ce.EmulateLevel(lvl)), nil, cetest.Invariant4)
		})
	}
}

func TestInvariant5_FIFOPerCallerDestinationTag(t *testing.T) {
	cetest.RunWorld(t, 2, nil, nil, cetest.Invariant5)
}

func TestInvariant6_ReleasedExactlyOnce(t *testing.T) {
	cetest.RunWorld(t, 2, nil, engine(ce.Debug(true)), cetest.Invariant6)
}

func TestInvariant10_UnknownTagAndTagRange(t *testing.T) {
	cetest.RunWorld(t, 2, nil, engine(ce.Debug(true)), cetest.Invariant10)
}

func TestInvariant11_TooLargeAtSender(t *testing.T) {
	cetest.RunWorld(t, 2, nil, nil, cetest.Invariant11)
}

func TestInvariant12_TagInUseAndLateRegistration(t *testing.T) {
	cetest.RunWorld(t, 3, nil, nil, cetest.Invariant12)
}

func TestInvariant14_GetExactBytes(t *testing.T) {
	t.Run("immediate", func(t *testing.T) { cetest.RunWorld(t, 2, nil, nil, cetest.Invariant14) })
	t.Run("delayed-reordered", func(t *testing.T) {
		cetest.RunWorld(t, 3, world(ce.InjectDelay(0, 3*time.Millisecond)), nil, cetest.Invariant14)
	})
}

func TestInvariant15_RegistrationOutlivesRelease(t *testing.T) {
	cetest.RunWorld(t, 2, world(ce.InjectDelay(2*time.Millisecond, 5*time.Millisecond)), nil, cetest.Invariant15)
}

func TestInvariant19_CloseWithPendingOps(t *testing.T) {
	t.Run("drain", func(t *testing.T) {
		base := runtime.NumGoroutine()
		cetest.RunWorld(t, 2, nil, engine(ce.Debug(true)), func(t *testing.T, env *cetest.Env) {
			cetest.Invariant19(t, env)
		})
		waitGoroutines(t, base)
	})
	t.Run("deadline", testCloseDeadline)
}

func TestInvariant20_CloseIdempotent(t *testing.T) {
	cetest.RunWorld(t, 2, nil, nil, cetest.Invariant20)
}

func TestInvariant21_CallbacksNeverConcurrent(t *testing.T) {
	cetest.RunWorld(t, 3, nil, nil, cetest.Invariant21)
}

func TestInvariant22_ReplyingHandlersNoDeadlock(t *testing.T) {
	cetest.RunWorld(t, 2, nil, nil, cetest.Invariant22)
}

// waitGoroutines waits until the goroutine count is back to base.
func waitGoroutines(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, baseline %d:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(time.Millisecond)
	}
}
