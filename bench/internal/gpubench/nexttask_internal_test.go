package gpubench

import (
	"testing"

	"github.com/jdf2go/jdf2go/rt"
)

// TestNextTaskGraphVerifies checks the hand-written classes of the
// next_task graph with rt.Verify: successors and predecessors mirror each
// other, goals count the inputs, no cycle.
func TestNextTaskGraphVerifies(t *testing.T) {
	for _, g := range []NextTaskGraph{
		{GPUTasks: 6, Successors: 3},
		{GPUTasks: 6, Successors: 3, Window: 2},
		{GPUTasks: 5, Successors: 1, Window: 1, CPUParent: true},
		{GPUTasks: 3, Successors: 2, Window: 5},
	} {
		gl := &ntGlobals{ng: g.GPUTasks, ns: g.Successors, window: g.Window, parent: &ntGPU,
			release: make([]int64, g.GPUTasks), device: make([]int32, g.GPUTasks)}
		if g.CPUParent {
			gl.parent, gl.cpuParent = &ntCPU, true
		}
		if err := (&rt.Source{}).Verify(rt.NewTaskpool("nexttask", gl, gl.parent, &ntSucc)); err != nil {
			t.Errorf("%+v: %v", g, err)
		}
	}
}
