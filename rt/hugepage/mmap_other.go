//go:build !linux

package hugepage

import "errors"

// mapHuge has no mapping to offer outside Linux; Pool falls back to the Go heap.
func mapHuge(size int) (mapping, slab []byte, advised bool, err error) {
	return nil, nil, false, errors.New("hugepage: no mappings on this system")
}

func unmapHuge(mapping []byte) error { return nil }
