package gpu

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/gpu/driver"
)

// Data is a logical datum as a device sees it: its host copy and the version
// of that copy. rt.Data satisfies it through the adapter. The device keeps
// its own copy of each Data it has seen, with the version it holds; a copy
// is stale when its version is below the host version, and newer (dirty)
// when a body wrote it and it was not written back yet.
//
// Dependencies guarantee that no CPU task writes a Data while a device task
// uses it; the device reads HostVersion and calls SetHostVersion only from
// its manager.
type Data interface {
	// HostBytes is the host copy; transfers read and write it in place.
	HostBytes() []byte
	// HostVersion is the version of the host copy.
	HostVersion() uint64
	// SetHostVersion records that a write-back made the host copy version v.
	SetHostVersion(v uint64)
}

// CopyState is the coherency of a device copy as reported to a CopyMirror.
type CopyState uint8

// Device copy states.
const (
	CopyInvalid CopyState = iota // allocated, content not usable
	CopyShared                   // same content as the host copy of that version
	CopyOwned                    // newer than the host copy
)

// CopyMirror is implemented by Data that keep a record of the device's copies
// of them (rt.Data has one Copy slot per device). The manager reports every
// change of its copy; dev is the device index, rec the record, which the
// device copy holds: a report writes memory the manager has just touched,
// where a record of its own would be one more cache miss per written flow.
type CopyMirror interface {
	MirrorCopy(dev int, rec *rt.Copy, b Buffer, version uint64, state CopyState)
	DropCopy(dev int, rec *rt.Copy)
}

// mirror reports c's current state to linked devices (peer.go) and to its Data, when it
// listens.
func (d *Device) mirror(c *devCopy) {
	d.publish(c)
	m, ok := c.data.(CopyMirror)
	if !ok {
		return
	}
	st := CopyInvalid
	switch {
	case c.valid && c.dirty:
		st = CopyOwned
	case c.valid:
		st = CopyShared
	}
	m.MirrorCopy(d.index, &c.mirrored, Buffer{Ptr: c.ptr, Len: int(c.size), Elem: Bytes}, c.version, st)
}

func (d *Device) unmirror(c *devCopy) {
	if m, ok := c.data.(CopyMirror); ok {
		m.DropCopy(d.index, &c.mirrored)
	}
}

// Access is how a task uses a flow.
type Access uint8

// Access modes.
const (
	Read      Access = 1 << iota // the body reads the flow: stage it in when stale
	Write                        // the body writes the flow: its version is bumped
	ReadWrite = Read | Write
)

// Flow is one data flow of a device task.
type Flow struct {
	// Data is the datum; nil is a NULL flow (zero Buffer, no memory).
	Data Data
	// Access says whether the body reads, writes or both.
	Access Access
	// Size is the device size in bytes (JDF X.size); 0 means the size of
	// the host copy.
	Size int64
	// Elem is the element type of the body's Buffer.
	Elem Elem
	// KeepOnDevice skips the write-back of a written flow at stage-out: the
	// next consumer runs on this device and uses the device copy (the host
	// copy stays stale until an eviction writes it back). Leave it false
	// unless every consumer is known to run here.
	KeepOnDevice bool
	// Late lets the write-back of a written flow land after the task has
	// completed, when the device's Completer is a Holder: a task whose
	// written-back flows are all Late completes when its kernels are done,
	// its successors read the device copy, and the owner waits for the
	// host copy through the Hold. Set it only when nothing reads the host
	// copy before the owner finishes: a flow whose value goes to the host
	// for a CPU reader or another rank is not Late.
	Late bool
}

func (f *Flow) size() int64 {
	if f.Size > 0 {
		return f.Size
	}
	return int64(len(f.Data.HostBytes()))
}

// flowState is the per-submission state of one flow.
type flowState struct {
	hint     *devCopy // the submitter's lookup of the copy (hintCopies)
	copy     *devCopy
	pinned   bool    // counted in copy.readers
	writer   bool    // counted in copy.writers
	incoming bool    // this wrapper queued the H2D (or peer copy) of copy
	outgoing bool    // this wrapper queued the D2H of copy
	src      peerSrc // the peer copy read by the incoming transfer (src.dev nil: host)
}

