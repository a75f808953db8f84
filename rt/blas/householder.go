package blas

// Blocked Householder QR on column-major tiles, written on a backend's
// kernels: the gonum backend's dgeqrt, dtpqrt, dgemqrt and dtpmqrt, and
// OpenBLAS's when its library lacks the LAPACK entry points.
//
// gonum's lapack has no dgeqrt family, and its row-major Dgeqr2/Dlarft
// would factor the transpose: no identity turns a row-major QR into a
// column-major one. So the reflectors are generated here, column by column
// (gonum's Dlarfg works on a plain vector, where layout does not matter),
// and the block updates go through the kernels' Dgemm and Dtrmm, which the
// gonum backend keeps on the calling goroutine.
//
// Conventions are LAPACK's: a block of kb reflectors H(j) = I − τ_j·v_j·v_jᵀ
// is H = H(0)·…·H(kb−1) = I − V·T·Vᵀ with T kb×kb upper triangular (the
// forward, columnwise storage of dlarft), so Hᵀ = I − V·Tᵀ·Vᵀ.

// geqrt is the blocked QR of the m×n tile A (dgeqrt): each panel of ib
// columns is factored by geqrt2, then its block reflector is applied, as
// Hᵀ, to the columns on its right.
func geqrt(k kernels, m, n, ib int, a []float64, lda int, t []float64, ldt int, work []float64) {
	kk := min(m, n)
	for i := 0; i < kk; i += ib {
		kb := min(ib, kk-i)
		geqrt2(m-i, kb, a[i+i*lda:], lda, t[i*ldt:], ldt)
		if nc := n - i - kb; nc > 0 {
			larfb(k, Left, Trans, m-i, nc, kb, a[i+i*lda:], lda, t[i*ldt:], ldt, a[i+(i+kb)*lda:], lda, work)
		}
	}
}

// geqrt2 factors the m×n panel A (m >= n) column by column and builds the
// n×n triangle T of its block reflector as it goes (dgeqr2 and dlarft in
// one pass).
func geqrt2(m, n int, a []float64, lda int, t []float64, ldt int) {
	for j := 0; j < n; j++ {
		jj := j + j*lda
		tail := a[jj+1 : j*lda+m] // v_j below its implicit 1
		beta, tau := la.Dlarfg(m-j, a[jj], tail, 1)
		a[jj] = beta
		if tau != 0 {
			// H(j) on the panel's later columns, rows j..m−1.
			for c := j + 1; c < n; c++ {
				col := a[j+c*lda : m+c*lda]
				w := col[0] + gn.Ddot(len(tail), tail, 1, col[1:], 1)
				col[0] -= tau * w
				gn.Daxpy(len(tail), -tau*w, tail, 1, col[1:], 1)
			}
		}
		// T(0:j, j) = −τ_j · T(0:j, 0:j) · V(:, 0:j)ᵀ·v_j; v_j is zero above
		// row j, where it holds its implicit 1.
		tj := t[j*ldt : j*ldt+j+1]
		for r := 0; r < j; r++ {
			vr := a[j+r*lda : m+r*lda]
			tj[r] = -tau * (vr[0] + gn.Ddot(len(tail), vr[1:], 1, tail, 1))
		}
		trmvUpper(j, t, ldt, tj)
		tj[j] = tau
	}
}

// trmvUpper overwrites x (n elements) with T·x, T the n×n upper triangle
// of t. Row r of the product needs x[r:] only, so ascending rows can
// overwrite x in place.
func trmvUpper(n int, t []float64, ldt int, x []float64) {
	for r := 0; r < n; r++ {
		var s float64
		for c := r; c < n; c++ {
			s += t[r+c*ldt] * x[c]
		}
		x[r] = s
	}
}

