package dynamic

import "fmt"

// Dependencies inferred from data (sequential consistency).
//
// Actors: inserters (the program's goroutines and bodies that insert), holding Graph.mu while
// they insert one task; workers completing tasks (task.go), which take each completing task's
// own lock.
//
// Each datum keeps, under Graph.mu, the tasks that produced its current version (last: one
// writer, or the members of a commute group) and the readers of that version. A new task T:
//   - Read: waits for every task of last (read after write); joins readers.
//   - Write, ReadWrite: waits for last and for readers (write after write, write after read);
//     becomes last alone, and readers empties.
//   - Commute: the first of a group waits for last and readers, which become the group's base;
//     later members wait for the same base, not for each other, and all of them form last.
//     At run time the datum's token lets one member at a time run (task.go). Any other access
//     closes the group.
//   - Scratch: no dependency; the body gets the datum as it is.
//
// A dependency is recorded as T's entry in the predecessor's successor list plus one in T's
// count, under the predecessor's lock and only while the predecessor has not completed (its
// generation is the one the datum recorded): a completed predecessor is no dependency. T's
// count starts at one, for its own insertion, and is dropped once every datum has been looked
// at: a predecessor completing meanwhile cannot make T ready before T is fully linked.
//
// So the result equals running the tasks in insertion order: every pair of accesses to one
// datum of which one writes runs in insertion order, readers of one version run in parallel,
// and commute members run in some order, one at a time, between the accesses around them.
//
// Rejected designs: renaming (a writer after slow readers gets fresh memory instead of waiting)
// is not done: it doubles the memory of the data it renames and is not needed by the programs
// measured so far; a datum lock per access instead of the graph's lock (a task accessing ten
// data takes ten locks, and gains nothing with one inserting goroutine).

// Mode is how a task accesses a datum.
type Mode uint8

const (
	// ReadMode: the task reads the datum and must not change it.
	ReadMode Mode = iota + 1
	// WriteMode: the task overwrites the datum without reading it.
	WriteMode
	// ReadWriteMode: the task reads and changes the datum.
	ReadWriteMode
	// CommuteMode: the task reads and changes the datum; tasks of consecutive Commute accesses
	// run in any order, one at a time.
	CommuteMode
	// ScratchMode: the task uses the datum's memory as scratch space; no dependency.
	ScratchMode
)

func (m Mode) String() string {
	switch m {
	case ReadMode:
		return "read"
	case WriteMode:
		return "write"
	case ReadWriteMode:
		return "read-write"
	case CommuteMode:
		return "commute"
	case ScratchMode:
		return "scratch"
	}
	return "Mode(?)"
}

func (m Mode) writes() bool { return m == WriteMode || m == ReadWriteMode || m == CommuteMode }

// Arg is an argument of Insert: a datum with its access mode (Read, Write, ReadWrite, Commute,
// Scratch), a task option (Priority, On, Affinity) or a GPU body (GPU).
type Arg interface{ arg() }

// access is an Arg naming a datum; one pointer-sized type per mode, so that an Arg holds it
// without an allocation.
type (
	readArg      struct{ d *datum }
	writeArg     struct{ d *datum }
	readWriteArg struct{ d *datum }
	commuteArg   struct{ d *datum }
	scratchArg   struct{ d *datum }
	priorityArg  int32
)

func (readArg) arg()      {}
func (writeArg) arg()     {}
func (readWriteArg) arg() {}
func (commuteArg) arg()   {}
func (scratchArg) arg()   {}
func (priorityArg) arg()  {}

// inner returns the datum of d, nil for a nil d.
func inner[T any](d *Data[T]) *datum {
	if d == nil {
		return nil
	}
	return &d.datum
}

// Read declares that the task reads d.
func Read[T any](d *Data[T]) Arg { return readArg{inner(d)} }

// Write declares that the task overwrites d without reading it.
func Write[T any](d *Data[T]) Arg { return writeArg{inner(d)} }

// ReadWrite declares that the task reads and changes d.
func ReadWrite[T any](d *Data[T]) Arg { return readWriteArg{inner(d)} }

// Commute declares that the task reads and changes d, in any order with the tasks of the
// Commute accesses next to it, one at a time (an accumulation).
func Commute[T any](d *Data[T]) Arg { return commuteArg{inner(d)} }

// Scratch hands d to the task as scratch memory: no dependency, no ordering.
func Scratch[T any](d *Data[T]) Arg { return scratchArg{inner(d)} }

// Priority sets the task's priority: higher runs first among ready tasks.
func Priority(p int32) Arg { return priorityArg(p) }