// transfer states of a device copy.
const (
	xferNone int8 = iota
	xferIn
	xferOut
)

// devCopy is a device's copy of one Data.
type devCopy struct {
	data     Data
	ptr      Ptr
	size     int64
	version  uint64 // content version; meaningful when valid
	valid    bool
	dirty    bool // newer than the host copy
	readers  int  // wrappers in flight that use the copy; pinned while > 0
	writers  int  // wrappers in flight that write it (not readable by peers meanwhile)
	transfer int8
	gone     bool // dropped from the directory (freed); the manager's hint check
	// The LRU holding the copy while nobody uses it (mem.clean or
	// mem.owned; nil when pinned) and its links there.
	lruList          *copyList
	lruPrev, lruNext *devCopy

	// Linked devices read the copy (peer.go): pub is the version they may read (0: none),
	// peers how many peer copies read it; peerWait (manager-owned) says the manager
	// could not retire it because of them.
	pub      atomic.Uint64
	peers    atomic.Int32
	peerWait bool

	mirrored rt.Copy // the CopyMirror's record of the copy
}

// memory is a device's memory accounting: LRUs of unpinned clean copies
// (evictable) and unpinned dirty copies (written back first), and the bytes
// used. Only the manager touches it; the copies themselves, by Data, are in
// the directory (peer.go), which submitters read.
type memory struct {
	clean, owned copyList
	used, limit  int64
	pinned       int64 // bytes of copies in use by wrappers
}

// reserve finds or allocates a device copy for every flow of t and pins
// them. It returns Done, Again (no memory now; retry after the epoch moves)
// or Next (memory is held by dirty copies that a write-back would free).
func (d *Device) reserve(t *Task) (Result, error) {
	d.stats.reservations.Add(1)
	m := &d.mem
	var missing int64
	for i := range t.flows {
		f := &t.flows[i]
		if f.Data == nil {
			continue
		}
		c := d.copyFor(t, i)
		if c == nil {
			missing += f.size()
			continue
		}
		if c.transfer == xferOut && f.Access&Write != 0 {
			// A write-back still reads it; writing now would race with it.
			d.unpinAll(t)
			return Again, nil
		}
		if c.size < f.size() {
			d.unpinAll(t)
			return Error, fmt.Errorf("%w: flow %d needs %d bytes, its device copy has %d", ErrMisuse, i, f.size(), c.size)
		}
		stale := !c.valid || c.version < f.Data.HostVersion()
		if (f.Access&Write != 0 || stale) && !d.retire(c) {
			// Linked devices are copying it; their release moves the epoch.
			d.unpinAll(t)
			return Again, nil
		}
		d.pin(t, i, c)
	}
	if missing > 0 && !d.makeRoom(missing) {
		d.unpinAll(t)
		switch {
		case d.hasIdleDirty():
			return Next, nil
		case m.pinned == 0 && m.owned.len() == 0:
			// Nothing in use and nothing to write back: waiting cannot help.
			return Error, fmt.Errorf("%w: %v needs %d more bytes, %d of %d are used by clean copies nobody can evict",
				ErrOutOfMemory, t, missing, m.used, m.limit)
		}
		return Again, nil
	}
	for i := range t.flows {
		f := &t.flows[i]
		if f.Data == nil || t.fs[i].copy != nil {
			continue
		}
		if c := d.dir.copies[f.Data]; c != nil {
			// The same Data twice in one task.
			d.pin(t, i, c)
			continue
		}
		size := f.size()
		p, err := d.be.Alloc(size)
		if err != nil {
			d.unpinAll(t)
			if errors.Is(err, ErrOutOfMemory) {
				return Again, nil
			}
			return Error, fmt.Errorf("gpu: alloc %d bytes on %s: %w", size, d.name, err)
		}
		c := &devCopy{data: f.Data, ptr: p, size: size}
		d.setCopy(f.Data, c)
		m.used += size
		d.stats.memUsed.Store(m.used)
		d.mirror(c)
		d.pin(t, i, c)
	}
	return Done, nil
}

