package gpu

// Recall: writing a device's dirty copies of named data back to the host on request.
//
// A written flow kept on the device (Flow.KeepOnDevice) leaves the host copy stale until an
// eviction writes it back (newWriteBack) or the device closes. A caller that knows the host
// is about to read such a datum (rt/dynamic, before a CPU body or another device uses it,
// and when its graph ends) asks for it with Recall.
//
// Actors: the caller, any goroutine, which submits one counted KindRecall wrapper with a
// flow per datum and a callback; the device's manager, which sends the wrapper straight to
// the stage-out FIFO (as a D2D_COMPLETE command), enqueues there the D2H of every copy of
// those data that is valid, dirty and not older than its host copy, and, at the wrapper's
// event completion, makes those copies clean, calls the callback and releases the wrapper.
//
// Invariant: the callback runs with nil only once no copy of the named data on this device
// is newer than its host copy. A copy that another transfer is already writing back (an
// eviction's w2r) is not copied twice: the wrapper's event is recorded behind that transfer
// on the in-order stage-out stream, and at its completion the manager checks the copies
// again and puts the wrapper back in the FIFO while one is still dirty (a write-back that
// failed, or one not started when the wrapper was), so it never reports a datum it has not
// seen land. The recalled copies stay on the device, clean, for later readers.
//
// Callers guarantee, as for any transfer, that no task writes the data between the request
// and the callback (rt/dynamic asks for a task's data only once its predecessors are done,
// and its successors wait for it).
//
// Rejected: writing back every dirty copy of the device (a PTG taskpool's copies kept on the
// device for its own successors would go back for nothing); doing the transfers on the
// caller's goroutine under the idle lock (a busy device's manager owns the stage-out stream,
// so that works only when the device is idle, and the busy case needs the wrapper anyway).

import (
	"context"
	"fmt"
	"slices"

	"github.com/jdf2go/jdf2go/rt"
)

// Recall writes the copies of data that the device holds newer than their host copies back
// to the host, and calls done once they have landed, with nil, or with the error of the
// transfer or the episode that stopped them (the copies then stay dirty on the device).
// done runs on the device's manager: it must be short and must not block. Recall returns
// an error, and never calls done, when the request could not be handed to the device (a
// closed device, a datum without a host copy).
//
// As for Submit, a goroutine that finds the device idle manages it until it is idle again:
// Recall then returns after done ran. Pass every datum of one request in one call: their
// transfers overlap.
func (r *RTDevice) Recall(data []*rt.Copy, done func(error)) error {
	hcs := make([]Data, len(data))
	for i, c := range data {
		if c == nil {
			return fmt.Errorf("%w: recall of a nil copy (argument %d)", ErrBadArgument, i)
		}
		hcs[i] = hostCopy{c}
	}
	return r.d.recall(r.ctx, nil, hcs, done)
}

// recall submits one KindRecall wrapper for data.
func (d *Device) recall(ctx context.Context, w Worker, data []Data, done func(error)) error {
	if i := slices.Index(data, nil); i >= 0 {
		return fmt.Errorf("%w: recall of a nil datum (argument %d)", ErrBadArgument, i)
	}
	if done == nil {
		return fmt.Errorf("%w: recall without a callback", ErrBadArgument)
	}
	t := d.allocTask()
	t.kind = KindRecall
	// After the w2r wrappers (which free memory), before any task.
	t.priority = 1<<31 - 2
	for _, x := range data {
		t.flows = append(t.flows, Flow{Data: x, Access: Read})
	}
	t.resetFlowState()
	t.recalled = done
	err := d.enqueue(ctx, w, []*Task{t})
	if err == nil || t.counted {
		// Counted: the device owns t, and its episode's failures reach done.
		return nil
	}
	d.freeTask(t, StateReleased)
	return err
}

// recallCopy returns the copy of data that a recall must write back, or nil: none on the
// device, or one no newer than the host's, or an obsolete one (the host copy moved on; the
// next w2r drops it).
func (d *Device) recallCopy(data Data) *devCopy {
	c := d.dir.copies[data]
	if c == nil || !c.valid || !c.dirty || c.version < data.HostVersion() {
		return nil
	}
	return c
}

// recallTransfers enqueues on s the D2H copies of a recall wrapper's dirty data and returns
// how many transfers its event waits for: its own, and those already writing one of the
// copies back.
func (d *Device) recallTransfers(t *Task, s *Stream) (int, error) {
	n := 0
	t.wb = t.wb[:0]
	for i := range t.flows {
		c := d.recallCopy(t.flows[i].Data)
		switch {
		case c == nil:
			continue
		case c.transfer != xferNone:
			n++ // behind it on the stream; checked again at the completion
			continue
		}
		dst := c.data.HostBytes()
		if int64(len(dst)) < c.size {
			return n, fmt.Errorf("%w: recall of %d bytes has no host mirror", ErrMisuse, c.size)
		}
		if err := s.be.CopyDtoH(dst[:c.size], c.ptr); err != nil {
			return n, fmt.Errorf("gpu: recall copy on %s: %w", s.name, err)
		}
		c.transfer = xferOut
		t.wb = append(t.wb, c)
		d.stats.recalled.Add(1)
		d.stats.bytesOut.Add(c.size)
		n++
	}
	return n, nil
}

// recallPending reports whether a datum of the recall wrapper t still has a copy newer
// than the host's.
func (d *Device) recallPending(t *Task) bool {
	for i := range t.flows {
		if d.recallCopy(t.flows[i].Data) != nil {
			return true
		}
	}
	return false
}

// recallLanded is the event completion of the recall wrapper w (err: the transfer's): its
// copies are clean, and w ends, or goes back to the FIFO while another transfer of its
// data has not landed yet.
func (ep *episode) recallLanded(w *Task, err error) {
	d := ep.d
	d.writeBackDone(w, err == nil)
	w.wb = w.wb[:0]
	if err == nil && d.recallPending(w) {
		d.out.fifo.push(w, StateOutQ)
		return
	}
	ep.recallEnd(w, err)
}

// recallEnd calls w's callback with err and releases it.
func (ep *episode) recallEnd(w *Task, err error) {
	if err != nil {
		err = fmt.Errorf("gpu: recall on %s: %w", ep.d.name, err)
	}
	done := w.recalled
	w.recalled = nil
	done(err)
	ep.release(w, StateReleased)
}