// larfb applies the block reflector H = I − V·T·Vᵀ of kb reflectors, or Hᵀ
// (trans), to the m×n matrix C from the Left or the Right (dlarfb, forward
// and columnwise). V has m rows (Left) or n rows (Right): a unit lower
// triangle V1 on top (the slice may hold R above it, never read) and a
// rectangle V2 below. work holds W, kb×n (Left) or m×kb (Right).
func larfb(k kernels, side Side, trans Transpose, m, n, kb int, v []float64, ldv int, t []float64, ldt int, c []float64, ldc int, work []float64) {
	if side == Left {
		// op(H)·C = C − V·op(T)·(Vᵀ·C): W = Vᵀ·C = V1ᵀ·C1 + V2ᵀ·C2.
		w := work[:kb*n]
		for j := 0; j < n; j++ {
			copy(w[j*kb:j*kb+kb], c[j*ldc:j*ldc+kb])
		}
		k.dtrmm(Left, Lower, Trans, Unit, kb, n, 1, v, ldv, w, kb)
		if m > kb {
			k.dgemm(Trans, NoTrans, kb, n, m-kb, 1, v[kb:], ldv, c[kb:], ldc, 1, w, kb)
		}
		k.dtrmm(Left, Upper, trans, NonUnit, kb, n, 1, t, ldt, w, kb)
		if m > kb {
			k.dgemm(NoTrans, NoTrans, m-kb, n, kb, -1, v[kb:], ldv, w, kb, 1, c[kb:], ldc)
		}
		k.dtrmm(Left, Lower, NoTrans, Unit, kb, n, 1, v, ldv, w, kb)
		for j := 0; j < n; j++ {
			cj, wj := c[j*ldc:j*ldc+kb], w[j*kb:j*kb+kb]
			for r := range cj {
				cj[r] -= wj[r]
			}
		}
		return
	}
	// C·op(H) = C − (C·V)·op(T)·Vᵀ: W = C·V = C1·V1 + C2·V2.
	w := work[:m*kb]
	for j := 0; j < kb; j++ {
		copy(w[j*m:j*m+m], c[j*ldc:j*ldc+m])
	}
	k.dtrmm(Right, Lower, NoTrans, Unit, m, kb, 1, v, ldv, w, m)
	if n > kb {
		k.dgemm(NoTrans, NoTrans, m, kb, n-kb, 1, c[kb*ldc:], ldc, v[kb:], ldv, 1, w, m)
	}
	k.dtrmm(Right, Upper, trans, NonUnit, m, kb, 1, t, ldt, w, m)
	if n > kb {
		k.dgemm(NoTrans, Trans, m, n-kb, kb, -1, w, m, v[kb:], ldv, 1, c[kb*ldc:], ldc)
	}
	k.dtrmm(Right, Lower, Trans, Unit, m, kb, 1, v, ldv, w, m)
	for j := 0; j < kb; j++ {
		cj, wj := c[j*ldc:j*ldc+m], w[j*m:j*m+m]
		for r := range cj {
			cj[r] -= wj[r]
		}
	}
}

// forwardBlocks reports whether op(Q) = op(Q_0·Q_1·…) is applied block 0
// first: Qᵀ from the Left and Q from the Right are; Q from the Left and Qᵀ
// from the Right start with the last block.
func forwardBlocks(side Side, trans Transpose) bool {
	return (side == Left) == (trans == Trans)
}

// gemqrt applies op(Q) from geqrt (nk reflectors in V, blocks of ib) to
// the m×n matrix C (dgemqrt).
func gemqrt(k kernels, side Side, trans Transpose, m, n, nk, ib int, v []float64, ldv int, t []float64, ldt int, c []float64, ldc int, work []float64) {
	blocks := (nk + ib - 1) / ib
	fwd := forwardBlocks(side, trans)
	for s := 0; s < blocks; s++ {
		bi := s
		if !fwd {
			bi = blocks - 1 - s
		}
		i := bi * ib
		kb := min(ib, nk-i)
		if side == Left {
			larfb(k, Left, trans, m-i, n, kb, v[i+i*ldv:], ldv, t[i*ldt:], ldt, c[i:], ldc, work)
		} else {
			larfb(k, Right, trans, m, n-i, kb, v[i+i*ldv:], ldv, t[i*ldt:], ldt, c[i*ldc:], ldc, work)
		}
	}
}

// pentagonBlock is the shape of the block of reflectors i..i+kb−1 of a
// triangle-pentagon whose V has q rows with the last l upper trapezoidal:
// the block touches the first mb rows of V (and of B), the last lb of them
// upper trapezoidal within the block (dtpqrt's MB and LB).
func pentagonBlock(q, l, i, kb int) (mb, lb int) {
	mb = min(q-l+i+kb, q)
	if i < l {
		lb = min(kb, l-i)
	}
	return mb, lb
}

