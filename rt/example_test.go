package rt_test

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/rttest"
)

// Run a generated taskpool (here a hand-written one of the same form) to completion.
func Example() {
	ctx, err := rt.New(rt.Workers(2))
	if err != nil {
		panic(err)
	}
	defer ctx.Close()

	var n atomic.Int64
	tp := rttest.Chains(3, 1000, func(t *rt.Task) error {
		n.Add(int64(t.Locals()[1])) // k
		return nil
	})
	if err := ctx.Add(tp); err != nil {
		panic(err)
	}
	if err := tp.Wait(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println(tp.Total(), "tasks, sum of k =", n.Load())
	// Output: 3000 tasks, sum of k = 1498500
}

// A failing body fails its taskpool with the task's name and parameters.
func ExampleTaskError() {
	ctx, _ := rt.New(rt.Workers(1))
	defer ctx.Close()
	tp := rttest.Grid(4, 4, func(t *rt.Task) error {
		if t.Locals()[0] == 2 && t.Locals()[1] == 1 {
			return fmt.Errorf("singular tile")
		}
		return nil
	})
	ctx.Add(tp)
	fmt.Println(tp.Wait(context.Background()))
	// Output: rt: taskpool Grid failed: T(2, 1): singular tile
}

func ExampleNewTiledMatrix() {
	a, _ := rt.NewTiledMatrix(5, 5, 2, 2, 1, 1, 0)
	a.FillFromDense(rttest.RandomSPD(5, 42), 5)
	fmt.Println(a.MT, a.NT, a.TileRows(2), len(a.Tile(2, 2)))
	// Output: 3 3 1 4
}

func ExampleNewSliceArena() {
	a := rt.NewSliceArena[float32](10)
	c := a.Get()
	fmt.Println(a.Bytes(), len(c.Value.([]float32)))
	// Output: 40 10
}

func ExampleTaskpool_SetArena() {
	tp := rttest.Independent(1, nil)
	tp.SetArena("DEFAULT", rt.NewArena(8*16))
	c, _ := tp.NewCopy("DEFAULT")
	_, err := tp.NewCopy("T")
	fmt.Println(len(c.Float64s()), err)
	// Output: 16 rt: no such arena: "T" in taskpool Independent (NEW inputs and WRITE flows take their buffers from it: call tp.SetArena("T", rt.NewArena(bytes)) before Add)
}
