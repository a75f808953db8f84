package cudabench

import (
	"cmp"
	"context"
	"errors"
	"github.com/jdf2go/jdf2go/bench/internal/gpubench"
	"math"
	"slices"
	"sync/atomic"
	"time"

	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/driver"
)

// tile is a gpu.Data over host memory (the manager stages it in when the
// device copy is stale). Tiles of C share one host buffer: C is written on
// the device and kept there, so the buffer only receives the write-backs of
// the device's Close.
type tile struct {
	host    []byte
	version atomic.Uint64
}

func (t *tile) HostBytes() []byte       { return t.host }
func (t *tile) HostVersion() uint64     { return t.version.Load() }
func (t *tile) SetHostVersion(v uint64) { t.version.Store(v) }

// GemmDevice runs independent GEMM tasks C_i = A_j·B_j (nb×nb tiles) on
// one device: each task writes its own C_i, kept on the device, and reads
// one of a few distinct pairs (A_j, B_j), j = i mod distinct. Every tile is
// resident after the warm-up run of Run, so the timed runs move no data and
// measure the manager and the kernels; the tiles stay resident between
// runs with batching on and off.
type GemmDevice struct {
	d     *gpu.Device
	c     *counter
	nb    int
	a, b  []*tile
	cs    []*tile
	chost []byte
	rings atomic.Int64
	batch atomic.Bool
	max   atomic.Int64
	inc   *gpu.Incarnation
	host  func(int) ([]byte, error)
}

// NewGemmDevice wraps be for GEMM task benchmarks of tile size nb, with
// tasks output tiles and distinct input pairs; opts configure the device.
func NewGemmDevice(be driver.Backend, nb, tasks, distinct int, host func(int) ([]byte, error), opts ...gpu.Option) (*GemmDevice, error) {
	if host == nil {
		host = func(n int) ([]byte, error) { return make([]byte, n), nil }
	}
	c := newCounter(tasks)
	devs, err := gpubench.OpenBackends(append([]gpu.Option{gpu.WithCompleter(c), gpu.WithScheduler(c)}, opts...), be)
	if err != nil {
		return nil, err
	}
	d := devs[0].Device()
	g := &GemmDevice{d: d, c: c, nb: nb, host: host}
	bytes := nb * nb * 8
	for j := range distinct {
		for _, dst := range []*[]*tile{&g.a, &g.b} {
			h, err := host(bytes)
			if err != nil {
				return nil, errors.Join(err, d.Close())
			}
			f, _ := driver.BytesAsFloat64s(h)
			for i := range f {
				f[i] = float64((i*(2*j+3)+len(*dst)*7)%101)/101 - 0.5
			}
			*dst = append(*dst, &tile{host: h})
		}
	}
	if g.chost, err = host(bytes); err != nil {
		return nil, errors.Join(err, d.Close())
	}
	for range tasks {
		g.cs = append(g.cs, &tile{host: g.chost})
	}
	g.inc = &gpu.Incarnation{Name: "gemm", Batch: true, Submit: g.submit}
	return g, nil
}

// Device returns the wrapped device.
func (g *GemmDevice) Device() *gpu.Device { return g.d }

func (g *GemmDevice) submit(_ *gpu.Device, t *gpu.Task, s *gpu.Stream) gpu.Result {
	nb := g.nb
	if g.batch.Load() {
		if _, err := s.CollectBatch(t, gpu.BatchPolicy{Max: int(g.max.Load())}.Match, nil); err != nil {
			return gpu.Error
		}
	}
	g.rings.Add(1)
	if t.IsSingleton() {
		if err := s.Dgemm(blas.NoTrans, blas.NoTrans, nb, nb, nb, 1, t.Buffer(0), nb, t.Buffer(1), nb, 0, t.Buffer(2), nb); err != nil {
			return gpu.Error
		}
		return gpu.Done
	}
	n := t.RingLen()
	a, b, c := make([]gpu.Buffer, 0, n), make([]gpu.Buffer, 0, n), make([]gpu.Buffer, 0, n)
	for x := range t.Ring() {
		a, b, c = append(a, x.Buffer(0)), append(b, x.Buffer(1)), append(c, x.Buffer(2))
	}
	if err := s.DgemmBatched(blas.NoTrans, blas.NoTrans, nb, nb, nb, 1, a, nb, b, nb, 0, c, nb); err != nil {
		return gpu.Error
	}
	return gpu.Done
}

