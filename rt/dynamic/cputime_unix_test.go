//go:build unix

package dynamic_test

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user and system) the process has used so far: on a shared
// machine it moves less than the wall time with the load of other processes.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
