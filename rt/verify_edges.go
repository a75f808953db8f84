package rt

// Hooks for the dependencies that successor and predecessor walks drop instead of
// reporting with Edges.Task: a target outside its space and a data flow with no true input
// guard. At run time the runtime skips such a target, as jdf2c does (it keeps the first one
// between the steps of a range for the stall report), and the task that has no input waits
// for an activation or fails; when rt walks the graph for Verify, the visitor hears about
// them through DropVisitor.

// DropVisitor is implemented by an EdgeVisitor that also wants to hear about the
// dependencies that Successors and Predecessors drop (Verify's visitor does). A visitor that
// does not implement it never hears about them.
type DropVisitor interface {
	// Outside reports dependency dep of flow, whose guard holds but whose single target,
	// the instance of peer whose locals are in l, lies outside peer's execution space.
	Outside(flow, dep int, peer *TaskClass, peerFlow int, l *Locals)
	// NoInput reports a data flow of the visited instance whose input guards are all false.
	NoInput(flow int)
}

// outside reports that the target of dependency dep of flow, the instance of peer whose
// locals are in e.L, lies outside peer's execution space (peer's Complete returned false), so
// the dependency is dropped: Instance calls it for a dependency on a single instance; a
// range may legitimately reach past the space, and its targets outside are skipped silently
// (TaskIf). At run time the first dropped output whose target lies between the steps of a
// range (TaskClass.OffStep) is kept for the stall report (stall.go).
func (e *Edges) outside(flow, dep int, peer *TaskClass, peerFlow int) {
	if e.tp != nil {
		e.dropOutside(flow, dep, peer, peerFlow)
	}
}

// dropOutside is kept out of line so that outside, a nil check, inlines into Instance.
//
//go:noinline
func (e *Edges) dropOutside(flow, dep int, peer *TaskClass, peerFlow int) {
	if e.visit == nil {
		if e.src != nil {
			e.tp.noteDropped(e.src, flow, peer, peerFlow, &e.L)
		}
		return
	}
	if d, ok := e.visit.(DropVisitor); ok {
		d.Outside(flow, dep, peer, peerFlow, &e.L)
	}
}

// noInput reports that no input guard of data flow holds for the visited instance: the
// walk of a class's input chains calls it where a chain ends without a true guard (the
// binding of inputs fails such a task with ErrNoInput at run time).
func (e *Edges) noInput(flow int) {
	if d, ok := e.visit.(DropVisitor); ok {
		d.NoInput(flow)
	}
}

// TaskIf reports a member of a range of instances of peer (its locals in e.L) with Task when
// inSpace; members outside their space are skipped. Generated code passes the result of the
// peer class's Complete.
func (e *Edges) TaskIf(inSpace bool, flow, dep int, peer *TaskClass, peerFlow int) {
	if inSpace {
		e.Task(flow, dep, peer, peerFlow)
	}
}

// Instance reports an output or input endpoint that names a single instance of peer (its
// locals in e.L): Task when inSpace, Outside otherwise. Generated code passes the result of
// the peer class's Complete.
func (e *Edges) Instance(inSpace bool, flow, dep int, peer *TaskClass, peerFlow int) {
	if inSpace {
		e.Task(flow, dep, peer, peerFlow)
	} else {
		e.outside(flow, dep, peer, peerFlow)
	}
}
