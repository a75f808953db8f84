//go:build !linux

package ce

// gettid has no portable equivalent: off Linux the strict checker sees one thread and can
// only count calls.
func gettid() int64 { return 1 }
