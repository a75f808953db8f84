package blas

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// Tile-size benchmarks: the four kernels of a tiled Cholesky, with the
// shapes it calls them with, and the four QR tile kernels, on both
// backends, single-threaded:
//
//	go test -run '^$' -bench 'Tile' ./rt/blas
//
// Full-matrix baselines (minutes; they run only when the -bench pattern
// names them, so `-bench .` stays short):
//
//	go test -run '^$' -bench 'Large' -benchtime 1x ./rt/blas
//	go test -run '^$' -bench 'Large/openblas/threads=2/N=8192' -benchtime 1x ./rt/blas
//
// The last line is the 2-thread OpenBLAS dgemm and dpotrf at N=8192 only
// (sub-benchmarks are openblas/threads=T/N=N and gonum-mat/N=N).

var tileSizes = []int{128, 192, 256, 320, 384, 512}

func benchBackends(b *testing.B) []*Impl {
	impls := []*Impl{Gonum()}
	if ob, err := OpenBLAS(); err == nil {
		impls = append(impls, ob)
	} else {
		b.Logf("OpenBLAS skipped: %v", err)
	}
	return impls
}

func reportGFLOPs(b *testing.B, flopsPerOp float64) {
	b.ReportMetric(flopsPerOp*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkTileDgemm(b *testing.B) {
	for _, impl := range benchBackends(b) {
		for _, nb := range tileSizes {
			b.Run(fmt.Sprintf("%s/nb=%d", impl.Name(), nb), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, uint64(nb)))
				x, y, c := randMatrix(rng, nb, nb, nb), randMatrix(rng, nb, nb, nb), randMatrix(rng, nb, nb, nb)
				for b.Loop() {
					// The Cholesky update C −= A·Bᵀ.
					if err := impl.Dgemm(NoTrans, Trans, nb, nb, nb, -1, x, nb, y, nb, 1, c, nb); err != nil {
						b.Fatal(err)
					}
				}
				reportGFLOPs(b, GemmFlops(nb, nb, nb))
			})
		}
	}
}

func BenchmarkTileDtrsm(b *testing.B) {
	for _, impl := range benchBackends(b) {
		for _, nb := range tileSizes {
			b.Run(fmt.Sprintf("%s/nb=%d", impl.Name(), nb), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(2, uint64(nb)))
				l, x := wellConditionedTriangle(rng, nb, nb), randMatrix(rng, nb, nb, nb)
				for b.Loop() {
					// The panel solve X = X·L⁻ᵀ; alpha 1 keeps X bounded over
					// iterations since L is well conditioned.
					if err := impl.Dtrsm(Right, Lower, Trans, NonUnit, nb, nb, 1, l, nb, x, nb); err != nil {
						b.Fatal(err)
					}
				}
				reportGFLOPs(b, TrsmFlops(Right, nb, nb))
			})
		}
	}
}

func BenchmarkTileDsyrk(b *testing.B) {
	for _, impl := range benchBackends(b) {
		for _, nb := range tileSizes {
			b.Run(fmt.Sprintf("%s/nb=%d", impl.Name(), nb), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(3, uint64(nb)))
				x, c := randMatrix(rng, nb, nb, nb), randMatrix(rng, nb, nb, nb)
				for b.Loop() {
					if err := impl.Dsyrk(Lower, NoTrans, nb, nb, -1, x, nb, 1, c, nb); err != nil {
						b.Fatal(err)
					}
				}
				reportGFLOPs(b, SyrkFlops(nb, nb))
			})
		}
	}
}

func BenchmarkTileDpotrf(b *testing.B) {
	for _, impl := range benchBackends(b) {
		for _, nb := range tileSizes {
			b.Run(fmt.Sprintf("%s/nb=%d", impl.Name(), nb), func(b *testing.B) {
				spd := make([]float64, nb*nb)
				if err := FillSPD(nb, spd, nb, uint64(nb)); err != nil {
					b.Fatal(err)
				}
				work := make([]float64, nb*nb)
				for b.Loop() {
					b.StopTimer()
					copy(work, spd)
					b.StartTimer()
					if err := impl.Dpotrf(Lower, nb, work, nb); err != nil {
						b.Fatal(err)
					}
				}
				reportGFLOPs(b, PotrfFlops(nb))
			})
		}
	}
}

var largeSizes = []int{4096, 8192}

// requireLargeFilter skips a full-matrix benchmark unless the -bench
// pattern asks for it by name.
func requireLargeFilter(b *testing.B) {
	b.Helper()
	if f := flag.Lookup("test.bench"); f == nil || !strings.Contains(f.Value.String(), "Large") {
		b.Skip("full-matrix baseline: run with -bench Large")
	}
}

// withThreads runs f with OpenBLAS on the given thread count and puts it
// back to one thread afterwards.
func withThreads(b *testing.B, ob *Impl, threads int, f func()) {
	b.Helper()
	if _, err := ob.SetThreads(threads); err != nil {
		b.Fatal(err)
	}
	defer func() {
		if _, err := ob.SetThreads(1); err != nil {
			b.Fatal(err)
		}
	}()
	f()
}

// BenchmarkLargeDgemm is the dgemm ceiling of OpenBLAS on 1 and 2 threads.
func BenchmarkLargeDgemm(b *testing.B) {
	requireLargeFilter(b)
	ob := openblasOrSkip(b)
	for _, n := range largeSizes {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("openblas/threads=%d/N=%d", threads, n), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(4, uint64(n)))
				x, y, c := randMatrix(rng, n, n, n), randMatrix(rng, n, n, n), make([]float64, n*n)
				withThreads(b, ob, threads, func() {
					for b.Loop() {
						if err := ob.Dgemm(NoTrans, NoTrans, n, n, n, 1, x, n, y, n, 0, c, n); err != nil {
							b.Fatal(err)
						}
					}
				})
				reportGFLOPs(b, GemmFlops(n, n, n))
			})
		}
	}
}