// tpqrt is the blocked QR of the triangle-pentagon [A; B] (dtpqrt), A n×n
// upper triangular, B m×n with its last l rows upper trapezoidal.
func tpqrt(k kernels, m, n, l, ib int, a []float64, lda int, b []float64, ldb int, t []float64, ldt int, work []float64) {
	for i := 0; i < n; i += ib {
		kb := min(ib, n-i)
		mb, lb := pentagonBlock(m, l, i, kb)
		tpqrt2(mb, kb, lb, a[i+i*lda:], lda, b[i*ldb:], ldb, t[i*ldt:], ldt)
		if nc := n - i - kb; nc > 0 {
			tprfb(k, Left, Trans, mb, nc, kb, lb, b[i*ldb:], ldb, t[i*ldt:], ldt, a[i+(i+kb)*lda:], lda, b[(i+kb)*ldb:], ldb, work)
		}
	}
}

// tpqrt2 factors the panel [A; B], A n×n upper triangular, B m×n with its
// last l rows upper trapezoidal, column by column, building T (dtpqrt2).
// Reflector j is [e_j; b_j]: its part in A is the unit vector of row j, so
// it touches row j of A and the first p_j rows of B only.
func tpqrt2(m, n, l int, a []float64, lda int, b []float64, ldb int, t []float64, ldt int) {
	rows := func(j int) int { return m - l + min(j+1, l) }
	for j := 0; j < n; j++ {
		p := rows(j)
		bj := b[j*ldb : j*ldb+p]
		beta, tau := la.Dlarfg(p+1, a[j+j*lda], bj, 1)
		a[j+j*lda] = beta
		if tau != 0 {
			for c := j + 1; c < n; c++ {
				bc := b[c*ldb : c*ldb+p]
				w := a[j+c*lda] + gn.Ddot(p, bj, 1, bc, 1)
				a[j+c*lda] -= tau * w
				gn.Daxpy(p, -tau*w, bj, 1, bc, 1)
			}
		}
		// The A parts of different reflectors are orthogonal unit vectors,
		// so Vᵀ·v_j is the B parts' dot products alone.
		tj := t[j*ldt : j*ldt+j+1]
		for r := 0; r < j; r++ {
			pr := rows(r)
			tj[r] = -tau * gn.Ddot(pr, b[r*ldb:r*ldb+pr], 1, bj, 1)
		}
		trmvUpper(j, t, ldt, tj)
		tj[j] = tau
	}
}

