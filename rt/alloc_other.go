//go:build !linux

package rt

import "errors"

// mapHuge has no mapping to offer outside Linux; HugePagePool falls back to the Go heap.
func mapHuge(size int) (mapping, slab []byte, advised bool, err error) {
	return nil, nil, false, errors.New("rt: no huge-page mappings on this system")
}

func unmapHuge(mapping []byte) error { return nil }
