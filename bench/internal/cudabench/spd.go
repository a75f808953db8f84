package cudabench

import (
	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/gpu/gputest"
)

// The Cholesky benchmarks factor the same symmetric positive definite
// matrix on the host (tiles) and on the device (dense, for cuSOLVER):
// entry (i, j) is n on the diagonal and a hash of (min, max, seed) mapped to
// [-0.5, 0.5) elsewhere, computed bit for bit alike by SPDEntry and the
// fill_spd kernel (the product by 2^-53 is exact, so contracting it into a
// fused multiply-add changes nothing).

func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// SPDEntry is entry (i, j) of the n×n benchmark matrix.
func SPDEntry(i, j, n int, seed uint64) float64 {
	if i == j {
		return float64(n)
	}
	lo, hi := min(i, j), max(i, j)
	h := mix(seed ^ mix(uint64(lo)*uint64(n)+uint64(hi)))
	return float64(h>>11)*(1.0/9007199254740992.0) - 0.5
}

// kernelSource holds the benchmarks' CUDA kernels: the device generator of
// the same matrix (column-major, leading dimension lda), a filler of
// random values in [-0.5, 0.5), and an empty kernel.
const kernelSource = `
__device__ unsigned long long cudabench_mix(unsigned long long z) {
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

extern "C" __global__ void cudabench_fill_spd(double* a, int n, long long lda, unsigned long long seed) {
	long long total = (long long)n * n;
	for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < total; k += (long long)gridDim.x * blockDim.x) {
		long long j = k / n, i = k % n;
		double v;
		if (i == j) {
			v = (double)n;
		} else {
			unsigned long long lo = i < j ? i : j, hi = i < j ? j : i;
			unsigned long long h = cudabench_mix(seed ^ cudabench_mix(lo * (unsigned long long)n + hi));
			v = (double)(h >> 11) * (1.0 / 9007199254740992.0) - 0.5;
		}
		a[i + j * lda] = v;
	}
}

extern "C" __global__ void cudabench_fill_random(double* a, long long n, unsigned long long seed) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
		a[i] = (double)(cudabench_mix(seed ^ cudabench_mix((unsigned long long)i)) >> 11) * (1.0 / 9007199254740992.0) - 0.5;
}

extern "C" __global__ void cudabench_empty_raw() { }
`

// fillLower writes the benchmark matrix into the lower tiles of a (the
// padding of ragged tiles gets zeros), on every core.
func fillLower(a *rt.TiledMatrix, seed uint64) {
	gputest.ForLowerTiles(a, func(_, ti, tj int) {
		t := a.Tile(ti, tj)
		clear(t)
		for c := range a.TileCols(tj) {
			for r := range a.TileRows(ti) {
				t[r+c*a.MB] = SPDEntry(ti*a.MB+r, tj*a.NB+c, a.M, seed)
			}
		}
	})
}

// bumpLower marks the host copies of the lower tiles as newer than any
// device copy, so that the next graph stages them in again.
func bumpLower(a *rt.TiledMatrix) {
	gputest.ForLowerTiles(a, func(_, i, j int) {
		rt.Impl.BumpVersion(a.DataOf(rt.Index{N: 2, I: [rt.MaxIndex]int{i, j}}).Host())
	})
}