// ref names a task at one generation: the task it was when the reference was taken.
type ref struct {
	t   *task
	gen uint32
	seq int64 // the task's insertion number, for a kept graph
}

// live reports whether the referenced task has not completed.
func (r ref) live() bool { return r.t.gen.Load() == r.gen }

// use is one datum of a task with its mode.
type use struct {
	d    *datum
	mode Mode
}

// parse reads args into t's uses and options, merging two accesses of one datum into the
// stronger one. g.mu is held.
func (t *task) parse(args []Arg) error {
	for _, a := range args {
		var d *datum
		var m Mode
		switch a := a.(type) {
		case readArg:
			d, m = a.d, ReadMode
		case writeArg:
			d, m = a.d, WriteMode
		case readWriteArg:
			d, m = a.d, ReadWriteMode
		case commuteArg:
			d, m = a.d, CommuteMode
		case scratchArg:
			d, m = a.d, ScratchMode
		case priorityArg:
			t.prio = int32(a)
			continue
		case *GPUBody:
			if a == nil || a.fn == nil {
				return fmt.Errorf("%w: nil GPU body", ErrNoBody)
			}
			t.body = a
			continue
		case onArg, affinityArg:
			if err := t.placeArg(a); err != nil {
				return err
			}
			continue
		case nil:
			return ErrNilData
		default:
			return fmt.Errorf("dynamic: unknown argument %T", a)
		}
		switch {
		case d == nil:
			return fmt.Errorf("%w: argument %d (%s)", ErrNilData, len(t.uses), m)
		case d.g != t.g:
			return fmt.Errorf("%w: %s", ErrForeignData, d.name)
		case d.ro && m.writes():
			return fmt.Errorf("%w: %s is read-only, and the task declares %s", ErrMode, d.name, m)
		}
		if i := t.find(d); i >= 0 {
			t.uses[i].mode = merge(t.uses[i].mode, m)
			continue
		}
		t.uses = append(t.uses, use{d, m})
	}
	return nil
}

// find returns the index of d among t's uses, or -1.
func (t *task) find(d *datum) int {
	for i := range t.uses {
		if t.uses[i].d == d {
			return i
		}
	}
	return -1
}

// merge returns the mode of a task that accesses one datum in modes a and b.
func merge(a, b Mode) Mode {
	switch {
	case a == b:
		return a
	case a == ScratchMode:
		return b
	case b == ScratchMode:
		return a
	case a == CommuteMode || b == CommuteMode:
		return ReadWriteMode // a plain access of the datum closes its group
	case a == ReadMode && b == WriteMode, a == WriteMode && b == ReadMode:
		return ReadWriteMode
	}
	return ReadWriteMode
}

// link makes t wait for the tasks its uses depend on and records t as the datums' newest
// access. g.mu is held; t's count holds its insertion.
func (t *task) link() {
	for i := range t.uses {
		u := &t.uses[i]
		d := u.d
		switch u.mode {
		case ReadMode:
			t.after(d.last)
			d.commute = false
			d.readers = appendLive(d.readers, t.ref())
		case WriteMode, ReadWriteMode:
			t.after(d.last)
			t.after(d.readers)
			d.commute = false
			d.last = append(d.last[:0], t.ref())
			d.readers = d.readers[:0]
		case CommuteMode:
			if !d.commute || len(d.readers) > 0 {
				d.base = append(append(d.base[:0], d.last...), d.readers...)
				d.last, d.readers = d.last[:0], d.readers[:0]
				d.commute = true
			}
			t.after(d.base)
			d.last = appendLive(d.last, t.ref())
			t.commutes++
		}
	}
}

// ref returns a reference to t as it is now.
func (t *task) ref() ref { return ref{t, t.gen.Load(), t.seq} }

// after makes t wait for every live task of refs.
func (t *task) after(refs []ref) {
	for _, r := range refs {
		// A reference to t's own record names the task that had the record before it was
		// recycled, which has completed: an edge of the kept graph, nothing to wait for.
		if r.t != t {
			r.t.addSuccessor(r.gen, t)
		}
		if k := t.g.keep; k != nil {
			k.edge(r.seq, t.seq)
		}
	}
}

// appendLive appends r to refs, first dropping the completed tasks when refs is full, so that
// a datum read by many tasks keeps a list of those still running, not of every reader.
func appendLive(refs []ref, r ref) []ref {
	if len(refs) == cap(refs) && len(refs) >= 8 {
		n := 0
		for _, x := range refs {
			if x.live() {
				refs[n] = x
				n++
			}
		}
		clear(refs[n:])
		refs = refs[:n]
	}
	return append(refs, r)
}
