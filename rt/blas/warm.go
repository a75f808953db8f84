package blas

import (
	"errors"
	"runtime"
	"sync"
)

// WarmUp runs each tile kernel of a tiled Cholesky (Dpotrf, Dtrsm, Dsyrk and Dgemm on nb×nb
// tiles) once on each of threads goroutines at the same time, each locked to its own OS
// thread, and returns when all are done.
//
// Why: a BLAS library sets up its working storage on first use. OpenBLAS maps a packing
// buffer for each caller that finds none free, and the first calls fault its pages in, so
// the first tasks of a factorisation run several times slower than the later ones of the
// same shape, on the critical path (the first diagonal tile and the updates behind it). A
// program that times a factorisation on threads workers calls WarmUp(threads, nb) before it
// starts the clock, so that the timed run does not pay for the set-up; the threads run at
// once so that as many buffers exist as callers will run at once.
//
// WarmUp fails with ErrBadArgument when threads or nb is below 1, and with a kernel's error
// (joined, one per goroutine that failed) otherwise; the tiles are its own.
func (i *Impl) WarmUp(threads, nb int) error {
	if threads < 1 || nb < 1 {
		return badf("WarmUp", "threads=%d and nb=%d must be positive", threads, nb)
	}
	errs := make([]error, threads)
	var wg sync.WaitGroup
	for g := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A thread of its own for each caller: two goroutines on one thread would call
			// one after the other and leave the library one caller's storage.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			errs[g] = i.warmTiles(nb, uint64(g)+1)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// warmTiles factors an SPD tile T, solves a tile against it, and updates two more tiles from
// the solution, as POTRF, TRSM, SYRK and GEMM do.
func (i *Impl) warmTiles(nb int, seed uint64) error {
	t := make([]float64, nb*nb)
	if err := FillSPD(nb, t, nb, seed); err != nil {
		return err
	}
	b := make([]float64, nb*nb)
	for k := range b {
		b[k] = float64(k%7) / 7
	}
	c := make([]float64, nb*nb)
	if err := i.Dpotrf(Lower, nb, t, nb); err != nil {
		return err
	}
	if err := i.Dtrsm(Right, Lower, Trans, NonUnit, nb, nb, 1, t, nb, b, nb); err != nil {
		return err
	}
	if err := i.Dsyrk(Lower, NoTrans, nb, nb, -1, b, nb, 1, c, nb); err != nil {
		return err
	}
	return i.Dgemm(NoTrans, Trans, nb, nb, nb, -1, b, nb, b, nb, 1, c, nb)
}