func (g *GemmDevice) task(i int) *gpu.Task {
	j := i % len(g.a)
	size := int64(g.nb * g.nb * 8)
	return g.d.NewTask(benchEC{}, g.inc,
		gpu.Flow{Data: g.a[j], Access: gpu.Read, Elem: gpu.Float64},
		gpu.Flow{Data: g.b[j], Access: gpu.Read, Elem: gpu.Float64},
		gpu.Flow{Data: g.cs[i], Access: gpu.Write, Elem: gpu.Float64, Size: size, KeepOnDevice: true})
}

// Run times runs of all tasks (after a warm-up run) with batching on
// (rings of up to batchMax tasks) or off.
func (g *GemmDevice) Run(batch bool, batchMax, runs int) ([]Result, error) {
	g.batch.Store(batch)
	g.max.Store(int64(batchMax))
	var out []Result
	for r := range runs + 1 {
		g.rings.Store(0)
		el, err := gated(g.d, g.c, len(g.cs), 2, g.task)
		if err != nil {
			return out, err
		}
		if r > 0 {
			out = append(out, Result{Tasks: len(g.cs), Elapsed: el, Rings: g.rings.Load()})
		}
	}
	return out, nil
}

// Check compares C_i with the CPU product for a sample of tasks: a check
// task per sampled i copies the device copy of C_i to a fresh host buffer.
// It returns the largest relative difference.
func (g *GemmDevice) Check(sample int) (float64, error) {
	nb := g.nb
	worst := 0.0
	for k := range sample {
		i := (k * 7919) % len(g.cs)
		out := make([]byte, nb*nb*8)
		inc := &gpu.Incarnation{Name: "check", Submit: func(_ *gpu.Device, t *gpu.Task, s *gpu.Stream) gpu.Result {
			if err := s.Backend().CopyDtoH(out, t.Buffer(0).Ptr); err != nil {
				return gpu.Error
			}
			return gpu.Done
		}}
		g.c.reset(1)
		err := g.d.Submit(context.Background(), nil,
			g.d.NewTask(benchEC{}, inc, gpu.Flow{Data: g.cs[i], Access: gpu.Read, Elem: gpu.Float64, KeepOnDevice: true}))
		if err != nil {
			return worst, err
		}
		if err := g.c.err(); err != nil {
			return worst, err
		}
		j := i % len(g.a)
		a, _ := driver.BytesAsFloat64s(g.a[j].host)
		b, _ := driver.BytesAsFloat64s(g.b[j].host)
		got, _ := driver.BytesAsFloat64s(out)
		var diff, scale float64
		for col := range nb {
			for row := range nb {
				var sum float64
				for p := range nb {
					sum += a[row+p*nb] * b[p+col*nb]
				}
				diff = math.Max(diff, math.Abs(got[row+col*nb]-sum))
				scale = math.Max(scale, math.Abs(sum))
			}
		}
		worst = math.Max(worst, diff/math.Max(scale, 1))
	}
	return worst, nil
}

// Close closes the device (writing the C tiles back to their shared host
// buffer).
func (g *GemmDevice) Close() error { return g.d.Close() }

// GemmFlops is 2·nb³.
func GemmFlops(nb int) float64 { return 2 * math.Pow(float64(nb), 3) }

// Median returns the run with the median time.
func Median(rs []Result) Result {
	if len(rs) == 0 {
		return Result{}
	}
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b Result) int { return cmp.Compare(a.Elapsed, b.Elapsed) })
	return s[len(s)/2]
}

// Spread returns the fastest and slowest runs' times.
func Spread(rs []Result) (lo, hi time.Duration) {
	for i, r := range rs {
		if i == 0 || r.Elapsed < lo {
			lo = r.Elapsed
		}
		if r.Elapsed > hi {
			hi = r.Elapsed
		}
	}
	return lo, hi
}
