package ce

import "syscall"

// gettid is the calling OS thread's id, for the strict checker.
func gettid() int64 { return int64(syscall.Gettid()) }
