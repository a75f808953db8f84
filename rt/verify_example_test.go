package rt_test

import (
	"errors"
	"fmt"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/rttest"
)

// A Source points Verify's problems at the program text; here a graph T(0) -> T(1) ->
// T(2) -> T(1), whose class T would be written at ring.jdf:3:1.
func ExampleSource_Verify() {
	errRing := errors.New("Ring: invalid task graph")
	src := rt.Source{Err: errRing, Classes: []string{"ring.jdf:3:1"}}
	err := src.Verify(rttest.DAG(3, [][2]int{{0, 1}, {1, 2}, {2, 1}}, nil))
	fmt.Println(err)
	fmt.Println(errors.Is(err, errRing), errors.Is(err, rt.ErrVerify))
	// Output:
	// Ring: invalid task graph: 1 problem:
	// ring.jdf:3:1: cycle: T(2) -> T(1) -> T(2)
	// true true
}
