package rt

// Generated code only.
//
// This file is the contract between rt and the code that jdf2go gen writes: the version
// constant a generated file checks, the input chains of a class's data flows and the
// endpoints they select, the unpacking of a task's globals and typed flow values in a hook,
// and the check of the collections a generated constructor is given. Nothing here is meant
// for programs that build their task classes by hand: they fill TaskClass's function fields
// (Goal, Prepare, Predecessors) and read flows with Task.Flow. The identifiers are exported
// only because generated code lives in other packages; they change with the generator, and
// APIv3 changes when they change incompatibly.
//
// None of the functions a task runs allocates on success, so they keep the
// zero-allocations-per-task promise.

import (
	"errors"
	"fmt"
	"reflect"
)

// APIv3 is the version of the contract between generated code and rt. Generated files contain
// `const _ = rt.APIv3`; an incompatible change of the contract renames the constant, so a
// stale generated file fails to build with an error that names it.
const APIv3 = 3

// Input chains: generated code describes the input chain of each data flow once, as an
// InputChain in TaskClass.Inputs whose Select function evaluates the guards in order and
// returns the endpoint of the first one that holds, an Input. rt derives the readiness goal,
// the binding of memory inputs and the predecessor iteration of the class from that one
// table (TaskClass.goal, prepare and predecessors).

// InputChain is the input chain of one data flow of a task class.
type InputChain struct {
	// Flow is the flow's index in TaskClass.Flows.
	Flow int
	// Pos is the flow's source position ("file.jdf:12:8"): the error of a chain whose
	// guards all fail, and Verify's report of it, point here.
	Pos string
	// Task says that the chain may select a task: only then does it count in the goal.
	Task bool
	// Memory says that the chain may select a collection element, NEW or NULL: without it
	// a flow that already holds a copy needs no selection.
	Memory bool
	// Select evaluates the chain for the instance whose locals are l and returns the
	// selected endpoint (TaskInput, DataInput, NewInput, NullInput), or the zero Input when
	// no guard holds. It returns a value so that nothing escapes to the heap.
	Select func(tp *Taskpool, l *Locals) Input
}

type inputKind uint8

const (
	inputNone inputKind = iota
	inputTask
	inputData
	inputNew
	inputNull
)

// Input is the endpoint an input chain selects.
type Input struct {
	l       Locals // a task endpoint's locals
	kind    inputKind
	inSpace bool
	dep     int
	peer    *TaskClass
	flow    int
	coll    Collection
	ix      Index
	arena   string
	pos     string
	text    string
}

// TaskInput selects flow peerFlow of the instance of peer whose locals are *l: dep is the
// dependency's index in its flow, inSpace the result of peer's Complete on l (called by
// generated code, so that it is a direct call), pos and text the endpoint's position and
// JDF text.
func TaskInput(dep int, peer *TaskClass, peerFlow int, inSpace bool, l *Locals, pos, text string) Input {
	return Input{l: *l, kind: inputTask, inSpace: inSpace, dep: dep, peer: peer, flow: peerFlow, pos: pos, text: text}
}

// DataInput selects element ix of collection c.
func DataInput(dep int, c Collection, ix Index, pos string) Input {
	return Input{kind: inputData, dep: dep, coll: c, ix: ix, pos: pos}
}

// NewInput selects a fresh copy from the named arena.
func NewInput(dep int, arena, pos string) Input {
	return Input{kind: inputNew, dep: dep, arena: arena, pos: pos}
}

// NullInput selects no data.
func NullInput(dep int) Input { return Input{kind: inputNull, dep: dep} }

// inputGoal returns the readiness goal contributed by the input chains: with Counter
// readiness the number of chains that select a task inside its execution space, with Mask
// readiness the bit set of their flows.
func inputGoal(tp *Taskpool, l *Locals, chains []InputChain, r Readiness) uint32 {
	var n uint32
	for i := range chains {
		ch := &chains[i]
		if !ch.Task {
			continue
		}
		if in := ch.Select(tp, l); in.kind != inputTask || !in.inSpace {
			continue
		}
		if r == Mask {
			n |= 1 << ch.Flow
		} else {
			n++
		}
	}
	return n
}

