package hugepage

import (
	"syscall"
	"unsafe"
)

// mapHuge maps size bytes (a multiple of 2 MiB) of zeroed anonymous memory and returns the
// mapping and its window aligned to 2 MiB, advised for transparent huge pages. The mapping
// is 2 MiB larger than asked, so that an aligned window exists; the edges outside the window
// are never touched and cost only address space. MAP_NORESERVE: slab space never touched is
// not charged against the commit limit. advised is false when the kernel refused the advice
// (THP compiled out).
func mapHuge(size int) (mapping, slab []byte, advised bool, err error) {
	b, err := syscall.Mmap(-1, 0, size+hugePageBytes, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_ANON|syscall.MAP_PRIVATE|syscall.MAP_NORESERVE)
	if err != nil {
		return nil, nil, false, err
	}
	skip := (hugePageBytes - int(uintptr(unsafe.Pointer(unsafe.SliceData(b))))%hugePageBytes) % hugePageBytes
	slab = b[skip : skip+size : skip+size]
	return b, slab, syscall.Madvise(slab, syscall.MADV_HUGEPAGE) == nil, nil
}

// unmapHuge unmaps a mapping returned by mapHuge.
func unmapHuge(mapping []byte) error { return syscall.Munmap(mapping) }
