package parser

// Dependency checks: endpoints, arity, ranges, properties, flow
// consistency and cross-class matching.

import (
	"strings"
)

func (c *checker) checkDep(tc *TaskClass, f *Flow, d *Dep) {
	e := env{c: c, class: tc, ndefs: len(tc.Defs)}.withNamed(d.Named)
	if d.Guard != nil {
		c.resolve(d.Guard, &e)
	}
	if d.Dir == In && f.Access != AccessCTL && d.Named != nil {
		c.errorf(d.Named[0].Pos(), "named range in an input of flow %q: only a CTL flow can gather from several tasks", f.Name)
	}
	for _, t := range []*Target{d.Then, d.Else} {
		if t != nil {
			c.checkTarget(tc, f, d, t, &e)
		}
	}
	c.depProps(f, d, &e)
}

func (c *checker) checkTarget(tc *TaskClass, f *Flow, d *Dep, t *Target, outer *env) {
	e := outer.withNamed(t.Named)
	for _, a := range t.Args {
		c.resolve(a, &e)
	}
	switch t.Kind {
	case TargetNew, TargetNull:
		word := "NEW"
		if t.Kind == TargetNull {
			word = "NULL"
		}
		if d.Dir == Out {
			c.errorf(t.Pos(), "%s is only allowed in input dependencies", word)
		} else if f.Access == AccessCTL {
			c.errorf(t.Pos(), "CTL flow %q cannot receive %s", f.Name, word)
		}
		return
	case TargetCollection:
		if f.Access == AccessCTL {
			c.errorf(t.Pos(), "CTL flow %q cannot depend on data collection %q", f.Name, t.Name)
			return
		}
		t.Collection = c.collection(t.Name, t.NamePos(), len(t.Args))
	case TargetTask:
		t.Class = c.classes[t.Name]
		if t.Class == nil {
			c.errorf(t.NamePos(), "unknown task class %q%s", t.Name, suggest(t.Name, c.classNames()))
			return
		}
		t.FlowRef = t.Class.Flow(t.Flow)
		if t.FlowRef == nil {
			c.errorf(t.FlowPos(), "task class %s has no flow %q%s", t.Name, t.Flow, suggest(t.Flow, flowNames(t.Class)))
		}
		if len(t.Args) != len(t.Class.Params) {
			c.errorf(t.NamePos(), "%s takes %s (%s), not %d", t.Name, plural(len(t.Class.Params), "argument"), paramList(t.Class), len(t.Args))
		}
		if t.FlowRef != nil && (t.FlowRef.Access == AccessCTL) != (f.Access == AccessCTL) {
			c.errorf(t.FlowPos(), "flow %q of %s is %s but flow %q of %s is %s: CTL flows connect only to CTL flows",
				f.Name, tc.Name, f.Access, t.Flow, t.Name, t.FlowRef.Access)
		}
	}
	// An unconditional self-dependency deadlocks every task of the class. A guarded one is
	// left alone: PaRSEC files keep some under guards that never hold, which only the
	// parameters' ranges show (Verify and ErrStalled catch the others).
	if d.Dir == In && d.Guard == nil && t.Class == tc && len(t.Args) == len(tc.Params) && sameInstance(tc, t.Args) {
		c.errorf(t.Pos(), "%s flow %q of %s waits for %s itself: a task cannot depend on its own output",
			f.Access, f.Name, tc.Name, instanceName(tc))
	}
	if d.Dir == In && f.Access != AccessCTL {
		if t.Named != nil {
			c.errorf(t.Named[0].Pos(), "named range in an input of flow %q: only a CTL flow can gather from several tasks", f.Name)
		}
		for _, a := range t.Args {
			if isRange(a) {
				c.errorf(a.Pos(), "range in an input of flow %q: only a CTL flow can gather from several tasks", f.Name)
			}
		}
	}
}

// sameInstance reports whether args name the parameters of tc, in order: a target of class
// tc with these arguments is the task itself, whatever the parameters' values.
func sameInstance(tc *TaskClass, args []Expr) bool {
	for i, a := range args {
		n, ok := a.(*Name)
		if !ok || n.Ref != RefDef || n.Name != tc.Params[i].Name {
			return false
		}
	}
	return true
}

// instanceName is "A(k, m)" for a class A with parameters k and m.
func instanceName(tc *TaskClass) string { return tc.Name + "(" + paramList(tc) + ")" }

