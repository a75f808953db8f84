package sim_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/gpu/driver"
	"github.com/jdf2go/jdf2go/rt/gpu/sim"
)

// dev is a free-running simulated device with one stream, driven through the
// backend interface directly.
type dev struct {
	t  *testing.T
	be *sim.Device
	s  driver.Stream
}

func newDev(t *testing.T) *dev {
	t.Helper()
	be := sim.New()
	s, err := be.NewStream("s", 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	return &dev{t: t, be: be, s: s}
}

// upload copies host into new device memory.
func (d *dev) upload(host []float64) driver.Ptr {
	d.t.Helper()
	p, err := d.be.Alloc(int64(8 * max(len(host), 1)))
	if err != nil {
		d.t.Fatal(err)
	}
	if err := d.s.CopyHtoD(p, driver.Float64sAsBytes(host)); err != nil {
		d.t.Fatal(err)
	}
	return p
}

// sync waits for everything enqueued so far and returns the query error.
func (d *dev) sync() error {
	d.t.Helper()
	if err := d.s.Record(0); err != nil {
		d.t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		done, err := d.s.Query(0)
		if err != nil || done {
			return err
		}
		if time.Now().After(deadline) {
			d.t.Fatal("stream does not drain")
		}
		time.Sleep(10 * time.Microsecond)
	}
}

func (d *dev) download(p driver.Ptr, n int) []float64 {
	d.t.Helper()
	out := make([]float64, n)
	if err := d.s.CopyDtoH(driver.Float64sAsBytes(out), p); err != nil {
		d.t.Fatal(err)
	}
	if err := d.sync(); err != nil {
		d.t.Fatal(err)
	}
	return out
}

func randMat(r *rand.Rand, n int) []float64 {
	m := make([]float64, n)
	for i := range m {
		m[i] = r.Float64()*2 - 1
	}
	return m
}

// at reads element (i, j) of op(A), column-major with leading dimension ld.
func at(a []float64, ld int, t blas.Transpose, i, j int) float64 {
	if t == blas.Trans {
		return a[j+i*ld]
	}
	return a[i+j*ld]
}

func near(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	for i := range want {
		if math.Abs(got[i]-want[i]) > tol*(1+math.Abs(want[i])) {
			t.Fatalf("%s: element %d = %v, want %v", what, i, got[i], want[i])
		}
	}
}

var transposes = []blas.Transpose{blas.NoTrans, blas.Trans}

func TestDgemmColumnMajor(t *testing.T) {
	d := newDev(t)
	r := rand.New(rand.NewPCG(1, 1))
	const m, n, k, pad = 5, 4, 3, 2
	for _, ta := range transposes {
		for _, tb := range transposes {
			ar, ac := m, k
			if ta == blas.Trans {
				ar, ac = k, m
			}
			br, bc := k, n
			if tb == blas.Trans {
				br, bc = n, k
			}
			lda, ldb, ldc := ar+pad, br+pad, m+pad
			a, b, c := randMat(r, lda*ac), randMat(r, ldb*bc), randMat(r, ldc*n)
			want := append([]float64(nil), c...)
			for j := range n {
				for i := range m {
					s := 0.0
					for l := range k {
						s += at(a, lda, ta, i, l) * at(b, ldb, tb, l, j)
					}
					want[i+j*ldc] = 1.5*s + 0.5*c[i+j*ldc]
				}
			}
			pa, pb, pc := d.upload(a), d.upload(b), d.upload(c)
			if err := d.s.Dgemm(ta, tb, m, n, k, 1.5, pa, lda, pb, ldb, 0.5, pc, ldc); err != nil {
				t.Fatal(err)
			}
			near(t, fmt.Sprintf("dgemm %v %v", ta, tb), d.download(pc, len(c)), want, 1e-12)
		}
	}
}

// TestDtrsmColumnMajor also checks Dtrmm, which undoes the solve.
func TestDtrsmColumnMajor(t *testing.T) {
	d := newDev(t)
	r := rand.New(rand.NewPCG(2, 2))
	const m, n = 4, 3
	for _, side := range []blas.Side{blas.Left, blas.Right} {
		for _, uplo := range []blas.Uplo{blas.Lower, blas.Upper} {
			for _, ta := range transposes {
				for _, dg := range []blas.Diag{blas.NonUnit, blas.Unit} {
					na := m
					if side == blas.Right {
						na = n
					}
					// A triangular and well conditioned; the other triangle
					// holds garbage that must be ignored.
					a := randMat(r, na*na)
					for i := range na {
						a[i+i*na] = 3 + float64(i)
					}
					b := randMat(r, m*n)
					pa, pb := d.upload(a), d.upload(b)
					if err := d.s.Dtrsm(side, uplo, ta, dg, m, n, 2, pa, na, pb, m); err != nil {
						t.Fatal(err)
					}
					x := d.download(pb, m*n)
					// Check op(A)*X = 2B (Left) or X*op(A) = 2B (Right).
					got := triProduct(side, uplo, ta, dg, m, n, 1, a, na, x)
					want := make([]float64, m*n)
					for i := range b {
						want[i] = 2 * b[i]
					}
					what := fmt.Sprintf("side %v uplo %v trans %v diag %v", side, uplo, ta, dg)
					near(t, "dtrsm "+what, got, want, 1e-10)
					// The product undoes the solve: op(A)*X (Left) or X*op(A) (Right) is 2B.
					if err := d.s.Dtrmm(side, uplo, ta, dg, m, n, 1, pa, na, pb, m); err != nil {
						t.Fatal(err)
					}
					near(t, "dtrmm "+what, d.download(pb, m*n), want, 1e-10)
				}
			}
		}
	}
}

// triAt reads element (i, j) of op(A) for the uplo triangle of the na x na
// matrix a: the other triangle reads as zeros, the diagonal as ones for Unit.
func triAt(a []float64, na int, uplo blas.Uplo, ta blas.Transpose, dg blas.Diag, i, j int) float64 {
	if ta == blas.Trans {
		i, j = j, i
	}
	switch {
	case i == j && dg == blas.Unit:
		return 1
	case i == j, (uplo == blas.Lower) == (i > j):
		return a[i+j*na]
	}
	return 0
}

// triProduct returns alpha*op(A)*B (Left) or alpha*B*op(A) (Right) for the
// m x n column-major B (ld m), computed element by element.
func triProduct(side blas.Side, uplo blas.Uplo, ta blas.Transpose, dg blas.Diag, m, n int, alpha float64, a []float64, na int, b []float64) []float64 {
	out := make([]float64, m*n)
	for i := range m {
		for j := range n {
			s := 0.0
			for l := range na {
				if side == blas.Left {
					s += triAt(a, na, uplo, ta, dg, i, l) * b[l+j*m]
				} else {
					s += b[i+l*m] * triAt(a, na, uplo, ta, dg, l, j)
				}
			}
			out[i+j*m] = alpha * s
		}
	}
	return out
}

func TestDtrtriColumnMajor(t *testing.T) {
	d := newDev(t)
	r := rand.New(rand.NewPCG(8, 8))
	const n, lda = 5, 7
	for _, uplo := range []blas.Uplo{blas.Lower, blas.Upper} {
		for _, dg := range []blas.Diag{blas.NonUnit, blas.Unit} {
			a := randMat(r, lda*n)
			for i := range n {
				a[i+i*lda] = 2 + float64(i)
			}
			p := d.upload(a)
			if err := d.s.Dtrtri(uplo, dg, n, p, lda); err != nil {
				t.Fatal(err)
			}
			inv := d.download(p, lda*n)
			what := fmt.Sprintf("dtrtri uplo %v diag %v", uplo, dg)
			// The other triangle and the padding rows are untouched.
			for j := range n {
				for i := range lda {
					if i >= n || (i != j && (uplo == blas.Lower) != (i > j)) {
						if inv[i+j*lda] != a[i+j*lda] {
							t.Fatalf("%s: element (%d, %d) outside the triangle changed", what, i, j)
						}
					}
				}
			}
			// A * inv(A) is the identity.
			id := make([]float64, n*n)
			for i := range n {
				for j := range n {
					s := 0.0
					for l := range n {
						s += triAt(a, lda, uplo, blas.NoTrans, dg, i, l) * triAt(inv, lda, uplo, blas.NoTrans, dg, l, j)
					}
					id[i+j*n] = s
				}
			}
			want := make([]float64, n*n)
			for i := range n {
				want[i+i*n] = 1
			}
			near(t, what, id, want, 1e-12)
		}
	}
}

func TestDsyrkColumnMajor(t *testing.T) {
	d := newDev(t)
	r := rand.New(rand.NewPCG(3, 3))
	const n, k = 4, 3
	for _, uplo := range []blas.Uplo{blas.Lower, blas.Upper} {
		for _, tr := range transposes {
			ar, ac := n, k
			if tr == blas.Trans {
				ar, ac = k, n
			}
			a, c := randMat(r, ar*ac), randMat(r, n*n)
			want := append([]float64(nil), c...)
			for j := range n {
				for i := range n {
					if (uplo == blas.Lower && i < j) || (uplo == blas.Upper && i > j) {
						continue // the other triangle stays as it was
					}
					s := 0.0
					for l := range k {
						s += at(a, ar, tr, i, l) * at(a, ar, tr, j, l)
					}
					want[i+j*n] = -1*s + 2*c[i+j*n]
				}
			}
			pa, pc := d.upload(a), d.upload(c)
			if err := d.s.Dsyrk(uplo, tr, n, k, -1, pa, ar, 2, pc, n); err != nil {
				t.Fatal(err)
			}
			near(t, fmt.Sprintf("dsyrk %v %v", uplo, tr), d.download(pc, n*n), want, 1e-12)
		}
	}
}

func spd(r *rand.Rand, n int) []float64 {
	m := randMat(r, n*n)
	a := make([]float64, n*n)
	for i := range n {
		for j := range n {
			s := 0.0
			for l := range n {
				s += m[i+l*n] * m[j+l*n]
			}
			a[i+j*n] = s
		}
		a[i+i*n] += float64(n)
	}
	return a
}

func TestDpotrfColumnMajor(t *testing.T) {
	d := newDev(t)
	r := rand.New(rand.NewPCG(4, 4))
	const n = 6
	for _, uplo := range []blas.Uplo{blas.Lower, blas.Upper} {
		a := spd(r, n)
		pa := d.upload(a)
		if err := d.s.Dpotrf(uplo, n, pa, n); err != nil {
			t.Fatal(err)
		}
		f := d.download(pa, n*n)
		// Rebuild A from the factor: L*L^T (Lower) or U^T*U (Upper).
		got := make([]float64, n*n)
		for i := range n {
			for j := range n {
				s := 0.0
				for l := range n {
					if uplo == blas.Lower && l <= i && l <= j {
						s += f[i+l*n] * f[j+l*n]
					}
					if uplo == blas.Upper && l <= i && l <= j {
						s += f[l+i*n] * f[l+j*n]
					}
				}
				got[i+j*n] = s
			}
		}
		near(t, fmt.Sprintf("dpotrf %v", uplo), got, a, 1e-10)
	}
	notSPD := make([]float64, n*n)
	notSPD[0] = -1
	p := d.upload(notSPD)
	if err := d.s.Dpotrf(blas.Lower, n, p, n); err != nil {
		t.Fatal(err)
	}
	if err := d.sync(); !errors.Is(err, driver.ErrNotPositiveDefinite) {
		t.Fatalf("query after a non-SPD Dpotrf: %v, want ErrNotPositiveDefinite", err)
	}
	if err := d.sync(); err != nil {
		t.Fatalf("the failure is reported once, then %v", err)
	}
}

func TestBatchedDgemm(t *testing.T) {
	d := newDev(t)
	r := rand.New(rand.NewPCG(5, 5))
	const m, count = 3, 4
	const stride = m*m + 1
	a, b, c := randMat(r, stride*count), randMat(r, stride*count), randMat(r, stride*count)
	want := append([]float64(nil), c...)
	for q := range count {
		o := q * stride
		for j := range m {
			for i := range m {
				s := 0.0
				for l := range m {
					s += a[o+i+l*m] * b[o+l+j*m]
				}
				want[o+i+j*m] = s + c[o+i+j*m]
			}
		}
	}
	pa, pb, pc := d.upload(a), d.upload(b), d.upload(c)
	if err := d.s.DgemmStridedBatched(blas.NoTrans, blas.NoTrans, m, m, m, 1, pa, m, stride, pb, m, stride, 1, pc, m, stride, count); err != nil {
		t.Fatal(err)
	}
	near(t, "strided batched", d.download(pc, len(c)), want, 1e-12)

	// The pointer-array form over separate allocations.
	var as, bs, cs []driver.Ptr
	for q := range count {
		o := q * stride
		as = append(as, d.upload(a[o:o+m*m]))
		bs = append(bs, d.upload(b[o:o+m*m]))
		cs = append(cs, d.upload(c[o:o+m*m]))
	}
	if err := d.s.DgemmBatched(blas.NoTrans, blas.NoTrans, m, m, m, 1, as, m, bs, m, 1, cs, m); err != nil {
		t.Fatal(err)
	}
	for q := range count {
		o := q * stride
		near(t, fmt.Sprintf("batched %d", q), d.download(cs[q], m*m), want[o:o+m*m], 1e-12)
	}
}

func TestMemoryAccounting(t *testing.T) {
	be := sim.New(sim.WithMemory(1024))
	defer be.Close()
	p1, err := be.Alloc(600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := be.Alloc(600); !errors.Is(err, driver.ErrOutOfMemory) {
		t.Fatalf("second alloc: %v, want ErrOutOfMemory", err)
	}
	if free, total, _ := be.MemInfo(); total != 1024 || free != 1024-768 {
		t.Fatalf("MemInfo %d/%d, want %d/1024 (600 rounded to 768)", free, total, 1024-768)
	}
	if err := be.Free(p1); err != nil {
		t.Fatal(err)
	}
	if err := be.Free(p1); !errors.Is(err, driver.ErrBadArgument) {
		t.Fatalf("double free: %v, want ErrBadArgument", err)
	}
	if be.Used() != 0 || be.Allocations() != 0 {
		t.Fatalf("used %d in %d allocations after free", be.Used(), be.Allocations())
	}
	p, _ := be.Alloc(64)
	s, _ := be.NewStream("s", 1)
	if err := s.CopyHtoD(p+32, make([]byte, 64)); !errors.Is(err, driver.ErrBadArgument) {
		t.Fatalf("overrunning copy: %v, want ErrBadArgument", err)
	}
}

// TestFreeOrders frees allocations oldest first, as a manager's eviction does,
// and then newest first: every live block keeps its contents through the
// table's compactions, and a freed block is no longer device memory.
func TestFreeOrders(t *testing.T) {
	d := newDev(t)
	const n = 100
	ps := make([]driver.Ptr, n)
	for i := range ps {
		ps[i] = d.upload([]float64{float64(i), -float64(i)})
	}
	check := func(live []int) {
		t.Helper()
		for _, i := range live {
			if got := d.download(ps[i], 2); got[0] != float64(i) || got[1] != -float64(i) {
				t.Fatalf("block %d holds %v after frees", i, got)
			}
		}
		if got := d.be.Allocations(); got != len(live) {
			t.Fatalf("%d allocations, want %d", got, len(live))
		}
	}
	var live []int
	for i := range n {
		if i < 70 {
			if err := d.be.Free(ps[i]); err != nil {
				t.Fatalf("free %d: %v", i, err)
			}
		} else {
			live = append(live, i)
		}
	}
	check(live)
	for _, i := range []int{0, 35, 69} {
		if err := d.be.Free(ps[i]); !errors.Is(err, driver.ErrBadArgument) {
			t.Fatalf("second free of block %d: %v, want ErrBadArgument", i, err)
		}
		if err := d.s.CopyHtoD(ps[i], make([]byte, 16)); !errors.Is(err, driver.ErrBadArgument) {
			t.Fatalf("copy to freed block %d: %v, want ErrBadArgument", i, err)
		}
	}
	for i := n - 1; i >= 70; i-- {
		if err := d.be.Free(ps[i]); err != nil {
			t.Fatalf("free %d: %v", i, err)
		}
		live = live[:len(live)-1]
		if i%10 == 0 {
			check(live)
		}
	}
	if d.be.Used() != 0 || d.be.Allocations() != 0 {
		t.Fatalf("used %d in %d allocations after every free", d.be.Used(), d.be.Allocations())
	}
}

func TestFaultInjection(t *testing.T) {
	boom := errors.New("boom")
	be := sim.New(sim.WithFaults(&sim.Faults{
		Copy:   func(stream string, k sim.CopyKind) error { return boomIf(k == sim.DtoH, boom) },
		Record: func(stream string, slot int) error { return boomIf(slot == 1, boom) },
		Query:  func(stream string, slot int) error { return boomIf(slot == 2, boom) },
		Exec:   func(stream, label string) error { return boomIf(label == "bad", boom) },
	}))
	defer be.Close()
	s, _ := be.NewStream("s", 2)
	p, _ := be.Alloc(8)
	if err := s.CopyDtoH(make([]byte, 8), p); !errors.Is(err, boom) {
		t.Fatalf("copy: %v", err)
	}
	if err := s.Record(1); !errors.Is(err, boom) {
		t.Fatalf("record: %v", err)
	}
	if err := s.Record(2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Query(2); !errors.Is(err, boom) {
		t.Fatalf("query: %v", err)
	}
	ss := s.(*sim.Stream)
	if err := ss.Enqueue("bad", func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.Record(0); err != nil {
		t.Fatal(err)
	}
	for {
		done, err := s.Query(0)
		if err != nil {
			if !errors.Is(err, boom) {
				t.Fatalf("exec failure reported as %v", err)
			}
			break
		}
		if done {
			t.Fatal("a failed operation was reported as complete")
		}
		time.Sleep(10 * time.Microsecond)
	}
}

func boomIf(cond bool, err error) error {
	if cond {
		return err
	}
	return nil
}

func TestManualStepping(t *testing.T) {
	be := sim.New(sim.Manual())
	defer be.Close()
	bs, _ := be.NewStream("s", 1)
	s := bs.(*sim.Stream)
	var order []string
	for _, l := range []string{"a", "b"} {
		s.Enqueue(l, func() error { order = append(order, l); return nil })
	}
	s.Record(0)
	if done, _ := s.Query(0); done {
		t.Fatal("event complete before any step")
	}
	if got := s.Queued(); len(got) != 2 {
		t.Fatalf("queued %v", got)
	}
	if l, ok := s.Step(); !ok || l != "a" {
		t.Fatalf("step ran %q", l)
	}
	if done, _ := s.Query(0); done {
		t.Fatal("event complete after one of two operations")
	}
	if n := s.Drain(); n != 1 {
		t.Fatalf("drained %d", n)
	}
	if done, _ := s.Query(0); !done || len(order) != 2 || order[1] != "b" {
		t.Fatalf("after drain: done %v, order %v", done, order)
	}
}
