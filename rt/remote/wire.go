package remote

import (
	"encoding/binary"
	"fmt"
	"slices"
	"unsafe"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/ce"
)

// Message kinds, the first byte of every message on TagActivate and TagTermination.
const (
	kindActivate  = 1 // TagActivate: a flow of a completed task, for its successors here
	kindWriteBack = 2 // TagActivate: a flow's final value, for collection elements owned here
	kindFail      = 3 // TagTermination: the taskpool failed on the sending rank
	kindGather    = 4 // TagTermination: remote keys of tiles for Gather
	kindData      = 5 // TagActivate: one version of a datum of a task graph (graphdata.go)
)

// How a datum travels.
const (
	dataNone  = 0 // CTL flow, or a NULL copy
	dataEager = 1 // the bytes follow the header
	dataGet   = 2 // the receiver pulls them: a RemoteKey and a token follow
)

// header is the fixed part of an activation or write-back:
//
//	0 kind u8 | 1 flow u8 | 2 class u16 | 4 taskpool u32 | 8 nparams u8 | 9 data u8 |
//	10 type u8 | 11 pad | 12 root u32 | 16 size u64 | 24 trace flow u64 | 32 priority i32 |
//	36 pad | 40 params i64… |
//	[dataGet: key RemoteKeySize, token u64] | ntree u16, ranks u32… | [dataEager: bytes]
type header struct {
	kind, flow, nparams, data, typ uint8
	class                          uint16
	tp                             uint32
	root                           uint32
	size                           uint64
	trace                          uint64 // flow arrow of the send in the traces; 0: none
	prio                           int32  // the producer's priority: orders the receiver's Gets
	params                         [rt.MaxParams]int64
	key                            ce.RemoteKey
	token                          uint64
	tree                           []int32 // broadcast tree: ranks in tree order, root first; empty: direct
}

const fixedLen = 40

// maxHeaderLen bounds a header with size ranks in its tree.
func maxHeaderLen(size int) int {
	return fixedLen + 8*rt.MaxParams + ce.RemoteKeySize + 8 + 2 + 4*size
}

// len is the encoded length of h.
func (h *header) len() int {
	n := fixedLen + 8*int(h.nparams) + 2 + 4*len(h.tree)
	if h.data == dataGet {
		n += ce.RemoteKeySize + 8
	}
	return n
}

func (h *header) encode(b []byte) []byte {
	b = append(b, h.kind, h.flow, 0, 0, 0, 0, 0, 0, h.nparams, h.data, h.typ, 0)
	binary.LittleEndian.PutUint16(b[2:], h.class)
	binary.LittleEndian.PutUint32(b[4:], h.tp)
	b = binary.LittleEndian.AppendUint32(b, h.root)
	b = binary.LittleEndian.AppendUint64(b, h.size)
	b = binary.LittleEndian.AppendUint64(b, h.trace)
	b = binary.LittleEndian.AppendUint32(b, uint32(h.prio))
	b = binary.LittleEndian.AppendUint32(b, 0)
	for i := 0; i < int(h.nparams); i++ {
		b = binary.LittleEndian.AppendUint64(b, uint64(h.params[i]))
	}
	if h.data == dataGet {
		b, _ = h.key.AppendBinary(b)
		b = binary.LittleEndian.AppendUint64(b, h.token)
	}
	b = binary.LittleEndian.AppendUint16(b, uint16(len(h.tree)))
	for _, r := range h.tree {
		b = binary.LittleEndian.AppendUint32(b, uint32(r))
	}
	return b
}

