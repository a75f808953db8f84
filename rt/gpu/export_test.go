package gpu

import "github.com/jdf2go/jdf2go/rt"

// SetSharesProbe replaces how r learns whether an rt.Context shares device
// classes' tasks with its CPU workers (hostreads.go), for tests that run a
// Context with rt.ShareWork(false) before rt.Context reports it.
func SetSharesProbe(r *RTDevice, f func(*rt.Context) bool) { r.reads.shares = f }
