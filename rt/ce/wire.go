package ce

import (
	"encoding/binary"
	"fmt"
)

// Wire formats of the Engine's own messages (little endian). They carry ids and keys, never
// pointers (docs/ce.md, "The distributed layer": function pointers on the wire are a quirk not to
// copy).

// xferReq is a GET or PUT request: initiator → owner of the registration.
type xferReq struct {
	id     OpID   // the initiator's transfer id, echoed in CTS and NACK
	slot   uint32 // remote key
	gen    uint32
	rlen   int64
	off    int64 // offset in the owner's registration
	n      int64
	dtag   uint32 // GET: the data tag the initiator's receive is posted with
	notify Tag
	prio   int32
	note   []byte
}

const xferReqHeader = 8 + 4 + 4 + 8 + 8 + 8 + 4 + 2 + 4

func (r *xferReq) encode(b []byte) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(r.id))
	b = binary.LittleEndian.AppendUint32(b, r.slot)
	b = binary.LittleEndian.AppendUint32(b, r.gen)
	b = binary.LittleEndian.AppendUint64(b, uint64(r.rlen))
	b = binary.LittleEndian.AppendUint64(b, uint64(r.off))
	b = binary.LittleEndian.AppendUint64(b, uint64(r.n))
	b = binary.LittleEndian.AppendUint32(b, r.dtag)
	b = binary.LittleEndian.AppendUint16(b, uint16(r.notify))
	b = binary.LittleEndian.AppendUint32(b, uint32(r.prio))
	return append(b, r.note...)
}

// decodeXferReq parses a request; note aliases b.
func decodeXferReq(b []byte) (xferReq, error) {
	if len(b) < xferReqHeader {
		return xferReq{}, fmt.Errorf("ce: short transfer request (%d bytes)", len(b))
	}
	le := binary.LittleEndian
	return xferReq{
		id:     OpID(le.Uint64(b)),
		slot:   le.Uint32(b[8:]),
		gen:    le.Uint32(b[12:]),
		rlen:   int64(le.Uint64(b[16:])),
		off:    int64(le.Uint64(b[24:])),
		n:      int64(le.Uint64(b[32:])),
		dtag:   le.Uint32(b[40:]),
		notify: Tag(le.Uint16(b[44:])),
		prio:   int32(le.Uint32(b[46:])),
		note:   b[xferReqHeader:],
	}, nil
}

// nack codes.
const (
	nackBadKey uint8 = iota + 1
	nackOutOfRange
	nackUnknownTag
	nackFailed
)

func nackErr(code uint8) error {
	switch code {
	case nackBadKey:
		return ErrBadKey
	case nackOutOfRange:
		return ErrOutOfRange
	case nackUnknownTag:
		return ErrUnknownTag
	}
	return fmt.Errorf("ce: the peer could not serve the transfer")
}

func nackCode(err error) uint8 {
	switch err {
	case ErrBadKey:
		return nackBadKey
	case ErrOutOfRange:
		return nackOutOfRange
	case ErrUnknownTag:
		return nackUnknownTag
	}
	return nackFailed
}

func encodeIDTag(b []byte, id OpID, v uint32) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(id))
	return binary.LittleEndian.AppendUint32(b, v)
}

func decodeIDTag(b []byte) (OpID, uint32, error) {
	if len(b) < 12 {
		return 0, 0, fmt.Errorf("ce: short handshake message (%d bytes)", len(b))
	}
	return OpID(binary.LittleEndian.Uint64(b)), binary.LittleEndian.Uint32(b[8:]), nil
}
