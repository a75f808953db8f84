package rt

// Choosing where a task runs (docs/language.md, "GPU bodies", docs/gpu.md, "The manager" "load").
//
// A class whose BODYs include a device incarnation followed by a CPU one shares its tasks
// between the CPU workers and the devices. When a worker reaches such a device
// incarnation (after Evaluate, and unless the incarnation's Select pins the device), it
// compares two estimated finish times, in nanoseconds from now:
//
//   - on a device d: the work d has accepted and not finished that the task would wait for
//     plus the task's time on d. A device that runs its queue by priority (PriorityLoader:
//     rt/gpu) counts only the work of the task's priority or above; for another, it is all
//     of d.Load();
//   - on this worker: the task's time on a CPU, since the worker is free now.
//
// It runs the CPU incarnation when that is no later than the best device, and otherwise
// submits to the device with the earliest finish; an idle device always gets the task
// (free capacity, and the only way a device that looks slow can show it is not). This is
// greedy earliest-finish list scheduling, decided once per task by the worker that holds
// it: while a device has little queued it takes everything, and as its queue grows past
// one CPU task's time the workers start taking tasks themselves, in proportion to their
// speed.
//
// Task times come from the class's TimeEstimate when it has one (dev is nil for the CPU),
// otherwise from measurements: for a device, its Estimator (rt/gpu measures the device
// time per task as the interval between completions while the device is busy); for the
// CPU, a running mean of the class's CPU hook time, measured only for classes that share
// work. Until a class's CPU time is known, one task at a time that does not go to an idle
// device runs on the CPU to measure it; the others go to the device meanwhile. Samples
// count for at most 4 times the current mean, so that a preempted worker or a stalled
// manager does not shut a side out for long.
//
// ShareWork(false) (JDF2GO_SHARE=off) turns sharing off: device incarnations then go to a
// device whenever one accepts them, as in PaRSEC.
//
// Rejected: a fixed split (wrong as soon as the device or the tile size changes); a
// per-class queue length threshold (ignores task sizes); asking the device to pull work
// (rt/gpu devices are driven by the submitting workers, docs/gpu.md, "The manager").

// waitOn returns what t would wait for on d, in ns.
func waitOn(t *Task, d Device) int64 {
	if pl, ok := d.(PriorityLoader); ok {
		return pl.LoadAbove(t.prio)
	}
	return d.Load()
}

// cpuMeanWeight is the weight of the newest sample in the running means (1/8).
const cpuMeanShift = 3

// sharesWork reports whether tc has a device incarnation followed by a CPU one.
func sharesWork(tc *TaskClass) bool {
	dev := false
	for i := range tc.Incarnations {
		switch k := tc.Incarnations[i].Kind; {
		case k != CPU:
			dev = true
		case dev:
			return true
		}
	}
	return false
}

// hasCPUAfter reports whether an incarnation after index i runs on the CPU.
func hasCPUAfter(tc *TaskClass, i int) bool {
	for j := i + 1; j < len(tc.Incarnations); j++ {
		if tc.Incarnations[j].Kind == CPU {
			return true
		}
	}
	return false
}

// observeCPU folds one CPU hook time (ns) into the class's running mean. A sample counts
// for at most 4 times the mean: a worker preempted in the middle of a task (a loaded
// machine, a GC pause) must not make the CPU look slow for long, since the CPU then gets
// no task that could correct it.
func (cs *classState) observeCPU(ns int64) {
	ns = max(ns, 1)
	old := cs.cpuMean.Load()
	if old == 0 {
		cs.cpuMean.Store(ns)
		return
	}
	cs.cpuMean.Store(old + (min(ns, 4*old)-old)>>cpuMeanShift)
}

// cpuEstimate returns t's expected time on a CPU worker (0: unknown).
func cpuEstimate(t *Task) int64 {
	if te := t.cs.tc.TimeEstimate; te != nil {
		return te(t, nil)
	}
	return t.cs.cpuMean.Load()
}

// deviceEstimate returns t's expected time for inc on d (0: unknown).
func deviceEstimate(t *Task, inc *Incarnation, d Device) int64 {
	if te := t.cs.tc.TimeEstimate; te != nil {
		return te(t, d)
	}
	if e, ok := d.(Estimator); ok {
		return e.Estimate(t, inc)
	}
	return 0
}

// pickDevice returns the device for incarnation inc of t and its estimated finish time in
// ns from now (waitOn plus the task's time), or nil when no device accepts inc. With Select
// the device is Select's choice (modulo the accepting devices) and the finish time is not
// computed (0).
func (c *Context) pickDevice(t *Task, inc *Incarnation) (Device, int64) {
	devs := c.byKind[inc.Kind]
	switch {
	case len(devs) == 0:
		return nil, 0
	case inc.Select != nil:
		i := inc.Select(t) % len(devs)
		if i < 0 {
			i += len(devs)
		}
		return devs[i], 0
	}
	var best Device
	var bestAt int64
	for _, d := range devs {
		at := waitOn(t, d) + deviceEstimate(t, inc, d)
		if best == nil || at < bestAt {
			best, bestAt = d, at
		}
	}
	return best, bestAt
}

// choose returns the device that runs incarnation i of t, or nil when the worker should go
// on with the following incarnations: no device accepts it, or the class shares work and
// the CPU is expected to finish t no later than the best device.
func (c *Context) choose(t *Task, inc *Incarnation, i int) Device {
	dev, at := c.pickDevice(t, inc)
	if dev == nil || inc.Select != nil || !c.cfg.share || !t.cs.shared || !hasCPUAfter(t.cs.tc, i) {
		return dev
	}
	if dev.Load() == 0 {
		// An idle device is free capacity (and its estimate gets corrected).
		return dev
	}
	cpu := cpuEstimate(t)
	if cpu == 0 {
		// Not measured yet: this task measures it, unless another one already does. On a
		// device hundreds of times faster than a core, every task sent to the CPU while the
		// first one runs would come back late.
		if t.cs.measuring.CompareAndSwap(false, true) {
			return nil
		}
		return dev
	}
	if cpu <= at {
		return nil
	}
	return dev
}
