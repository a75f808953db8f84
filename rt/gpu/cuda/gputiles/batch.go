package gputiles

import "github.com/jdf2go/jdf2go/rt/gpu"

// BatchWait reports whether a batch-capable body should return gpu.Next
// rather than launch head now: head is alone, fewer than min wrappers wait
// in its stream's FIFO, and either more submissions are on their way
// (device.pending is not empty) or the stream is still busy.
//
// Why: the manager takes one submission per iteration and collects only
// what waits in the stream's FIFO. When a launch costs more host time than
// the device needs to run it (tiny GEMMs: cuBLAS spends microseconds per
// call), a body that launches whatever it has keeps the streams from ever
// filling, so nothing waits and every ring is a singleton. Returning NEXT
// (the head goes back to the FIFO, nothing is counted or released) lets
// rings grow while there is work to gather, and launches as soon as the
// stream is idle and nothing else is coming.
func BatchWait(d *gpu.Device, head *gpu.Task, s *gpu.Stream, min int) bool {
	if min <= 1 || !head.IsSingleton() || s.QueueLen()+1 >= min {
		return false
	}
	return d.Pending() > 0 || s.InFlight() > 0
}
