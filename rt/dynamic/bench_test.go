package dynamic_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/dynamic"
)

// BenchmarkInsertRun inserts b.N empty tasks from one goroutine and waits for them: with no
// datum (independent tasks), and with 1 and 10 data read-write in a chain (each task depends
// on the previous one through every datum), as StarPU's tasks_overhead does: the workloads of
// the benchmark driver's dynamic suite, with its settings (2 workers on GOMAXPROCS 2, no
// progress bar, window 10,000). cpu-ns/op is the CPU time of the whole process (inserter and
// workers) per task. allocs/op is 0 in the steady state: task records, rt tasks and the
// data's lists are recycled.
func BenchmarkInsertRun(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	for _, ndata := range []int{0, 1, 10} {
		b.Run(fmt.Sprintf("data=%d", ndata), func(b *testing.B) {
			b.ReportAllocs()
			c, err := rt.New(rt.Workers(2), rt.Progress(nil))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			g, err := dynamic.New(c, dynamic.Window(10000))
			if err != nil {
				b.Fatal(err)
			}
			args := make([]dynamic.Arg, ndata)
			for i := range args {
				d, _ := dynamic.Register(g, fmt.Sprint("d", i), make([]float64, 1))
				args[i] = dynamic.ReadWrite(d)
			}
			b.ResetTimer()
			cpu := processCPU()
			for range b.N {
				if err := g.Insert("EMPTY", nop, args...); err != nil {
					b.Fatal(err)
				}
			}
			if err := g.Wait(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
