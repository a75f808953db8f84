package dynamic

import "errors"

// Errors returned by the package. A body's own error, or its panic, fails the graph with an
// *rt.TaskError that names the task ("GEMM(17)": the class and the insertion number).
var (
	// ErrNilData: an access names a nil datum.
	ErrNilData = errors.New("dynamic: nil datum")
	// ErrForeignData: an access names a datum registered with another graph.
	ErrForeignData = errors.New("dynamic: datum of another graph")
	// ErrMode: the datum cannot be accessed that way (a write to a datum registered read-only).
	ErrMode = errors.New("dynamic: access mode not allowed for this datum")
	// ErrGraphDone: an insertion after Wait, or a task inserted from a body of another graph.
	ErrGraphDone = errors.New("dynamic: graph already waited for")
	// ErrReadOnlyWritten: in debug mode, a body changed a datum it declared read-only.
	ErrReadOnlyWritten = errors.New("dynamic: body wrote a datum it declared read-only")
	// ErrNoBody: Insert without a body.
	ErrNoBody = errors.New("dynamic: task has no body")
	// ErrNotKept: WriteDOT on a graph created without KeepGraph.
	ErrNotKept = errors.New("dynamic: graph not kept (create it with KeepGraph)")
)
