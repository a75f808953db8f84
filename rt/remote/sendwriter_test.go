package remote_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/ce"
	"github.com/jdf2go/jdf2go/rt/remote"
)

// The writer program: WP on rank 0 fills element V(0) with its values (x[i] = i + 1) and
// passes it on; WR on rank 1 reads it (or, with wb, WP writes it back to V(1) on rank 1),
// and WW on rank 0 receives the same version with RW access and overwrites it at once
// (x[i] = -1). The element is larger than the eager size, so rank 1 pulls it from rank 0's
// memory after a delay: what it receives must be WP's values, never WW's.
type wprog struct {
	nb      int
	v       *rt.Vector
	wb      bool // WP writes back to V(1) instead of activating WR
	writer  bool // WW exists
	wwFirst bool // WP reports WW before the remote successor
	readOK  chan error
	wwRan   chan struct{}

	// viaReader: WP passes the value to WM, a local reader, which passes it on to WW.
	viaReader bool
	// race: WW also waits for a CTL input from WQ, whose body waits until WP's release has
	// reported WW; WP's release then gives WW time to run before it reports the remote
	// successor. rt must not let WW start until the release's remote sends are made.
	race     bool
	wpRan    atomic.Bool
	raceOnce sync.Once
	wqGo     chan struct{}
}

var classWP, classWR, classWW, classWM, classWQ rt.TaskClass

func wpg(tp *rt.Taskpool) *wprog { return tp.Globals().(*wprog) }

// spaceIf is the space {0} when on says so, the empty space otherwise.
func spaceIf(on func(p *wprog) bool) func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
	return func(tp *rt.Taskpool, l *rt.Locals, yield func(*rt.Locals) bool) {
		if on(wpg(tp)) {
			l[0] = 0
			yield(l)
		}
	}
}

func init() {
	at := func(ix int) func(tp *rt.Taskpool, l *rt.Locals) (rt.Collection, rt.Index) {
		return func(tp *rt.Taskpool, l *rt.Locals) (rt.Collection, rt.Index) { return wpg(tp).v, rt.Ix(ix) }
	}
	complete := func(tp *rt.Taskpool, l *rt.Locals) bool { return l[0] == 0 }
	classWP = rt.TaskClass{Name: "WP", ID: 0, Locals: []string{"k"}, Params: []int{0},
		Flows:    []rt.Flow{{Name: "X", Access: rt.RW}},
		Space:    spaceIf(func(p *wprog) bool { return true }),
		Complete: complete,
		Goal:     func(tp *rt.Taskpool, l *rt.Locals) uint32 { return 0 },
		Affinity: at(0),
		Prepare:  func(t *rt.Task) error { return t.BindElement(0, wpg(t.Taskpool()).v, rt.Ix(0)) },
		Successors: func(tp *rt.Taskpool, l *rt.Locals, f rt.FlowMask, e *rt.Edges) {
			p := wpg(tp)
			e.L[0] = 0
			switch {
			case p.writer && p.viaReader:
				e.Task(0, 0, &classWM, 0)
			case p.writer && p.wwFirst:
				e.Task(0, 0, &classWW, 0)
				if p.race && p.wpRan.Load() {
					p.raceOnce.Do(func() {
						close(p.wqGo)
						select {
						case <-p.wwRan:
						case <-time.After(300 * time.Millisecond):
						}
					})
				}
			}
			e.L[0] = 0
			if p.wb {
				e.Data(0, 1, p.v, rt.Ix(1))
			} else {
				e.Task(0, 1, &classWR, 0)
			}
			if p.writer && !p.wwFirst && !p.viaReader {
				e.Task(0, 0, &classWW, 0)
			}
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(t *rt.Task) error {
			x := t.Flow(0).Float64s()
			for i := range x {
				x[i] = float64(i + 1)
			}
			wpg(t.Taskpool()).wpRan.Store(true)
			return nil
		}}},
	}
	classWR = rt.TaskClass{Name: "WR", ID: 1, Locals: []string{"k"}, Params: []int{0},
		Flows:    []rt.Flow{{Name: "X", Access: rt.Read}},
		Space:    spaceIf(func(p *wprog) bool { return !p.wb }),
		Complete: complete,
		Goal:     func(tp *rt.Taskpool, l *rt.Locals) uint32 { return 1 },
		Affinity: at(1),
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(t *rt.Task) error {
			p := wpg(t.Taskpool())
			p.readOK <- checkWP(t.Flow(0).Float64s(), p.nb)
			return nil
		}}},
	}
	classWW = rt.TaskClass{Name: "WW", ID: 2, Locals: []string{"k"}, Params: []int{0},
		Flows:    []rt.Flow{{Name: "X", Access: rt.RW}, {Name: "C", Access: rt.CTL}},
		Space:    spaceIf(func(p *wprog) bool { return p.writer }),
		Complete: complete,
		Goal: func(tp *rt.Taskpool, l *rt.Locals) uint32 {
			if wpg(tp).race {
				return 2
			}
			return 1
		},
		Affinity: at(0),
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(t *rt.Task) error {
			x := t.Flow(0).Float64s()
			for i := range x {
				x[i] = -1
			}
			close(wpg(t.Taskpool()).wwRan)
			return nil
		}}},
	}

	classWM = rt.TaskClass{Name: "WM", ID: 3, Locals: []string{"k"}, Params: []int{0},
		Flows:    []rt.Flow{{Name: "X", Access: rt.Read}},
		Space:    spaceIf(func(p *wprog) bool { return p.writer && p.viaReader }),
		Complete: complete,
		Goal:     func(tp *rt.Taskpool, l *rt.Locals) uint32 { return 1 },
		Affinity: at(0),
		Successors: func(tp *rt.Taskpool, l *rt.Locals, f rt.FlowMask, e *rt.Edges) {
			e.L[0] = 0
			e.Task(0, 0, &classWW, 0)
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(t *rt.Task) error { return nil }}},
	}
	classWQ = rt.TaskClass{Name: "WQ", ID: 4, Locals: []string{"k"}, Params: []int{0},
		Flows:    []rt.Flow{{Name: "C", Access: rt.CTL}},
		Space:    spaceIf(func(p *wprog) bool { return p.race }),
		Complete: complete,
		Goal:     func(tp *rt.Taskpool, l *rt.Locals) uint32 { return 0 },
		Affinity: at(0),
		Successors: func(tp *rt.Taskpool, l *rt.Locals, f rt.FlowMask, e *rt.Edges) {
			e.L[0] = 0
			e.Task(0, 0, &classWW, 1)
		},
		Incarnations: []rt.Incarnation{{Kind: rt.CPU, Hook: func(t *rt.Task) error {
			<-wpg(t.Taskpool()).wqGo
			return nil
		}}},
	}
}

