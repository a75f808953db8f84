package rt

import (
	"syscall"
	"unsafe"
)

// cpuMask is a CPU set as sched_setaffinity takes it (1024 CPUs).
type cpuMask [16]uint64

// allowedCPUs returns the CPUs this process may run on (taskset, cgroups), in order.
func allowedCPUs() ([]int, error) {
	var m cpuMask
	_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, 0, unsafe.Sizeof(m), uintptr(unsafe.Pointer(&m)))
	if e != 0 {
		return nil, e
	}
	var cpus []int
	for i := range len(m) * 64 {
		if m[i/64]&(1<<(i%64)) != 0 {
			cpus = append(cpus, i)
		}
	}
	return cpus, nil
}

// pinThread binds the calling OS thread to cpu. The caller has locked its goroutine to the
// thread (runtime.LockOSThread) and never unlocks it, so the thread exits with the goroutine
// instead of carrying the binding back into Go's pool.
func pinThread(cpu int) error {
	var m cpuMask
	m[cpu/64] |= 1 << (cpu % 64)
	_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, unsafe.Sizeof(m), uintptr(unsafe.Pointer(&m)))
	if e != 0 {
		return e
	}
	return nil
}
