package gpu

import "github.com/jdf2go/jdf2go/dashboard"

// Fill adds the device to a dashboard snapshot (rt.Dashboard): its streams' queues, the
// tasks it ran and its batches, its transfers and its memory. rt registers every device
// given to rt.Devices.
func (r *RTDevice) Fill(s *dashboard.Snapshot) {
	d := r.d
	st := d.Stats()
	g := dashboard.GPU{Name: r.Name(), Executed: int64(st.Executed), Batches: st.Batches, Batched: st.Batched,
		StageIns: st.StageIns, StageOuts: int64(st.StageOuts), BytesIn: st.BytesIn, BytesOut: st.BytesOut,
		MemUsed: st.MemUsed, MemLimit: st.MemLimit}
	g.Streams = append(g.Streams, dashboard.Stream{Name: "pending", Queued: d.pendingLen()})
	for _, q := range d.Streams() {
		g.Streams = append(g.Streams, dashboard.Stream{Name: q.Name(), Queued: q.fifo.len(), InFlight: int(q.inFlight.Load())})
	}
	s.GPUs = append(s.GPUs, g)
}