// makeRoom evicts unpinned clean copies, least recently used first, until n
// more bytes fit under the limit. Copies that linked devices are reading stay.
func (d *Device) makeRoom(n int64) bool {
	m := &d.mem
	for c := m.clean.front(); c != nil && m.used+n > m.limit; {
		next := c.lruNext
		if d.retire(c) {
			d.evict(c)
		}
		c = next
	}
	return m.used+n <= m.limit
}

func (d *Device) evict(c *devCopy) {
	m := &d.mem
	m.clean.remove(c)
	d.dropCopy(c)
	d.unmirror(c)
	m.used -= c.size
	d.stats.memUsed.Store(m.used)
	d.stats.evictions.Add(1)
	if err := d.be.Free(c.ptr); err != nil {
		d.log.Warn("gpu: free device copy", "device", d.name, "err", err)
	}
}

func (d *Device) hasIdleDirty() bool {
	for c := d.mem.owned.front(); c != nil; c = c.lruNext {
		if c.transfer == xferNone {
			return true
		}
	}
	return false
}

func (d *Device) pin(t *Task, i int, c *devCopy) {
	if c.readers == 0 && c.lruList != nil {
		c.lruList.remove(c)
	}
	if c.readers == 0 {
		d.mem.pinned += c.size
	}
	c.readers++
	t.fs[i] = flowState{copy: c, pinned: true}
	if t.flows[i].Access&Write != 0 {
		c.writers++
		t.fs[i].writer = true
		d.publish(c)
	}
}

// unpin drops t's use of flow i's copy; a copy nobody uses goes to the back
// of its LRU, and the epoch moves.
func (d *Device) unpin(t *Task, i int) {
	fs := &t.fs[i]
	if !fs.pinned {
		return
	}
	fs.pinned = false
	c := fs.copy
	if fs.writer {
		fs.writer = false
		c.writers--
		d.publish(c)
	}
	c.readers--
	if c.readers > 0 {
		return
	}
	d.mem.pinned -= c.size
	d.park(c)
	d.bumpEpoch()
}

// park puts an unpinned copy at the back of the LRU it belongs to.
func (d *Device) park(c *devCopy) {
	if c.dirty {
		d.mem.owned.pushBack(c)
	} else {
		d.mem.clean.pushBack(c)
	}
}

func (d *Device) unpinAll(t *Task) {
	for i := range t.fs {
		d.unpin(t, i)
	}
}

// stageInTransfers enqueues the H2D copies of t's stale read flows on s and
// returns how many it enqueued (the default stage-in after reserve).
func (d *Device) stageInTransfers(t *Task, s *Stream) (int, Result, error) {
	n := 0
	for i := range t.flows {
		f := &t.flows[i]
		c := t.fs[i].copy
		if c == nil {
			continue
		}
		host := f.Data.HostVersion()
		if f.Access&Read == 0 {
			if !c.valid || c.version < host {
				// Write-only: the content is about to be overwritten, but
				// the copy must not pass for a current one before then.
				c.valid, c.dirty, c.version = false, false, 0
				d.mirror(c)
			}
			continue
		}
		if c.valid && c.version >= host {
			if c.transfer == xferIn {
				// Another wrapper's copy into it is still in flight on this
				// in-order stream: count it, so that an event recorded
				// behind it gates the exec stage (skip-empty-events would
				// otherwise let the body read it before it lands).
				n++
			}
			continue // current, or newer than the host (kept on device)
		}
		if src, v := d.peerSource(f.Data, host); src.dev != nil {
			// A linked device holds it: copy device to device (peer.go).
			t.fs[i].src = src
			if err := s.be.(driver.PeerStream).CopyPeer(c.ptr, src.dev.be, src.c.ptr, c.size); err != nil {
				return n, Error, fmt.Errorf("gpu: stage-in peer copy from %s on %s: %w", src.dev.name, s.name, err)
			}
			d.stats.peerCopies.Add(1)
			host = v
		} else {
			src := f.Data.HostBytes()
			if int64(len(src)) < c.size {
				return n, Error, fmt.Errorf("%w: flow %d host copy has %d bytes, device copy %d", ErrMisuse, i, len(src), c.size)
			}
			if err := s.be.CopyHtoD(c.ptr, src[:c.size]); err != nil {
				return n, Error, fmt.Errorf("gpu: stage-in copy on %s: %w", s.name, err)
			}
		}
		d.stats.stageIns.Add(1)
		d.stats.bytesIn.Add(c.size)
		c.version, c.valid, c.dirty, c.transfer = host, true, false, xferIn
		d.mirror(c)
		t.fs[i].incoming = true
		n++
	}
	return n, Done, nil
}

