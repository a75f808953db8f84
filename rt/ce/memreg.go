package ce

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// RemoteKey names a registration of another rank (or this one) for Get and Put. It is opaque:
// rank, registry slot, generation and length, never an address (docs/ce.md, "Registrations and
// one-sided transfers"). Send it to peers with AppendBinary and read it back with ParseRemoteKey.
// The zero RemoteKey is invalid.
type RemoteKey struct {
	rank Rank
	slot uint32
	gen  uint32
	n    int64
}

// RemoteKeySize is the encoded size of a RemoteKey.
const RemoteKeySize = 4 + 4 + 4 + 8

// Rank is the rank that owns the registration.
func (k RemoteKey) Rank() Rank { return k.rank }

// Len is the registered length in bytes.
func (k RemoteKey) Len() int { return int(k.n) }

// AppendBinary appends the key's RemoteKeySize-byte encoding to b.
func (k RemoteKey) AppendBinary(b []byte) ([]byte, error) {
	b = binary.LittleEndian.AppendUint32(b, uint32(k.rank))
	b = binary.LittleEndian.AppendUint32(b, k.slot)
	b = binary.LittleEndian.AppendUint32(b, k.gen)
	return binary.LittleEndian.AppendUint64(b, uint64(k.n)), nil
}

// ParseRemoteKey reads a key written by AppendBinary.
func ParseRemoteKey(b []byte) (RemoteKey, error) {
	if len(b) < RemoteKeySize {
		return RemoteKey{}, fmt.Errorf("%w: %d bytes, want %d", ErrBadKey, len(b), RemoteKeySize)
	}
	le := binary.LittleEndian
	return RemoteKey{
		rank: Rank(le.Uint32(b)),
		slot: le.Uint32(b[4:]),
		gen:  le.Uint32(b[8:]),
		n:    int64(le.Uint64(b[12:])),
	}, nil
}

// MemReg is a ref-counted registration (docs/ce.md, "Registrations and one-sided transfers"). The owner holds one reference and drops
// it with Release; every Get or Put that uses it, on either side, holds another while it is in
// flight. The transport registration ends once, on the comm goroutine, when the last
// reference goes, so an owner may Release while transfers still run.
type MemReg struct {
	e     *Engine
	mem   Mem
	slot  uint32
	gen   uint32
	refs  atomic.Int32
	owned atomic.Bool // the owner has not released yet

	mu      sync.Mutex // guards the transport registration
	lkey    LocalKey
	regd    bool  // the transport knows it
	regErr  error // the transport refused it
	pinned  bool
	pinner  runtime.Pinner
	dropped bool // unregistered (or abandoned at shutdown)
}

// Key is the registration's remote key, to send to peers.
func (r *MemReg) Key() RemoteKey {
	return RemoteKey{rank: r.e.rank, slot: r.slot, gen: r.gen, n: int64(r.mem.Len())}
}

// Len is the registered length.
func (r *MemReg) Len() int { return r.mem.Len() }

// Mem is the registered memory.
func (r *MemReg) Mem() Mem { return r.mem }

// Release drops the owner's reference. Transfers in flight keep the registration alive until
// they complete. A second Release returns ErrReleased and is reported.
func (r *MemReg) Release() error {
	if !r.owned.CompareAndSwap(true, false) {
		err := fmt.Errorf("%w: MemReg released twice", ErrReleased)
		r.e.report(err)
		return err
	}
	r.unref(false)
	return nil
}

// ref takes a reference for a transfer; it fails once the count reached zero.
func (r *MemReg) ref() bool {
	for {
		n := r.refs.Load()
		if n <= 0 {
			return false
		}
		if r.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// unref drops a reference; the last one unregisters, on the comm goroutine.
func (r *MemReg) unref(onComm bool) {
	if r.refs.Add(-1) != 0 {
		return
	}
	if onComm {
		r.e.unregister(r)
		return
	}
	if !r.e.sq.push(op{kind: opUnregister, reg: r}) {
		// Shutdown sealed the queue: the registry's teardown unregisters whatever is left.
		return
	}
	r.e.kick()
}

// ensure registers r with the transport once. Only goroutines allowed to call the transport
// (the comm goroutine, direct workers) call it.
func (r *MemReg) ensure() (LocalKey, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.regd && r.regErr == nil && !r.dropped {
		k, err := r.e.t.Register(r.mem)
		if err != nil {
			r.regErr = err
		} else {
			r.lkey, r.regd = k, true
			r.e.stats.transportRegs.Add(1)
		}
	}
	if r.dropped {
		return 0, fmt.Errorf("%w: registration already dropped", ErrReleased)
	}
	return r.lkey, r.regErr
}

// drop ends the transport registration (if any) and unpins; closed says the transport is gone.
func (r *MemReg) drop(transportOpen bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dropped {
		return
	}
	r.dropped = true
	if r.regd && transportOpen {
		if err := r.e.t.Unregister(r.lkey); err != nil {
			r.e.report(fmt.Errorf("ce: unregister: %w", err))
		}
		r.e.stats.transportUnregs.Add(1)
	}
	r.regd = false
	if r.pinned {
		r.pinner.Unpin()
		r.pinned = false
	}
}

// registry maps remote-key slots to registrations. Lookups come from the comm goroutine
// (serving peers); additions from any Caller; a slot stays taken until its registration has
// been dropped, so shutdown can find every transport registration.
type registry struct {
	mu     sync.Mutex
	slots  []*MemReg
	gens   []uint32
	free   []uint32
	closed bool
}

func (g *registry) add(r *MemReg) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	var s uint32
	if k := len(g.free); k > 0 {
		s = g.free[k-1]
		g.free = g.free[:k-1]
	} else {
		s = uint32(len(g.slots))
		g.slots = append(g.slots, nil)
		g.gens = append(g.gens, 0)
	}
	g.gens[s]++
	r.slot, r.gen = s, g.gens[s]
	g.slots[s] = r
	return true
}

// lookup returns the live registration for (slot, gen) with a reference taken, or nil.
func (g *registry) lookup(slot, gen uint32) *MemReg {
	g.mu.Lock()
	defer g.mu.Unlock()
	if int(slot) >= len(g.slots) {
		return nil
	}
	r := g.slots[slot]
	if r == nil || r.gen != gen || !r.ref() {
		return nil
	}
	return r
}

func (g *registry) remove(r *MemReg) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if int(r.slot) < len(g.slots) && g.slots[r.slot] == r {
		g.slots[r.slot] = nil
		g.free = append(g.free, r.slot)
	}
}

// closeAll drops every registration still present; later additions fail.
func (g *registry) closeAll(transportOpen bool) {
	g.mu.Lock()
	g.closed = true
	regs := g.slots
	g.slots = nil
	g.mu.Unlock()
	for _, r := range regs {
		if r != nil {
			r.drop(transportOpen)
		}
	}
}
