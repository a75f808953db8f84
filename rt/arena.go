package rt

import (
	"sync"
	"unsafe"
)

// Arena hands out reusable buffers for NEW flows (docs/language.md, "Flows"). A copy taken
// with Get is owned by the flows that hold it; when the last task holding it completes, rt
// returns it to the arena. The contents of a reused buffer are undefined, as with PaRSEC's NEW.
// An Arena is safe for concurrent use.
type Arena struct {
	pool  sync.Pool
	bytes int
}

// NewArena returns an arena of []float64 buffers of bytes/8 elements (the JDF spelling
// `tp.SetArena("DEFAULT", rt.NewArena(bytes))`).
func NewArena(bytes int) *Arena {
	n := max(bytes/8, 0)
	return NewArenaOf(bytes, func() any { return make([]float64, n) })
}

// NewArenaOf returns an arena whose buffers are made by newValue, for flows of other Go types;
// bytes is informational (remote transfers and device sizing read it through Bytes).
func NewArenaOf(bytes int, newValue func() any) *Arena {
	a := &Arena{bytes: bytes}
	a.pool.New = func() any {
		c := &Copy{Value: newValue(), arena: a}
		c.data = &Data{}
		c.data.copies[0].Store(c)
		c.state.Store(uint32(Exclusive))
		return c
	}
	return a
}

// NewSliceArena returns an arena of []E buffers of n elements. Generated constructors use it
// for the arenas whose element count the JDF gives (a `count` on a NEW or WRITE dependency).
func NewSliceArena[E any](n int) *Arena {
	var e E
	n = max(n, 0)
	return NewArenaOf(n*int(unsafe.Sizeof(e)), func() any { return make([]E, n) })
}

// Get returns a copy with one reference, owned by the caller (normally a task flow, through
// Task.SetFlow in generated Prepare).
func (a *Arena) Get() *Copy {
	c := a.pool.Get().(*Copy)
	c.refs.Store(1)
	c.fresh = false // Taskpool.newCopy sets it; other users (received data) fill the buffer
	return c
}

// put takes back a copy whose last reference was dropped. Bumping the host version marks every
// device copy left over from the buffer's previous life as stale.
func (a *Arena) put(c *Copy) {
	c.bumpVersion()
	a.pool.Put(c)
}