// stageInComplete is the runtime's own complete-stage of the stage-in
// (transition 4): copies queued by t are now usable.
func (d *Device) stageInComplete(t *Task) error {
	moved := false
	for i := range t.fs {
		fs := &t.fs[i]
		if !fs.incoming {
			continue
		}
		fs.incoming = false
		if src := fs.src; src.dev != nil {
			fs.src = peerSrc{}
			d.releasePeer(src, true)
		}
		if fs.copy.transfer != xferIn {
			return fmt.Errorf("%w: flow %d of %v changed transfer state during its stage-in", ErrMisuse, i, t)
		}
		fs.copy.transfer = xferNone
		d.publish(fs.copy)
		moved = true
	}
	if moved {
		d.bumpEpoch()
	}
	return nil
}

// refreshPushout recomputes the write-back bits of t at the end of its exec
// stage (transition 7: for every member, not only the head).
func (t *Task) refreshPushout() {
	t.pushout = 0
	for i := range t.flows {
		f := &t.flows[i]
		if f.Data != nil && f.Access&Write != 0 && !f.KeepOnDevice && i < 64 {
			t.pushout |= 1 << i
		}
	}
}

// lateOnly reports whether t writes flows back and every one of them is Late.
func (t *Task) lateOnly() bool {
	if t.pushout == 0 {
		return false
	}
	for i := range t.flows {
		if t.pushout&(1<<i) != 0 && !t.flows[i].Late {
			return false
		}
	}
	return true
}

// deviceOnlyInput returns the index of a flow of t whose device copy holds a
// value the host copy lacks (dirty: written by an earlier task and kept on
// the device), or -1. Only t's predecessors can have made it dirty: t's own
// writes are marked at its stage-out.
func (t *Task) deviceOnlyInput() int {
	for i := range t.fs {
		if c := t.fs[i].copy; c != nil && c.valid && c.dirty {
			return i
		}
	}
	return -1
}

// stageOutTransfers is the default stage-out (transition 8): it releases
// the readers of read-only flows, marks written copies newer than the host,
// and enqueues the D2H of written flows with a pushout bit.
func (d *Device) stageOutTransfers(t *Task, s *Stream) (int, Result, error) {
	n := 0
	for i := range t.flows {
		f := &t.flows[i]
		fs := &t.fs[i]
		c := fs.copy
		if c == nil {
			continue
		}
		if f.Access&Write == 0 {
			d.unpin(t, i)
			continue
		}
		if !t.early { // an early completion marked it already
			d.markWritten(f, c)
		}
		if t.pushout&(1<<i) == 0 {
			continue
		}
		dst := f.Data.HostBytes()
		if int64(len(dst)) < c.size {
			return n, Disable, fmt.Errorf("%w: flow %d has no host mirror of %d bytes", ErrMisuse, i, c.size)
		}
		if err := s.be.CopyDtoH(dst[:c.size], c.ptr); err != nil {
			return n, Error, fmt.Errorf("gpu: stage-out copy on %s: %w", s.name, err)
		}
		c.transfer = xferOut
		fs.outgoing = true
		d.stats.stageOuts.Add(1)
		d.stats.bytesOut.Add(c.size)
		n++
	}
	return n, Done, nil
}

// markWritten gives a written copy the version after the newest one known.
func (d *Device) markWritten(f *Flow, c *devCopy) {
	v := f.Data.HostVersion()
	if c.valid && c.version > v {
		v = c.version
	}
	c.version, c.valid, c.dirty = v+1, true, true
	d.mirror(c)
}

