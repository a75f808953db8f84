package gpu

import (
	"testing"
	"unsafe"
)

// The device layout keeps its promise (device.go): what the manager writes at every
// release, what every submission reads, the backlog that both lock, the manager's memory
// accounting and the directory that submitters read lie on cache lines of their own.
// A device need not start on a cache line (a heap object with pointers starts after a
// header), so groups are apart when no 64-byte line can hold a byte of each wherever the
// device lies: 63 bytes or more between them.
func TestDeviceLayout(t *testing.T) {
	var d Device
	type group struct {
		name       string
		start, end uintptr // [start, end)
	}
	groups := []group{
		{"released and epoch (the manager's)", unsafe.Offsetof(d.released), unsafe.Offsetof(d.epoch) + unsafe.Sizeof(d.epoch)},
		{"closed and abandoned", unsafe.Offsetof(d.closed), unsafe.Offsetof(d.abandoned) + unsafe.Sizeof(d.abandoned)},
		{"backlog", unsafe.Offsetof(d.backlog), unsafe.Offsetof(d.backlog) + unsafe.Sizeof(d.backlog)},
		{"mem", unsafe.Offsetof(d.mem), unsafe.Offsetof(d.mem) + unsafe.Sizeof(d.mem)},
		{"dir", unsafe.Offsetof(d.dir), unsafe.Offsetof(d.dir) + unsafe.Sizeof(d.dir)},
	}
	for i, a := range groups {
		for _, b := range groups[i+1:] {
			first, second := a, b
			if b.start < a.start {
				first, second = b, a
			}
			if gap := int(second.start) - int(first.end); gap < 63 {
				t.Errorf("%s [%d, %d) and %s [%d, %d) are %d bytes apart: they can share a cache line",
					first.name, first.start, first.end, second.name, second.start, second.end, gap)
			}
		}
	}
}