// BenchmarkLargeDpotrf is the one-call Cholesky baselines: OpenBLAS's own
// (multithreaded) dpotrf_ on 1 and 2 threads, and gonum's mat.Cholesky.
func BenchmarkLargeDpotrf(b *testing.B) {
	requireLargeFilter(b)
	for _, n := range largeSizes {
		// The n×n input is built once per size, and only when a
		// sub-benchmark of that size is selected.
		var spd, work []float64
		run := func(b *testing.B, factor func(a []float64) error) {
			if spd == nil {
				spd, work = make([]float64, n*n), make([]float64, n*n)
				if err := FillSPD(n, spd, n, uint64(n)); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				b.StopTimer()
				copy(work, spd)
				b.StartTimer()
				if err := factor(work); err != nil {
					b.Fatal(err)
				}
			}
			reportGFLOPs(b, PotrfFlops(n))
		}
		if ob, err := OpenBLAS(); err == nil {
			for _, threads := range []int{1, 2} {
				b.Run(fmt.Sprintf("openblas/threads=%d/N=%d", threads, n), func(b *testing.B) {
					withThreads(b, ob, threads, func() {
						run(b, func(a []float64) error { return ob.Dpotrf(Lower, n, a, n) })
					})
				})
			}
		}
		b.Run(fmt.Sprintf("gonum-mat/N=%d", n), func(b *testing.B) {
			run(b, func(a []float64) error { return MatCholesky(n, a, n) })
		})
	}
}

// The QR tile kernels at the tile shape of a tile QR: nb = 256, ib = 32,
// with the caller's work buffer as task bodies pass it. The factorization
// benchmarks restore their input outside the timer; the applies are
// orthogonal, so C keeps its norm from one iteration to the next.
const qrBenchNB, qrBenchIB = 256, 32

func BenchmarkTileDgeqrt(b *testing.B) {
	const nb, ib = qrBenchNB, qrBenchIB
	for _, impl := range benchBackends(b) {
		b.Run(fmt.Sprintf("%s/nb=%d/ib=%d", impl.Name(), nb, ib), func(b *testing.B) {
			a := randMatrix(rand.New(rand.NewPCG(6, 6)), nb, nb, nb)
			f, t, work := make([]float64, nb*nb), make([]float64, ib*nb), make([]float64, GeqrtWork(nb, ib))
			for b.Loop() {
				b.StopTimer()
				copy(f, a)
				b.StartTimer()
				if err := impl.Dgeqrt(nb, nb, ib, f, nb, t, ib, work); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkTileDtpqrt(b *testing.B) {
	const nb, ib = qrBenchNB, qrBenchIB
	for _, impl := range benchBackends(b) {
		for _, l := range []int{0, nb} { // tsqrt and ttqrt
			b.Run(fmt.Sprintf("%s/nb=%d/ib=%d/l=%d", impl.Name(), nb, ib, l), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(7, 7))
				r, v := randMatrix(rng, nb, nb, nb), randMatrix(rng, nb, nb, nb)
				fr, fv := make([]float64, nb*nb), make([]float64, nb*nb)
				t, work := make([]float64, ib*nb), make([]float64, GeqrtWork(nb, ib))
				for b.Loop() {
					b.StopTimer()
					copy(fr, r)
					copy(fv, v)
					b.StartTimer()
					if err := impl.Dtpqrt(nb, nb, l, ib, fr, nb, fv, nb, t, ib, work); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkTileDgemqrt(b *testing.B) {
	const nb, ib = qrBenchNB, qrBenchIB
	for _, impl := range benchBackends(b) {
		b.Run(fmt.Sprintf("%s/nb=%d/ib=%d", impl.Name(), nb, ib), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(8, 8))
			v, c := randMatrix(rng, nb, nb, nb), randMatrix(rng, nb, nb, nb)
			t, work := make([]float64, ib*nb), make([]float64, GemqrtWork(Left, nb, nb, ib))
			if err := impl.Dgeqrt(nb, nb, ib, v, nb, t, ib, work); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				// The trailing update of a tile QR: C = Qᵀ·C.
				if err := impl.Dgemqrt(Left, Trans, nb, nb, nb, ib, v, nb, t, ib, c, nb, work); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkTileDtpmqrt(b *testing.B) {
	const nb, ib = qrBenchNB, qrBenchIB
	for _, impl := range benchBackends(b) {
		b.Run(fmt.Sprintf("%s/nb=%d/ib=%d", impl.Name(), nb, ib), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(9, 9))
			r, v := randMatrix(rng, nb, nb, nb), randMatrix(rng, nb, nb, nb)
			a, c := randMatrix(rng, nb, nb, nb), randMatrix(rng, nb, nb, nb)
			t, work := make([]float64, ib*nb), make([]float64, GemqrtWork(Left, nb, nb, ib))
			if err := impl.Dtpqrt(nb, nb, 0, ib, r, nb, v, nb, t, ib, work); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				// The tsmqr update of a tile QR: [A; C] = Qᵀ·[A; C].
				if err := impl.Dtpmqrt(Left, Trans, nb, nb, nb, 0, ib, v, nb, t, ib, a, nb, c, nb, work); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
