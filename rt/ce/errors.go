package ce

import "errors"

// Sentinel errors. Operations wrap them with context; test with errors.Is.
var (
	// ErrClosed: the Engine is closing or closed; no new operation is accepted.
	ErrClosed = errors.New("ce: engine closed")
	// ErrNotStarted: an operation that needs the transport came before Start.
	ErrNotStarted = errors.New("ce: engine not started")
	// ErrStarted: Start was called twice.
	ErrStarted = errors.New("ce: engine already started")
	// ErrPeerLost: the peer rank died (or shut down) while an operation involved it.
	ErrPeerLost = errors.New("ce: peer lost")
	// ErrBadRank: a destination rank outside 0..Size-1.
	ErrBadRank = errors.New("ce: rank out of range")
	// ErrTagRange: the tag is outside the space open to the caller.
	ErrTagRange = errors.New("ce: tag out of range")
	// ErrUnknownTag: the tag was never registered.
	ErrUnknownTag = errors.New("ce: unknown tag")
	// ErrTagInUse: the tag is already registered.
	ErrTagInUse = errors.New("ce: tag already registered")
	// ErrTooLarge: a payload exceeds the tag's maximum length, MaxAM, the buffer budget
	// or the transport's largest transfer.
	ErrTooLarge = errors.New("ce: payload too large")
	// ErrBadKey: a RemoteKey is malformed, stale or forged.
	ErrBadKey = errors.New("ce: bad remote key")
	// ErrOutOfRange: an offset or length falls outside a registration.
	ErrOutOfRange = errors.New("ce: offset or length out of range")
	// ErrNoBuffers: the message buffer budget is spent (TryNewMsg).
	ErrNoBuffers = errors.New("ce: message buffer budget spent")
	// ErrShutdownTimeout: Close's deadline passed before the operation completed.
	ErrShutdownTimeout = errors.New("ce: shutdown deadline passed")
	// ErrWrongRole: the Caller's role may not perform this operation (a device manager or
	// the comm goroutine calling Barrier, for instance).
	ErrWrongRole = errors.New("ce: operation not allowed for this caller role")
	// ErrReleased: a Msg or MemReg was used after it was released or submitted; a double
	// release is reported this way.
	ErrReleased = errors.New("ce: buffer used after release or submit")
	// ErrMsgModified: a Msg was written after SendAM (found by the debug checksum).
	ErrMsgModified = errors.New("ce: message written after submit")
	// ErrDeviceMemory: device memory was registered on a transport without Caps.GPUMemory.
	ErrDeviceMemory = errors.New("ce: transport cannot access device memory")
	// ErrCanceled: a transport reports a data receive cancelled by Transport.Cancel.
	ErrCanceled = errors.New("ce: operation canceled")
	// ErrNotCommGoroutine: a transport call that only the comm goroutine may make came from
	// elsewhere (reported by the strict checker).
	ErrNotCommGoroutine = errors.New("ce: transport called off the comm goroutine")
	// ErrHandlerPanic: a registered handler or a done callback panicked on the comm goroutine.
	// The panic is recovered and the Engine fails with it (Engine.Err, OnFailure); the comm
	// goroutine goes on releasing buffers, completing operations and shutting down.
	ErrHandlerPanic = errors.New("ce: handler panicked")
)
