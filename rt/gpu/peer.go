package gpu

// Device-to-device transfers (docs/gpu.md, "The manager" "remote increment", transitions 2, 4
// and 11, scenario 40).
//
// Devices opened together are linked (Link): a stage-in on device B that needs a datum
// whose copy on a linked device A is current copies it from A's memory (a peer copy on B's
// stage-in stream) instead of from the host. While the copy runs, A must neither free its
// copy nor change its content. Actors and state:
//
//   - A's manager owns its copies (mem); each copy also has two atomics that other devices
//     use: pub, the version a peer may read (0: none: invalid, being written or being
//     transferred in), and peers, the number of peer copies reading it.
//   - A's directory (dir.mu + dir.copies): the manager takes dir.mu to add or remove a copy;
//     other devices look copies up under the read lock.
//
// Acquire (B's manager, lock-free): look the datum up in A's directory, increment peers,
// then check pub. A, before it frees a copy or changes its content (eviction, a write, a
// refresh from the host), stores pub = 0, then checks peers; if it is not 0 it gives up for
// now and marks the copy peerWait. Both sides use sequentially consistent atomics in
// opposite orders, so either B sees pub = 0 (and gives its increment back) or A sees B's
// increment (and leaves the copy alone): never both proceed.
//
// Release (B's manager, at the stage-in completion of the peer copy, or when it gave an
// increment back): decrementing peers is not enough, because A may be waiting for it (a
// reservation parked on peerWait retries only when A's data_avail_epoch moves), and that
// state belongs to A's manager. So the release is A's bookkeeping, done under A's role:
//
//   - A has no manager (outstanding == 0): B takes A's transient idle lock (0 -> -1), does
//     the bookkeeping itself (decrement, clear peerWait and bump A's epoch), and unlocks;
//   - A has a manager (outstanding > 0): B increments A's counter (CAS v -> v+1, v > 0:
//     the manager cannot leave before it sees the command) and pushes a counted
//     D2D_COMPLETE wrapper on A's pending queue; A's manager sends it straight to its
//     stage-out FIFO, does the bookkeeping there, and releases it (-1).
//
// Rejected: one lock per copy taken by both managers (a manager would block on another's
// stage-in); letting B touch A's LRU and epoch directly (races with A's manager); asking
// A's manager to pin the copy for B (a round trip per transfer, with B parked meanwhile).

import (
	"fmt"
	"sync"

	"github.com/jdf2go/jdf2go/rt/gpu/driver"
)

// peerSrc is the peer copy that a flow's stage-in reads.
type peerSrc struct {
	dev *Device
	c   *devCopy
}

// directory is the part of a device's memory that other goroutines read: linked
// devices and submitting workers (hintCopies) look copies up in it. It is kept
// off the lines of the manager's accounting (memory), which changes at every
// release: readers on other cores would make each of those writes a miss.
type directory struct {
	mu     sync.RWMutex      // held for writing when copies changes
	copies map[Data]*devCopy // the device's copies by datum; the manager changes it
	peers  []*Device         // linked devices, set by link before any submission
	read   bool              // some linked device copies from this one (link)
}

// link lets each device copy data from the others' memory (where the backends allow it,
// driver.PeerBackend). It runs once, before anything is submitted to the devices: Open
// links the devices it opens.
func link(devs ...*Device) error {
	for _, a := range devs {
		pb, ok := a.be.(driver.PeerBackend)
		if !ok {
			continue
		}
		for _, b := range devs {
			if a == b || a.linked(b) {
				continue
			}
			ok, err := pb.EnablePeer(b.be)
			if err != nil {
				return fmt.Errorf("gpu: link %s to %s: %w", a.name, b.name, err)
			}
			if ok {
				a.dir.peers = append(a.dir.peers, b)
				b.dir.read = true
			}
		}
	}
	return nil
}

func (d *Device) linked(o *Device) bool {
	for _, p := range d.dir.peers {
		if p == o {
			return true
		}
	}
	return false
}

// Peers returns the devices this device copies data from (Link).
func (d *Device) Peers() []*Device { return d.dir.peers }

// publish is c.publish on a device that a linked device copies from. On any
// other nobody reads pub (Link comes before any submission), and the store,
// an atomic exchange at the start and at the end of every write, is skipped:
// pub stays 0, none readable.
func (d *Device) publish(c *devCopy) {
	if d.dir.read {
		c.publish()
	}
}

