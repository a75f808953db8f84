package ce

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"time"
)

// The comm goroutine (docs/ce.md, "The comm goroutine"). One loop iteration:
//
//  1. swap out the shift queue and apply its ops in order (tag arming, sends, transfer
//     admissions through the window, registrations, barriers);
//  2. Poll the transport and dispatch: send completions release buffers and run done
//     callbacks, arrivals run handlers (the Engine's own handshakes included), data
//     completions step transfers, lost peers fail what waits on them;
//  3. if Close asked, step the shutdown (close.go);
//  4. idle policy: after IdleSpin without work, a wakeable transport parks in a select on the
//     shift-queue wake channel, the transport's wake channel and Close; otherwise (MPI) it
//     keeps polling while operations are in flight (up to 10×IdleSpin), then naps 5 µs
//     doubling to 50 µs while work is in flight or was recent (20 ms), and up to IdleMaxSleep
//     after that. Producers signal the wake channel only when the loop announced it is
//     parked (parked is set before the last look at the queue, and producers set pending
//     before reading parked, so one of the two always sees the other).
//
// Handlers and callbacks run here, one at a time.
func (e *Engine) loop() {
	const recentIdle = 20 * time.Millisecond
	wakeable := e.caps.Wakeable && e.t.Wake() != nil
	var idleSince time.Time
	var idleIters uint
	sleep := 5 * time.Microsecond
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		if e.stats.loops.Add(1)&63 == 0 && e.hbOn {
			e.heartbeat(time.Now())
		}
		worked := false
		if e.sq.pending.Load() {
			e.applyOps(e.sq.swap(false))
			worked = true
		}
		if n := e.poll(); n > 0 {
			worked = true
		}
		if e.state.Load() == stateClosing {
			if e.stepClose() {
				return
			}
		}
		if worked {
			idleSince, idleIters = time.Time{}, 0
			sleep = 5 * time.Microsecond
			continue
		}
		// Read the clock only every 32 idle iterations: on some machines (VMs) it costs as
		// much as a poll, and a busy-polling loop would notice arrivals later.
		if idleIters++; idleIters&31 != 1 {
			if !e.pinned {
				runtime.Gosched()
			}
			continue
		}
		now := time.Now()
		if e.hbOn {
			e.heartbeat(now)
		}
		if idleSince.IsZero() {
			idleSince = now
		}
		busy := e.amPending.Load() > 0 || e.xferPending.Load() > 0 || e.barPending.Load() > 0
		if now.Sub(idleSince) < e.cfg.idleSpin || (busy && !wakeable && now.Sub(idleSince) < 10*e.cfg.idleSpin) {
			if !e.pinned {
				runtime.Gosched()
			}
			continue
		}
		// Park, or sleep.
		e.parked.Store(1)
		if e.sq.pending.Load() {
			e.parked.Store(0)
			continue
		}
		var tc <-chan time.Time
		var cc <-chan struct{}
		d := time.Hour
		if e.state.Load() == stateClosing {
			// Shutdown waits on direct callers and peers, which do not all signal.
			d, cc = time.Millisecond, e.closeCtx.Done()
		}
		if !wakeable {
			d = min(d, sleep)
			// Short naps while work is in flight or was recent (a peer's answer is likely
			// soon); longer ones, up to IdleMaxSleep, only after a real idle period.
			if busy || now.Sub(idleSince) < recentIdle {
				sleep = min(sleep*2, 50*time.Microsecond)
			} else {
				sleep = min(sleep*2, e.cfg.maxSleep)
			}
		}
		if e.hbOn {
			d = min(d, e.untilBeat(now))
		}
		if d < time.Hour {
			timer.Reset(d)
			tc = timer.C
		}
		select {
		case <-e.wake:
		case <-e.t.Wake():
		case <-e.closeCh:
		case <-cc:
		case <-tc:
		}
		if tc != nil && !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		e.parked.Store(0)
		if wakeable {
			idleSince = time.Time{}
		}
	}
}

// poll runs one transport Poll and dispatches what it found. It is the only caller of
// Transport.Poll, and runs only on the comm goroutine.
func (e *Engine) poll() int {
	n := e.t.Poll(e.evbuf)
	for i := range e.evbuf[:n] {
		ev := &e.evbuf[i]
		switch ev.Kind {
		case EventSendDone:
			if ev.Msg != nil && ev.Msg.beat {
				e.beatDone(ev.Msg)
				break
			}
			e.completeAM(ev.Msg, e.closeErrFor(ev.Err))
		case EventArrival:
			if ev.Err != nil {
				// Counted, so the shutdown count still adds up, but not dispatched.
				if int(ev.Src) >= 0 && int(ev.Src) < len(e.peers) {
					e.peers[ev.Src].recv++
				}
				e.report(fmt.Errorf("ce: receive on tag %d from rank %d failed: %w", ev.Tag, ev.Src, ev.Err))
				continue
			}
			e.arrival(ev.Src, ev.Tag, ev.Payload)
		case EventDataDone:
			e.dataDone(ev.ID, e.closeErrFor(ev.Err))
		case EventBarrierDone:
			e.barrierDone(ev.ID, e.closeErrFor(ev.Err))
		case EventPeerLost:
			if int(ev.Src) >= 0 && int(ev.Src) < len(e.peers) {
				e.peerLost(ev.Src, fmt.Errorf("%w: rank %d", ErrPeerLost, ev.Src))
			}
		default:
			e.report(fmt.Errorf("ce: transport reported unknown event kind %d", ev.Kind))
		}
		*ev = Event{}
	}
	return n
}

