package dynamic_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/dynamic"
)

// A random program: tasks over a few data, each access in a random mode. Bodies record what
// they read and write a value derived from their number and what they read, so that any
// reordering the modes forbid changes the recorded reads or the final values. Commute bodies
// only add, so their order does not matter; scratch data are touched by no other mode.
type progTask struct {
	name  string
	modes []dynamic.Mode // per datum; 0: not accessed
	prio  int32
}

type program struct {
	ndata, nscratch int
	tasks           []progTask
}

func randomProgram(r *rand.Rand, ntasks int) program {
	p := program{ndata: 1 + r.IntN(6), nscratch: 1}
	modes := []dynamic.Mode{dynamic.ReadMode, dynamic.WriteMode, dynamic.ReadWriteMode, dynamic.CommuteMode}
	for i := range ntasks {
		t := progTask{name: fmt.Sprintf("C%d", r.IntN(3)), modes: make([]dynamic.Mode, p.ndata+p.nscratch),
			prio: int32(r.IntN(3))}
		for d := range p.ndata {
			if r.IntN(3) > 0 {
				// Runs of commutes are likelier than chance, so that groups form.
				if i > 0 && p.tasks[i-1].modes[d] == dynamic.CommuteMode && r.IntN(2) == 0 {
					t.modes[d] = dynamic.CommuteMode
				} else {
					t.modes[d] = modes[r.IntN(len(modes))]
				}
			}
		}
		if r.IntN(4) == 0 {
			t.modes[p.ndata] = dynamic.ScratchMode
		}
		p.tasks = append(p.tasks, t)
	}
	return p
}

// result is what a run observed: each task's reads (in datum order) and the final data.
type result struct {
	reads [][]int64
	final []int64
}

// body is the work of task i on vals (one *int64 per datum), recording into reads.
func body(p *program, i int, vals []*int64, reads []int64) []int64 {
	reads = reads[:0]
	t := &p.tasks[i]
	var acc int64 = int64(i + 1)
	for d, m := range t.modes[:p.ndata] {
		if m == dynamic.ReadMode || m == dynamic.ReadWriteMode {
			v := atomic.LoadInt64(vals[d])
			reads = append(reads, v)
			acc = acc*31 + v
		}
	}
	for d, m := range t.modes[:p.ndata] {
		switch m {
		case dynamic.WriteMode, dynamic.ReadWriteMode:
			atomic.StoreInt64(vals[d], acc+int64(d))
		case dynamic.CommuteMode:
			// Not atomic: the token makes commute members exclusive, and the race detector
			// sees an overlap.
			*vals[d] += int64(i+1) * 1000003
		}
	}
	if t.modes[p.ndata] == dynamic.ScratchMode {
		// Scratch is nobody's input and has no order: concurrent writers are expected.
		atomic.StoreInt64(vals[p.ndata], int64(i))
	}
	return reads
}

func (p *program) sequential() result {
	vals := make([]*int64, p.ndata+p.nscratch)
	for i := range vals {
		vals[i] = new(int64)
	}
	res := result{reads: make([][]int64, len(p.tasks))}
	for i := range p.tasks {
		res.reads[i] = body(p, i, vals, nil)
	}
	for _, v := range vals[:p.ndata] {
		res.final = append(res.final, *v)
	}
	return res
}

func (p *program) dynamic(t *testing.T, c *rt.Context, window int) result {
	t.Helper()
	g, err := dynamic.New(c, dynamic.Window(window), dynamic.Debug(true))
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]*int64, p.ndata+p.nscratch)
	data := make([]*dynamic.Data[*int64], len(vals))
	for i := range vals {
		vals[i] = new(int64)
		if data[i], err = dynamic.Register(g, fmt.Sprintf("d%d", i), vals[i]); err != nil {
			t.Fatal(err)
		}
	}
	res := result{reads: make([][]int64, len(p.tasks))}
	for i := range p.tasks {
		pt := &p.tasks[i]
		args := []dynamic.Arg{dynamic.Priority(pt.prio)}
		args = appendAccesses(args, pt.modes, data)
		if err := g.Insert(pt.name, func(*dynamic.Task) error {
			res.reads[i] = body(p, i, vals, nil)
			return nil
		}, args...); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := g.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	for _, v := range vals[:p.ndata] {
		res.final = append(res.final, *v)
	}
	return res
}

// appendAccesses appends the access of data[d] in modes[d] (0: none) for every d.
func appendAccesses[T any](args []dynamic.Arg, modes []dynamic.Mode, data []*dynamic.Data[T]) []dynamic.Arg {
	for d, m := range modes {
		switch m {
		case dynamic.ReadMode:
			args = append(args, dynamic.Read(data[d]))
		case dynamic.WriteMode:
			args = append(args, dynamic.Write(data[d]))
		case dynamic.ReadWriteMode:
			args = append(args, dynamic.ReadWrite(data[d]))
		case dynamic.CommuteMode:
			args = append(args, dynamic.Commute(data[d]))
		case dynamic.ScratchMode:
			args = append(args, dynamic.Scratch(data[d]))
		}
	}
	return args
}

func TestSequentialConsistency(t *testing.T) {
	programs, ntasks := 40, 300
	if testing.Short() {
		programs = 10
	}
	for _, sched := range []string{"lfq", "ap", "gd"} {
		for _, workers := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/%d", sched, workers), func(t *testing.T) {
				c, err := rt.New(rt.Workers(workers), rt.Scheduler(sched))
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				for seed := range programs {
					r := rand.New(rand.NewPCG(uint64(seed), uint64(workers)))
					p := randomProgram(r, ntasks)
					want := p.sequential()
					window := []int{1, 7, 1000}[seed%3]
					got := p.dynamic(t, c, window)
					if !slices.Equal(got.final, want.final) {
						t.Fatalf("seed %d: final data %v, sequentially %v", seed, got.final, want.final)
					}
					for i := range want.reads {
						if !slices.Equal(got.reads[i], want.reads[i]) {
							t.Fatalf("seed %d: task %d (%v) read %v, sequentially %v", seed, i,
								p.tasks[i].modes, got.reads[i], want.reads[i])
						}
					}
				}
			})
		}
	}
}