// decode reads a header from p and returns the rest (the eager payload).
func (h *header) decode(p []byte) ([]byte, error) {
	if len(p) < fixedLen {
		return nil, malformed(ErrSizeMismatch, "message of %d bytes is shorter than a header", len(p))
	}
	h.kind, h.flow = p[0], p[1]
	h.class = binary.LittleEndian.Uint16(p[2:])
	h.tp = binary.LittleEndian.Uint32(p[4:])
	h.nparams, h.data, h.typ = p[8], p[9], p[10]
	h.root = binary.LittleEndian.Uint32(p[12:])
	h.size = binary.LittleEndian.Uint64(p[16:])
	h.trace = binary.LittleEndian.Uint64(p[24:])
	h.prio = int32(binary.LittleEndian.Uint32(p[32:]))
	p = p[fixedLen:]
	if int(h.nparams) > rt.MaxParams || len(p) < 8*int(h.nparams) {
		return nil, malformed(ErrOutsideSpace, "%d parameters in a message of %d bytes", h.nparams, len(p)+fixedLen)
	}
	for i := 0; i < int(h.nparams); i++ {
		h.params[i] = int64(binary.LittleEndian.Uint64(p))
		p = p[8:]
	}
	switch h.data {
	case dataNone, dataEager:
	case dataGet:
		if len(p) < ce.RemoteKeySize+8 {
			return nil, malformed(ErrSizeMismatch, "truncated remote key")
		}
		k, err := ce.ParseRemoteKey(p[:ce.RemoteKeySize])
		if err != nil {
			return nil, malformed(ErrSizeMismatch, "remote key: %v", err)
		}
		h.key = k
		h.token = binary.LittleEndian.Uint64(p[ce.RemoteKeySize:])
		p = p[ce.RemoteKeySize+8:]
	default:
		return nil, malformed(ErrTypeMismatch, "unknown data mode %d", h.data)
	}
	if len(p) < 2 {
		return nil, malformed(ErrSizeMismatch, "truncated tree")
	}
	n := int(binary.LittleEndian.Uint16(p))
	p = p[2:]
	if len(p) < 4*n {
		return nil, malformed(ErrSizeMismatch, "truncated tree of %d ranks", n)
	}
	h.tree = slices.Grow(h.tree[:0], n)[:n] // the receive record's backing, reused
	for i := range h.tree {
		h.tree[i] = int32(binary.LittleEndian.Uint32(p))
		p = p[4:]
	}
	return p, nil
}

// Value types that travel between ranks, by wire code. The code and the element size make
// the datum's type; its Go name is what errors print.
var wireTypes = [...]struct {
	name string
	elem int
}{
	1: {"[]float64", 8},
	2: {"[]float32", 4},
	3: {"[]int64", 8},
	4: {"[]int32", 4},
	5: {"[]byte", 1},
}

// typeName names wire type code t.
func typeName(t uint8) string {
	if int(t) < len(wireTypes) && wireTypes[t].elem > 0 {
		return wireTypes[t].name
	}
	return fmt.Sprintf("type code %d", t)
}

// bytesOf returns the bytes of a copy's value (aliasing it) and its wire type code.
func bytesOf(v any) ([]byte, uint8, error) {
	switch s := v.(type) {
	case []float64:
		return asBytes(s), 1, nil
	case []float32:
		return asBytes(s), 2, nil
	case []int64:
		return asBytes(s), 3, nil
	case []int32:
		return asBytes(s), 4, nil
	case []byte:
		return s, 5, nil
	}
	return nil, 0, fmt.Errorf("%w: %T (flows that cross ranks hold []float64, []float32, []int64, []int32 or []byte)",
		ErrUnsupportedType, v)
}

func asBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// checkType validates wire type t and size.
func checkType(t uint8, size uint64) error {
	if int(t) >= len(wireTypes) || wireTypes[t].elem == 0 {
		return malformed(ErrTypeMismatch, "unknown %s", typeName(t))
	}
	if size%uint64(wireTypes[t].elem) != 0 || size > 1<<40 {
		return malformed(ErrSizeMismatch, "%d bytes is no whole number of %s elements", size, typeName(t))
	}
	return nil
}

// newValue allocates a value of wire type t holding size bytes (checked by checkType).
func newValue(t uint8, size uint64) any {
	n := int(size) / wireTypes[t].elem
	var v any
	switch t {
	case 1:
		v = make([]float64, n)
	case 2:
		v = make([]float32, n)
	case 3:
		v = make([]int64, n)
	case 4:
		v = make([]int32, n)
	default:
		v = make([]byte, n)
	}
	return v
}
