package cuda

import (
	"math"
	"time"
)

// Stream is a CUstream. The zero Stream is the legacy default stream.
type Stream uintptr

// StreamNonBlocking is CU_STREAM_NON_BLOCKING: the stream does not
// synchronize with the legacy default stream.
const StreamNonBlocking = 1

// NewStream creates a non-blocking stream in the current context.
func NewStream() (Stream, error) {
	d, err := libcuda()
	if err != nil {
		return 0, err
	}
	v, st := outCall(d.cuStreamCreate, StreamNonBlocking)
	if err := driverError("cuStreamCreate", st); err != nil {
		return 0, err
	}
	return Stream(v), nil
}

// Destroy destroys the stream once its queued work is done; the call does
// not wait for it.
func (s Stream) Destroy() error {
	d, err := libcuda()
	if err != nil {
		return err
	}
	return driverError("cuStreamDestroy_v2", status(ccall(d.cuStreamDestroy, uintptr(s))))
}

// Synchronize waits until all work queued on s is done.
func (s Stream) Synchronize() error {
	d, err := libcuda()
	if err != nil {
		return err
	}
	return driverError("cuStreamSynchronize", status(ccall(d.cuStreamSynchronize, uintptr(s))))
}

// Query reports whether all work queued on s is done, without waiting. An
// error is never reported as "not done".
func (s Stream) Query() (done bool, err error) {
	d, err := libcuda()
	if err != nil {
		return false, err
	}
	return queryResult("cuStreamQuery", status(ccall(d.cuStreamQuery, uintptr(s))))
}

// WaitEvent makes work queued on s after this call wait until e completes.
func (s Stream) WaitEvent(e Event) error {
	d, err := libcuda()
	if err != nil {
		return err
	}
	return driverError("cuStreamWaitEvent", status(ccall(d.cuStreamWaitEvent, uintptr(s), uintptr(e), 0)))
}

// Event is a CUevent.
type Event uintptr

// Event creation flags (CUevent_flags).
const (
	eventDefault       = 0
	eventDisableTiming = 2
)

func newEvent(flags uintptr) (Event, error) {
	d, err := libcuda()
	if err != nil {
		return 0, err
	}
	v, st := outCall(d.cuEventCreate, flags)
	if err := driverError("cuEventCreate", st); err != nil {
		return 0, err
	}
	return Event(v), nil
}

// NewEvent creates an event with timing disabled, the cheapest kind to
// record and query: what a stream's completion slots use.
func NewEvent() (Event, error) { return newEvent(eventDisableTiming) }

// NewTimingEvent creates an event that records a timestamp, for
// ElapsedTime.
func NewTimingEvent() (Event, error) { return newEvent(eventDefault) }

// Destroy destroys the event.
func (e Event) Destroy() error {
	d, err := libcuda()
	if err != nil {
		return err
	}
	return driverError("cuEventDestroy_v2", status(ccall(d.cuEventDestroy, uintptr(e))))
}

// Record captures the work queued on s so far: e completes when that work
// is done.
func (e Event) Record(s Stream) error {
	d, err := libcuda()
	if err != nil {
		return err
	}
	return driverError("cuEventRecord", status(ccall(d.cuEventRecord, uintptr(e), uintptr(s))))
}

// Query reports whether the work captured by the last Record is done,
// without waiting: success is done, CUDA_ERROR_NOT_READY is not done, and
// any other result is an error (never "not done").
func (e Event) Query() (done bool, err error) {
	d, err := libcuda()
	if err != nil {
		return false, err
	}
	return queryResult("cuEventQuery", status(ccall(d.cuEventQuery, uintptr(e))))
}

// Synchronize waits until the work captured by the last Record is done.
func (e Event) Synchronize() error {
	d, err := libcuda()
	if err != nil {
		return err
	}
	return driverError("cuEventSynchronize", status(ccall(d.cuEventSynchronize, uintptr(e))))
}

// ElapsedTime is the time between two completed timing events (resolution
// about half a microsecond).
func ElapsedTime(start, end Event) (time.Duration, error) {
	d, err := libcuda()
	if err != nil {
		return 0, err
	}
	f := newFrame()
	defer f.release()
	r := f.call(d.cuEventElapsedTime, f.out(0), uintptr(start), uintptr(end))
	if err := driverError("cuEventElapsedTime", status(r)); err != nil {
		return 0, err
	}
	ms := math.Float32frombits(uint32(f.outs[0]))
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}