func paramList(tc *TaskClass) string {
	names := make([]string, len(tc.Params))
	for i, p := range tc.Params {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

var depPropNames = []string{"type", "type_remote", "type_data", "layout", "count", "displ", "layout_remote",
	"count_remote", "displ_remote", "layout_data", "count_data", "displ_data", "warning"}

func (c *checker) depProps(f *Flow, d *Dep, e *env) {
	a := &d.Attrs
	for _, p := range propList(d.Props) {
		switch p.Name {
		case "type":
			a.Type = p.Value
		case "type_remote":
			a.TypeRemote = p.Value
		case "type_data":
			a.TypeData = p.Value
		case "layout", "layout_remote", "layout_data":
			a.Layout = p.Value
		case "count", "count_remote", "count_data":
			le := e.lenientCopy()
			c.resolve(p.Value, &le)
			a.Count = p.Value
		case "displ", "displ_remote", "displ_data":
			le := e.lenientCopy()
			c.resolve(p.Value, &le)
			a.Displ = p.Value
		case "warning":
			if n, ok := p.Value.(*Name); ok && n.Name == "disable" {
				a.NoWarning = true
			} else {
				c.errorf(p.Value.Pos(), "warning takes the value disable")
			}
		case "arena_index":
			c.errorf(p.NamePos, "dependency property arena_index is obsolete: use type")
		case "nb_elt":
			c.errorf(p.NamePos, "dependency property nb_elt is obsolete: use count")
		default:
			c.warnf(p.NamePos, "unknown dependency property %q%s", p.Name, suggest(p.Name, depPropNames))
		}
	}
	if a.TypeRemote != nil && a.TypeData != nil {
		c.errorf(d.Props.Pos(), "a dependency cannot have both type_remote and type_data")
	}
	if f.Access == AccessCTL && a.Type != nil {
		c.errorf(a.Type.Pos(), "CTL flow %q carries no data: type does not apply", f.Name)
	}
}

// checkFlowConsistency checks each flow's access against its inputs and outputs (the
// flow-consistency rules of docs/language.md, "Checks").
func (c *checker) checkFlowConsistency(tc *TaskClass, f *Flow) {
	if len(f.Deps) == 0 {
		switch f.Access {
		case AccessCTL, AccessWrite:
			c.warnf(f.NamePos, "flow %q of %s is never used (it has no dependencies)", f.Name, tc.Name)
			return
		}
	}
	if f.Access == AccessCTL {
		return
	}
	var inBuf, outBuf [4]*Dep
	ins, outs := inBuf[:0], outBuf[:0]
	for _, d := range f.Deps {
		if d.Dir == In {
			ins = append(ins, d)
		} else {
			outs = append(outs, d)
		}
	}
	switch f.Access {
	case AccessRead, AccessRW:
		if len(ins) == 0 {
			c.errorf(f.NamePos, "%s flow %q of %s has no input dependency", f.Access, f.Name, tc.Name)
		}
	case AccessWrite:
		if len(outs) == 0 && !f.noWarning() {
			c.warnf(f.NamePos, "WRITE flow %q of %s has no output dependency", f.Name, tc.Name)
		}
		for _, d := range ins {
			if d.Then.Kind != TargetNew || (d.Else != nil && d.Else.Kind != TargetNew) {
				c.errorf(d.Pos(), "WRITE flow %q can only have <- NEW as input", f.Name)
			}
		}
	}
	if f.Access == AccessRead {
		for _, d := range ins {
			if d.Guard == nil && d.Then.Kind == TargetNew {
				c.errorf(d.Pos(), "READ flow %q cannot be a fresh NEW buffer", f.Name)
			}
		}
	}
	// Inputs form an if/else-if chain: after an unconditional or ternary
	// input, the others can never be selected.
	for i, d := range ins {
		if d.Guard == nil || d.Else != nil {
			for _, dead := range ins[i+1:] {
				if !dead.Attrs.NoWarning {
					c.warnf(dead.Pos(), "input of flow %q is never used: the input at %s always supplies the data", f.Name, short(d.Pos()))
				}
			}
			break
		}
	}
}

func (f *Flow) noWarning() bool {
	for _, d := range f.Deps {
		if d.Attrs.NoWarning {
			return true
		}
	}
	return false
}

// checkMatching is the class-level version of the DAG verifier: every task endpoint must have a
// dependency on the other side that names this class and flow back, in the opposite direction.
func (c *checker) checkMatching(tc *TaskClass, f *Flow) {
	for _, d := range f.Deps {
		if d.Attrs.NoWarning {
			continue
		}
		for _, t := range []*Target{d.Then, d.Else} {
			if t == nil || t.Kind != TargetTask || t.FlowRef == nil {
				continue
			}
			g := t.FlowRef
			other := Out
			if d.Dir == Out {
				other = In
			}
			if !g.hasDeps(other) {
				switch {
				case f.Access != AccessCTL || g.Access != AccessCTL:
					c.errorf(t.FlowPos(), "flow %q of %s has no %s dependency, but %s %s %s here",
						g.Name, g.Class.Name, dirWord(other), f.Name, d.Dir, t.Flow+" "+t.Name)
				case !isFalse(d.Guard):
					// PaRSEC accepts a CTL dependency on a flow with no
					// dependency back; it is satisfied only if never taken.
					c.warnf(t.FlowPos(), "CTL flow %q of %s has no %s dependency, so %s %s %s here can never be satisfied: its guard must never hold",
						g.Name, g.Class.Name, dirWord(other), f.Name, d.Dir, t.Flow+" "+t.Name)
				}
				continue
			}
			if !namesBack(g, other, tc, f) {
				c.warnf(t.Pos(), "%s %s %s %s(...): flow %q of %s (declared at %s) has no %s dependency naming %s %s back",
					f.Name, d.Dir, t.Flow, t.Name, g.Name, t.Name, short(g.NamePos), dirWord(other), f.Name, tc.Name)
			}
		}
	}
}

func dirWord(d Direction) string {
	if d == In {
		return "input"
	}
	return "output"
}

func namesBack(g *Flow, dir Direction, tc *TaskClass, f *Flow) bool {
	for _, d := range g.Deps {
		if d.Dir != dir {
			continue
		}
		for _, t := range []*Target{d.Then, d.Else} {
			if t != nil && t.Kind == TargetTask && t.Name == tc.Name && t.Flow == f.Name {
				return true
			}
		}
	}
	return false
}

// isFalse reports whether guard is the constant 0 (a dependency never
// taken, as PaRSEC files write to keep one for reference).
func isFalse(guard Expr) bool {
	for {
		p, ok := guard.(*ParenExpr)
		if !ok {
			break
		}
		guard = p.X
	}
	lit, ok := guard.(*IntLit)
	return ok && lit.Value == 0
}
