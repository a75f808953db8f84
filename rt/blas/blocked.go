package blas

// Blocked right-side triangular solve.
//
// X·Aᵀ = alpha·B with A n×n lower triangular (the TRSM of a right-looking Cholesky, one per
// tile below the diagonal) is solved by column blocks of trsmBlock: each block of X is solved
// against its diagonal block of A, then removed from the columns to its right with one Dgemm.
// Nearly all the flops then run in the library's Dgemm, which OpenBLAS runs much faster than
// its Dtrsm on tile-sized operands (docs/performance.md, "CPU potrf against its peers"). The
// result differs from the unblocked solve only by rounding (the same products, summed in
// another order).

// trsmBlock is the column block of the blocked solve; it runs only when A has at least two.
const trsmBlock = 32

// blockedTrsm reports whether Dtrsm takes the blocked path for these arguments.
func (i *Impl) blockedTrsm(side Side, uplo Uplo, tA Transpose, n int) bool {
	return i.name == "openblas" && side == Right && uplo == Lower && tA == Trans && n >= 2*trsmBlock
}

// dtrsmRLT solves X·Aᵀ = alpha·B for X (A n×n lower triangular, B m×n, overwritten by X) by
// column blocks. Block j of X solves X_j·A_jjᵀ = alpha·B_j − Σ_{i<j} X_i·A_jiᵀ: the first
// update scales the columns to the right by alpha as it subtracts X_0's part, later updates
// only subtract.
func (i *Impl) dtrsmRLT(diag Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	for j := 0; j < n; j += trsmBlock {
		jb := min(trsmBlock, n-j)
		s, beta := 1.0, 1.0
		if j == 0 {
			s, beta = alpha, alpha
		}
		i.k.dtrsm(Right, Lower, Trans, diag, m, jb, s, a[j+j*lda:], lda, b[j*ldb:], ldb)
		if rest := n - j - jb; rest > 0 {
			i.k.dgemm(NoTrans, Trans, m, rest, jb, -1, b[j*ldb:], ldb, a[j+jb+j*lda:], lda, beta, b[(j+jb)*ldb:], ldb)
		}
	}
}
