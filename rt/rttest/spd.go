package rttest

import "math/rand/v2"

// RandomSPD returns a dense n×n column-major symmetric positive definite matrix (lda = n)
// with entries in [-0.5, 0.5) plus n on the diagonal, reproducible from seed.
func RandomSPD(n int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	a := make([]float64, n*n)
	for j := 0; j < n; j++ {
		for i := j; i < n; i++ {
			v := r.Float64() - 0.5
			a[i+j*n], a[j+i*n] = v, v
		}
		a[j+j*n] += float64(n)
	}
	return a
}
