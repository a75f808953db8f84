package rt

// Instances between the steps of a range.
//
// A parameter whose range has a step (`s = 0 .. N .. 2`), or whose domain is a set of
// local indices (`odd = [i = 0 .. 4] 2 * i + 1`), takes values with gaps between them. A
// dependency may name an instance in such a gap: within the bounds, but not in the space.
// jdf2go's Complete checks the steps, so the dependency is dropped (an output) or counted as
// unsatisfiable (an input); PaRSEC's successor iteration checks only the bounds and runs
// such instances. Either way the graph is not what its author meant, so Verify and the stall
// report say which case it is: the instance lies between two values that one of its
// parameters takes, the other parameters being equal.

// gapKey is an instance with one parameter blanked out, and that parameter's index.
type gapKey struct {
	param int
	rest  vertexKey
}

// gapIndex records, for each instance of one class with one parameter blanked out, the
// least and greatest value that parameter takes in the space.
type gapIndex struct {
	tc     *TaskClass
	bounds map[gapKey][2]int
}

// newGapIndex indexes the instances that each yields (instances of tc).
func newGapIndex(tc *TaskClass, each func(yield func(*Locals) bool)) *gapIndex {
	x := &gapIndex{tc: tc, bounds: map[gapKey][2]int{}}
	each(func(l *Locals) bool {
		k := keyOfVertex(tc, l)
		for i := range tc.Params {
			v := k.params[i]
			gk := gapKey{param: i, rest: k}
			gk.rest.params[i] = 0
			if b, ok := x.bounds[gk]; ok {
				x.bounds[gk] = [2]int{min(b[0], v), max(b[1], v)}
			} else {
				x.bounds[gk] = [2]int{v, v}
			}
		}
		return true
	})
	return x
}

// param returns the name of the parameter between two of whose values the instance in l
// lies, and false when it lies in no gap. The instance must not be in the space.
func (x *gapIndex) param(l *Locals) (string, bool) {
	k := keyOfVertex(x.tc, l)
	for i, s := range x.tc.Params {
		v := k.params[i]
		gk := gapKey{param: i, rest: k}
		gk.rest.params[i] = 0
		if b, ok := x.bounds[gk]; ok && b[0] < v && v < b[1] {
			return x.tc.Locals[s], true
		}
	}
	return "", false
}

// betweenSteps describes an instance named by a dependency that lies between two values of
// its parameter p, the reason it is outside its class's space.
func betweenSteps(tc *TaskClass, l *Locals, p string) string {
	return taskName(tc, l) + " lies between the steps of the range of " + p + " in " + tc.Name +
		" (jdf2go runs only the instances on the steps; PaRSEC, which checks only the bounds, would run it)"
}

// maxGapWalk bounds the instances the stall report walks to find a gap.
const maxGapWalk = 1 << 20

// spaceGaps indexes the first maxGapWalk instances of cs's space, for the stall report.
func (cs *classState) spaceGaps() *gapIndex {
	tc, tp := cs.tc, cs.tp
	return newGapIndex(tc, func(yield func(*Locals) bool) {
		if tc.Space == nil {
			return
		}
		var l Locals
		n := 0
		tc.Space(tp, &l, func(l *Locals) bool {
			if n++; n > maxGapWalk {
				return false
			}
			return yield(l)
		})
	})
}
