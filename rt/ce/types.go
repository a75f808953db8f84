package ce

import "fmt"

// Rank identifies one process (or one in-process rank) of a job, from 0 to Size-1.
type Rank int32

// Tag names an active-message channel. Tags form a small dense space, 0 to MaxTags-1:
// tags below FirstRTTag belong to the Engine itself, FirstRTTag to FirstUserTag-1 are
// reserved for the runtime's remote-dependency protocol, the rest are for DSL and user code.
type Tag uint16

// Tag space layout (docs/ce.md, "Tags").
const (
	// NoTag is the zero Tag: "no notification" in a Transfer.
	NoTag Tag = 0
	// MaxTags is the size of the tag space.
	MaxTags = 64
	// FirstRTTag is the first tag that RegisterTag accepts; tags below it are the Engine's own
	// (get/put handshakes, shutdown).
	FirstRTTag Tag = 8
	// TagActivate is reserved for rt's remote-dependency activation messages.
	TagActivate Tag = 8
	// TagRemoteGet is reserved for rt's rendezvous GET requests.
	TagRemoteGet Tag = 9
	// TagTermination is reserved for rt's termination detection.
	TagTermination Tag = 10
	// FirstUserTag is the first tag free for DSL and user code.
	FirstUserTag Tag = 16
)

// Engine-internal tags: the get/put handshake and the shutdown exchange.
const (
	tagGetReq Tag = 1 // initiator → owner: send me these bytes
	tagPutReq Tag = 2 // initiator → owner: may I write these bytes
	tagPutCTS Tag = 3 // owner → initiator: receive posted, send now
	tagNack   Tag = 4 // owner → initiator: refused (bad key, range)
	tagFin    Tag = 5 // shutdown: I will send you nothing more; I sent you N messages
	tagBeat   Tag = 6 // heartbeat: I am alive (not counted in FIN, never handed to handlers)
)

// Level is a transport's thread level, named after MPI's.
type Level int

// Thread levels, weakest first.
const (
	LevelSingle     Level = iota // one thread in the whole process
	LevelFunneled                // only the thread that started the transport calls it
	LevelSerialized              // any thread, one at a time
	LevelMultiple                // any thread, concurrently
)

func (l Level) String() string {
	switch l {
	case LevelSingle:
		return "single"
	case LevelFunneled:
		return "funneled"
	case LevelSerialized:
		return "serialized"
	case LevelMultiple:
		return "multiple"
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// ParseLevel reads a level name as printed by Level.String.
func ParseLevel(s string) (Level, error) {
	for l := LevelSingle; l <= LevelMultiple; l++ {
		if l.String() == s {
			return l, nil
		}
	}
	return 0, fmt.Errorf("ce: unknown thread level %q (want single, funneled, serialized or multiple)", s)
}

// Role says what kind of goroutine owns a Caller; it decides the Caller's path (see Attach).
type Role int

// Caller roles.
const (
	RoleComm          Role = iota // the comm goroutine itself (handlers, done callbacks)
	RoleWorker                    // a runtime worker
	RoleDeviceManager             // a GPU device manager: never touches the transport
	RoleOther                     // anything else: tests, user goroutines
)

func (r Role) String() string {
	switch r {
	case RoleComm:
		return "comm"
	case RoleWorker:
		return "worker"
	case RoleDeviceManager:
		return "device-manager"
	case RoleOther:
		return "other"
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// TaskpoolID names the taskpool an operation belongs to, for the per-taskpool in-flight
// counters that counted termination reads. Zero means "no taskpool" and is not counted.
type TaskpoolID uint32

// Caps describes what a transport can do; the Engine reads it once, at Start.
type Caps struct {
	Level     Level // what the transport allows
	PinThread bool  // must be driven from one locked OS thread (MPI: always)
	Wakeable  bool  // Wake signals arrivals and completions, so the comm loop may block
	MaxAM     int   // largest AM payload
	GPUMemory bool  // data operations may read and write device pointers
	// PinMemory says the transport keeps pointers to registered memory after a call
	// returns (MPI does), so the Engine pins Go memory for the life of a registration.
	PinMemory bool
	// MaxTransfer is the largest single data transfer in bytes; 0 means no limit.
	MaxTransfer int
	// DataTagMax is the largest data tag; data tags wrap above it (MPI_TAG_UB).
	DataTagMax uint32
	// SilentLoss says the transport never reports a dead peer (MPI without fault
	// tolerance: a killed rank's messages just stop), so the Engine watches its peers with
	// heartbeats by default (Heartbeat).
	SilentLoss bool
}

// Mem is memory that can be registered for one-sided transfers: either host memory (Go
// or C allocated) or a device pointer, the latter only where Caps.GPUMemory.
type Mem struct {
	Host   []byte  // host memory; nil for device memory
	Dev    uintptr // device pointer, when Host is nil
	DevLen int     // device length in bytes
}

// HostMem wraps host memory.
func HostMem(b []byte) Mem { return Mem{Host: b} }

// DeviceMem wraps a device pointer of n bytes.
func DeviceMem(p uintptr, n int) Mem { return Mem{Dev: p, DevLen: n} }

// Len is the length in bytes.
func (m Mem) Len() int {
	if m.IsDevice() {
		return m.DevLen
	}
	return len(m.Host)
}

// IsDevice reports whether m is device memory.
func (m Mem) IsDevice() bool { return m.Host == nil && m.Dev != 0 }

// LocalKey is a transport's handle for a registration; it never leaves the process.
type LocalKey uint64

// OpID identifies a data transfer or barrier between the Engine and its transport.
type OpID uint64

// EventKind says what an Event reports.
type EventKind uint8

// Event kinds.
const (
	EventSendDone    EventKind = iota + 1 // an AM send completed locally (Msg, Err)
	EventArrival                          // an AM arrived (Src, Tag, Payload)
	EventDataDone                         // a SendData or RecvData completed (ID, Err)
	EventBarrierDone                      // a barrier completed (ID, Err)
	EventPeerLost                         // rank Src is gone: its pending operations fail
)

// Event is one thing Transport.Poll reports.
type Event struct {
	Kind    EventKind
	Msg     *Msg   // EventSendDone: the message whose send completed
	ID      OpID   // EventDataDone, EventBarrierDone
	Err     error  // non-nil when the operation failed
	Src     Rank   // EventArrival: the sender; EventPeerLost: the lost rank
	Tag     Tag    // EventArrival
	Payload []byte // EventArrival: valid until the next Poll
}
