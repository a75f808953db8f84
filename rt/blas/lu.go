package blas

import "math"

// LU and dlauum on column-major tiles, written on a backend's kernels.
// gonum's own Dgetrf and Dlauum are row-major, and a row-major LU of the
// same array is an LU of the transpose (column pivoting), so they cannot
// be reused; their blocked updates would also fan out to goroutines.

// getrfBlock is the panel width of blockedGetrf and the block of lauum.
const getrfBlock = 64

// sfmin is the smallest normal float64 (LAPACK's dlamch('S')): a pivot at
// least this large can be inverted without overflow.
const sfmin = 0x1p-1022

// blockedGetrf is the right-looking blocked LU of the m×n matrix A, with
// partial pivoting when ipiv (min(m,n) elements) is not nil: each panel
// is factored unblocked, its interchanges are applied to the columns on
// both sides, and the trailing matrix is updated with one Dtrsm and one
// Dgemm. It returns LAPACK's info: the 1-based column of the first exactly
// zero pivot, or 0.
func blockedGetrf(k kernels, m, n int, a []float64, lda int, ipiv []int) int {
	info := 0
	mn := min(m, n)
	for j := 0; j < mn; j += getrfBlock {
		jb := min(getrfBlock, mn-j)
		var piv []int
		if ipiv != nil {
			piv = ipiv[j : j+jb]
		}
		if in := getf2(m-j, jb, a[j+j*lda:], lda, piv); in != 0 && info == 0 {
			info = j + in
		}
		if ipiv != nil {
			for r := range piv {
				piv[r] += j
			}
			laswp(j, a, lda, j, j+jb-1, ipiv, 1)
			if rest := n - j - jb; rest > 0 {
				laswp(rest, a[(j+jb)*lda:], lda, j, j+jb-1, ipiv, 1)
			}
		}
		if rest := n - j - jb; rest > 0 {
			k.dtrsm(Left, Lower, NoTrans, Unit, jb, rest, 1, a[j+j*lda:], lda, a[j+(j+jb)*lda:], lda)
			if below := m - j - jb; below > 0 {
				k.dgemm(NoTrans, NoTrans, below, rest, jb, -1, a[j+jb+j*lda:], lda, a[j+(j+jb)*lda:], lda, 1, a[j+jb+(j+jb)*lda:], lda)
			}
		}
	}
	return info
}

// getf2 is the unblocked LU of the m×n panel A (dgetf2), with partial
// pivoting when ipiv (0-based, relative to the panel) is not nil. A zero
// pivot leaves its column unscaled and the factorization goes on.
func getf2(m, n int, a []float64, lda int, ipiv []int) int {
	info := 0
	for j := 0; j < min(m, n); j++ {
		col := a[j*lda : j*lda+m]
		if ipiv != nil {
			p := j + gn.Idamax(m-j, col[j:], 1)
			ipiv[j] = p
			if p != j {
				for c := 0; c < n; c++ {
					a[j+c*lda], a[p+c*lda] = a[p+c*lda], a[j+c*lda]
				}
			}
		}
		below := col[j+1:]
		switch d := col[j]; {
		case d == 0:
			if info == 0 {
				info = j + 1
			}
		case math.Abs(d) >= sfmin:
			gn.Dscal(len(below), 1/d, below, 1)
		default:
			for r := range below {
				below[r] /= d
			}
		}
		for c := j + 1; c < n; c++ {
			if f := a[j+c*lda]; f != 0 {
				gn.Daxpy(len(below), -f, below, 1, a[j+1+c*lda:m+c*lda], 1)
			}
		}
	}
	return info
}

// laswp swaps row i with row ipiv[i] in the n columns of A, for i from k1
// up to k2 (incx 1) or down (incx −1). Each column is done whole, down
// contiguous memory.
func laswp(n int, a []float64, lda int, k1, k2 int, ipiv []int, incx int) {
	for j := 0; j < n; j++ {
		col := a[j*lda:]
		if incx > 0 {
			for i := k1; i <= k2; i++ {
				if p := ipiv[i]; p != i {
					col[i], col[p] = col[p], col[i]
				}
			}
			continue
		}
		for i := k2; i >= k1; i-- {
			if p := ipiv[i]; p != i {
				col[i], col[p] = col[p], col[i]
			}
		}
	}
}

// lauum is the blocked dlauum on a backend's kernels: U·Uᵀ or Lᵀ·L of the
// uplo triangle of A, in place, by diagonal blocks.
func lauum(k kernels, uplo Uplo, n int, a []float64, lda int) {
	at := func(i, j int) []float64 { return a[i+j*lda:] }
	for i := 0; i < n; i += getrfBlock {
		ib := min(getrfBlock, n-i)
		rest := n - i - ib
		if uplo == Upper {
			// Block column i of U·Uᵀ above the diagonal block:
			// U(0:i, i:) · U(i:i+ib, i:)ᵀ.
			if i > 0 {
				k.dtrmm(Right, Upper, Trans, NonUnit, i, ib, 1, at(i, i), lda, at(0, i), lda)
			}
			lauu2(Upper, ib, at(i, i), lda)
			if rest > 0 {
				if i > 0 {
					k.dgemm(NoTrans, Trans, i, ib, rest, 1, at(0, i+ib), lda, at(i, i+ib), lda, 1, at(0, i), lda)
				}
				k.dsyrk(Upper, NoTrans, ib, rest, 1, at(i, i+ib), lda, 1, at(i, i), lda)
			}
			continue
		}
		if i > 0 {
			k.dtrmm(Left, Lower, Trans, NonUnit, ib, i, 1, at(i, i), lda, at(i, 0), lda)
		}
		lauu2(Lower, ib, at(i, i), lda)
		if rest > 0 {
			if i > 0 {
				k.dgemm(Trans, NoTrans, ib, i, rest, 1, at(i+ib, i), lda, at(i+ib, 0), lda, 1, at(i, 0), lda)
			}
			k.dsyrk(Lower, Trans, ib, rest, 1, at(i+ib, i), lda, 1, at(i, i), lda)
		}
	}
}

// lauu2 is the unblocked dlauum. Entry (r, i) of U·Uᵀ (r <= i) is
// Σ_{c>=i} U(r,c)·U(i,c); computing column i, top to bottom, reads only
// columns >= i, which later steps have not overwritten yet. Lᵀ·L is the
// same by rows.
func lauu2(uplo Uplo, n int, a []float64, lda int) {
	for i := 0; i < n; i++ {
		aii := a[i+i*lda]
		if uplo == Upper {
			var s float64
			for c := i; c < n; c++ {
				s += a[i+c*lda] * a[i+c*lda]
			}
			a[i+i*lda] = s
			for r := 0; r < i; r++ {
				v := aii * a[r+i*lda]
				for c := i + 1; c < n; c++ {
					v += a[r+c*lda] * a[i+c*lda]
				}
				a[r+i*lda] = v
			}
			continue
		}
		ci := a[i+i*lda : n+i*lda]
		a[i+i*lda] = aii*aii + gn.Ddot(len(ci)-1, ci[1:], 1, ci[1:], 1)
		for c := 0; c < i; c++ {
			cc := a[i+c*lda : n+c*lda]
			cc[0] = aii*cc[0] + gn.Ddot(len(cc)-1, cc[1:], 1, ci[1:], 1)
		}
	}
}
