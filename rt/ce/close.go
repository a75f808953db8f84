package ce

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Shutdown (docs/ce.md, "Shutdown and errors"). Close sets the closing state, so every new
// operation fails with ErrClosed, and wakes the comm goroutine, which then steps through:
//
//	drain:   wait until no Caller is inside an operation, the shift queue is empty and
//	         nothing is in flight (sends, transfers either side, barriers);
//	fin:     send every live peer FIN{number of AMs sent to it}, then wait until each live
//	         peer's FIN came and that many AMs from it were received (FIN may overtake
//	         messages on other tags, hence the count);
//	barrier: a non-blocking barrier, so no peer still sends;
//	teardown: disarm tags, drop registrations, Transport.Close on this goroutine, report the
//	         completions the transport still owed, fail whatever waited, close the pool.
//
// If Close's ctx ends first, teardown runs at once and everything still pending fails with
// ErrShutdownTimeout. Close is collective, like MPI_Finalize: with more than one rank, every
// rank must call it.
const (
	phaseRun = iota
	phaseDrain
	phaseFin
	phaseBarrier
	phaseDone
)

// Close shuts the Engine down (see above) and returns once the comm goroutine has exited, by
// ctx's deadline. It is idempotent: later calls wait for the first and return its result. It
// must not be called from a handler or a done callback.
func (e *Engine) Close(ctx context.Context) error {
	e.closeOnce.Do(func() {
		e.lifeMu.Lock()
		defer e.lifeMu.Unlock()
		switch e.state.Load() {
		case stateNew:
			e.state.Store(stateClosed)
			close(e.done)
		case stateRunning:
			e.closeCtx = ctx
			e.state.Store(stateClosing)
			close(e.closeCh)
		}
		// Otherwise a failed or abandoned Start: the comm goroutine closes done itself.
	})
	<-e.done
	return e.closeErr
}

// CloseAll closes engines concurrently (Close is collective, so the ranks of one in-process
// world must close together) and joins their errors.
func CloseAll(ctx context.Context, engines ...*Engine) error {
	errs := make([]error, len(engines))
	done := make(chan struct{})
	for i, e := range engines {
		go func() {
			errs[i] = e.Close(ctx)
			done <- struct{}{}
		}()
	}
	for range engines {
		<-done
	}
	var out []error
	for i, err := range errs {
		if err != nil {
			out = append(out, fmt.Errorf("rank %d: %w", i, err))
		}
	}
	return errors.Join(out...)
}

// stepClose advances the shutdown; true means the comm goroutine is done.
func (e *Engine) stepClose() bool {
	if e.phase == phaseRun {
		e.phase = phaseDrain
	}
	if e.closeCtx.Err() != nil {
		e.teardown(true)
		return true
	}
	switch e.phase {
	case phaseDrain:
		if !e.callersIdle() || e.sq.pending.Load() ||
			e.amPending.Load() > 0 || e.xferPending.Load() > 0 || e.barPending.Load() > 0 {
			return false
		}
		e.phase = phaseFin
		for r := range e.peers {
			if Rank(r) != e.rank && !e.peers[r].dead {
				e.sendFin(Rank(r))
			}
		}
		return false
	case phaseFin:
		if e.amPending.Load() > 0 {
			return false
		}
		for r := range e.peers {
			p := &e.peers[r]
			if Rank(r) != e.rank && !p.dead && !p.finDone {
				return false
			}
		}
		for r := range e.peers {
			if e.peers[r].dead {
				// A barrier with a lost rank never completes on a transport that cannot see
				// it die (MPI): there is nobody left to wait for, so close now.
				e.closeErr = fmt.Errorf("ce: closing barrier skipped: %w: rank %d", ErrPeerLost, r)
				e.teardown(false)
				return true
			}
		}
		e.phase = phaseBarrier
		b := &barrier{id: e.newID(), internal: true, done: make(chan error, 1)}
		e.closeBar = b
		e.barriers.Store(b.id, b)
		e.barPending.Add(1)
		if err := e.t.Barrier(b.id); err != nil {
			e.barrierDone(b.id, err)
		}
		return false
	case phaseBarrier:
		if !e.closeBar.finished {
			return false
		}
		if err := e.closeBar.err; err != nil {
			e.closeErr = fmt.Errorf("ce: closing barrier: %w", err)
		}
		e.teardown(false)
		return true
	}
	return false
}

