package ce

import "context"

// Transport is one communication backend (in-process world, MPI, later TCP). The Engine is
// its only user.
//
// Threading: a Transport is not goroutine-safe unless Caps().Level is LevelMultiple, and even
// then Start, Poll and Close come only from the comm goroutine (the Engine guarantees it, and
// the strict checker verifies it). Where Caps().PinThread holds, the comm goroutine is locked
// to one OS thread for the transport's whole life, so Start and Close run on the same thread.
//
// No method blocks except Close. Nothing calls back into Go: completions and arrivals are
// found by Poll.
//
// Ownership: the bytes of a Msg given to SendAM belong to the transport until Poll reports its
// EventSendDone; a LocalKey's memory belongs to the transport between a SendData/RecvData and
// its EventDataDone. Every accepted operation produces exactly one completion event, including
// after Close (see Close).
type Transport interface {
	// Start initialises the backend (MPI_Init_thread for MPI) and reports this process's rank
	// and the job size.
	Start(ctx context.Context) (rank Rank, size int, err error)
	// Caps reports what the transport can do. Valid after Start.
	Caps() Caps
	// RegisterTag arms the receive side of tag t for payloads up to maxLen bytes (MPI
	// pre-posts persistent receives). UnregisterTag disarms it.
	RegisterTag(t Tag, maxLen int) error
	UnregisterTag(t Tag) error
	// SendAM starts sending m's bytes to dst on tag t. A nil return promises one
	// EventSendDone for m; an error means nothing was started.
	SendAM(t Tag, dst Rank, m *Msg) error
	// Register makes m usable in data operations; Unregister ends that. The Engine calls
	// Unregister once per Register, from the comm goroutine.
	Register(m Mem) (LocalKey, error)
	Unregister(k LocalKey) error
	// SendData sends n bytes at offset off of registration k to dst, matched by the
	// receiver's RecvData with the same data tag. RecvData is its twin. Both complete with
	// one EventDataDone carrying id.
	SendData(dst Rank, dtag uint32, k LocalKey, off, n int, id OpID) error
	RecvData(src Rank, dtag uint32, k LocalKey, off, n int, id OpID) error
	// Cancel cancels a posted RecvData that has not matched yet. Its EventDataDone still
	// comes, with ErrCanceled when the cancel won and with the normal result otherwise.
	Cancel(id OpID) error
	// Barrier starts a non-blocking barrier over all ranks; EventBarrierDone carries id.
	Barrier(id OpID) error
	// Poll fills ev with completions, arrivals and peer failures and returns how many. It
	// never blocks. Arrival payloads stay valid until the next Poll.
	Poll(ev []Event) int
	// Wake returns a channel that receives when Poll has something new; nil unless
	// Caps().Wakeable.
	Wake() <-chan struct{}
	// Close ends the backend (MPI_Finalize), from the goroutine (and OS thread) that called
	// Start. Operations still outstanding are abandoned: Poll calls after Close report their
	// completion events, with a non-nil error, and then nothing more.
	Close() error
}

// BufferAllocator is implemented by transports whose message buffers must live outside the
// Go heap (MPI keeps a buffer's address after the cgo call returns). The Engine's message pool
// then takes its buffers from here instead of make. Both methods are goroutine-safe and never
// touch the network.
type BufferAllocator interface {
	AllocBuffer(n int) []byte
	FreeBuffer(b []byte)
}

// PeerAbandoner is implemented by transports that cannot see a peer die (Caps.SilentLoss)
// but can give up on one when the Engine's heartbeat declares it lost. AbandonPeer is called
// on the comm goroutine. It returns false when the transport cannot do it (a wrapper around a
// transport that cannot), and the Engine then fails the peer by itself. It returns true to
// promise that the next Poll reports, for every operation outstanding with r (sends and data
// operations either way, and barriers, which cannot complete without r), its completion with
// an error wrapping ErrPeerLost, followed by one EventPeerLost for r; and that operations with
// r started later fail with ErrPeerLost. The transport may keep the abandoned requests
// internally, but never reports them again.
type PeerAbandoner interface {
	AbandonPeer(r Rank) bool
}