// bindInputs binds the memory inputs that the chains select (a collection element, a NEW
// copy, NULL) and checks that the inputs selected from tasks arrived. Its errors name the
// endpoint's position and the flow.
func (t *Task) bindInputs(chains []InputChain) error {
	for i := range chains {
		ch := &chains[i]
		if !ch.Memory && t.flows[ch.Flow] != nil {
			continue
		}
		in := ch.Select(t.Taskpool(), &t.l)
		name := t.Class().Flows[ch.Flow].Name
		switch in.kind {
		case inputNone:
			return fmt.Errorf("%s: flow %s: %w", ch.Pos, name, ErrNoInput)
		case inputTask:
			if t.flows[ch.Flow] != nil {
				break
			}
			src := taskName(in.peer, &in.l)
			if !in.inSpace {
				return fmt.Errorf("%s: flow %s: no data arrived from %s: %s is outside the execution space of %s",
					in.pos, name, in.text, src, in.peer.Name)
			}
			// A NULL forwarded fails its sender (Edges.Task), so the selection changed after
			// the goal was computed: a guard reads data that a body wrote meanwhile.
			return fmt.Errorf("%s: flow %s: no data arrived from %s: the input guards select %s now, but did not "+
				"when the task was made ready (a guard reads data that changed meanwhile)", in.pos, name, in.text, src)
		case inputData:
			if err := t.BindElement(ch.Flow, in.coll, in.ix); err != nil {
				return fmt.Errorf("%s: flow %s: %w", in.pos, name, err)
			}
		case inputNew:
			if err := t.BindNew(ch.Flow, in.arena); err != nil {
				return fmt.Errorf("%s: flow %s: %w", in.pos, name, err)
			}
		case inputNull:
			t.SetFlow(ch.Flow, nil)
		}
	}
	return nil
}

// inputs reports, for the chains of the flows in flows, the endpoint each one selects: a
// task inside its space with Task, one outside with outside, an element with Data, and a
// chain whose guards all fail with noInput. NEW and NULL endpoints have no edge.
func (e *Edges) inputs(tp *Taskpool, l *Locals, flows FlowMask, chains []InputChain) {
	for i := range chains {
		ch := &chains[i]
		if flows&(1<<ch.Flow) == 0 {
			continue
		}
		in := ch.Select(tp, l)
		switch in.kind {
		case inputNone:
			e.noInput(ch.Flow)
		case inputTask:
			e.L = in.l
			e.Instance(in.inSpace, ch.Flow, in.dep, in.peer, in.flow)
		case inputData:
			e.Data(ch.Flow, in.dep, in.coll, in.ix)
		}
	}
}

// inputPos returns the position of the input chain of flow, or "".
func (tc *TaskClass) inputPos(flow int) string {
	for i := range tc.Inputs {
		if tc.Inputs[i].Flow == flow {
			return tc.Inputs[i].Pos
		}
	}
	return ""
}

// EvaluateOf adapts the evaluate function of a body (BODY [evaluate = fn]) to
// Incarnation.Evaluate: a func(*Task) error answers nil (run this body), Next (try the next
// body) or another error (fail the task), as PaRSEC's evaluate answers DONE, NEXT or ERROR;
// a func(*Task) bool answers true (run) or false (next).
func EvaluateOf[F func(*Task) bool | func(*Task) error](f F) func(*Task) error {
	switch f := any(f).(type) {
	case func(*Task) error:
		return f
	case func(*Task) bool:
		return func(t *Task) error {
			if f(t) {
				return nil
			}
			return Next
		}
	}
	panic("rt: EvaluateOf: unreachable")
}

// A task's globals and flow values, and the binding of its memory inputs.

// FlowValue returns the value of flow i of t as a T: the zero T when the flow holds no data
// (NULL, CTL or unbound), and an error naming the flow when it holds a value of another type.
// It is a function, not a method, because Go methods cannot have type parameters.
func FlowValue[T any](t *Task, i int) (T, error) {
	var v T
	c := t.Flow(i)
	if c == nil || c.Value == nil {
		return v, nil
	}
	v, ok := c.Value.(T)
	if !ok {
		return v, fmt.Errorf("flow %s holds a %T, not a %T", t.Class().Flows[i].Name, c.Value, v)
	}
	return v, nil
}

// TaskGlobals returns the globals of t's taskpool as a G (the generated taskpool type) and
// t's locals: the first line of a generated hook.
func TaskGlobals[G any](t *Task) (G, *Locals) {
	return t.Taskpool().Globals().(G), &t.l
}