// sendFin says goodbye to r.
func (e *Engine) sendFin(r Rank) {
	count := e.peers[r].sent.Load()
	m, err := e.pool.tryGet(12, true)
	if err != nil {
		e.report(fmt.Errorf("ce: goodbye to rank %d: %w", r, err))
		return
	}
	m.n = len(encodeIDTag(m.buf[:0], OpID(count), 0))
	m.submit()
	m.tag, m.dst = tagFin, r
	e.amPending.Add(1)
	if err := e.t.SendAM(tagFin, r, m); err != nil {
		e.completeAM(m, err)
		return
	}
	e.peers[r].sent.Add(1)
}

// onFin records a peer's goodbye; checkFin acts once all its messages are in.
func (e *Engine) onFin(src Rank, payload []byte) {
	count, _, err := decodeIDTag(payload)
	if err != nil {
		e.report(fmt.Errorf("ce: from rank %d: %w", src, err))
		return
	}
	p := &e.peers[src]
	p.finSeen = true
	p.finCount = int64(count) + 1 // its messages, and this FIN
}

func (e *Engine) checkFin(src Rank) {
	p := &e.peers[src]
	if !p.finSeen || p.finDone || p.recv < p.finCount {
		return
	}
	p.finDone = true
	// Everything src sent has arrived and it serves nothing more: fail the transfers that
	// wait on it. AMs to it still go through: it receives until it has our goodbye too.
	p.closed.Store(true)
	e.failTransfers(src, fmt.Errorf("%w: rank %d shut down", ErrPeerLost, src))
}

// callersIdle reports whether no Caller is inside an operation.
func (e *Engine) callersIdle() bool {
	e.callersMu.Lock()
	defer e.callersMu.Unlock()
	for _, c := range e.callers {
		if c.active.Load() != 0 {
			return false
		}
	}
	return true
}

// closeErrFor maps a completion error during shutdown.
func (e *Engine) closeErrFor(err error) error {
	if err == nil || e.phase != phaseDone {
		return err
	}
	if e.forced {
		return fmt.Errorf("%w: %v", ErrShutdownTimeout, err)
	}
	if errors.Is(err, ErrClosed) || errors.Is(err, ErrCanceled) {
		return ErrClosed
	}
	return err
}

// teardown ends the Engine on the comm goroutine. Every buffer goes back to the pool and every
// callback runs, with ErrShutdownTimeout when forced and ErrClosed otherwise.
func (e *Engine) teardown(forced bool) {
	e.phase = phaseDone
	e.forced = forced
	e.tearing.Store(true)
	fail := ErrClosed
	if forced {
		fail = ErrShutdownTimeout
	}
	for !e.callersIdle() {
		time.Sleep(10 * time.Microsecond) // operations never block, so this is short
	}
	for _, o := range e.sq.swap(true) {
		switch o.kind {
		case opSendAM:
			e.completeAM(o.msg, fail)
		case opFailAM:
			e.completeAM(o.msg, o.err)
		case opXfer:
			e.finishXfer(o.x, fail)
		case opXferFail:
			e.failXfer(o.x, o.err)
		case opUnregister:
			e.unregister(o.reg)
		case opBarrier:
			e.barrierDone(o.bar.id, fail)
		}
	}
	for _, w := range []*window{&e.winInit, &e.winServ} {
		for _, x := range w.remove(func(*xfer) bool { return true }) {
			e.finishXfer(x, fail)
		}
	}
	tab := e.tags.Load()
	for t := Tag(1); t < MaxTags; t++ {
		if t < FirstRTTag && t <= tagBeat || tab[t].h != nil {
			if err := e.t.UnregisterTag(t); err != nil {
				e.report(fmt.Errorf("ce: disarm tag %d: %w", t, err))
			}
		}
	}
	e.regs.closeAll(true)
	if err := e.t.Close(); err != nil {
		e.closeErr = errors.Join(e.closeErr, fmt.Errorf("ce: transport close: %w", err))
	}
	for e.poll() > 0 {
	}
	for _, x := range e.xfers.all() {
		e.finishXfer(x, fail)
	}
	e.barriers.Range(func(k, _ any) bool {
		e.barrierDone(k.(OpID), fail)
		return true
	})
	e.pool.close()
	if forced {
		e.closeErr = errors.Join(ErrShutdownTimeout, e.closeErr)
	}
	e.state.Store(stateClosed)
}