// publish makes c readable by peers at its version when its content is usable, and not
// otherwise. The manager calls it whenever c changes (mirror does).
func (c *devCopy) publish() {
	if c.valid && c.transfer != xferIn && c.writers == 0 {
		c.pub.Store(c.version)
		return
	}
	c.pub.Store(0)
}

// retire withdraws c from peers before the manager frees it or changes its content. It
// reports false, leaving c readable and marked peerWait, while peer copies read it.
func (d *Device) retire(c *devCopy) bool {
	c.pub.Store(0)
	if c.peers.Load() == 0 {
		return true
	}
	c.peerWait = true
	c.publish()
	return false
}

// setCopy and dropCopy change the directory.
func (d *Device) setCopy(data Data, c *devCopy) {
	d.dir.mu.Lock()
	d.dir.copies[data] = c
	d.dir.mu.Unlock()
}

func (d *Device) dropCopy(c *devCopy) {
	d.dir.mu.Lock()
	delete(d.dir.copies, c.data)
	d.dir.mu.Unlock()
	c.gone = true
}

// hintCopies looks up the device copies of t's flows for the manager, on the
// submitting worker (under the directory's read lock, as linked devices look
// copies up), so that the reservation of a wrapper whose data are on the
// device does not pay a map lookup per flow on the manager, which does the
// work of every task of the device in turn. The manager checks each hint
// before using it (copyFor).
func (d *Device) hintCopies(t *Task) {
	d.dir.mu.RLock()
	for i := range t.flows {
		if data := t.flows[i].Data; data != nil {
			t.fs[i].hint = d.dir.copies[data]
		}
	}
	d.dir.mu.RUnlock()
}

// copyFor returns the device copy of flow i of t, or nil: the submitter's
// hint while that copy is still the datum's (a dropped copy is never
// reused), otherwise what the directory holds now. Manager only.
func (d *Device) copyFor(t *Task, i int) *devCopy {
	data := t.flows[i].Data
	if c := t.fs[i].hint; c != nil && !c.gone && c.data == data {
		return c
	}
	return d.dir.copies[data]
}

// peerSource finds a linked device whose copy of data holds version want or newer, and
// acquires it (one more peer reader); nil when there is none.
func (d *Device) peerSource(data Data, want uint64) (peerSrc, uint64) {
	for _, p := range d.dir.peers {
		p.dir.mu.RLock()
		c := p.dir.copies[data]
		p.dir.mu.RUnlock()
		if c == nil {
			continue
		}
		if v := c.pub.Load(); v == 0 || v < want {
			continue
		}
		c.peers.Add(1)
		if v := c.pub.Load(); v != 0 && v >= want {
			p.stats.peerPins.Add(1)
			return peerSrc{p, c}, v
		}
		// Retired meanwhile; our increment may have been seen: give it back through
		// p's bookkeeping.
		d.releasePeer(peerSrc{p, c}, false)
	}
	return peerSrc{}, 0
}

// releasePeer gives back a peer reader of src (remote increment; see the top of
// this file). counted says whether the reader was counted in src.dev's peer pins.
func (d *Device) releasePeer(src peerSrc, counted bool) {
	a := src.dev
	for spins := 0; ; spins++ {
		if a.closed.Load() {
			// Close found no counted peer reader (or it would have failed with
			// ErrLeak): this is a failed acquisition racing with it, and no manager
			// of a waits for it.
			a.peerReleased(src.c, counted)
			return
		}
		switch v := a.outstanding.Load(); {
		case v == 0:
			if a.outstanding.CompareAndSwap(0, -1) {
				a.peerReleased(src.c, counted)
				a.stats.d2dDirect.Add(1)
				a.outstanding.Store(0)
				return
			}
		case v > 0:
			if a.outstanding.CompareAndSwap(v, v+1) {
				w := a.allocTask()
				w.kind = KindD2DComplete
				w.peer = src.c
				w.peerCounted = counted
				w.priority = 1<<31 - 1 // bookkeeping that may unblock parked work
				w.counted = true
				w.state = StateDevPending
				a.stats.d2dCommands.Add(1)
				a.pending.push(w)
				return
			}
		}
		// -1: another device holds a's idle lock for a moment.
		defaultBackoff(spins)
	}
}

// peerReleased is the bookkeeping of a released peer reader, under d's role (its manager,
// or its idle lock): a copy that d's manager could not retire becomes retirable, and the
// epoch moves so that what waited for it retries.
func (d *Device) peerReleased(c *devCopy, counted bool) {
	if counted {
		d.stats.peerPins.Add(-1)
	}
	if c.peers.Add(-1) == 0 && c.peerWait {
		c.peerWait = false
		d.bumpEpoch()
	}
}