// checkWP reports whether x holds WP's values.
func checkWP(x []float64, nb int) error {
	if len(x) != nb {
		return fmt.Errorf("%d elements, want %d", len(x), nb)
	}
	bad := 0
	first := -1
	for i, v := range x {
		if v != float64(i+1) {
			if first < 0 {
				first = i
			}
			bad++
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d elements are not WP's (x[%d] = %g, want %d)", bad, nb, first, x[first], first+1)
	}
	return nil
}

// runWriter runs the writer program on two in-process ranks whose transfers are delayed.
func runWriter(t *testing.T, p *wprog) []remote.Stats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stats := make([]remote.Stats, 2)
	readOK := make(chan error, 1)
	err := remote.Run(ctx, remote.Config{Ranks: 2, Workers: 4, CE: []ce.Option{ce.Debug(true)},
		World: []ce.WorldOption{ce.InjectDelay(20*time.Millisecond, 30*time.Millisecond)}},
		func(ctx context.Context, j *remote.Job) error {
			v, err := rt.NewVector(2*p.nb, p.nb, j.Size, j.Rank)
			if err != nil {
				return err
			}
			q := &wprog{nb: p.nb, wb: p.wb, writer: p.writer, wwFirst: p.wwFirst, viaReader: p.viaReader, race: p.race,
				v: v, readOK: readOK, wwRan: make(chan struct{}), wqGo: make(chan struct{})}
			tp := rt.NewTaskpool("writer", q, &classWP, &classWR, &classWW, &classWM, &classWQ)
			if err := j.Add(tp); err != nil {
				return err
			}
			if err := tp.Wait(ctx); err != nil {
				return err
			}
			if q.wb && j.Rank == 1 {
				if err := checkWP(v.Block(1), p.nb); err != nil {
					return fmt.Errorf("V(1) after the write-back: %w", err)
				}
			}
			if q.writer && j.Rank == 0 {
				select {
				case <-q.wwRan:
				default:
					return fmt.Errorf("WW did not run")
				}
			}
			stats[j.Rank] = j.Node.Stats()
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if !p.wb {
		select {
		case err := <-readOK:
			if err != nil {
				t.Fatalf("WR on rank 1: %v", err)
			}
		default:
			t.Fatal("WR did not run")
		}
	}
	return stats
}

// TestRendezvousSendWithLocalWriter: a value pulled from rank 0 after its producer completed
// is the producer's, even though a local successor of rank 0 overwrites that version at once,
// whichever order the producer reports its successors in, for activations and write-backs.
func TestRendezvousSendWithLocalWriter(t *testing.T) {
	const nb = 16 << 10 // 128 KiB, above the default eager size
	for _, c := range []struct {
		name string
		p    *wprog
	}{
		{"activation/writer-first", &wprog{writer: true, wwFirst: true}},
		{"activation/writer-last", &wprog{writer: true}},
		{"write-back/writer-first", &wprog{writer: true, wwFirst: true, wb: true}},
		{"write-back/writer-last", &wprog{writer: true, wb: true}},
		{"activation/writer-after-a-reader", &wprog{writer: true, viaReader: true}},
		{"write-back/writer-after-a-reader", &wprog{writer: true, viaReader: true, wb: true}},
		{"activation/writer-made-ready-elsewhere", &wprog{writer: true, wwFirst: true, race: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.p.nb = nb
			st := runWriter(t, c.p)
			if st[0].Gets != 1 || st[0].Snapshots != 1 {
				t.Errorf("rank 0: %d Gets, %d snapshots; want 1 and 1", st[0].Gets, st[0].Snapshots)
			}
		})
	}
}

// TestRendezvousSendWithoutLocalWriter: with no local writer the value is read in place (no
// snapshot), and an eager value needs none either.
func TestRendezvousSendWithoutLocalWriter(t *testing.T) {
	for _, c := range []struct {
		name        string
		p           *wprog
		gets, snaps int64
		eager       int64
	}{
		{name: "rendezvous/no-writer", p: &wprog{nb: 16 << 10}, gets: 1},
		{name: "rendezvous/write-back/no-writer", p: &wprog{nb: 16 << 10, wb: true}, gets: 1},
		{name: "eager/writer", p: &wprog{nb: 64, writer: true, wwFirst: true}, eager: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := runWriter(t, c.p)
			if st[0].Gets != c.gets || st[0].Eager != c.eager || st[0].Snapshots != c.snaps {
				t.Errorf("rank 0: %d Gets, %d eager, %d snapshots; want %d, %d, %d",
					st[0].Gets, st[0].Eager, st[0].Snapshots, c.gets, c.eager, c.snaps)
			}
		})
	}
}
