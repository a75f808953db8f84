package main

import (
	"syscall"
	"time"
	"unsafe"
)

// threadTime returns the CPU time of the calling OS thread, which does not advance while the
// thread waits for a core: a kernel call timed with it on a locked thread is not lengthened by
// other processes.
func threadTime() time.Duration {
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return time.Duration(time.Now().UnixNano())
	}
	return time.Duration(ts.Nano())
}