// epilog settles the copies of a completed wrapper (transition 10):
// written-back flows make the host copy current and their device copy clean;
// the others stay dirty on the device.
func (d *Device) epilog(t *Task) {
	for i := range t.fs {
		fs := &t.fs[i]
		if fs.outgoing {
			fs.outgoing = false
			c := fs.copy
			c.transfer = xferNone
			c.dirty = false
			t.flows[i].Data.SetHostVersion(c.version)
			d.mirror(c)
		}
		d.unpin(t, i)
	}
}

// cleanout drops what a failed or given-up task did to device copies
// (terminal path, step 3): its written copies no longer hold anything usable, and every
// copy is unpinned.
func (d *Device) cleanout(t *Task) {
	for i := range t.fs {
		fs := &t.fs[i]
		c := fs.copy
		if c == nil {
			continue
		}
		if t.flows[i].Access&Write != 0 || fs.incoming || fs.outgoing {
			wasDirty := c.dirty
			c.valid, c.dirty, c.transfer = false, false, xferNone
			d.mirror(c)
			if c.lruList != nil && wasDirty {
				// Unpinned and listed as dirty: it is now clean garbage.
				d.mem.owned.remove(c)
				d.park(c)
			}
		}
		if src := fs.src; src.dev != nil {
			fs.src = peerSrc{}
			d.releasePeer(src, true)
		}
		fs.incoming, fs.outgoing = false, false
		d.unpin(t, i)
	}
	d.bumpEpoch()
}

// newWriteBack makes an uncounted eviction wrapper (w2r) for the
// unpinned dirty copies, oldest first, or returns nil when there are none.
func (d *Device) newWriteBack() *Task {
	var t *Task
	for next := d.mem.owned.front(); next != nil; {
		c := next
		next = c.lruNext
		if c.transfer != xferNone {
			continue
		}
		if c.version < c.data.HostVersion() {
			// The host copy moved on (an arena buffer recycled for another
			// datum, a newer version written back from elsewhere): this
			// value is obsolete, and writing it back would overwrite the
			// newer one.
			d.mem.owned.remove(c)
			c.valid, c.dirty = false, false
			d.mirror(c)
			d.park(c)
			continue
		}
		if t == nil {
			t = d.allocTask()
			t.kind = KindWriteBack
			t.priority = 1<<31 - 1 // before any task: it frees memory for them
		}
		c.transfer = xferOut
		t.wb = append(t.wb, c)
	}
	if t != nil {
		d.stats.writeBacks.Add(1)
	}
	return t
}

// writeBackTransfers enqueues the D2H copies of a w2r wrapper.
func (d *Device) writeBackTransfers(t *Task, s *Stream) (int, error) {
	for _, c := range t.wb {
		dst := c.data.HostBytes()
		if int64(len(dst)) < c.size {
			return 0, fmt.Errorf("%w: write-back of %d bytes has no host mirror", ErrMisuse, c.size)
		}
		if err := s.be.CopyDtoH(dst[:c.size], c.ptr); err != nil {
			return 0, fmt.Errorf("gpu: write-back copy on %s: %w", s.name, err)
		}
		d.stats.bytesOut.Add(c.size)
	}
	return len(t.wb), nil
}

// writeBackDone makes written-back copies clean and evictable, or leaves
// them dirty when the write-back failed.
func (d *Device) writeBackDone(t *Task, ok bool) {
	for _, c := range t.wb {
		c.transfer = xferNone
		if !ok || !c.dirty {
			continue
		}
		c.dirty = false
		c.data.SetHostVersion(c.version)
		d.mirror(c)
		if c.lruList != nil {
			d.mem.owned.remove(c)
			d.park(c)
		}
	}
	d.bumpEpoch()
}

// releaseMemory frees every device copy; Close calls it once no manager runs.
func (d *Device) releaseMemory() error {
	var errs []error
	for _, c := range d.dir.copies {
		d.unmirror(c)
		c.pub.Store(0)
		if err := d.be.Free(c.ptr); err != nil {
			errs = append(errs, err)
		}
		d.dropCopy(c)
	}
	d.mem.clean.reset()
	d.mem.owned.reset()
	d.mem.used = 0
	d.stats.memUsed.Store(0)
	return errors.Join(errs...)
}
