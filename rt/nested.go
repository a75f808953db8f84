package rt

// Nested taskpools: a body that runs a taskpool of its own (PaRSEC's recursive bodies).
//
// Actors: the parent task P, whose body calls Task.RunNested(child, then) and returns its
// result; the child taskpool C, which runs on P's Context beside every other taskpool; and
// one waiter goroutine per call, owned by the Context (its WaitGroup, which Close joins).
//
//  1. RunNested marks C local, counts the waiter in the Context's WaitGroup, then adds C.
//     A local taskpool runs every task on the calling rank whatever its collections'
//     RankOf says, sends nothing to other ranks, and takes no taskpool sequence number, so
//     the ranks of a job keep numbering their common taskpools alike however many nested
//     ones each runs.
//  2. P's body returns Async: its worker goes back to the scheduler at once and runs C's
//     tasks with the others. A body never waits for C itself: with one worker, or with
//     every worker in such a body, nothing would be left to run C (Taskpool.Wait is
//     forbidden in bodies for that reason).
//  3. The waiter blocks until C ends or P's taskpool ends. If P's taskpool ends first (it
//     failed or was cancelled, or the Context closed), the waiter cancels C with that error
//     and waits for C.
//  4. When C succeeded, the waiter calls then (copy-back of sub-tiles, a check) and
//     completes P; when C or then failed, it fails P with an error naming C and wrapping
//     C's (a *TaskError naming the task of C that failed). A task of a failed taskpool is
//     dropped, so step 3 ends in Fail too.
//
// The waiter always ends: C ends when its tasks are done, when it fails, or when Close
// fails every taskpool of the Context, which it does before it joins the WaitGroup.
//
// Rejected designs: a completion callback run by C's last completion (it would run inside
// rt's termination path, which may hold the lock that Task.Complete takes, and run user
// code there); letting the body wait for C while its worker runs C's tasks (a task of
// another taskpool popped meanwhile could itself wait for C's worker, and a deep recursion
// would pile up stacks).

import (
	"fmt"
	"runtime/debug"
)

// RunNested runs child, a taskpool the body of t built, on t's Context, and completes t when
// child has succeeded and then (if not nil) has returned nil. A CPU body that does not batch
// calls it last (only t is completed, never the followers of a ring):
//
//	return task.RunNested(child.Taskpool, func() error { ... })
//
// It returns Async once child is added, and the body must return that result unchanged: t
// then stays with rt until child ends, and t's successors wait for it. It returns the error
// of Context.Add (ErrAlreadyAdded, ErrClosed, an enumeration error) when child cannot start;
// returned by the body, it fails t.
//
// Errors and cancellation propagate both ways. A failure of child (a task error, a panic)
// or of then fails t's taskpool with a *TaskError naming t whose cause names child
// and wraps child's error; when t's taskpool fails or is cancelled first, child is cancelled
// with that error. child runs every task on this rank (see the protocol at the top of
// rt/nested.go), so its collections may be built in the body (SubTiles) on any rank. then runs
// on a goroutine of rt's, after the last task of child; a panic in it fails t, with the stack.
func (t *Task) RunNested(child *Taskpool, then func() error) error {
	if t == nil || t.kind != kindTask || t.cs == nil {
		return fmt.Errorf("%w: RunNested on a task that is not running", ErrNotAdded)
	}
	if child == nil {
		return ErrNilTaskpool
	}
	if child.added.Load() {
		return ErrAlreadyAdded // before marking it: it may be running
	}
	parent := t.cs.tp
	c := parent.ctx
	child.local = true
	// Before Add: Close joins the WaitGroup only after it has failed every taskpool it
	// knows, and Add either registers child before Close lists them or returns ErrClosed.
	c.wg.Add(1)
	if err := c.Add(child); err != nil {
		c.wg.Done()
		return err
	}
	go func() {
		defer c.wg.Done()
		select {
		case <-child.done:
		case <-parent.done:
			child.Cancel(fmt.Errorf("task %s of taskpool %s: %w", t, parent.name, parent.Err()))
			<-child.done
		}
		err := child.Err()
		if err == nil && then != nil {
			err = runThen(then)
		}
		if err != nil {
			t.Fail(fmt.Errorf("nested taskpool %s: %w", child.name, err))
			return
		}
		t.Complete()
	}()
	return Async
}

// runThen calls then, turning a panic into an error with the stack, as a body's would be.
func runThen(then func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic after the nested taskpool: %v\n%s", r, debug.Stack())
		}
	}()
	return then()
}
