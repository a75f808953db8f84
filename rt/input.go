package rt

import "fmt"

// Input chains: generated code describes the input chain of each data flow once, as an
// InputChain whose Select function evaluates the guards in order and returns the endpoint
// of the first one that holds, an Input. The readiness goal (InputGoal), the binding of
// memory inputs (Task.BindInputs) and the predecessor iteration (Edges.Inputs) all read
// that one selection.

// InputChain is the input chain of one data flow of a task class.
type InputChain struct {
	// Flow is the flow's index in TaskClass.Flows.
	Flow int
	// Pos is the flow's source position ("file.jdf:12:8"), for the error of a chain whose
	// guards all fail.
	Pos string
	// TaskOnly says that every endpoint of the chain is a task: a flow that already holds a
	// copy needs no selection.
	TaskOnly bool
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

// InputGoal returns the readiness goal contributed by the input chains: with Counter
// readiness the number of chains that select a task inside its execution space, with Mask
// readiness the bit set of their flows.
func InputGoal(tp *Taskpool, l *Locals, chains []InputChain, r Readiness) uint32 {
	var n uint32
	for i := range chains {
		ch := &chains[i]
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

// BindInputs binds the memory inputs that the chains select (a collection element, a NEW
// copy, NULL) and checks that the inputs selected from tasks arrived. Its errors name the
// endpoint's position and the flow.
func (t *Task) BindInputs(chains []InputChain) error {
	for i := range chains {
		ch := &chains[i]
		if ch.TaskOnly && t.flows[ch.Flow] != nil {
			continue
		}
		in := ch.Select(t.Taskpool(), &t.l)
		name := t.Class().Flows[ch.Flow].Name
		switch in.kind {
		case inputNone:
			return fmt.Errorf("%s: flow %s: %w", ch.Pos, name, ErrNoInput)
		case inputTask:
			if t.flows[ch.Flow] == nil {
				return fmt.Errorf("%s: flow %s: no data arrived from %s (it is outside its execution space, or it sent NULL)",
					in.pos, name, in.text)
			}
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

// Inputs reports, for the chains of the flows in flows, the endpoint each one selects: a
// task inside its space with Task, one outside with Outside, an element with Data, and a
// chain whose guards all fail with NoInput. NEW and NULL endpoints have no edge.
func (e *Edges) Inputs(tp *Taskpool, l *Locals, flows FlowMask, chains []InputChain) {
	for i := range chains {
		ch := &chains[i]
		if flows&(1<<ch.Flow) == 0 {
			continue
		}
		in := ch.Select(tp, l)
		switch in.kind {
		case inputNone:
			e.NoInput(ch.Flow)
		case inputTask:
			e.L = in.l
			e.Instance(in.inSpace, ch.Flow, in.dep, in.peer, in.flow)
		case inputData:
			e.Data(ch.Flow, in.dep, in.coll, in.ix)
		}
	}
}

// InputGoalFunc returns a TaskClass.Goal for a class whose only inputs are the chains.
func InputGoalFunc(chains []InputChain, r Readiness) func(tp *Taskpool, l *Locals) uint32 {
	return func(tp *Taskpool, l *Locals) uint32 { return InputGoal(tp, l, chains, r) }
}

// BindInputsFunc returns a TaskClass.Prepare that binds the chains (Task.BindInputs).
func BindInputsFunc(chains []InputChain) func(t *Task) error {
	return func(t *Task) error { return t.BindInputs(chains) }
}

// InputsFunc returns a TaskClass.Predecessors for a class whose only inputs are the chains
// (Edges.Inputs).
func InputsFunc(chains []InputChain) func(tp *Taskpool, l *Locals, flows FlowMask, e *Edges) {
	return func(tp *Taskpool, l *Locals, flows FlowMask, e *Edges) { e.Inputs(tp, l, flows, chains) }
}
