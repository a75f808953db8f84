package rt

import (
	"syscall"
	"unsafe"
)

// fdIsTerminal reports whether fd is a terminal: the TCGETS ioctl succeeds only on one.
func fdIsTerminal(fd uintptr) bool {
	var t syscall.Termios
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return e == 0
}