// FlowAs is FlowValue for hooks that unpack several flows: it returns the value of flow i
// of t, and on a type mismatch the zero value, recording the error in *err unless *err
// already holds one.
func FlowAs[T any](t *Task, i int, err *error) T {
	v, e := FlowValue[T](t, i)
	if e != nil && *err == nil {
		*err = e
	}
	return v
}

// BindElement binds flow i of t to the host copy of element ix of collection c (a memory
// input such as `<- A(m, k)`). It fails when the element is not stored on this rank.
func (t *Task) BindElement(i int, c Collection, ix Index) error {
	d := c.DataOf(ix)
	if d == nil {
		return fmt.Errorf("element %v is not stored on this rank", ix)
	}
	t.SetFlow(i, d.Host())
	return nil
}

// BindNew binds flow i of t to a fresh copy from the arena registered under arena (NEW in
// JDF); the task owns the copy's reference. It fails with ErrNoArena when there is none.
func (t *Task) BindNew(i int, arena string) error {
	c, err := t.Taskpool().newCopy(arena)
	if err != nil {
		return err
	}
	t.SetFlow(i, c)
	return nil
}

// The check that generated constructors run on each data collection they are given, before
// anything can index it: a nil or malformed collection would otherwise fail deep inside a
// task, or make a rank wait for tiles that nobody owns.

// ErrBadCollection is wrapped by the errors of VerifyCollection.
var ErrBadCollection = errors.New("rt: bad collection")

// VerifyCollection checks a data collection given to a generated constructor:
//   - it is not nil, nor an interface holding a nil pointer, map, slice, func or chan;
//   - a *TiledMatrix has 2 indices and a *Vector 1, as many as dims (the number of
//     arguments the program's references use), a process grid that contains its rank, and
//     tile counts that agree with its sizes;
//   - a Validate() error method of c, if it has one, returns nil.
//
// The error matches ErrBadCollection and wrap (a generated program's Err<Name>Argument),
// and its text ends with wrap's: "is nil: Chain: bad argument". A Validate error becomes
// "<wrap>: <its text>" and matches it too. wrap may be nil; ErrBadCollection's text stands
// for it then.
func VerifyCollection(c Collection, dims int, wrap error) error {
	tag, errs := wrap, []error{ErrBadCollection, wrap}
	if wrap == nil {
		tag, errs = ErrBadCollection, errs[:1]
	}
	bad := func(format string, a ...any) error {
		return &collectionError{msg: fmt.Sprintf(format, a...) + ": " + tag.Error(), errs: errs}
	}
	if c == nil {
		return bad("is nil")
	}
	switch v := reflect.ValueOf(c); v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		if v.IsNil() {
			return bad("is a nil %s", v.Type())
		}
	}
	switch c := c.(type) {
	case *TiledMatrix:
		if dims != 2 {
			return bad("is a TiledMatrix (2 indices) but the program uses %d", dims)
		}
		// A rank beyond the grid is allowed: it owns no tile (uneven jobs).
		if c.P < 1 || c.Q < 1 || c.KP < 1 || c.KQ < 1 || c.Rank < 0 {
			return bad("process grid %dx%d (supertiles %dx%d) with rank %d is invalid", c.P, c.Q, c.KP, c.KQ, c.Rank)
		}
		if c.MB < 1 || c.NB < 1 || c.MT != (c.M+c.MB-1)/c.MB || c.NT != (c.N+c.NB-1)/c.NB {
			return bad("%dx%d matrix in %dx%d tiles of %dx%d is inconsistent", c.M, c.N, c.MT, c.NT, c.MB, c.NB)
		}
	case *Vector:
		if dims != 1 {
			return bad("is a Vector (1 index) but the program uses %d", dims)
		}
		if c.Ranks < 1 || c.Rank < 0 || c.Rank >= c.Ranks {
			return bad("%d ranks do not contain rank %d", c.Ranks, c.Rank)
		}
		if c.NB < 1 || c.NT != (c.N+c.NB-1)/c.NB {
			return bad("vector of %d in %d blocks of %d is inconsistent", c.N, c.NT, c.NB)
		}
	}
	if v, ok := c.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return &collectionError{msg: tag.Error() + ": " + err.Error(), errs: append(errs[:len(errs):len(errs)], err)}
		}
	}
	return nil
}

// collectionError is an error of VerifyCollection: its own text, and the errors it matches.
type collectionError struct {
	msg  string
	errs []error
}

func (e *collectionError) Error() string   { return e.msg }
func (e *collectionError) Unwrap() []error { return e.errs }
