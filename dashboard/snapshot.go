package dashboard

// Snapshot is what the page shows at one instant of a run. The server keeps a history of
// them: Lanes and Errors hold only what is new since the previous snapshot, so that the
// history, replayed in order, rebuilds the whole picture. /api/snapshot serves the latest
// one and /api/history all those kept, as JSON with these field names.
type Snapshot struct {
	Seq      int64     `json:"seq"`    // 1, 2, ... in publishing order
	Time     float64   `json:"t"`      // seconds since the run started
	Source   string    `json:"source"` // "live", or "trace NAME" for a finished run
	Rank     int       `json:"rank"`
	Ranks    int       `json:"ranks"`
	Peers    []string  `json:"peers,omitempty"` // the other ranks' dashboards, on rank 0
	Finished bool      `json:"finished"`        // the last snapshot of the run
	Window   float64   `json:"window"`          // seconds of worker lanes the page shows
	Workers  int       `json:"workers"`
	Done     int64     `json:"done"` // tasks completed so far
	Rate     float64   `json:"rate"` // tasks completed per second since the previous snapshot
	Classes  []Class   `json:"classes"`
	Lanes    []Segment `json:"lanes"`   // worker busy intervals that ended since the previous snapshot
	Running  []Segment `json:"running"` // tasks running now (their End is Time)
	Busy     []float64 `json:"busy"`    // per worker: fraction of the last interval spent in task bodies
	GPUs     []GPU     `json:"gpus,omitempty"`
	CE       *CE       `json:"ce,omitempty"`
	Errors   []Error   `json:"errors,omitempty"` // errors raised since the previous snapshot
	// Note says what the page must tell about its data: for a trace replay, the bounds it
	// reached (classes or devices counted together, lanes drawn coarser than the spans).
	Note string `json:"note,omitempty"`
}

// Class is the progress of one task class of one taskpool (summed over the taskpools that
// share a name).
type Class struct {
	Taskpool string `json:"taskpool"`
	Name     string `json:"name"`
	Done     int64  `json:"done"`
	Total    int64  `json:"total"`
}

// Segment is an interval during which a worker ran task bodies of one class back to back.
type Segment struct {
	Worker int     `json:"w"`
	Class  string  `json:"c"`
	Start  float64 `json:"s"` // seconds since the run started
	End    float64 `json:"e"`
}

// GPU is the state of one device.
type GPU struct {
	Name      string   `json:"name"`
	Streams   []Stream `json:"streams"`
	Executed  int64    `json:"executed"`  // tasks completed
	Batches   int64    `json:"batches"`   // hook calls (a batch runs several tasks in one call)
	Batched   int64    `json:"batched"`   // tasks run by those calls: Batched/Batches is the mean batch size
	StageIns  int64    `json:"stageIns"`  // transfers to the device (from the host or a peer)
	StageOuts int64    `json:"stageOuts"` // transfers from the device to the host
	BytesIn   int64    `json:"bytesIn"`   // bytes staged in (0 when unknown: a trace has no sizes)
	BytesOut  int64    `json:"bytesOut"`  // bytes staged out
	MemUsed   int64    `json:"memUsed"`
	MemLimit  int64    `json:"memLimit"` // 0: unknown
}

// Stream is the queue of one device stream.
type Stream struct {
	Name     string `json:"name"`
	Queued   int    `json:"queued"`   // tasks waiting in its pending queue
	InFlight int    `json:"inFlight"` // tasks submitted to the device, not finished
}

// CE is the state of this rank's communication engine.
type CE struct {
	Rank       int    `json:"rank"`
	ShiftQueue int    `json:"shiftQueue"` // operations waiting for the comm goroutine
	Peers      []Peer `json:"peers"`
}

// Peer is the traffic between this rank and one other.
type Peer struct {
	Rank     int   `json:"rank"`
	MsgsOut  int64 `json:"msgsOut"`
	BytesOut int64 `json:"bytesOut"`
	MsgsIn   int64 `json:"msgsIn"`
	BytesIn  int64 `json:"bytesIn"`
}

// Error is one failure, reported when it happened.
type Error struct {
	Time     float64 `json:"t"`
	Taskpool string  `json:"taskpool,omitempty"`
	Message  string  `json:"message"`
}

// Provider adds a component's state to a snapshot: a GPU device appends to GPUs, a
// communication engine sets CE. Fill is called from the sampling goroutine while the
// component runs, so it must be safe for concurrent use and must not block.
type Provider interface {
	Fill(s *Snapshot)
}