// tprfb applies the block reflector H = I − Y·T·Yᵀ, Y = [I; V], of kb
// reflectors, or Hᵀ (trans), to a pair (dtprfb, forward and columnwise).
// V has m rows (Left) or n rows (Right): a rectangle V1 over an l×kb upper
// trapezoid V2 = [V2a V2b], V2a l×l upper triangular.
//
// Left: A is kb×n, B m×n, and [A; B] −= Y·op(T)·W with W = A + Vᵀ·B (kb×n).
// Right: A is m×kb, B m×n, and [A B] −= W·op(T)·Yᵀ with W = A + B·V (m×kb).
// work holds W.
func tprfb(k kernels, side Side, trans Transpose, m, n, kb, l int, v []float64, ldv int, t []float64, ldt int, a []float64, lda int, b []float64, ldb int, work []float64) {
	if side == Left {
		mr := m - l
		w := work[:kb*n]
		// W = A + V1ᵀ·B1 + [V2aᵀ·B2; V2bᵀ·B2]. V2aᵀ·B2 needs a copy of B2 to
		// multiply in place, so W's first l rows start from B2.
		for j := 0; j < n; j++ {
			copy(w[j*kb:j*kb+l], b[mr+j*ldb:mr+j*ldb+l])
		}
		if l > 0 {
			k.dtrmm(Left, Upper, Trans, NonUnit, l, n, 1, v[mr:], ldv, w, kb)
		}
		for j := 0; j < n; j++ {
			wj, aj := w[j*kb:j*kb+kb], a[j*lda:j*lda+kb]
			for r := 0; r < l; r++ {
				wj[r] += aj[r]
			}
			copy(wj[l:], aj[l:])
		}
		if l > 0 && kb > l {
			k.dgemm(Trans, NoTrans, kb-l, n, l, 1, v[mr+l*ldv:], ldv, b[mr:], ldb, 1, w[l:], kb)
		}
		if mr > 0 {
			k.dgemm(Trans, NoTrans, kb, n, mr, 1, v, ldv, b, ldb, 1, w, kb)
		}
		k.dtrmm(Left, Upper, trans, NonUnit, kb, n, 1, t, ldt, w, kb)
		for j := 0; j < n; j++ {
			wj, aj := w[j*kb:j*kb+kb], a[j*lda:j*lda+kb]
			for r := range aj {
				aj[r] -= wj[r]
			}
		}
		// B1 −= V1·W; B2 −= V2b·W[l:] + V2a·W[:l], the last in place in W.
		if mr > 0 {
			k.dgemm(NoTrans, NoTrans, mr, n, kb, -1, v, ldv, w, kb, 1, b, ldb)
		}
		if l > 0 {
			if kb > l {
				k.dgemm(NoTrans, NoTrans, l, n, kb-l, -1, v[mr+l*ldv:], ldv, w[l:], kb, 1, b[mr:], ldb)
			}
			k.dtrmm(Left, Upper, NoTrans, NonUnit, l, n, 1, v[mr:], ldv, w, kb)
			for j := 0; j < n; j++ {
				wj, bj := w[j*kb:j*kb+l], b[mr+j*ldb:mr+j*ldb+l]
				for r := range bj {
					bj[r] -= wj[r]
				}
			}
		}
		return
	}
	nr := n - l
	w := work[:m*kb]
	// W = A + B1·V1 + [B2·V2a, B2·V2b].
	for j := 0; j < l; j++ {
		copy(w[j*m:j*m+m], b[(nr+j)*ldb:(nr+j)*ldb+m])
	}
	if l > 0 {
		k.dtrmm(Right, Upper, NoTrans, NonUnit, m, l, 1, v[nr:], ldv, w, m)
	}
	for j := 0; j < kb; j++ {
		wj, aj := w[j*m:j*m+m], a[j*lda:j*lda+m]
		if j < l {
			for r := range wj {
				wj[r] += aj[r]
			}
		} else {
			copy(wj, aj)
		}
	}
	if l > 0 && kb > l {
		k.dgemm(NoTrans, NoTrans, m, kb-l, l, 1, b[nr*ldb:], ldb, v[nr+l*ldv:], ldv, 1, w[l*m:], m)
	}
	if nr > 0 {
		k.dgemm(NoTrans, NoTrans, m, kb, nr, 1, b, ldb, v, ldv, 1, w, m)
	}
	k.dtrmm(Right, Upper, trans, NonUnit, m, kb, 1, t, ldt, w, m)
	for j := 0; j < kb; j++ {
		wj, aj := w[j*m:j*m+m], a[j*lda:j*lda+m]
		for r := range aj {
			aj[r] -= wj[r]
		}
	}
	// B1 −= W·V1ᵀ; B2 −= W[:, l:]·V2bᵀ + W[:, :l]·V2aᵀ, the last in place in W.
	if nr > 0 {
		k.dgemm(NoTrans, Trans, m, nr, kb, -1, w, m, v, ldv, 1, b, ldb)
	}
	if l > 0 {
		if kb > l {
			k.dgemm(NoTrans, Trans, m, l, kb-l, -1, w[l*m:], m, v[nr+l*ldv:], ldv, 1, b[nr*ldb:], ldb)
		}
		k.dtrmm(Right, Upper, Trans, NonUnit, m, l, 1, v[nr:], ldv, w, m)
		for j := 0; j < l; j++ {
			wj, bj := w[j*m:j*m+m], b[(nr+j)*ldb:(nr+j)*ldb+m]
			for r := range bj {
				bj[r] -= wj[r]
			}
		}
	}
}

// tpmqrt applies op(Q) from tpqrt (nk reflectors in V, blocks of ib, the
// last l rows of V upper trapezoidal) to A and B (dtpmqrt).
func tpmqrt(k kernels, side Side, trans Transpose, m, n, nk, l, ib int, v []float64, ldv int, t []float64, ldt int, a []float64, lda int, b []float64, ldb int, work []float64) {
	q := m
	if side == Right {
		q = n
	}
	blocks := (nk + ib - 1) / ib
	fwd := forwardBlocks(side, trans)
	for s := 0; s < blocks; s++ {
		bi := s
		if !fwd {
			bi = blocks - 1 - s
		}
		i := bi * ib
		kb := min(ib, nk-i)
		mb, lb := pentagonBlock(q, l, i, kb)
		if side == Left {
			tprfb(k, Left, trans, mb, n, kb, lb, v[i*ldv:], ldv, t[i*ldt:], ldt, a[i:], lda, b, ldb, work)
		} else {
			tprfb(k, Right, trans, m, mb, kb, lb, v[i*ldv:], ldv, t[i*ldt:], ldt, a[i*lda:], lda, b, ldb, work)
		}
	}
}
