package remote

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every malformed arrival wraps ErrMalformed and one of the specific ones,
// so both errors.Is(err, ErrMalformed) and errors.Is(err, ErrUnknownClass) hold.
var (
	// ErrMalformed: an arrival that this rank cannot accept (its cause is wrapped too).
	ErrMalformed = errors.New("remote: malformed message")
	// ErrUnknownTaskpool: a message names a taskpool that this rank never added.
	ErrUnknownTaskpool = errors.New("remote: unknown taskpool")
	// ErrUnknownClass: a message names a task class that the taskpool does not have.
	ErrUnknownClass = errors.New("remote: unknown task class")
	// ErrUnknownFlow: a message names a flow that the class does not have.
	ErrUnknownFlow = errors.New("remote: unknown flow")
	// ErrOutsideSpace: a message names an instance outside its class's execution space.
	ErrOutsideSpace = errors.New("remote: parameters outside the execution space")
	// ErrNoSuccessor: an activation reaches a rank where the flow has no successor.
	ErrNoSuccessor = errors.New("remote: activation without a local successor")
	// ErrSizeMismatch: a datum's size differs from its payload, its registration or what the
	// receiver expects.
	ErrSizeMismatch = errors.New("remote: datum size mismatch")
	// ErrTypeMismatch: a datum's type is unknown or differs from what the receiver expects.
	ErrTypeMismatch = errors.New("remote: datum type mismatch")
	// ErrUnsupportedType: a flow holds a value that cannot travel between ranks.
	ErrUnsupportedType = errors.New("remote: value type cannot be sent to another rank")
	// ErrRemoteFailure: the taskpool failed on another rank (RemoteError says where and why).
	ErrRemoteFailure = errors.New("remote: taskpool failed on another rank")
	// ErrClosed: the Node is closed.
	ErrClosed = errors.New("remote: node closed")
)

// malformed wraps a specific sentinel with ErrMalformed and a description.
func malformed(kind error, format string, args ...any) error {
	return fmt.Errorf("%w: %w: %s", ErrMalformed, kind, fmt.Sprintf(format, args...))
}

// RemoteError is the failure of a taskpool on another rank, as reported to this one: the
// rank where it happened and the error text there (which names the task and the cause).
type RemoteError struct {
	Rank  int
	Cause string
}

func (e *RemoteError) Error() string { return fmt.Sprintf("rank %d: %s", e.Rank, e.Cause) }

// Is makes errors.Is(err, ErrRemoteFailure) hold.
func (e *RemoteError) Is(target error) bool { return target == ErrRemoteFailure }
