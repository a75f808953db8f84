package rt

// The three ways generated code touches a flow's data, shared by every generated file
// instead of being emitted into each one: read a flow as its Go type in a body hook, and
// bind a collection element or a NEW arena copy to a flow in Prepare. None allocates on
// success, so they keep the zero-allocations-per-task promise.

import "fmt"

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
