package gpu

import (
	"context"
	"fmt"
	"slices"
)

// Prefetch stages data in on the device ahead of the tasks that will read
// them. A prefetch wrapper is counted like any other (once in, once out; the
// PaRSEC snapshot's uncounted PREFETCH is not replicated) and ends at its
// stage-in completion, or at once when the device copy is already current.
// Its arguments and results are those of Submit: on an idle device the
// caller manages it until every copy has landed; on a busy one the
// transfers are queued and Prefetch returns at once.
//
// The data are submitted together, at most the device's queue limit at a
// time (DefaultQueueLimit when it has none): one management episode then
// overlaps their transfers, where a call per datum would wait for each copy
// in an episode of its own.
func (d *Device) prefetchData(ctx context.Context, w Worker, data ...Data) error {
	if i := slices.Index(data, nil); i >= 0 {
		return fmt.Errorf("%w: prefetch of a nil datum (argument %d)", ErrBadArgument, i)
	}
	chunk := int(d.queueLimit)
	if chunk <= 0 {
		chunk = DefaultQueueLimit
	}
	for len(data) > 0 {
		n := min(len(data), chunk)
		if err := d.prefetch(ctx, w, data[:n]); err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// prefetch submits one wrapper per datum with a single increment of the
// counter, and manages the device when that increment started an episode.
func (d *Device) prefetch(ctx context.Context, w Worker, data []Data) error {
	ts := make([]*Task, len(data))
	for i, x := range data {
		t := d.allocTask()
		t.kind = KindPrefetch
		t.flows = append(t.flows[:0], Flow{Data: x, Access: Read})
		t.resetFlowState()
		d.hintCopies(t)
		ts[i] = t
	}
	err := d.enqueue(ctx, w, ts)
	if err != nil && !ts[0].counted {
		for _, t := range ts {
			d.freeTask(t, StateReleased)
		}
	}
	return err
}

// prefetchSatisfied reports whether the device copy of a prefetch wrapper's
// datum is already current.
func (d *Device) prefetchSatisfied(t *Task) bool {
	f := &t.flows[0]
	c := d.dir.copies[f.Data]
	return c != nil && c.valid && c.version >= f.Data.HostVersion() && c.transfer != xferOut
}