// peerLost marks r lost (comm goroutine): every new operation with it fails, the transfers
// waiting on it fail with err, and the OnPeerLost hook runs the first time.
func (e *Engine) peerLost(r Rank, err error) {
	p := &e.peers[r]
	first := !p.dead
	p.dead = true
	p.lost.Store(true)
	e.failTransfers(r, err)
	if first && e.cfg.onPeerLost != nil {
		e.cfg.onPeerLost(r)
	}
}

// applyOps carries out shifted operations in queue order.
func (e *Engine) applyOps(ops []op) {
	for i := range ops {
		o := &ops[i]
		switch o.kind {
		case opSendAM:
			e.postAM(o.msg, true)
		case opFailAM:
			e.completeAM(o.msg, o.err)
		case opXfer:
			if e.winInit.admit(o.x) {
				e.startXfer(o.x, true)
			}
		case opXferFail:
			e.failXfer(o.x, o.err)
		case opRegister:
			if _, err := o.reg.ensure(); err != nil {
				e.report(fmt.Errorf("ce: register: %w", err))
			}
		case opUnregister:
			e.unregister(o.reg)
		case opArmTag:
			if err := e.t.RegisterTag(o.tag, o.maxLen); err != nil {
				e.report(fmt.Errorf("ce: arm tag %d: %w", o.tag, err))
			}
		case opBarrier:
			if err := e.t.Barrier(o.bar.id); err != nil {
				e.barrierDone(o.bar.id, err)
			}
		}
		*o = op{}
	}
}

// completeAM ends an AM send (comm goroutine): the message goes back to the pool here, once.
func (e *Engine) completeAM(m *Msg, err error) {
	if ferr := m.finish(); ferr != nil && err == nil {
		err = ferr
	}
	e.amPending.Add(-1)
	if err == nil {
		e.stats.amsSent.Add(1)
	}
	e.countDone(m.tp)
	if x := m.x; x != nil {
		if err != nil {
			e.failXfer(x, fmt.Errorf("ce: handshake to rank %d: %w", m.dst, err))
		}
		return
	}
	if m.done != nil {
		e.callDone(m.done, err)
	}
}

// arrival dispatches one AM.
func (e *Engine) arrival(src Rank, t Tag, payload []byte) {
	if int(src) < 0 || int(src) >= len(e.peers) {
		e.report(fmt.Errorf("ce: arrival from rank %d outside the job", src))
		return
	}
	e.peers[src].heard = true
	if t == tagBeat {
		// Proof of life only: outside the goodbye count and the message statistics.
		e.stats.beatsRecv.Add(1)
		return
	}
	e.peers[src].recv++
	e.peers[src].recvMsgs.Add(1)
	e.peers[src].recvBytes.Add(int64(len(payload)))
	e.stats.amsRecv.Add(1)
	switch t {
	case tagGetReq:
		e.onXferReq(src, false, payload)
	case tagPutReq:
		e.onXferReq(src, true, payload)
	case tagPutCTS:
		e.onCTS(src, payload)
	case tagNack:
		e.onNack(src, payload)
	case tagFin:
		e.onFin(src, payload)
	default:
		var h Handler
		if t < MaxTags {
			h = e.tags.Load()[t].h
		}
		if h == nil {
			e.stats.unknownTag.Add(1)
			e.report(fmt.Errorf("%w: message on tag %d from rank %d dropped", ErrUnknownTag, t, src))
			return
		}
		e.callHandler(h, src, t, payload)
	}
	if e.cfg.debug {
		fillPoison(payload) // a handler that kept the slice sees this (docs/ce.md, "Invariants")
	}
	e.checkFin(src)
}

// callHandler and callDone run user code on the comm goroutine, one at a time. A panic there
// is recovered: the Engine fails with it (ErrHandlerPanic) and the loop carries on, so that
// buffers are still released, operations completed and Close served.
func (e *Engine) callHandler(h Handler, src Rank, tag Tag, payload []byte) {
	if !e.inCallback.CompareAndSwap(0, 1) {
		e.stats.callbackOverlap.Add(1)
	}
	e.stats.handlers.Add(1)
	defer e.inCallback.Store(0)
	defer e.recoverUser("handler of tag %d, message from rank %d", tag, src)
	h(e.comm, src, payload)
}

func (e *Engine) callDone(d Done, err error) {
	if !e.inCallback.CompareAndSwap(0, 1) {
		e.stats.callbackOverlap.Add(1)
	}
	e.stats.callbacks.Add(1)
	defer e.inCallback.Store(0)
	defer e.recoverUser("done callback")
	d(e.comm, err)
}

// recoverUser turns a panic of user code on the comm goroutine into the Engine's failure.
func (e *Engine) recoverUser(what string, args ...any) {
	if p := recover(); p != nil {
		e.fail(fmt.Errorf("%w: %s: %v\n%s", ErrHandlerPanic, fmt.Sprintf(what, args...), p, debug.Stack()))
	}
}

// barrierDone completes a barrier.
func (e *Engine) barrierDone(id OpID, err error) {
	v, ok := e.barriers.LoadAndDelete(id)
	if !ok {
		e.report(fmt.Errorf("ce: completion for unknown barrier %d", id))
		return
	}
	b := v.(*barrier)
	e.barPending.Add(-1)
	b.finished, b.err = true, err
	b.done <- err
}
