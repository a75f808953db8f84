package rt

import (
	"testing"
	"unsafe"
)

// The task layout keeps its promise (task.go): the fields touched on every task and the first
// two locals share one cache line, and tasks in a slab start on cache lines.
func TestTaskLayout(t *testing.T) {
	var x Task
	if off := unsafe.Offsetof(x.l); off > 48 {
		t.Errorf("locals start at byte %d, want at most 48", off)
	}
	if n := unsafe.Sizeof(x); n%64 != 0 {
		t.Errorf("a task is %d bytes, not a multiple of 64", n)
	}
}
