package rt

// Instances between the steps of a range.
//
// A parameter whose range has a step (`s = 0 .. N .. 2`) takes values with gaps between
// them, and a dependency may name an instance in such a gap: within the bounds, but not in
// the space. jdf2go's Complete checks the steps, so the dependency is dropped (an output)
// or cannot be satisfied (an input); PaRSEC's successor iteration checks only the bounds and
// runs such instances. Either way the graph is not what its author meant, so Verify and the
// stall report name the case, with the class's generated OffStep.

// offStep returns the parameter of the instance of tc in l that lies between the steps of
// its range, and whether there is one. A panic in the generated function counts as none.
func offStep(tp *Taskpool, tc *TaskClass, l *Locals) (p string, ok bool) {
	if tc.OffStep == nil {
		return "", false
	}
	defer func() {
		if recover() != nil {
			p, ok = "", false
		}
	}()
	ll := *l
	p = tc.OffStep(tp, &ll)
	return p, p != ""
}

// betweenSteps is the reason an instance of class between the steps of p's range is not
// run; it completes "<instance> ".
func betweenSteps(class, p string) string {
	return "lies between the steps of the range of " + p + " in " + class +
		" (jdf2go runs only the instances on the steps; PaRSEC, which checks only the bounds, would run it)"
}
