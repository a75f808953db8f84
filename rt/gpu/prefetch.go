package gpu

import "context"

// Prefetch stages data in on the device ahead of the tasks that will read
// it. The prefetch wrapper is counted like any other (once in, once out; the
// PaRSEC snapshot's uncounted PREFETCH is not replicated) and ends at its
// stage-in completion, or at once when the device copy is already current.
// Its arguments and results are those of Submit.
func (d *Device) Prefetch(ctx context.Context, w Worker, data Data) error {
	t := d.allocTask()
	t.kind = KindPrefetch
	t.flows = append(t.flows[:0], Flow{Data: data, Access: Read})
	if err := d.Submit(ctx, w, t); err != nil && t.state == StateNew {
		d.freeTask(t, StateReleased)
		return err
	} else if err != nil {
		return err
	}
	return nil
}

// prefetchSatisfied reports whether the device copy of a prefetch wrapper's
// datum is already current.
func (d *Device) prefetchSatisfied(t *Task) bool {
	f := &t.flows[0]
	c := d.dir.copies[f.Data]
	return c != nil && c.valid && c.version >= f.Data.HostVersion() && c.transfer != xferOut
}
