package rt

// Device runs the incarnations of one non-CPU kind (rt/gpu implements it, one value per GPU).
// Register devices with Devices.
//
// The hand-off protocol: rt calls Submit on the worker w that picked the task. Submit returns
// nil once the device owns the task; from then on rt does not touch it, and the device must
// end it exactly once with w.Complete or Task.Complete (done), Worker.Reschedule or
// Task.Reschedule (try other incarnations), or Task.Fail. Submit may keep w busy for a long
// time as the device's manager; it must then call w.FlushNextTask on entry and after each
// completion (docs/gpu.md, "next_task"). Submit returns Next to refuse the task (rt tries the next
// incarnation) and any other error to fail the taskpool.
type Device interface {
	// Name identifies the device in diagnostics ("sim0", "cuda1").
	Name() string
	// Accepts reports whether the device runs incarnations of kind k.
	Accepts(k DeviceKind) bool
	// Load estimates the work queued on the device, in nanoseconds.
	Load() int64
	// Submit hands t, with its chosen incarnation inc, to the device.
	Submit(w *Worker, t *Task, inc *Incarnation) error
}

// A Saturator is a Device that accepts tasks faster than it runs them. Submit returns as
// soon as the device owns a task, so a startup walk of a class with an incarnation for the
// device would otherwise make its whole space ready at once: millions of tasks, each holding
// memory, queued on a device that runs them a batch at a time, while the walkers compete
// with the device's manager for its queue. A walk of such a class pauses while one of its
// devices reports Saturated (startup.go).
type Saturator interface {
	// Saturated reports whether the device holds enough accepted work to stay busy.
	Saturated() bool
}
